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
 * xlate_manswer.c: whole answers between chat completions and
 * Anthropic Messages, and the reading of a chat answer that the
 * Responses side shares.  An answer that does not have the shape its
 * dialect promises is refused (the caller's 502) rather than guessed
 * at.
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "fe_model.h"
#include "xlate.h"

static const char *const chat_text[] = { "text", "output_text", NULL };
static const char *const msg_text[] = { "text", NULL };

static int
check_calls(struct xl *x, struct json_object *calls)
{
	struct json_object	*c, *fn;
	size_t			 i;

	if (!xl_is(calls, json_type_array))
		return xl_fail(x, "tool_calls is not an array");
	for (i = 0; i < json_object_array_length(calls); i++) {
		c = json_object_array_get_idx(calls, i);
		fn = xl_get(c, "function");
		if (xl_str(c, "id") == NULL || xl_str(fn, "name") == NULL ||
		    (xl_get(fn, "arguments") != NULL &&
		    xl_str(fn, "arguments") == NULL))
			return xl_fail(x, "tool_calls[%zu] is malformed", i);
	}
	return 0;
}

int
xl_chatans_read(struct xl *x, struct json_object *resp,
    struct xl_chatans *a)
{
	struct json_object	*choices = xl_get(resp, "choices"), *c0, *msg;
	struct json_object	*content;
	int			 other;

	memset(a, 0, sizeof(*a));
	a->resp = resp;
	if (!xl_is(choices, json_type_array) ||
	    json_object_array_length(choices) == 0)
		return xl_fail(x, "the upstream's answer has no choices");
	c0 = json_object_array_get_idx(choices, 0);
	if (!xl_is(msg = xl_get(c0, "message"), json_type_object))
		return xl_fail(x, "the upstream's answer has no message");
	content = xl_get(msg, "content");
	if (xl_is(content, json_type_string))
		a->text = xl_dup(content);
	else if (xl_is(content, json_type_array))
		a->text = xl_join_text(content, chat_text, "", &other);
	else if (content != NULL)
		return xl_fail(x, "the upstream's message content is "
		    "malformed");
	a->refusal = xl_get(msg, "refusal");
	a->calls = xl_get(msg, "tool_calls");
	if ((a->refusal != NULL && !xl_is(a->refusal, json_type_string)) ||
	    (a->calls != NULL && check_calls(x, a->calls) == -1)) {
		json_object_put(a->text);
		a->text = NULL;
		return xl_fail(x, "the upstream's message is malformed");
	}
	if ((a->finish = xl_str(c0, "finish_reason")) == NULL)
		a->finish = "";
	if (xl_is(xl_get(resp, "usage"), json_type_object))
		a->usage = xl_get(resp, "usage");
	return 0;
}

static int64_t
int_field(struct json_object *o, const char *key)
{
	int64_t	 n = wire_tokens(xl_get(o, key));

	return n < 0 ? 0 : n;
}

/* --- chat to Messages --- */

static const char *
msg_stop(struct xl_chatans *a, struct json_object *out)
{
	struct json_object	*c0;
	const char		*seq;

	if (a->calls != NULL && json_object_array_length(a->calls) > 0)
		return "tool_use";
	if (strcmp(stop_to_messages(a->finish), "end_turn") != 0)
		return stop_to_messages(a->finish);
	/* vLLM names the stop string that matched. */
	c0 = json_object_array_get_idx(xl_get(a->resp, "choices"), 0);
	if ((seq = xl_str(c0, "stop_reason")) != NULL) {
		xl_set_str(out, "stop_sequence", seq);
		return "stop_sequence";
	}
	return "end_turn";
}

static struct json_object *
msg_usage(struct json_object *u)
{
	struct json_object	*mu = json_object_new_object();
	int64_t			 in, cached;

	in = int_field(u, "prompt_tokens");
	cached = int_field(xl_get(u, "prompt_tokens_details"),
	    "cached_tokens");
	if (cached < 0 || cached > in)
		cached = 0;
	/* Messages counts input read from the cache apart. */
	json_object_object_add(mu, "input_tokens",
	    json_object_new_int64(in - cached));
	json_object_object_add(mu, "cache_creation_input_tokens",
	    json_object_new_int64(0));
	json_object_object_add(mu, "cache_read_input_tokens",
	    json_object_new_int64(cached));
	json_object_object_add(mu, "output_tokens",
	    json_object_new_int64(int_field(u, "completion_tokens")));
	return mu;
}

struct json_object *
xl_chat_to_msgans(struct xl *x, struct json_object *resp, const char *model)
{
	struct xl_chatans	 a;
	struct json_object	*out, *content;
	char			 id[XL_IDLEN];

	if (xl_chatans_read(x, resp, &a) == -1)
		return NULL;
	content = json_object_new_array();
	if (a.text != NULL && json_object_get_string_len(a.text) > 0)
		json_object_array_add(content, xl_part("text", "text",
		    json_object_get(a.text)));
	if (a.refusal != NULL)
		json_object_array_add(content, xl_part("text", "text",
		    xl_dup(a.refusal)));
	json_object_put(a.text);
	if (a.calls != NULL && xl_tool_uses(x, a.calls, content) == -1) {
		json_object_put(content);
		xl_where(x, "the upstream's answer");
		return NULL;
	}
	out = json_object_new_object();
	xl_id(id, sizeof(id), "msg_");
	xl_set_str(out, "id", id);
	xl_set_str(out, "type", "message");
	xl_set_str(out, "role", "assistant");
	xl_set_str(out, "model", model);
	json_object_object_add(out, "content", content);
	json_object_object_add(out, "stop_sequence", NULL);
	xl_set_str(out, "stop_reason", msg_stop(&a, out));
	json_object_object_add(out, "usage", msg_usage(a.usage));
	return out;
}

/* --- Messages to chat --- */

static struct json_object *
chat_usage(struct json_object *u)
{
	struct json_object	*cu = json_object_new_object(), *det;
	int64_t			 in, out, cached;

	cached = int_field(u, "cache_read_input_tokens");
	in = int_field(u, "input_tokens") + cached +
	    int_field(u, "cache_creation_input_tokens");
	out = int_field(u, "output_tokens");
	json_object_object_add(cu, "prompt_tokens", json_object_new_int64(in));
	json_object_object_add(cu, "completion_tokens",
	    json_object_new_int64(out));
	json_object_object_add(cu, "total_tokens",
	    json_object_new_int64(in + out));
	if (cached > 0) {
		det = json_object_new_object();
		json_object_object_add(det, "cached_tokens",
		    json_object_new_int64(cached));
		json_object_object_add(cu, "prompt_tokens_details", det);
	}
	return cu;
}

static int
chat_message(struct xl *x, struct json_object *content,
    struct json_object *msg)
{
	struct json_object	*calls, *b, *text;
	const char		*type;
	size_t			 i;
	int			 other;

	calls = json_object_new_array();
	for (i = 0; i < json_object_array_length(content); i++) {
		b = json_object_array_get_idx(content, i);
		if ((type = xl_str(b, "type")) == NULL) {
			json_object_put(calls);
			return xl_fail(x, "content[%zu] has no type", i);
		}
		/* Thinking and server tools' blocks have no chat form. */
		if (strcmp(type, "tool_use") == 0 &&
		    xl_tool_call(x, b, calls) == -1) {
			json_object_put(calls);
			return -1;
		}
	}
	text = xl_join_text(content, msg_text, "", &other);
	if (json_object_get_string_len(text) == 0 &&
	    json_object_array_length(calls) > 0) {
		json_object_put(text);
		text = NULL;
	}
	json_object_object_add(msg, "content", text);
	json_object_object_add(msg, "refusal", NULL);
	if (json_object_array_length(calls) > 0)
		json_object_object_add(msg, "tool_calls", calls);
	else
		json_object_put(calls);
	return 0;
}

struct json_object *
xl_msgans_to_chat(struct xl *x, struct json_object *resp, const char *model)
{
	struct json_object	*out, *content, *choices, *c0, *msg;
	const char		*type = xl_str(resp, "type"), *stop;
	char			 id[XL_IDLEN];

	content = xl_get(resp, "content");
	if ((type != NULL && strcmp(type, "message") != 0) ||
	    !xl_is(content, json_type_array)) {
		xl_fail(x, "the upstream's answer is not a message");
		return NULL;
	}
	msg = json_object_new_object();
	xl_set_str(msg, "role", "assistant");
	if (chat_message(x, content, msg) == -1) {
		json_object_put(msg);
		xl_where(x, "the upstream's answer");
		return NULL;
	}
	c0 = json_object_new_object();
	json_object_object_add(c0, "index", json_object_new_int(0));
	json_object_object_add(c0, "message", msg);
	json_object_object_add(c0, "logprobs", NULL);
	/* A stop reason missing is an ordinary stop. */
	stop = stop_to_chat(xl_str(resp, "stop_reason"));
	xl_set_str(c0, "finish_reason", stop != NULL ? stop : "stop");
	choices = json_object_new_array();
	json_object_array_add(choices, c0);

	out = json_object_new_object();
	xl_id(id, sizeof(id), "chatcmpl-");
	xl_set_str(out, "id", id);
	xl_set_str(out, "object", "chat.completion");
	json_object_object_add(out, "created",
	    json_object_new_int64((int64_t)time(NULL)));
	xl_set_str(out, "model", model);
	json_object_object_add(out, "choices", choices);
	json_object_object_add(out, "usage", chat_usage(xl_get(resp,
	    "usage")));
	return out;
}
