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
 * xlate_messages_from_chat.c: chat completions into Anthropic
 * Messages: a request for an upstream (and so Responses requests too,
 * through chat), and a whole answer for a caller.  Messages has one
 * system prompt, strictly user and assistant turns with tool results
 * in the user's, base64 sources where chat has data: URLs, and a
 * required max_tokens.  Data strings are split at their first comma
 * and never decoded: they may be placeholders.
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>
#include <json-c/printbuf.h>

#include "wire.h"
#include "xlate.h"

static const char *const text_types[] = { "text", NULL };

/* Appends a turn, merging it into the last one when the role repeats. */
static void
chat_append(struct json_object *msgs, const char *role,
    struct json_object *content)
{
	struct json_object	*last, *lc, *blocks;
	size_t			 n, i;

	n = json_object_array_length(msgs);
	last = n > 0 ? json_object_array_get_idx(msgs, n - 1) : NULL;
	if (last == NULL || strcmp(xlate_str(last, "role"), role) != 0) {
		json_object_array_add(msgs, xlate_chat_message(role, content));
		return;
	}
	lc = xlate_get(last, "content");
	if (xlate_is(lc, json_type_string)) {
		blocks = json_object_new_array();
		json_object_array_add(blocks, xlate_part("text", "text",
		    xlate_dup(lc)));
		json_object_object_add(last, "content", blocks);
		lc = blocks;
	}
	if (xlate_is(content, json_type_string))
		json_object_array_add(lc, xlate_part("text", "text",
		    xlate_dup(content)));
	else
		for (i = 0; i < json_object_array_length(content); i++)
			json_object_array_add(lc, json_object_get(
			    json_object_array_get_idx(content, i)));
	json_object_put(content);
}

static struct json_object *
chat_source(const char *url)
{
	struct json_object	*src;
	const char		*data;
	char			 mt[128];

	src = json_object_new_object();
	if (xlate_data_url(url, mt, sizeof(mt), &data) == 0) {
		xlate_set_str(src, "type", "base64");
		xlate_set_str(src, "media_type", mt);
		xlate_set_str(src, "data", data);
	} else {
		xlate_set_str(src, "type", "url");
		xlate_set_str(src, "url", url);
	}
	return src;
}

static int
chat_image(struct xlate *x, struct json_object *p, struct json_object *blocks)
{
	struct json_object	*iu;
	const char		*url, *data;
	char			 mt[128];

	iu = xlate_get(p, "image_url");
	url = xlate_is(iu, json_type_string) ? json_object_get_string(iu) :
	    xlate_str(iu, "url");
	if (url == NULL)
		return xlate_fail(x, "an image_url part has no url");
	if (xlate_data_url(url, mt, sizeof(mt), &data) == -1 &&
	    strncasecmp(url, "https://", 8) != 0 &&
	    strncasecmp(url, "http://", 7) != 0)
		return xlate_fail(x, "an image url must be a base64 data: URL "
		    "or an http(s) URL");
	json_object_array_add(blocks, xlate_part("image", "source",
	    chat_source(url)));
	return 0;
}

static int
chat_file(struct xlate *x, struct json_object *p, struct json_object *blocks)
{
	struct json_object	*f, *src, *doc;
	const char		*fd;

	f = xlate_get(p, "file");
	fd = xlate_str(f, "file_data");
	if (fd != NULL) {
		if (strncasecmp(fd, "data:", 5) != 0)
			return xlate_fail(x, "file_data must be a base64 data: "
			    "URL");
		src = chat_source(fd);
		if (strcmp(xlate_str(src, "type"), "base64") != 0) {
			json_object_put(src);
			return xlate_fail(x, "file_data must be a base64 data: "
			    "URL");
		}
	} else if (xlate_str(f, "file_id") != NULL) {
		src = json_object_new_object();
		xlate_set_str(src, "type", "file");
		xlate_copy(src, "file_id", f, "file_id");
	} else
		return xlate_fail(x, "a file part needs file_data or file_id");
	doc = xlate_part("document", "source", src);
	if (xlate_str(f, "filename") != NULL)
		xlate_copy(doc, "title", f, "filename");
	json_object_array_add(blocks, doc);
	return 0;
}

/* User content as Messages blocks (a string stays a string). */
static struct json_object *
chat_user(struct xlate *x, struct json_object *c)
{
	struct json_object	*blocks, *p;
	const char		*type;
	size_t			 i;
	int			 rc;

	if (xlate_is(c, json_type_string))
		return xlate_dup(c);
	if (!xlate_is(c, json_type_array)) {
		xlate_fail(x, "content must be a string or an array");
		return NULL;
	}
	blocks = json_object_new_array();
	for (i = 0; i < json_object_array_length(c); i++) {
		p = json_object_array_get_idx(c, i);
		if ((type = xlate_str(p, "type")) == NULL)
			type = "(none)";
		if (strcmp(type, "text") == 0 && xlate_str(p, "text") != NULL) {
			/* Messages refuses empty text blocks. */
			if (json_object_get_string_len(xlate_get(p,
			    "text")) > 0)
				json_object_array_add(blocks, xlate_part("text",
				    "text", xlate_dup(xlate_get(p, "text"))));
			rc = 0;
		} else if (strcmp(type, "image_url") == 0)
			rc = chat_image(x, p, blocks);
		else if (strcmp(type, "file") == 0)
			rc = chat_file(x, p, blocks);
		else
			rc = xlate_fail(x, "a %s part cannot be sent to a "
			    "Messages model", type);
		if (rc == -1) {
			json_object_put(blocks);
			return NULL;
		}
	}
	return blocks;
}

/* Chat tool_calls appended as tool_use blocks. */
static int
calls_to_tool_uses(struct xlate *x, struct json_object *calls,
    struct json_object *blocks)
{
	struct json_object	*call, *fn, *input, *b;
	const char		*args;
	size_t			 i;

	if (!xlate_is(calls, json_type_array))
		return xlate_fail(x, "tool_calls must be an array");
	for (i = 0; i < json_object_array_length(calls); i++) {
		call = json_object_array_get_idx(calls, i);
		fn = xlate_get(call, "function");
		if (xlate_str(call, "id") == NULL ||
		    xlate_str(fn, "name") == NULL)
			return xlate_fail(x, "a tool call needs an id and a "
			    "function name");
		args = xlate_str(fn, "arguments");
		if ((input = xlate_args_parse(args ? args : "")) == NULL)
			return xlate_fail(x,
			    "tool call %s: arguments are not a "
			    "JSON object", xlate_str(call, "id"));
		b = json_object_new_object();
		xlate_set_str(b, "type", "tool_use");
		xlate_copy(b, "id", call, "id");
		xlate_copy(b, "name", fn, "name");
		json_object_object_add(b, "input", input);
		json_object_array_add(blocks, b);
	}
	return 0;
}

static int
chat_assistant(struct xlate *x, struct json_object *m, struct json_object *msgs)
{
	struct json_object	*c, *blocks, *text, *calls;
	int			 other = 0;

	c = xlate_get(m, "content");
	calls = xlate_get(m, "tool_calls");
	blocks = json_object_new_array();
	if (xlate_is(c, json_type_string))
		text = xlate_dup(c);
	else if (c == NULL)
		text = NULL;
	else if ((text = xlate_join_text(c, text_types, "\n",
	    &other)) == NULL ||
	    other > 0) {
		json_object_put(text);
		json_object_put(blocks);
		return xlate_fail(x, "assistant content must be text");
	}
	if (text != NULL && json_object_get_string_len(text) > 0)
		json_object_array_add(blocks, xlate_part("text", "text", text));
	else
		json_object_put(text);
	if (calls != NULL && calls_to_tool_uses(x, calls, blocks) == -1) {
		json_object_put(blocks);
		return -1;
	}
	/* Messages refuses an empty turn; an empty one says nothing. */
	if (json_object_array_length(blocks) == 0)
		json_object_put(blocks);
	else
		chat_append(msgs, "assistant", blocks);
	return 0;
}

static int
chat_tool_message(struct xlate *x, struct json_object *m,
    struct json_object *msgs)
{
	struct json_object	*c, *b, *blocks, *tc;

	c = xlate_get(m, "content");
	if (xlate_str(m, "tool_call_id") == NULL)
		return xlate_fail(x, "a tool message has no tool_call_id");
	b = json_object_new_object();
	xlate_set_str(b, "type", "tool_result");
	xlate_copy(b, "tool_use_id", m, "tool_call_id");
	if (c != NULL) {
		if ((tc = chat_user(x, c)) == NULL) {
			json_object_put(b);
			return -1;
		}
		json_object_object_add(b, "content", tc);
	}
	blocks = json_object_new_array();
	json_object_array_add(blocks, b);
	chat_append(msgs, "user", blocks);
	return 0;
}

static int
chat_system(struct xlate *x, struct json_object *m, struct printbuf *sys)
{
	struct json_object	*c, *text;
	int			 other = 0;

	c = xlate_get(m, "content");
	if (xlate_is(c, json_type_string))
		text = xlate_dup(c);
	else if ((text = xlate_join_text(c, text_types, "\n",
	    &other)) == NULL ||
	    other > 0) {
		json_object_put(text);
		return xlate_fail(x, "a system message must be text");
	}
	if (sys->bpos > 0)
		printbuf_memappend(sys, "\n", 1);
	printbuf_memappend(sys, json_object_get_string(text),
	    json_object_get_string_len(text));
	json_object_put(text);
	return 0;
}

static int
chat_message(struct xlate *x, struct json_object *m, struct json_object *msgs,
    struct printbuf *sys)
{
	struct json_object	*c;
	const char		*role;

	role = xlate_str(m, "role");
	if (role == NULL)
		return xlate_fail(x, "a message has no role");
	/* Messages has one system prompt, wherever chat put them. */
	if (strcmp(role, "system") == 0 || strcmp(role, "developer") == 0)
		return chat_system(x, m, sys);
	if (strcmp(role, "assistant") == 0)
		return chat_assistant(x, m, msgs);
	if (strcmp(role, "tool") == 0)
		return chat_tool_message(x, m, msgs);
	if (strcmp(role, "user") != 0)
		return xlate_fail(x,
		    "a %s message cannot be sent to a Messages "
		    "model", role);
	if ((c = chat_user(x, xlate_get(m, "content"))) == NULL)
		return -1;
	chat_append(msgs, "user", c);
	return 0;
}

static int
chat_messages(struct xlate *x, struct json_object *req, struct json_object *out)
{
	struct json_object	*in, *msgs;
	struct printbuf		*sys;
	size_t			 i;
	int			 rc = 0;

	in = xlate_get(req, "messages");
	if (!xlate_is(in, json_type_array))
		return xlate_fail(x, "messages must be an array");
	if ((sys = printbuf_new()) == NULL)
		return xlate_fail(x, "out of memory");
	msgs = json_object_new_array();
	json_object_object_add(out, "messages", msgs);
	for (i = 0; i < json_object_array_length(in) && rc == 0; i++)
		if ((rc = chat_message(x, json_object_array_get_idx(in, i),
		    msgs,
		    sys)) == -1)
			xlate_where(x, "messages[%zu]", i);
	if (rc == 0 && sys->bpos > 0)
		json_object_object_add(out, "system",
		    json_object_new_string_len(sys->buf, sys->bpos));
	printbuf_free(sys);
	return rc;
}

static struct json_object *
chat_tool_definition(struct xlate *x, struct json_object *t)
{
	struct json_object	*fn, *mt, *schema;
	const char		*type;

	fn = xlate_get(t, "function");
	type = xlate_str(t, "type");
	if (type == NULL || strcmp(type, "function") != 0) {
		xlate_fail(x, "a %s tool cannot be sent to a Messages model",
		    type != NULL ? type : "(untyped)");
		return NULL;
	}
	if (xlate_str(fn, "name") == NULL) {
		xlate_fail(x, "a tool has no function name");
		return NULL;
	}
	mt = json_object_new_object();
	xlate_copy(mt, "name", fn, "name");
	xlate_copy(mt, "description", fn, "description");
	/*
	 * Messages requires an object schema; chat takes none, or {},
	 * for a function without parameters.
	 */
	if (xlate_is(xlate_get(fn, "parameters"), json_type_object))
		schema = xlate_dup(xlate_get(fn, "parameters"));
	else {
		schema = json_object_new_object();
		json_object_object_add(schema, "properties",
		    json_object_new_object());
	}
	if (xlate_get(schema, "type") == NULL)
		xlate_set_str(schema, "type", "object");
	json_object_object_add(mt, "input_schema", schema);
	return mt;
}

static int
chat_tool_choice(struct xlate *x, struct json_object *req,
    struct json_object *out)
{
	struct json_object	*tc, *mtc, *ptc;
	const char		*s, *name;

	tc = xlate_get(req, "tool_choice");
	ptc = xlate_get(req, "parallel_tool_calls");
	if (xlate_get(out, "tools") == NULL)
		return 0;
	mtc = json_object_new_object();
	if (tc == NULL)
		s = "auto";
	else if ((s = xlate_is(tc, json_type_string) ?
	    json_object_get_string(tc) : NULL) != NULL) {
		if (strcmp(s, "required") == 0)
			s = "any";
		else if (strcmp(s, "auto") != 0 && strcmp(s, "none") != 0) {
			json_object_put(mtc);
			return xlate_fail(x, "tool_choice %s is unknown", s);
		}
	} else if ((name = xlate_str(xlate_get(tc, "function"),
	    "name")) != NULL) {
		s = "tool";
		xlate_set_str(mtc, "name", name);
	} else {
		json_object_put(mtc);
		return xlate_fail(x, "tool_choice cannot be sent to a Messages "
		    "model");
	}
	xlate_set_str(mtc, "type", s);
	if (ptc != NULL && !json_object_get_boolean(ptc) &&
	    strcmp(s, "none") != 0)
		json_object_object_add(mtc, "disable_parallel_tool_use",
		    json_object_new_boolean(1));
	if (tc == NULL && xlate_get(mtc, "disable_parallel_tool_use") == NULL)
		json_object_put(mtc);
	else
		json_object_object_add(out, "tool_choice", mtc);
	return 0;
}

static int
chat_parameters(struct xlate *x, struct json_object *req,
    struct json_object *out,
    int max_tokens)
{
	struct json_object	*v, *arr, *md;

	if ((v = xlate_get(req, "max_completion_tokens")) == NULL)
		v = xlate_get(req, "max_tokens");
	if (v != NULL && !xlate_is(v, json_type_int))
		return xlate_fail(x, "max_tokens must be an integer");
	json_object_object_add(out, "max_tokens", v != NULL ? xlate_dup(v) :
	    json_object_new_int(max_tokens));
	if ((v = xlate_get(req, "n")) != NULL && json_object_get_int64(v) != 1)
		return xlate_fail(x,
		    "n other than 1 cannot be sent to a Messages "
		    "model");
	/* Messages takes temperatures up to 1, chat up to 2. */
	if ((v = xlate_get(req, "temperature")) != NULL) {
		if (json_object_get_double(v) > 1.0)
			json_object_object_add(out, "temperature",
			    json_object_new_double(1.0));
		else
			xlate_copy(out, "temperature", req, "temperature");
	}
	xlate_copy(out, "top_p", req, "top_p");
	if ((v = xlate_get(req, "stop")) != NULL) {
		if (xlate_is(v, json_type_string)) {
			arr = json_object_new_array();
			json_object_array_add(arr, xlate_dup(v));
			json_object_object_add(out, "stop_sequences", arr);
		} else if (xlate_is(v, json_type_array))
			xlate_copy(out, "stop_sequences", req, "stop");
		else
			return xlate_fail(x,
			    "stop must be a string or an array");
	}
	xlate_copy(out, "stream", req, "stream");
	if (xlate_str(req, "user") != NULL) {
		md = json_object_new_object();
		xlate_copy(md, "user_id", req, "user");
		json_object_object_add(out, "metadata", md);
	}
	return 0;
}

struct json_object *
xlate_messages_request_from_chat(struct xlate *x, struct json_object *req,
    int max_tokens)
{
	struct json_object	*out;

	out = json_object_new_object();
	xlate_copy(out, "model", req, "model");
	if (chat_parameters(x, req, out, max_tokens) == -1 ||
	    chat_messages(x, req, out) == -1 ||
	    xlate_tools(x, req, out, chat_tool_definition) == -1 ||
	    chat_tool_choice(x, req, out) == -1) {
		json_object_put(out);
		return NULL;
	}
	return out;
}

/* --- chat answers as Messages answers --- */

static const char *
messages_stop(struct xlate_chat_answer *a, struct json_object *out)
{
	struct json_object	*c0;
	const char		*seq;

	if (a->calls != NULL && json_object_array_length(a->calls) > 0)
		return "tool_use";
	if (strcmp(wire_stop_to_messages(a->finish), "end_turn") != 0)
		return wire_stop_to_messages(a->finish);
	/* vLLM names the stop string that matched. */
	c0 = json_object_array_get_idx(xlate_get(a->resp, "choices"), 0);
	if ((seq = xlate_str(c0, "stop_reason")) != NULL) {
		xlate_set_str(out, "stop_sequence", seq);
		return "stop_sequence";
	}
	return "end_turn";
}

/* Messages counts input read from the cache apart (wire_usage.c). */
static struct json_object *
messages_usage(struct json_object *u)
{
	struct wire_usage	 wu;

	wire_usage_init(&wu);
	wire_usage_merge(WIRE_CHAT, u, &wu);
	return wire_usage_json(WIRE_MESSAGES, &wu);
}

struct json_object *
xlate_messages_answer_from_chat(struct xlate *x, struct json_object *resp,
    const char *model)
{
	struct xlate_chat_answer	 a;
	struct json_object	*out, *content;
	char			 id[XLATE_ID_LEN];

	if (xlate_chat_answer_read(x, resp, &a) == -1)
		return NULL;
	content = json_object_new_array();
	if (a.text != NULL && json_object_get_string_len(a.text) > 0)
		json_object_array_add(content, xlate_part("text", "text",
		    json_object_get(a.text)));
	if (a.refusal != NULL)
		json_object_array_add(content, xlate_part("text", "text",
		    xlate_dup(a.refusal)));
	json_object_put(a.text);
	if (a.calls != NULL && calls_to_tool_uses(x, a.calls, content) == -1) {
		json_object_put(content);
		xlate_where(x, "the upstream's answer");
		return NULL;
	}
	out = json_object_new_object();
	xlate_id(id, sizeof(id), "msg_");
	xlate_set_str(out, "id", id);
	xlate_set_str(out, "type", "message");
	xlate_set_str(out, "role", "assistant");
	xlate_set_str(out, "model", model);
	json_object_object_add(out, "content", content);
	json_object_object_add(out, "stop_sequence", NULL);
	xlate_set_str(out, "stop_reason", messages_stop(&a, out));
	json_object_object_add(out, "usage", messages_usage(a.usage));
	return out;
}

