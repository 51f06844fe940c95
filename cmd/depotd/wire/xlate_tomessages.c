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
 * xlate_tomessages.c: chat completions requests to Anthropic Messages
 * (and so Responses requests too, through chat).  Messages has one
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

#include "fe_model.h"
#include "xlate.h"

static const char *const text_types[] = { "text", NULL };

/* Appends a turn, merging it into the last one when the role repeats. */
static void
c_append(struct json_object *msgs, const char *role,
    struct json_object *content)
{
	struct json_object	*last, *lc, *blocks;
	size_t			 n = json_object_array_length(msgs), i;

	last = n > 0 ? json_object_array_get_idx(msgs, n - 1) : NULL;
	if (last == NULL || strcmp(xl_str(last, "role"), role) != 0) {
		json_object_array_add(msgs, xl_chat_msg(role, content));
		return;
	}
	lc = xl_get(last, "content");
	if (xl_is(lc, json_type_string)) {
		blocks = json_object_new_array();
		json_object_array_add(blocks, xl_part("text", "text",
		    xl_dup(lc)));
		json_object_object_add(last, "content", blocks);
		lc = blocks;
	}
	if (xl_is(content, json_type_string))
		json_object_array_add(lc, xl_part("text", "text",
		    xl_dup(content)));
	else
		for (i = 0; i < json_object_array_length(content); i++)
			json_object_array_add(lc, json_object_get(
			    json_object_array_get_idx(content, i)));
	json_object_put(content);
}

static struct json_object *
c_source(const char *url)
{
	struct json_object	*src = json_object_new_object();
	const char		*data;
	char			 mt[128];

	if (xl_data_url(url, mt, sizeof(mt), &data) == 0) {
		xl_set_str(src, "type", "base64");
		xl_set_str(src, "media_type", mt);
		xl_set_str(src, "data", data);
	} else {
		xl_set_str(src, "type", "url");
		xl_set_str(src, "url", url);
	}
	return src;
}

static int
c_image(struct xl *x, struct json_object *p, struct json_object *blocks)
{
	struct json_object	*iu = xl_get(p, "image_url");
	const char		*url, *data;
	char			 mt[128];

	url = xl_is(iu, json_type_string) ? json_object_get_string(iu) :
	    xl_str(iu, "url");
	if (url == NULL)
		return xl_fail(x, "an image_url part has no url");
	if (xl_data_url(url, mt, sizeof(mt), &data) == -1 &&
	    strncasecmp(url, "https://", 8) != 0 &&
	    strncasecmp(url, "http://", 7) != 0)
		return xl_fail(x, "an image url must be a base64 data: URL "
		    "or an http(s) URL");
	json_object_array_add(blocks, xl_part("image", "source",
	    c_source(url)));
	return 0;
}

static int
c_file(struct xl *x, struct json_object *p, struct json_object *blocks)
{
	struct json_object	*f = xl_get(p, "file"), *src, *doc;
	const char		*fd = xl_str(f, "file_data");

	if (fd != NULL) {
		if (strncasecmp(fd, "data:", 5) != 0)
			return xl_fail(x, "file_data must be a base64 data: "
			    "URL");
		src = c_source(fd);
		if (strcmp(xl_str(src, "type"), "base64") != 0) {
			json_object_put(src);
			return xl_fail(x, "file_data must be a base64 data: "
			    "URL");
		}
	} else if (xl_str(f, "file_id") != NULL) {
		src = json_object_new_object();
		xl_set_str(src, "type", "file");
		xl_copy(src, "file_id", f, "file_id");
	} else
		return xl_fail(x, "a file part needs file_data or file_id");
	doc = xl_part("document", "source", src);
	if (xl_str(f, "filename") != NULL)
		xl_copy(doc, "title", f, "filename");
	json_object_array_add(blocks, doc);
	return 0;
}

/* User content as Messages blocks (a string stays a string). */
static struct json_object *
c_user(struct xl *x, struct json_object *c)
{
	struct json_object	*blocks, *p;
	const char		*type;
	size_t			 i;
	int			 rc;

	if (xl_is(c, json_type_string))
		return xl_dup(c);
	if (!xl_is(c, json_type_array)) {
		xl_fail(x, "content must be a string or an array");
		return NULL;
	}
	blocks = json_object_new_array();
	for (i = 0; i < json_object_array_length(c); i++) {
		p = json_object_array_get_idx(c, i);
		if ((type = xl_str(p, "type")) == NULL)
			type = "(none)";
		if (strcmp(type, "text") == 0 && xl_str(p, "text") != NULL) {
			/* Messages refuses empty text blocks. */
			if (json_object_get_string_len(xl_get(p, "text")) > 0)
				json_object_array_add(blocks, xl_part("text",
				    "text", xl_dup(xl_get(p, "text"))));
			rc = 0;
		} else if (strcmp(type, "image_url") == 0)
			rc = c_image(x, p, blocks);
		else if (strcmp(type, "file") == 0)
			rc = c_file(x, p, blocks);
		else
			rc = xl_fail(x, "a %s part cannot be sent to a "
			    "Messages model", type);
		if (rc == -1) {
			json_object_put(blocks);
			return NULL;
		}
	}
	return blocks;
}

int
xl_tool_uses(struct xl *x, struct json_object *calls,
    struct json_object *blocks)
{
	struct json_object	*call, *fn, *input, *b;
	const char		*args;
	size_t			 i;

	if (!xl_is(calls, json_type_array))
		return xl_fail(x, "tool_calls must be an array");
	for (i = 0; i < json_object_array_length(calls); i++) {
		call = json_object_array_get_idx(calls, i);
		fn = xl_get(call, "function");
		if (xl_str(call, "id") == NULL || xl_str(fn, "name") == NULL)
			return xl_fail(x, "a tool call needs an id and a "
			    "function name");
		args = xl_str(fn, "arguments");
		if ((input = xl_args_parse(args ? args : "")) == NULL)
			return xl_fail(x, "tool call %s: arguments are not a "
			    "JSON object", xl_str(call, "id"));
		b = json_object_new_object();
		xl_set_str(b, "type", "tool_use");
		xl_copy(b, "id", call, "id");
		xl_copy(b, "name", fn, "name");
		json_object_object_add(b, "input", input);
		json_object_array_add(blocks, b);
	}
	return 0;
}

static int
c_assistant(struct xl *x, struct json_object *m, struct json_object *msgs)
{
	struct json_object	*c = xl_get(m, "content"), *blocks, *text;
	struct json_object	*calls = xl_get(m, "tool_calls");
	int			 other = 0;

	blocks = json_object_new_array();
	if (xl_is(c, json_type_string))
		text = xl_dup(c);
	else if (c == NULL)
		text = NULL;
	else if ((text = xl_join_text(c, text_types, "\n", &other)) == NULL ||
	    other > 0) {
		json_object_put(text);
		json_object_put(blocks);
		return xl_fail(x, "assistant content must be text");
	}
	if (text != NULL && json_object_get_string_len(text) > 0)
		json_object_array_add(blocks, xl_part("text", "text", text));
	else
		json_object_put(text);
	if (calls != NULL && xl_tool_uses(x, calls, blocks) == -1) {
		json_object_put(blocks);
		return -1;
	}
	/* Messages refuses an empty turn; an empty one says nothing. */
	if (json_object_array_length(blocks) == 0)
		json_object_put(blocks);
	else
		c_append(msgs, "assistant", blocks);
	return 0;
}

static int
c_tool(struct xl *x, struct json_object *m, struct json_object *msgs)
{
	struct json_object	*c = xl_get(m, "content"), *b, *blocks, *tc;

	if (xl_str(m, "tool_call_id") == NULL)
		return xl_fail(x, "a tool message has no tool_call_id");
	b = json_object_new_object();
	xl_set_str(b, "type", "tool_result");
	xl_copy(b, "tool_use_id", m, "tool_call_id");
	if (c != NULL) {
		if ((tc = c_user(x, c)) == NULL) {
			json_object_put(b);
			return -1;
		}
		json_object_object_add(b, "content", tc);
	}
	blocks = json_object_new_array();
	json_object_array_add(blocks, b);
	c_append(msgs, "user", blocks);
	return 0;
}

static int
c_system(struct xl *x, struct json_object *m, struct printbuf *sys)
{
	struct json_object	*c = xl_get(m, "content"), *text;
	int			 other = 0;

	if (xl_is(c, json_type_string))
		text = xl_dup(c);
	else if ((text = xl_join_text(c, text_types, "\n", &other)) == NULL ||
	    other > 0) {
		json_object_put(text);
		return xl_fail(x, "a system message must be text");
	}
	if (sys->bpos > 0)
		printbuf_memappend(sys, "\n", 1);
	printbuf_memappend(sys, json_object_get_string(text),
	    json_object_get_string_len(text));
	json_object_put(text);
	return 0;
}

static int
c_one(struct xl *x, struct json_object *m, struct json_object *msgs,
    struct printbuf *sys)
{
	struct json_object	*c;
	const char		*role = xl_str(m, "role");

	if (role == NULL)
		return xl_fail(x, "a message has no role");
	/* Messages has one system prompt, wherever chat put them. */
	if (strcmp(role, "system") == 0 || strcmp(role, "developer") == 0)
		return c_system(x, m, sys);
	if (strcmp(role, "assistant") == 0)
		return c_assistant(x, m, msgs);
	if (strcmp(role, "tool") == 0)
		return c_tool(x, m, msgs);
	if (strcmp(role, "user") != 0)
		return xl_fail(x, "a %s message cannot be sent to a Messages "
		    "model", role);
	if ((c = c_user(x, xl_get(m, "content"))) == NULL)
		return -1;
	c_append(msgs, "user", c);
	return 0;
}

static int
c_messages(struct xl *x, struct json_object *req, struct json_object *out)
{
	struct json_object	*in = xl_get(req, "messages"), *msgs;
	struct printbuf		*sys;
	size_t			 i;
	int			 rc = 0;

	if (!xl_is(in, json_type_array))
		return xl_fail(x, "messages must be an array");
	if ((sys = printbuf_new()) == NULL)
		return xl_fail(x, "out of memory");
	msgs = json_object_new_array();
	json_object_object_add(out, "messages", msgs);
	for (i = 0; i < json_object_array_length(in) && rc == 0; i++)
		if ((rc = c_one(x, json_object_array_get_idx(in, i), msgs,
		    sys)) == -1)
			xl_where(x, "messages[%zu]", i);
	if (rc == 0 && sys->bpos > 0)
		json_object_object_add(out, "system",
		    json_object_new_string_len(sys->buf, sys->bpos));
	printbuf_free(sys);
	return rc;
}

static struct json_object *
c_tooldef(struct xl *x, struct json_object *t)
{
	struct json_object	*fn = xl_get(t, "function"), *mt, *schema;
	const char		*type = xl_str(t, "type");

	if (type == NULL || strcmp(type, "function") != 0) {
		xl_fail(x, "a %s tool cannot be sent to a Messages model",
		    type != NULL ? type : "(untyped)");
		return NULL;
	}
	if (xl_str(fn, "name") == NULL) {
		xl_fail(x, "a tool has no function name");
		return NULL;
	}
	mt = json_object_new_object();
	xl_copy(mt, "name", fn, "name");
	xl_copy(mt, "description", fn, "description");
	/*
	 * Messages requires an object schema; chat takes none, or {},
	 * for a function without parameters.
	 */
	if (xl_is(xl_get(fn, "parameters"), json_type_object))
		schema = xl_dup(xl_get(fn, "parameters"));
	else {
		schema = json_object_new_object();
		json_object_object_add(schema, "properties",
		    json_object_new_object());
	}
	if (xl_get(schema, "type") == NULL)
		xl_set_str(schema, "type", "object");
	json_object_object_add(mt, "input_schema", schema);
	return mt;
}

static int
c_tool_choice(struct xl *x, struct json_object *req, struct json_object *out)
{
	struct json_object	*tc = xl_get(req, "tool_choice"), *mtc;
	struct json_object	*ptc = xl_get(req, "parallel_tool_calls");
	const char		*s, *name;

	if (xl_get(out, "tools") == NULL)
		return 0;
	mtc = json_object_new_object();
	if (tc == NULL)
		s = "auto";
	else if ((s = xl_is(tc, json_type_string) ?
	    json_object_get_string(tc) : NULL) != NULL) {
		if (strcmp(s, "required") == 0)
			s = "any";
		else if (strcmp(s, "auto") != 0 && strcmp(s, "none") != 0) {
			json_object_put(mtc);
			return xl_fail(x, "tool_choice %s is unknown", s);
		}
	} else if ((name = xl_str(xl_get(tc, "function"), "name")) != NULL) {
		s = "tool";
		xl_set_str(mtc, "name", name);
	} else {
		json_object_put(mtc);
		return xl_fail(x, "tool_choice cannot be sent to a Messages "
		    "model");
	}
	xl_set_str(mtc, "type", s);
	if (ptc != NULL && !json_object_get_boolean(ptc) &&
	    strcmp(s, "none") != 0)
		json_object_object_add(mtc, "disable_parallel_tool_use",
		    json_object_new_boolean(1));
	if (tc == NULL && xl_get(mtc, "disable_parallel_tool_use") == NULL)
		json_object_put(mtc);
	else
		json_object_object_add(out, "tool_choice", mtc);
	return 0;
}

static int
c_params(struct xl *x, struct json_object *req, struct json_object *out,
    int max_tokens)
{
	struct json_object	*v, *arr, *md;

	if ((v = xl_get(req, "max_completion_tokens")) == NULL)
		v = xl_get(req, "max_tokens");
	if (v != NULL && !xl_is(v, json_type_int))
		return xl_fail(x, "max_tokens must be an integer");
	json_object_object_add(out, "max_tokens", v != NULL ? xl_dup(v) :
	    json_object_new_int(max_tokens));
	if ((v = xl_get(req, "n")) != NULL && json_object_get_int64(v) != 1)
		return xl_fail(x, "n other than 1 cannot be sent to a Messages "
		    "model");
	/* Messages takes temperatures up to 1, chat up to 2. */
	if ((v = xl_get(req, "temperature")) != NULL) {
		if (json_object_get_double(v) > 1.0)
			json_object_object_add(out, "temperature",
			    json_object_new_double(1.0));
		else
			xl_copy(out, "temperature", req, "temperature");
	}
	xl_copy(out, "top_p", req, "top_p");
	if ((v = xl_get(req, "stop")) != NULL) {
		if (xl_is(v, json_type_string)) {
			arr = json_object_new_array();
			json_object_array_add(arr, xl_dup(v));
			json_object_object_add(out, "stop_sequences", arr);
		} else if (xl_is(v, json_type_array))
			xl_copy(out, "stop_sequences", req, "stop");
		else
			return xl_fail(x, "stop must be a string or an array");
	}
	xl_copy(out, "stream", req, "stream");
	if (xl_str(req, "user") != NULL) {
		md = json_object_new_object();
		xl_copy(md, "user_id", req, "user");
		json_object_object_add(out, "metadata", md);
	}
	return 0;
}

struct json_object *
xl_chatreq_to_msg(struct xl *x, struct json_object *req, int max_tokens)
{
	struct json_object	*out;

	out = json_object_new_object();
	xl_copy(out, "model", req, "model");
	if (c_params(x, req, out, max_tokens) == -1 ||
	    c_messages(x, req, out) == -1 ||
	    xl_tools(x, req, out, c_tooldef) == -1 ||
	    c_tool_choice(x, req, out) == -1) {
		json_object_put(out);
		return NULL;
	}
	return out;
}
