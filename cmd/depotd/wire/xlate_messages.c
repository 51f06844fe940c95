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
 * xlate_messages.c: Anthropic Messages requests to chat completions.
 * Messages keeps the system prompt apart and carries tool results in
 * user turns; chat has a system message, one role:tool message per
 * result and data: URLs where Messages has base64 sources.  Data
 * strings are never decoded: they may be placeholders for bytes that
 * are streamed later.
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

/* --- Messages to chat --- */

static int
m_source_data(struct xl *x, struct json_object *src, const char *what,
    struct json_object **url)
{
	const char	*mt = xl_str(src, "media_type");
	const char	*data = xl_str(src, "data");

	if (mt == NULL || data == NULL)
		return xl_fail(x, "a base64 %s source needs media_type and "
		    "data strings", what);
	if ((*url = xl_data_url_new(mt, data)) == NULL)
		return xl_fail(x, "out of memory");
	return 0;
}

static int
m_image(struct xl *x, struct json_object *b, struct json_object *parts)
{
	struct json_object	*src = xl_get(b, "source"), *url, *iu;
	const char		*type = xl_str(src, "type");

	if (type != NULL && strcmp(type, "base64") == 0) {
		if (m_source_data(x, src, "image", &url) == -1)
			return -1;
	} else if (type != NULL && strcmp(type, "url") == 0 &&
	    xl_str(src, "url") != NULL)
		url = xl_dup(xl_get(src, "url"));
	else
		return xl_fail(x, "an image source of type %s cannot be "
		    "sent to a chat completions model", type ? type : "(none)");
	iu = json_object_new_object();
	json_object_object_add(iu, "url", url);
	json_object_array_add(parts, xl_part("image_url", "image_url", iu));
	return 0;
}

static int	m_part(struct xl *, struct json_object *, struct json_object *);

static int
m_document(struct xl *x, struct json_object *b, struct json_object *parts)
{
	struct json_object	*src = xl_get(b, "source"), *f, *url, *c;
	const char		*type = xl_str(src, "type");
	const char		*title = xl_str(b, "title");
	size_t			 i;

	if (type != NULL && strcmp(type, "text") == 0 &&
	    xl_str(src, "data") != NULL) {
		json_object_array_add(parts, xl_part("text", "text",
		    xl_dup(xl_get(src, "data"))));
		return 0;
	}
	if (type != NULL && strcmp(type, "content") == 0) {
		c = xl_get(src, "content");
		if (xl_is(c, json_type_string)) {
			json_object_array_add(parts, xl_part("text", "text",
			    xl_dup(c)));
			return 0;
		}
		if (!xl_is(c, json_type_array))
			return xl_fail(x, "a content document needs content");
		for (i = 0; i < json_object_array_length(c); i++)
			if (m_part(x, json_object_array_get_idx(c, i),
			    parts) == -1)
				return -1;
		return 0;
	}
	f = json_object_new_object();
	if (type != NULL && strcmp(type, "base64") == 0) {
		if (m_source_data(x, src, "document", &url) == -1) {
			json_object_put(f);
			return -1;
		}
		/* OpenAI wants a name with inline file data. */
		xl_set_str(f, "filename", title != NULL ? title :
		    strcmp(xl_str(src, "media_type"), "application/pdf") == 0 ?
		    "document.pdf" : "document");
		json_object_object_add(f, "file_data", url);
	} else if (type != NULL && strcmp(type, "file") == 0 &&
	    xl_str(src, "file_id") != NULL) {
		xl_copy(f, "file_id", src, "file_id");
		if (title != NULL)
			xl_set_str(f, "filename", title);
	} else {
		json_object_put(f);
		return xl_fail(x, "a document source of type %s cannot be "
		    "sent to a chat completions model", type ? type : "(none)");
	}
	json_object_array_add(parts, xl_part("file", "file", f));
	return 0;
}

/* One user-side block (not a tool result) as chat parts. */
static int
m_part(struct xl *x, struct json_object *b, struct json_object *parts)
{
	const char	*type = xl_str(b, "type");

	if (type == NULL)
		return xl_fail(x, "a content block has no type");
	if (strcmp(type, "text") == 0) {
		if (xl_str(b, "text") == NULL)
			return xl_fail(x, "a text block has no text");
		json_object_array_add(parts, xl_part("text", "text",
		    xl_dup(xl_get(b, "text"))));
		return 0;
	}
	if (strcmp(type, "image") == 0)
		return m_image(x, b, parts);
	if (strcmp(type, "document") == 0)
		return m_document(x, b, parts);
	return xl_fail(x, "a %s block cannot be sent to a chat completions "
	    "model", type);
}

static int
m_tool_result(struct xl *x, struct json_object *b, struct json_object *msgs,
    struct json_object *parts)
{
	struct json_object	*c = xl_get(b, "content"), *cp;
	const char		*id = xl_str(b, "tool_use_id");
	size_t			 i;
	int			 rc, is_error;

	if (id == NULL)
		return xl_fail(x, "a tool_result block has no tool_use_id");
	is_error = xl_is(xl_get(b, "is_error"), json_type_boolean) &&
	    json_object_get_boolean(xl_get(b, "is_error"));
	if (c != NULL && !xl_is(c, json_type_string)) {
		if (!xl_is(c, json_type_array))
			return xl_fail(x, "a tool_result's content is "
			    "malformed");
		cp = json_object_new_array();
		for (i = 0; i < json_object_array_length(c); i++)
			if (m_part(x, json_object_array_get_idx(c, i),
			    cp) == -1) {
				json_object_put(cp);
				return -1;
			}
		rc = xl_chat_tool(x, msgs, id, cp, is_error, parts);
		json_object_put(cp);
		return rc;
	}
	return xl_chat_tool(x, msgs, id, c, is_error, parts);
}

/*
 * A user turn: its tool results become role:tool messages, which chat
 * wants right after the assistant's calls, and the rest one user
 * message after them.
 */
static int
m_user(struct xl *x, struct json_object *content, struct json_object *msgs)
{
	struct json_object	*parts, *b;
	const char		*type;
	size_t			 i;

	parts = json_object_new_array();
	for (i = 0; i < json_object_array_length(content); i++) {
		b = json_object_array_get_idx(content, i);
		type = xl_str(b, "type");
		if (type != NULL && strcmp(type, "tool_result") == 0) {
			if (m_tool_result(x, b, msgs, parts) == -1)
				goto fail;
		} else if (m_part(x, b, parts) == -1)
			goto fail;
	}
	if (json_object_array_length(parts) > 0)
		json_object_array_add(msgs, xl_chat_msg("user", parts));
	else
		json_object_put(parts);
	return 0;
fail:
	json_object_put(parts);
	return -1;
}

int
xl_tool_call(struct xl *x, struct json_object *b, struct json_object *calls)
{
	struct json_object	*call, *fn, *input = xl_get(b, "input");

	if (xl_str(b, "id") == NULL || xl_str(b, "name") == NULL)
		return xl_fail(x, "a tool_use block needs an id and a name");
	if (input != NULL && !xl_is(input, json_type_object))
		return xl_fail(x, "a tool_use block's input is not an object");
	fn = json_object_new_object();
	xl_copy(fn, "name", b, "name");
	json_object_object_add(fn, "arguments", xl_args_string(input));
	call = json_object_new_object();
	xl_copy(call, "id", b, "id");
	xl_set_str(call, "type", "function");
	json_object_object_add(call, "function", fn);
	json_object_array_add(calls, call);
	return 0;
}

static int
m_assistant(struct xl *x, struct json_object *content,
    struct json_object *msgs)
{
	struct json_object	*calls, *b, *text, *m;
	const char		*type;
	size_t			 i;
	int			 other;

	calls = json_object_new_array();
	for (i = 0; i < json_object_array_length(content); i++) {
		b = json_object_array_get_idx(content, i);
		if ((type = xl_str(b, "type")) == NULL)
			type = "(none)";
		if (strcmp(type, "tool_use") == 0) {
			if (xl_tool_call(x, b, calls) == -1)
				goto fail;
		} else if (strcmp(type, "text") != 0 &&
		    strcmp(type, "thinking") != 0 &&
		    strcmp(type, "redacted_thinking") != 0) {
			xl_fail(x, "an assistant %s block cannot be sent to a "
			    "chat completions model", type);
			goto fail;
		}
	}
	/* Thinking is dropped: chat has no way to hand it back. */
	text = xl_join_text(content, text_types, "\n", &other);
	if (json_object_get_string_len(text) == 0 &&
	    json_object_array_length(calls) == 0) {
		json_object_put(text);
		json_object_put(calls);
		return 0;
	}
	if (json_object_get_string_len(text) == 0) {
		json_object_put(text);
		text = NULL;
	}
	m = xl_chat_msg("assistant", text);
	if (json_object_array_length(calls) > 0)
		json_object_object_add(m, "tool_calls", calls);
	else
		json_object_put(calls);
	json_object_array_add(msgs, m);
	return 0;
fail:
	json_object_put(calls);
	return -1;
}

static int
m_messages(struct xl *x, struct json_object *req, struct json_object *msgs)
{
	struct json_object	*in = xl_get(req, "messages"), *m, *c;
	const char		*role;
	size_t			 i;
	int			 rc;

	if (!xl_is(in, json_type_array))
		return xl_fail(x, "messages must be an array");
	for (i = 0; i < json_object_array_length(in); i++) {
		m = json_object_array_get_idx(in, i);
		role = xl_str(m, "role");
		c = xl_get(m, "content");
		if (role == NULL || (strcmp(role, "user") != 0 &&
		    strcmp(role, "assistant") != 0))
			return xl_fail(x, "messages[%zu]: role must be user "
			    "or assistant", i);
		if (xl_is(c, json_type_string)) {
			json_object_array_add(msgs, xl_chat_msg(role,
			    xl_dup(c)));
			continue;
		}
		if (!xl_is(c, json_type_array))
			return xl_fail(x, "messages[%zu]: content must be a "
			    "string or an array", i);
		rc = strcmp(role, "user") == 0 ? m_user(x, c, msgs) :
		    m_assistant(x, c, msgs);
		if (rc == -1)
			return xl_where(x, "messages[%zu]", i);
	}
	return 0;
}

static int
m_system(struct xl *x, struct json_object *req, struct json_object *msgs)
{
	struct json_object	*sys = xl_get(req, "system"), *text;
	int			 other;

	if (sys == NULL)
		return 0;
	if (xl_is(sys, json_type_string))
		text = xl_dup(sys);
	else if ((text = xl_join_text(sys, text_types, "\n", &other)) == NULL ||
	    other > 0) {
		json_object_put(text);
		return xl_fail(x, "system must be a string or text blocks");
	}
	json_object_array_add(msgs, xl_chat_msg("system", text));
	return 0;
}

static struct json_object *
m_tooldef(struct xl *x, struct json_object *t)
{
	const char	*type = xl_str(t, "type");

	if (type != NULL && strcmp(type, "custom") != 0) {
		xl_fail(x, "a %s tool cannot be sent to a chat completions "
		    "model", type);
		return NULL;
	}
	return xl_chat_function(x, t, "input_schema");
}

static int
m_tool_choice(struct xl *x, struct json_object *req, struct json_object *chat)
{
	struct json_object	*tc = xl_get(req, "tool_choice"), *fn;
	const char		*type = xl_str(tc, "type");

	if (tc == NULL || xl_get(chat, "tools") == NULL)
		return 0;
	if (type == NULL)
		return xl_fail(x, "tool_choice needs a type");
	if (strcmp(type, "auto") == 0 || strcmp(type, "none") == 0)
		xl_set_str(chat, "tool_choice", type);
	else if (strcmp(type, "any") == 0)
		xl_set_str(chat, "tool_choice", "required");
	else if (strcmp(type, "tool") == 0 && xl_str(tc, "name") != NULL) {
		fn = json_object_new_object();
		xl_copy(fn, "name", tc, "name");
		json_object_object_add(chat, "tool_choice",
		    xl_part("function", "function", fn));
	} else
		return xl_fail(x, "tool_choice %s cannot be sent to a chat "
		    "completions model", type);
	if (xl_is(xl_get(tc, "disable_parallel_tool_use"), json_type_boolean) &&
	    json_object_get_boolean(xl_get(tc, "disable_parallel_tool_use")))
		json_object_object_add(chat, "parallel_tool_calls",
		    json_object_new_boolean(0));
	return 0;
}

struct json_object *
xl_msgreq_to_chat(struct xl *x, struct json_object *req)
{
	struct json_object	*chat, *msgs, *stop;

	chat = json_object_new_object();
	xl_copy(chat, "model", req, "model");
	msgs = json_object_new_array();
	json_object_object_add(chat, "messages", msgs);
	if (m_system(x, req, msgs) == -1 || m_messages(x, req, msgs) == -1 ||
	    xl_tools(x, req, chat, m_tooldef) == -1 ||
	    m_tool_choice(x, req, chat) == -1)
		goto fail;
	xl_copy(chat, "max_tokens", req, "max_tokens");
	xl_copy(chat, "temperature", req, "temperature");
	xl_copy(chat, "top_p", req, "top_p");
	if ((stop = xl_get(req, "stop_sequences")) != NULL) {
		if (!xl_is(stop, json_type_array)) {
			xl_fail(x, "stop_sequences must be an array");
			goto fail;
		}
		if (json_object_array_length(stop) > 0)
			xl_copy(chat, "stop", req, "stop_sequences");
	}
	if (xl_str(xl_get(req, "metadata"), "user_id") != NULL)
		xl_copy(chat, "user", xl_get(req, "metadata"), "user_id");
	xl_chat_stream(chat, req);
	return chat;
fail:
	json_object_put(chat);
	return NULL;
}
