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
 * test_tools.c: the code-execution tool in the three wire formats.
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "t.h"
#include "wire/wire.h"

static struct json_object *
J(const char *s)
{
	struct json_object	*o = json_tokener_parse(s);

	if (o == NULL) {
		printf("bad test JSON: %s\n", s);
		exit(1);
	}
	return o;
}

static const char *
S(struct json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
}

static void
test_declaration(void)
{
	struct json_object	*r;
	int			 native;

	r = J("{\"tools\":[{\"type\":\"otari_code_execution\"},{\"type\":"
	    "\"function\",\"function\":{\"name\":\"mine\"}}],"
	    "\"tool_choice\":\"auto\"}");
	T_EQ_INT(tools_take_declaration(WIRE_CHAT, r, &native), 1,
	    "chat: the otari declaration is found");
	T_OK(native == 0 && strstr(S(r), "otari") == NULL &&
	    strstr(S(r), "\"mine\"") != NULL && strstr(S(r), "tool_choice"),
	    "chat: it is taken out, the caller's tool and choice kept: %s",
	    S(r));
	tools_declare(WIRE_CHAT, r);
	T_OK(strstr(S(r), "{\"type\":\"function\",\"function\":{\"name\":"
	    "\"code_execution\"") != NULL && strstr(S(r), "\"required\":"
	    "[\"code\"]"), "chat: code_execution(code) declared as a function");
	json_object_put(r);

	r = J("{\"tools\":[{\"type\":\"code_execution_20250522\",\"name\":"
	    "\"code_execution\"}],\"tool_choice\":{\"type\":\"auto\"}}");
	T_EQ_INT(tools_take_declaration(WIRE_MESSAGES, r, &native), 1,
	    "messages: a native declaration is found");
	T_OK(native == 1 && json_object_object_get(r, "tools") == NULL &&
	    json_object_object_get(r, "tool_choice") == NULL,
	    "messages: it is native; no tools left, no tool_choice: %s", S(r));
	tools_declare(WIRE_MESSAGES, r);
	T_OK(strstr(S(r), "{\"name\":\"code_execution\",\"description\":") &&
	    strstr(S(r), "\"input_schema\":{") && !strstr(S(r), "\"type\":"
	    "\"function\""), "messages: declared with an input_schema");
	json_object_put(r);

	r = J("{\"tools\":[{\"type\":\"code_interpreter\",\"container\":"
	    "{\"type\":\"auto\"}}]}");
	T_OK(tools_take_declaration(WIRE_RESPONSES, r, &native) == 1 &&
	    native == 1, "responses: code_interpreter is a native declaration");
	tools_declare(WIRE_RESPONSES, r);
	T_OK(strstr(S(r), "{\"type\":\"function\",\"name\":\"code_execution\"")
	    && strstr(S(r), "\"parameters\":{"), "responses: a flat function");
	json_object_put(r);

	r = J("{\"tools\":[{\"type\":\"function\",\"function\":{}}]}");
	T_EQ_INT(tools_take_declaration(WIRE_CHAT, r, &native), 0,
	    "no declaration: nothing found");
	json_object_put(r);
}

static void
test_calls(void)
{
	struct json_object	*a, *c;
	int			 foreign;

	a = J("{\"choices\":[{\"message\":{\"role\":\"assistant\","
	    "\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":"
	    "{\"name\":\"code_execution\",\"arguments\":\"{\\\"code\\\":"
	    "\\\"print(1)\\\"}\"}},{\"id\":\"c2\",\"type\":\"function\","
	    "\"function\":{\"name\":\"mine\",\"arguments\":\"{}\"}}]}}]}");
	c = tools_calls(WIRE_CHAT, a, &foreign);
	T_OK(c != NULL && strcmp(S(c), "[{\"id\":\"c1\",\"code\":\"print(1)\"}]")
	    == 0 && foreign == 1, "chat: the owned call and one foreign: %s",
	    c ? S(c) : "NULL");
	json_object_put(c);
	tools_strip(WIRE_CHAT, a);
	T_OK(strstr(S(a), "c1") == NULL && strstr(S(a), "c2") != NULL,
	    "chat: stripping keeps only the caller's call");
	json_object_put(a);

	a = J("{\"content\":[{\"type\":\"text\",\"text\":\"hi\"},{\"type\":"
	    "\"tool_use\",\"id\":\"tu1\",\"name\":\"code_execution\","
	    "\"input\":{\"code\":\"x=1\"}}]}");
	c = tools_calls(WIRE_MESSAGES, a, &foreign);
	T_OK(c != NULL && strcmp(S(c), "[{\"id\":\"tu1\",\"code\":\"x=1\"}]")
	    == 0 && foreign == 0, "messages: a tool_use with an input object");
	json_object_put(c);
	json_object_put(a);

	a = J("{\"output\":[{\"type\":\"function_call\",\"call_id\":\"k\","
	    "\"name\":\"code_execution\",\"arguments\":\"{\\\"kode\\\":1}\"}]}");
	c = tools_calls(WIRE_RESPONSES, a, &foreign);
	T_OK(c != NULL && strcmp(S(c), "[{\"id\":\"k\",\"code\":null}]") == 0,
	    "responses: a call without code is still a call: %s",
	    c ? S(c) : "NULL");
	json_object_put(c);
	json_object_put(a);
	a = J("{\"nothing\":1}");
	T_OK(tools_calls(WIRE_CHAT, a, &foreign) == NULL,
	    "not an answer: NULL");
	json_object_put(a);
}

static void
test_rounds(void)
{
	struct json_object	*req, *ans, *res;

	res = J("[{\"id\":\"c1\",\"text\":\"stdout:\\n1\\n\"}]");
	req = J("{\"messages\":[{\"role\":\"user\",\"content\":\"go\"}]}");
	ans = J("{\"choices\":[{\"message\":{\"role\":\"assistant\","
	    "\"content\":null,\"tool_calls\":[{\"id\":\"c1\"}]}}]}");
	T_OK(tools_append_round(WIRE_CHAT, req, ans, res) == 0 &&
	    strstr(S(req), "{\"role\":\"assistant\",\"content\":null,"
	    "\"tool_calls\":[{\"id\":\"c1\"}]},{\"role\":\"tool\","
	    "\"tool_call_id\":\"c1\",\"content\":\"stdout:\\n1\\n\"}]"),
	    "chat: the assistant turn, then a tool message: %s", S(req));
	json_object_put(req);
	json_object_put(ans);

	req = J("{\"messages\":[{\"role\":\"user\",\"content\":\"go\"}]}");
	ans = J("{\"content\":[{\"type\":\"tool_use\",\"id\":\"c1\"}]}");
	T_OK(tools_append_round(WIRE_MESSAGES, req, ans, res) == 0 &&
	    strstr(S(req), "{\"role\":\"assistant\",\"content\":[{\"type\":"
	    "\"tool_use\",\"id\":\"c1\"}]},{\"role\":\"user\",\"content\":"
	    "[{\"type\":\"tool_result\",\"tool_use_id\":\"c1\""),
	    "messages: the results in one user turn: %s", S(req));
	json_object_put(req);
	json_object_put(ans);

	req = J("{\"input\":\"go\"}");
	ans = J("{\"output\":[{\"type\":\"function_call\",\"call_id\":\"c1\"}]}");
	T_OK(tools_append_round(WIRE_RESPONSES, req, ans, res) == 0 &&
	    strcmp(S(json_object_object_get(req, "input")), "[{\"role\":"
	    "\"user\",\"content\":\"go\"},{\"type\":\"function_call\","
	    "\"call_id\":\"c1\"},{\"type\":\"function_call_output\","
	    "\"call_id\":\"c1\",\"output\":\"stdout:\\n1\\n\"}]") == 0,
	    "responses: a string input becomes a list, then call and output");
	json_object_put(req);
	json_object_put(ans);
	json_object_put(res);
}

static void
test_render(void)
{
	struct json_object	*r;
	char			*s;

	r = J("{\"result_block\":{\"content\":{\"stdout\":\"rows 2\","
	    "\"stderr\":\"\",\"return_code\":0}},\"outputs\":[{\"path\":"
	    "\"chart.png\",\"file_id\":\"file-abc\"}]}");
	s = tools_render(r, NULL);
	T_EQ_STR(s, "stdout:\nrows 2\nreturn_code: 0\nfiles:\n"
	    "chart.png (file_id: file-abc)\n", "a result with a file");
	free(s);
	json_object_put(r);
	r = J("{\"result_block\":{\"content\":{\"stdout\":\"\",\"stderr\":"
	    "\"boom\\n\",\"return_code\":1}}}");
	s = tools_render(r, NULL);
	T_EQ_STR(s, "[tool error] stderr:\nboom\nreturn_code: 1\n",
	    "a failed program");
	free(s);
	json_object_put(r);
	s = tools_render(NULL, "sandbox execution failed");
	T_EQ_STR(s, "[tool error] sandbox execution failed", "a failed run");
	free(s);
}

int
main(void)
{
	test_declaration();
	test_calls();
	test_rounds();
	test_render();
	return t_done();
}
