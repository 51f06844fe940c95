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
 * xlate_messages_to_chat.c: Anthropic Messages into chat completions:
 * a caller's request, and an upstream's whole answer.  Messages keeps
 * the system prompt apart and carries tool results in user turns;
 * chat has a system message, one role:tool message per result and
 * data: URLs where Messages has base64 sources.  Data strings are
 * never decoded: they may be placeholders for bytes that are streamed
 * later.
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "wire.h"
#include "xlate.h"

static const char *const text_types[] = { "text", NULL };

/* --- Messages requests as chat requests --- */

static int
messages_source_data(struct xlate *x, struct json_object *src, const char *what,
    struct json_object **url)
{
	const char	*mt, *data;

	mt = xlate_str(src, "media_type");
	data = xlate_str(src, "data");
	if (mt == NULL || data == NULL)
		return xlate_fail(x, "a base64 %s source needs media_type and "
		    "data strings", what);
	if ((*url = xlate_data_url_new(mt, data)) == NULL)
		return xlate_fail(x, "out of memory");
	return 0;
}

static int
messages_image(struct xlate *x, struct json_object *b,
    struct json_object *parts)
{
	struct json_object	*src, *url, *iu;
	const char		*type;

	src = xlate_get(b, "source");
	type = xlate_str(src, "type");
	if (type != NULL && strcmp(type, "base64") == 0) {
		if (messages_source_data(x, src, "image", &url) == -1)
			return -1;
	} else if (type != NULL && strcmp(type, "url") == 0 &&
	    xlate_str(src, "url") != NULL)
		url = xlate_dup(xlate_get(src, "url"));
	else
		return xlate_fail(x, "an image source of type %s cannot be "
		    "sent to a chat completions model", type ? type : "(none)");
	iu = json_object_new_object();
	json_object_object_add(iu, "url", url);
	json_object_array_add(parts, xlate_part("image_url", "image_url", iu));
	return 0;
}

static int	messages_part(struct xlate *, struct json_object *,
    struct json_object *);

static int
messages_document(struct xlate *x, struct json_object *b,
    struct json_object *parts)
{
	struct json_object	*src, *f, *url, *c;
	const char		*type, *title;
	size_t			 i;

	src = xlate_get(b, "source");
	type = xlate_str(src, "type");
	title = xlate_str(b, "title");
	if (type != NULL && strcmp(type, "text") == 0 &&
	    xlate_str(src, "data") != NULL) {
		json_object_array_add(parts, xlate_part("text", "text",
		    xlate_dup(xlate_get(src, "data"))));
		return 0;
	}
	if (type != NULL && strcmp(type, "content") == 0) {
		c = xlate_get(src, "content");
		if (xlate_is(c, json_type_string)) {
			json_object_array_add(parts, xlate_part("text", "text",
			    xlate_dup(c)));
			return 0;
		}
		if (!xlate_is(c, json_type_array))
			return xlate_fail(x,
			    "a content document needs content");
		for (i = 0; i < json_object_array_length(c); i++)
			if (messages_part(x, json_object_array_get_idx(c, i),
			    parts) == -1)
				return -1;
		return 0;
	}
	f = json_object_new_object();
	if (type != NULL && strcmp(type, "base64") == 0) {
		if (messages_source_data(x, src, "document", &url) == -1) {
			json_object_put(f);
			return -1;
		}
		/* OpenAI wants a name with inline file data. */
		xlate_set_str(f, "filename", title != NULL ? title :
		    strcmp(xlate_str(src, "media_type"),
		    "application/pdf") == 0 ?
		    "document.pdf" : "document");
		json_object_object_add(f, "file_data", url);
	} else if (type != NULL && strcmp(type, "file") == 0 &&
	    xlate_str(src, "file_id") != NULL) {
		xlate_copy(f, "file_id", src, "file_id");
		if (title != NULL)
			xlate_set_str(f, "filename", title);
	} else {
		json_object_put(f);
		return xlate_fail(x, "a document source of type %s cannot be "
		    "sent to a chat completions model", type ? type : "(none)");
	}
	json_object_array_add(parts, xlate_part("file", "file", f));
	return 0;
}

/* One user-side block (not a tool result) as chat parts. */
static int
messages_part(struct xlate *x, struct json_object *b, struct json_object *parts)
{
	const char	*type;

	type = xlate_str(b, "type");
	if (type == NULL)
		return xlate_fail(x, "a content block has no type");
	if (strcmp(type, "text") == 0) {
		if (xlate_str(b, "text") == NULL)
			return xlate_fail(x, "a text block has no text");
		json_object_array_add(parts, xlate_part("text", "text",
		    xlate_dup(xlate_get(b, "text"))));
		return 0;
	}
	if (strcmp(type, "image") == 0)
		return messages_image(x, b, parts);
	if (strcmp(type, "document") == 0)
		return messages_document(x, b, parts);
	return xlate_fail(x, "a %s block cannot be sent to a chat completions "
	    "model", type);
}

static int
messages_tool_result(struct xlate *x, struct json_object *b,
    struct json_object *msgs,
    struct json_object *parts)
{
	struct json_object	*c, *cp;
	const char		*id;
	size_t			 i;
	int			 rc, is_error;

	c = xlate_get(b, "content");
	id = xlate_str(b, "tool_use_id");
	if (id == NULL)
		return xlate_fail(x, "a tool_result block has no tool_use_id");
	is_error = xlate_is(xlate_get(b, "is_error"), json_type_boolean) &&
	    json_object_get_boolean(xlate_get(b, "is_error"));
	if (c != NULL && !xlate_is(c, json_type_string)) {
		if (!xlate_is(c, json_type_array))
			return xlate_fail(x, "a tool_result's content is "
			    "malformed");
		cp = json_object_new_array();
		for (i = 0; i < json_object_array_length(c); i++)
			if (messages_part(x, json_object_array_get_idx(c, i),
			    cp) == -1) {
				json_object_put(cp);
				return -1;
			}
		rc = xlate_chat_tool_result(x, msgs, id, cp, is_error, parts);
		json_object_put(cp);
		return rc;
	}
	return xlate_chat_tool_result(x, msgs, id, c, is_error, parts);
}

/*
 * A user turn: its tool results become role:tool messages, which chat
 * wants right after the assistant's calls, and the rest one user
 * message after them.
 */
static int
messages_user(struct xlate *x, struct json_object *content,
    struct json_object *msgs)
{
	struct json_object	*parts, *b;
	const char		*type;
	size_t			 i;

	parts = json_object_new_array();
	for (i = 0; i < json_object_array_length(content); i++) {
		b = json_object_array_get_idx(content, i);
		type = xlate_str(b, "type");
		if (type != NULL && strcmp(type, "tool_result") == 0) {
			if (messages_tool_result(x, b, msgs, parts) == -1)
				goto fail;
		} else if (messages_part(x, b, parts) == -1)
			goto fail;
	}
	if (json_object_array_length(parts) > 0)
		json_object_array_add(msgs, xlate_chat_message("user", parts));
	else
		json_object_put(parts);
	return 0;
fail:
	json_object_put(parts);
	return -1;
}

/* A tool_use block appended to chat tool_calls. */
static int
tool_use_to_call(struct xlate *x, struct json_object *b,
    struct json_object *calls)
{
	struct json_object	*call, *fn, *input;

	input = xlate_get(b, "input");
	if (xlate_str(b, "id") == NULL || xlate_str(b, "name") == NULL)
		return xlate_fail(x, "a tool_use block needs an id and a name");
	if (input != NULL && !xlate_is(input, json_type_object))
		return xlate_fail(x,
		    "a tool_use block's input is not an object");
	fn = json_object_new_object();
	xlate_copy(fn, "name", b, "name");
	json_object_object_add(fn, "arguments", xlate_args_string(input));
	call = json_object_new_object();
	xlate_copy(call, "id", b, "id");
	xlate_set_str(call, "type", "function");
	json_object_object_add(call, "function", fn);
	json_object_array_add(calls, call);
	return 0;
}

static int
messages_assistant(struct xlate *x, struct json_object *content,
    struct json_object *msgs)
{
	struct json_object	*calls, *b, *text, *m;
	const char		*type;
	size_t			 i;
	int			 other;

	calls = json_object_new_array();
	for (i = 0; i < json_object_array_length(content); i++) {
		b = json_object_array_get_idx(content, i);
		if ((type = xlate_str(b, "type")) == NULL)
			type = "(none)";
		if (strcmp(type, "tool_use") == 0) {
			if (tool_use_to_call(x, b, calls) == -1)
				goto fail;
		} else if (strcmp(type, "text") != 0 &&
		    strcmp(type, "thinking") != 0 &&
		    strcmp(type, "redacted_thinking") != 0) {
			xlate_fail(x,
			    "an assistant %s block cannot be sent to a "
			    "chat completions model", type);
			goto fail;
		}
	}
	/* Thinking is dropped: chat has no way to hand it back. */
	text = xlate_join_text(content, text_types, "\n", &other);
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
	m = xlate_chat_message("assistant", text);
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
messages_turns(struct xlate *x, struct json_object *req,
    struct json_object *msgs)
{
	struct json_object	*in, *m, *c;
	const char		*role;
	size_t			 i;
	int			 rc;

	in = xlate_get(req, "messages");
	if (!xlate_is(in, json_type_array))
		return xlate_fail(x, "messages must be an array");
	for (i = 0; i < json_object_array_length(in); i++) {
		m = json_object_array_get_idx(in, i);
		role = xlate_str(m, "role");
		c = xlate_get(m, "content");
		if (role == NULL || (strcmp(role, "user") != 0 &&
		    strcmp(role, "assistant") != 0))
			return xlate_fail(x, "messages[%zu]: role must be user "
			    "or assistant", i);
		if (xlate_is(c, json_type_string)) {
			json_object_array_add(msgs, xlate_chat_message(role,
			    xlate_dup(c)));
			continue;
		}
		if (!xlate_is(c, json_type_array))
			return xlate_fail(x, "messages[%zu]: content must be a "
			    "string or an array", i);
		rc = strcmp(role, "user") == 0 ? messages_user(x, c, msgs) :
		    messages_assistant(x, c, msgs);
		if (rc == -1)
			return xlate_where(x, "messages[%zu]", i);
	}
	return 0;
}

static int
messages_system(struct xlate *x, struct json_object *req,
    struct json_object *msgs)
{
	struct json_object	*sys, *text;
	int			 other;

	sys = xlate_get(req, "system");
	if (sys == NULL)
		return 0;
	if (xlate_is(sys, json_type_string))
		text = xlate_dup(sys);
	else if ((text = xlate_join_text(sys, text_types, "\n",
	    &other)) == NULL ||
	    other > 0) {
		json_object_put(text);
		return xlate_fail(x, "system must be a string or text blocks");
	}
	json_object_array_add(msgs, xlate_chat_message("system", text));
	return 0;
}

static struct json_object *
messages_tool_definition(struct xlate *x, struct json_object *t)
{
	const char	*type;

	type = xlate_str(t, "type");
	if (type != NULL && strcmp(type, "custom") != 0) {
		xlate_fail(x, "a %s tool cannot be sent to a chat completions "
		    "model", type);
		return NULL;
	}
	return xlate_chat_function(x, t, "input_schema");
}

static int
messages_tool_choice(struct xlate *x, struct json_object *req,
    struct json_object *chat)
{
	struct json_object	*tc, *fn;
	const char		*type;

	tc = xlate_get(req, "tool_choice");
	type = xlate_str(tc, "type");
	if (tc == NULL || xlate_get(chat, "tools") == NULL)
		return 0;
	if (type == NULL)
		return xlate_fail(x, "tool_choice needs a type");
	if (strcmp(type, "auto") == 0 || strcmp(type, "none") == 0)
		xlate_set_str(chat, "tool_choice", type);
	else if (strcmp(type, "any") == 0)
		xlate_set_str(chat, "tool_choice", "required");
	else if (strcmp(type, "tool") == 0 && xlate_str(tc, "name") != NULL) {
		fn = json_object_new_object();
		xlate_copy(fn, "name", tc, "name");
		json_object_object_add(chat, "tool_choice",
		    xlate_part("function", "function", fn));
	} else
		return xlate_fail(x, "tool_choice %s cannot be sent to a chat "
		    "completions model", type);
	if (xlate_is(xlate_get(tc, "disable_parallel_tool_use"),
	    json_type_boolean) &&
	    json_object_get_boolean(xlate_get(tc, "disable_parallel_tool_use")))
		json_object_object_add(chat, "parallel_tool_calls",
		    json_object_new_boolean(0));
	return 0;
}

struct json_object *
xlate_messages_request_to_chat(struct xlate *x, struct json_object *req)
{
	struct json_object	*chat, *msgs, *stop;

	chat = json_object_new_object();
	xlate_copy(chat, "model", req, "model");
	msgs = json_object_new_array();
	json_object_object_add(chat, "messages", msgs);
	if (messages_system(x, req, msgs) == -1 ||
	    messages_turns(x, req, msgs) == -1 ||
	    xlate_tools(x, req, chat, messages_tool_definition) == -1 ||
	    messages_tool_choice(x, req, chat) == -1)
		goto fail;
	xlate_copy(chat, "max_tokens", req, "max_tokens");
	xlate_copy(chat, "temperature", req, "temperature");
	xlate_copy(chat, "top_p", req, "top_p");
	if ((stop = xlate_get(req, "stop_sequences")) != NULL) {
		if (!xlate_is(stop, json_type_array)) {
			xlate_fail(x, "stop_sequences must be an array");
			goto fail;
		}
		if (json_object_array_length(stop) > 0)
			xlate_copy(chat, "stop", req, "stop_sequences");
	}
	if (xlate_str(xlate_get(req, "metadata"), "user_id") != NULL)
		xlate_copy(chat, "user", xlate_get(req, "metadata"), "user_id");
	xlate_chat_stream(chat, req);
	return chat;
fail:
	json_object_put(chat);
	return NULL;
}

/* --- Messages answers as chat answers --- */

/* Cached input is part of chat's prompt count (wire_usage.c). */
static struct json_object *
chat_usage(struct json_object *u)
{
	struct wire_usage	 wu;

	wire_usage_init(&wu);
	wire_usage_merge(WIRE_MESSAGES, u, &wu);
	return wire_usage_json(WIRE_CHAT, &wu);
}

static int
chat_message(struct xlate *x, struct json_object *content,
    struct json_object *msg)
{
	struct json_object	*calls, *b, *text;
	const char		*type;
	size_t			 i;
	int			 other;

	calls = json_object_new_array();
	for (i = 0; i < json_object_array_length(content); i++) {
		b = json_object_array_get_idx(content, i);
		if ((type = xlate_str(b, "type")) == NULL) {
			json_object_put(calls);
			return xlate_fail(x, "content[%zu] has no type", i);
		}
		/* Thinking and server tools' blocks have no chat form. */
		if (strcmp(type, "tool_use") == 0 &&
		    tool_use_to_call(x, b, calls) == -1) {
			json_object_put(calls);
			return -1;
		}
	}
	text = xlate_join_text(content, text_types, "", &other);
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
xlate_messages_answer_to_chat(struct xlate *x, struct json_object *resp,
    const char *model)
{
	struct json_object	*out, *content, *choices, *c0, *msg;
	const char		*type, *stop;
	char			 id[XLATE_ID_LEN];

	type = xlate_str(resp, "type");
	content = xlate_get(resp, "content");
	if ((type != NULL && strcmp(type, "message") != 0) ||
	    !xlate_is(content, json_type_array)) {
		xlate_fail(x, "the upstream's answer is not a message");
		return NULL;
	}
	msg = json_object_new_object();
	xlate_set_str(msg, "role", "assistant");
	if (chat_message(x, content, msg) == -1) {
		json_object_put(msg);
		xlate_where(x, "the upstream's answer");
		return NULL;
	}
	c0 = json_object_new_object();
	json_object_object_add(c0, "index", json_object_new_int(0));
	json_object_object_add(c0, "message", msg);
	json_object_object_add(c0, "logprobs", NULL);
	/* A stop reason missing is an ordinary stop. */
	stop = wire_stop_to_chat(xlate_str(resp, "stop_reason"));
	xlate_set_str(c0, "finish_reason", stop != NULL ? stop : "stop");
	choices = json_object_new_array();
	json_object_array_add(choices, c0);

	out = json_object_new_object();
	xlate_id(id, sizeof(id), "chatcmpl-");
	xlate_set_str(out, "id", id);
	xlate_set_str(out, "object", "chat.completion");
	json_object_object_add(out, "created",
	    json_object_new_int64((int64_t)time(NULL)));
	xlate_set_str(out, "model", model);
	json_object_object_add(out, "choices", choices);
	json_object_object_add(out, "usage", chat_usage(xlate_get(resp,
	    "usage")));
	return out;
}
