/*
 * Copyright (c) 2026 The depotd authors
 *
 * Permission to use, copy, modify, and distribute this software for any
 * purpose with or without fee is hereby granted, provided that the above
 * copyright notice and this permission notice appear in all copies.
 *
 * THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
 * WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
 * MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR
 * ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
 * WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN
 * ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF
 * OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE.
 */

/*
 * test_coderun_native.c: the provider's own blocks for the gateway's
 * runs, in a whole answer, and the model's text from the rounds that
 * ran code, kept before their runs.
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "t.h"
#include "fe_coderun.h"

static struct json_object *
J(const char *s)
{
	struct json_object	*o = json_tokener_parse(s);

	if (o == NULL)
		exit(1);
	return o;
}

static const char *
S(struct json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
}

int
main(void)
{
	struct json_object	*runs, *call, *res, *ans;

	runs = json_object_new_array();
	call = J("{\"id\":\"c1\",\"code\":\"print(1)\"}");
	res = J("{\"result_block\":{\"content\":{\"stdout\":\"1\\n\","
	    "\"stderr\":\"\",\"return_code\":0}},\"outputs\":[{\"path\":"
	    "\"a.png\",\"file_id\":\"file-9\"}]}");
	native_record(runs, call, res, NULL);

	ans = J("{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}");
	native_prepend(WIRE_MESSAGES, ans, runs, 1);
	T_EQ_STR(S(ans), "{\"content\":[{\"type\":\"server_tool_use\",\"id\":"
	    "\"srvtoolu_c1\",\"name\":\"code_execution\",\"input\":{\"code\":"
	    "\"print(1)\"}},{\"type\":\"code_execution_tool_result\","
	    "\"tool_use_id\":\"srvtoolu_c1\",\"content\":{\"type\":"
	    "\"code_execution_result\",\"stdout\":\"1\\n\",\"stderr\":\"\","
	    "\"return_code\":0,\"content\":[{\"type\":"
	    "\"code_execution_output\",\"file_id\":\"file-9\"}]}},{\"type\":"
	    "\"text\",\"text\":\"done\"}]}",
	    "messages: the run's two blocks, then the model's text");
	json_object_put(ans);

	ans = J("{\"output\":[{\"type\":\"message\"}]}");
	native_prepend(WIRE_RESPONSES, ans, runs, 1);
	T_OK(strstr(S(ans), "{\"output\":[{\"type\":\"code_interpreter_call\","
	    "\"id\":\"ci_c1\",\"status\":\"completed\",\"code\":\"print(1)\"")
	    != NULL && strstr(S(ans), "a.png (file_id: file-9)") != NULL &&
	    strstr(S(ans), "},{\"type\":\"message\"}]}") != NULL,
	    "responses: a code_interpreter_call item first: %s", S(ans));
	json_object_put(ans);

	ans = J("{\"choices\":[]}");
	native_prepend(WIRE_CHAT, ans, runs, 1);
	T_EQ_STR(S(ans), "{\"choices\":[]}", "chat has no such blocks");
	json_object_put(ans);
	json_object_put(runs);

	/* The model's words before its call, then the run, then the answer. */
	runs = json_object_new_array();
	native_text(runs, "Let me run it.", "c1");
	native_text(runs, "", "c2");
	native_record(runs, call, res, NULL);
	ans = J("{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}");
	native_prepend(WIRE_MESSAGES, ans, runs, 1);
	T_OK(strncmp(S(ans), "{\"content\":[{\"type\":\"text\",\"text\":"
	    "\"Let me run it.\"},{\"type\":\"server_tool_use\"", 64) == 0 &&
	    json_object_array_length(json_object_object_get(ans, "content"))
	    == 4, "messages: the text before the call comes first: %s", S(ans));
	json_object_put(ans);
	ans = J("{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}");
	native_prepend(WIRE_MESSAGES, ans, runs, 0);
	T_EQ_STR(S(ans), "{\"content\":[{\"type\":\"text\",\"text\":"
	    "\"Let me run it.\"},{\"type\":\"text\",\"text\":\"done\"}]}",
	    "messages, gateway tool: the text kept, the run not shown");
	json_object_put(ans);
	ans = J("{\"output\":[{\"type\":\"message\"}]}");
	native_prepend(WIRE_RESPONSES, ans, runs, 1);
	T_OK(strncmp(S(ans), "{\"output\":[{\"type\":\"message\",\"id\":"
	    "\"msg_c1\",\"status\":\"completed\",\"role\":\"assistant\","
	    "\"content\":[{\"type\":\"output_text\",\"text\":\"Let me run "
	    "it.\",\"annotations\":[]}]},{\"type\":\"code_interpreter_call\"",
	    180) == 0, "responses: a message item before the call: %s",
	    S(ans));
	json_object_put(ans);
	json_object_put(call);
	json_object_put(res);
	json_object_put(runs);
	return t_done();
}
