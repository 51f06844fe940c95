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
 * xlate_responses.c: OpenAI Responses requests to chat completions,
 * and chat answers to Responses objects.  A Responses input is a flat
 * list of items (messages, function calls, their outputs, and bare
 * content parts); chat wants an assistant message carrying the calls
 * followed by one role:tool message per output.  depotd keeps no
 * conversation, so requests that lean on stored state are refused.
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "wire.h"
#include "xlate.h"

static const char *const in_text[] = { "input_text", "output_text", "text",
	NULL };

/* A run of items being read: what a run of call outputs left over. */
struct responses_items {
	struct xlate		*x;
	struct json_object	*msgs;
	struct json_object	*pending;	/* user parts after tools */
};

/* --- content parts --- */

static int
responses_image(struct xlate *x, struct json_object *p,
    struct json_object *parts)
{
	struct json_object	*iu;

	if (xlate_str(p, "image_url") == NULL)
		return xlate_fail(x,
		    "an input_image %s cannot be sent to a chat "
		    "completions model", xlate_get(p, "file_id") != NULL ?
		    "with a file_id" : "without an image_url");
	iu = json_object_new_object();
	xlate_copy(iu, "url", p, "image_url");
	if (xlate_str(p, "detail") != NULL)
		xlate_copy(iu, "detail", p, "detail");
	json_object_array_add(parts, xlate_part("image_url", "image_url", iu));
	return 0;
}

static int
responses_file(struct xlate *x, struct json_object *p,
    struct json_object *parts)
{
	struct json_object	*f;

	if (xlate_str(p, "file_data") == NULL &&
	    xlate_str(p, "file_id") == NULL)
		return xlate_fail(x,
		    "an input_file %s cannot be sent to a chat "
		    "completions model", xlate_get(p, "file_url") != NULL ?
		    "with a file_url" : "without file_data");
	f = json_object_new_object();
	xlate_copy(f, "filename", p, "filename");
	if (xlate_str(p, "file_data") != NULL)
		xlate_copy(f, "file_data", p, "file_data");
	else
		xlate_copy(f, "file_id", p, "file_id");
	json_object_array_add(parts, xlate_part("file", "file", f));
	return 0;
}

/* One input content part as a chat part. */
static int
responses_part(struct xlate *x, struct json_object *p,
    struct json_object *parts)
{
	const char	*type;

	type = xlate_str(p, "type");
	if (type == NULL)
		return xlate_fail(x, "a content part has no type");
	if (strcmp(type, "input_text") == 0 ||
	    strcmp(type, "output_text") == 0) {
		if (xlate_str(p, "text") == NULL)
			return xlate_fail(x, "a %s part has no text", type);
		json_object_array_add(parts, xlate_part("text", "text",
		    xlate_dup(xlate_get(p, "text"))));
		return 0;
	}
	if (strcmp(type, "input_image") == 0)
		return responses_image(x, p, parts);
	if (strcmp(type, "input_file") == 0)
		return responses_file(x, p, parts);
	return xlate_fail(x, "a %s part cannot be sent to a chat completions "
	    "model", type);
}

static struct json_object *
responses_parts(struct xlate *x, struct json_object *c)
{
	struct json_object	*parts;
	size_t			 i;

	if (xlate_is(c, json_type_string))
		return xlate_dup(c);
	if (!xlate_is(c, json_type_array)) {
		xlate_fail(x, "content must be a string or an array");
		return NULL;
	}
	parts = json_object_new_array();
	for (i = 0; i < json_object_array_length(c); i++)
		if (responses_part(x, json_object_array_get_idx(c, i),
		    parts) == -1) {
			json_object_put(parts);
			return NULL;
		}
	return parts;
}

/* --- items --- */

static struct json_object *
last_message(struct responses_items *r, const char *role)
{
	size_t			 n;
	struct json_object	*m;

	n = json_object_array_length(r->msgs);
	if (n == 0)
		return NULL;
	m = json_object_array_get_idx(r->msgs, n - 1);
	return strcmp(xlate_str(m, "role"), role) == 0 ? m : NULL;
}

/* The image and file parts of call outputs, after the tool messages. */
static void
flush_pending(struct responses_items *r)
{
	if (json_object_array_length(r->pending) == 0)
		return;
	json_object_array_add(r->msgs, xlate_chat_message("user", r->pending));
	r->pending = json_object_new_array();
}

static int
responses_message_item(struct responses_items *r, struct json_object *it)
{
	struct json_object	*c, *content;
	const char		*role;
	int			 other;

	c = xlate_get(it, "content");
	role = xlate_str(it, "role");
	if (role == NULL)
		return xlate_fail(r->x, "a message item has no role");
	if (strcmp(role, "user") == 0) {
		if ((content = responses_parts(r->x, c)) == NULL)
			return -1;
	} else if (strcmp(role, "assistant") == 0 ||
	    strcmp(role, "system") == 0 || strcmp(role, "developer") == 0) {
		/* Many chat servers know no developer role. */
		if (strcmp(role, "developer") == 0)
			role = "system";
		if (xlate_is(c, json_type_string))
			content = xlate_dup(c);
		else if ((content = xlate_join_text(c, in_text, "\n",
		    &other)) == NULL || other > 0) {
			json_object_put(content);
			return xlate_fail(r->x, "a %s message must be text",
			    role);
		}
	} else
		return xlate_fail(r->x, "a message with role %s cannot be sent "
		    "to a chat completions model", role);
	json_object_array_add(r->msgs, xlate_chat_message(role, content));
	return 0;
}

static int
responses_call_item(struct responses_items *r, struct json_object *it)
{
	struct json_object	*m, *calls, *call, *fn;

	if (xlate_str(it, "call_id") == NULL || xlate_str(it, "name") == NULL)
		return xlate_fail(r->x, "a function_call needs a call_id and a "
		    "name");
	fn = json_object_new_object();
	xlate_copy(fn, "name", it, "name");
	if (xlate_str(it, "arguments") != NULL)
		xlate_copy(fn, "arguments", it, "arguments");
	else
		xlate_set_str(fn, "arguments", "{}");
	call = json_object_new_object();
	xlate_copy(call, "id", it, "call_id");
	xlate_set_str(call, "type", "function");
	json_object_object_add(call, "function", fn);

	/* Calls after the assistant's text belong to the same turn. */
	if ((m = last_message(r, "assistant")) == NULL) {
		m = xlate_chat_message("assistant", NULL);
		json_object_array_add(r->msgs, m);
	}
	if ((calls = xlate_get(m, "tool_calls")) == NULL) {
		calls = json_object_new_array();
		json_object_object_add(m, "tool_calls", calls);
	}
	json_object_array_add(calls, call);
	return 0;
}

static int
responses_output_item(struct responses_items *r, struct json_object *it)
{
	struct json_object	*out, *parts;
	int			 rc;

	out = xlate_get(it, "output");
	if (xlate_str(it, "call_id") == NULL)
		return xlate_fail(r->x,
		    "a function_call_output has no call_id");
	if ((parts = responses_parts(r->x, out)) == NULL)
		return -1;
	rc = xlate_chat_tool_result(r->x, r->msgs, xlate_str(it, "call_id"),
	    parts, 0,
	    r->pending);
	json_object_put(parts);
	return rc;
}

/* A content part at the top of input: part of a user message. */
static int
responses_bare_part(struct responses_items *r, struct json_object *it)
{
	struct json_object	*m, *c;

	if ((m = last_message(r, "user")) == NULL ||
	    !xlate_is(c = xlate_get(m, "content"), json_type_array)) {
		c = json_object_new_array();
		json_object_array_add(r->msgs, xlate_chat_message("user", c));
	}
	return responses_part(r->x, it, c);
}

static int
responses_item(struct responses_items *r, struct json_object *it)
{
	const char	*type;

	type = xlate_str(it, "type");
	if (type == NULL && xlate_str(it, "role") != NULL)
		type = "message";
	if (type == NULL)
		return xlate_fail(r->x, "an input item has no type");
	if (strcmp(type, "function_call_output") == 0)
		return responses_output_item(r, it);
	flush_pending(r);
	if (strcmp(type, "message") == 0)
		return responses_message_item(r, it);
	if (strcmp(type, "function_call") == 0)
		return responses_call_item(r, it);
	/* Reasoning is the model's own and chat cannot carry it back. */
	if (strcmp(type, "reasoning") == 0)
		return 0;
	if (strcmp(type, "input_text") == 0 ||
	    strcmp(type, "input_image") == 0 ||
	    strcmp(type, "input_file") == 0)
		return responses_bare_part(r, it);
	return xlate_fail(r->x, "an input item of type %s cannot be sent to a "
	    "chat completions model", type);
}

static int
responses_input(struct xlate *x, struct json_object *req,
    struct json_object *msgs)
{
	struct json_object	*in;
	struct responses_items		 r = { x, msgs, NULL };
	size_t			 i;
	int			 rc = 0;

	in = xlate_get(req, "input");
	if (xlate_is(xlate_get(req, "instructions"), json_type_string))
		json_object_array_add(msgs, xlate_chat_message("system",
		    xlate_dup(xlate_get(req, "instructions"))));
	else if (xlate_get(req, "instructions") != NULL)
		return xlate_fail(x, "instructions must be a string");
	if (xlate_is(in, json_type_string)) {
		json_object_array_add(msgs,
		    xlate_chat_message("user", xlate_dup(in)));
		return 0;
	}
	if (!xlate_is(in, json_type_array))
		return xlate_fail(x, "input must be a string or an array");
	r.pending = json_object_new_array();
	for (i = 0; i < json_object_array_length(in) && rc == 0; i++)
		if ((rc = responses_item(&r,
		    json_object_array_get_idx(in, i))) == -1)
			xlate_where(x, "input[%zu]", i);
	if (rc == 0)
		flush_pending(&r);
	json_object_put(r.pending);
	return rc;
}

/* --- the rest of the request --- */

static struct json_object *
responses_tool_definition(struct xlate *x, struct json_object *t)
{
	struct json_object	*ct;
	const char		*type;

	type = xlate_str(t, "type");
	if (type == NULL || strcmp(type, "function") != 0) {
		xlate_fail(x, "a %s tool cannot be sent to a chat completions "
		    "model", type != NULL ? type : "(untyped)");
		return NULL;
	}
	if ((ct = xlate_chat_function(x, t, "parameters")) != NULL)
		xlate_copy(xlate_get(ct, "function"), "strict", t, "strict");
	return ct;
}

static int
responses_tool_choice(struct xlate *x, struct json_object *req,
    struct json_object *chat)
{
	struct json_object	*tc, *fn;
	const char		*type;

	tc = xlate_get(req, "tool_choice");
	type = xlate_str(tc, "type");
	if (xlate_get(chat, "tools") == NULL)
		return 0;
	xlate_copy(chat, "parallel_tool_calls", req, "parallel_tool_calls");
	if (tc == NULL)
		return 0;
	if (xlate_is(tc, json_type_string)) {
		xlate_copy(chat, "tool_choice", req, "tool_choice");
		return 0;
	}
	if (type == NULL || strcmp(type, "function") != 0 ||
	    xlate_str(tc, "name") == NULL)
		return xlate_fail(x, "tool_choice %s cannot be sent to a chat "
		    "completions model", type ? type : "(untyped)");
	fn = json_object_new_object();
	xlate_copy(fn, "name", tc, "name");
	json_object_object_add(chat, "tool_choice",
	    xlate_part("function", "function", fn));
	return 0;
}

/* text.format as chat's response_format. */
static int
responses_format(struct xlate *x, struct json_object *req,
    struct json_object *chat)
{
	struct json_object	*f, *rf, *js;
	const char		*type;

	f = xlate_get(xlate_get(req, "text"), "format");
	type = xlate_str(f, "type");
	if (f == NULL || (type != NULL && strcmp(type, "text") == 0))
		return 0;
	if (type != NULL && strcmp(type, "json_object") == 0) {
		xlate_copy(chat, "response_format", xlate_get(req, "text"),
		    "format");
		return 0;
	}
	if (type == NULL || strcmp(type, "json_schema") != 0)
		return xlate_fail(x, "text.format cannot be sent to a chat "
		    "completions model");
	js = json_object_new_object();
	xlate_copy(js, "name", f, "name");
	xlate_copy(js, "description", f, "description");
	xlate_copy(js, "schema", f, "schema");
	xlate_copy(js, "strict", f, "strict");
	rf = xlate_part("json_schema", "json_schema", js);
	json_object_object_add(chat, "response_format", rf);
	return 0;
}

struct json_object *
xlate_responses_request_to_chat(struct xlate *x, struct json_object *req)
{
	static const char *const stateful[] = { "previous_response_id",
	    "conversation", "prompt", NULL };
	struct json_object	*chat, *msgs;
	size_t			 i;

	for (i = 0; stateful[i] != NULL; i++)
		if (xlate_get(req, stateful[i]) != NULL) {
			xlate_fail(x, "%s is not supported: depotd keeps no "
			    "stored conversations or prompts", stateful[i]);
			return NULL;
		}
	chat = json_object_new_object();
	xlate_copy(chat, "model", req, "model");
	msgs = json_object_new_array();
	json_object_object_add(chat, "messages", msgs);
	if (responses_input(x, req, msgs) == -1 ||
	    xlate_tools(x, req, chat, responses_tool_definition) == -1 ||
	    responses_tool_choice(x, req, chat) == -1 ||
	    responses_format(x, req, chat) == -1) {
		json_object_put(chat);
		return NULL;
	}
	xlate_copy(chat, "max_tokens", req, "max_output_tokens");
	xlate_copy(chat, "temperature", req, "temperature");
	xlate_copy(chat, "top_p", req, "top_p");
	xlate_copy(chat, "user", req, "user");
	xlate_chat_stream(chat, req);
	return chat;
}

/* --- chat answers as Responses objects --- */

static struct json_object *
answer_message(struct xlate_chat_answer *a, const char *status)
{
	struct json_object	*m, *content, *p;
	char			 id[XLATE_ID_LEN];

	content = json_object_new_array();
	if (a->refusal == NULL || json_object_get_string_len(a->text) > 0) {
		p = xlate_part("output_text", "text", a->text != NULL ?
		    json_object_get(a->text) : json_object_new_string(""));
		json_object_object_add(p, "annotations",
		    json_object_new_array());
		json_object_object_add(p, "logprobs", json_object_new_array());
		json_object_array_add(content, p);
	}
	if (a->refusal != NULL)
		json_object_array_add(content, xlate_part("refusal", "refusal",
		    xlate_dup(a->refusal)));
	m = json_object_new_object();
	xlate_id(id, sizeof(id), "msg_");
	xlate_set_str(m, "id", id);
	xlate_set_str(m, "type", "message");
	xlate_set_str(m, "status", status);
	xlate_set_str(m, "role", "assistant");
	json_object_object_add(m, "content", content);
	return m;
}

static struct json_object *
answer_call(struct json_object *call)
{
	struct json_object	*fc, *fn;
	char			 id[XLATE_ID_LEN];

	fn = xlate_get(call, "function");
	fc = json_object_new_object();
	xlate_id(id, sizeof(id), "fc_");
	xlate_set_str(fc, "id", id);
	xlate_set_str(fc, "type", "function_call");
	xlate_set_str(fc, "status", "completed");
	xlate_copy(fc, "call_id", call, "id");
	xlate_copy(fc, "name", fn, "name");
	if (xlate_str(fn, "arguments") != NULL)
		xlate_copy(fc, "arguments", fn, "arguments");
	else
		xlate_set_str(fc, "arguments", "{}");
	return fc;
}

/* No usage in the chat answer: none in the response (wire_usage.c). */
static struct json_object *
answer_usage(struct json_object *u)
{
	struct wire_usage	 wu;

	if (u == NULL)
		return NULL;
	wire_usage_init(&wu);
	wire_usage_merge(WIRE_CHAT, u, &wu);
	return wire_usage_json(WIRE_RESPONSES, &wu);
}

/* The fields every Responses object has, at their plain values. */
static void
answer_defaults(struct json_object *out)
{
	struct json_object	*text, *fmt, *reasoning;

	json_object_object_add(out, "background", json_object_new_boolean(0));
	json_object_object_add(out, "error", NULL);
	json_object_object_add(out, "instructions", NULL);
	json_object_object_add(out, "max_output_tokens", NULL);
	json_object_object_add(out, "metadata", json_object_new_object());
	json_object_object_add(out, "parallel_tool_calls",
	    json_object_new_boolean(1));
	json_object_object_add(out, "previous_response_id", NULL);
	reasoning = json_object_new_object();
	json_object_object_add(reasoning, "effort", NULL);
	json_object_object_add(reasoning, "summary", NULL);
	json_object_object_add(out, "reasoning", reasoning);
	json_object_object_add(out, "store", json_object_new_boolean(0));
	json_object_object_add(out, "temperature", NULL);
	fmt = json_object_new_object();
	xlate_set_str(fmt, "type", "text");
	text = json_object_new_object();
	json_object_object_add(text, "format", fmt);
	json_object_object_add(out, "text", text);
	xlate_set_str(out, "tool_choice", "auto");
	json_object_object_add(out, "tools", json_object_new_array());
	json_object_object_add(out, "top_p", NULL);
	xlate_set_str(out, "truncation", "disabled");
}

struct json_object *
xlate_responses_answer_from_chat(struct xlate *x, struct json_object *resp,
    const char *model)
{
	struct xlate_chat_answer	 a;
	struct json_object	*out, *output, *inc = NULL, *created;
	const char		*status = "completed", *reason = NULL;
	char			 id[XLATE_ID_LEN];
	size_t			 i;

	if (xlate_chat_answer_read(x, resp, &a) == -1)
		return NULL;
	if (strcmp(a.finish, "length") == 0)
		reason = "max_output_tokens";
	else if (strcmp(a.finish, "content_filter") == 0)
		reason = "content_filter";
	if (reason != NULL) {
		status = "incomplete";
		inc = json_object_new_object();
		xlate_set_str(inc, "reason", reason);
	}
	output = json_object_new_array();
	/* A message item unless the answer is only tool calls. */
	if (json_object_get_string_len(a.text) > 0 || a.refusal != NULL ||
	    a.calls == NULL || json_object_array_length(a.calls) == 0)
		json_object_array_add(output, answer_message(&a, status));
	json_object_put(a.text);
	for (i = 0; a.calls != NULL &&
	    i < json_object_array_length(a.calls); i++)
		json_object_array_add(output, answer_call(
		    json_object_array_get_idx(a.calls, i)));

	out = json_object_new_object();
	xlate_id(id, sizeof(id), "resp_");
	xlate_set_str(out, "id", id);
	xlate_set_str(out, "object", "response");
	created = xlate_get(resp, "created");
	json_object_object_add(out, "created_at", xlate_is(created,
	    json_type_int) ? xlate_dup(created) :
	    json_object_new_int64((int64_t)time(NULL)));
	xlate_set_str(out, "status", status);
	json_object_object_add(out, "incomplete_details", inc);
	xlate_set_str(out, "model", model);
	json_object_object_add(out, "output", output);
	answer_defaults(out);
	json_object_object_add(out, "usage", answer_usage(a.usage));
	return out;
}
