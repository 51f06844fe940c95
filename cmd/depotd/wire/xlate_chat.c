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
 * xlate_chat.c: the hub's own dialect, chat completions, as the other
 * dialects' translators write and read it: a chat message, a tool
 * result among the messages, a function tool, the stream option, and
 * the reading of a chat answer.  An answer that does not have the
 * shape chat promises is refused (the caller's 502) rather than
 * guessed at.
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>
#include <json-c/printbuf.h>

#include "wire.h"
#include "xlate.h"

static const char *const chat_text[] = { "text", "output_text", NULL };

static int
check_calls(struct xlate *x, struct json_object *calls)
{
	struct json_object	*c, *fn;
	size_t			 i;

	if (!xlate_is(calls, json_type_array))
		return xlate_fail(x, "tool_calls is not an array");
	for (i = 0; i < json_object_array_length(calls); i++) {
		c = json_object_array_get_idx(calls, i);
		fn = xlate_get(c, "function");
		if (xlate_str(c, "id") == NULL ||
		    xlate_str(fn, "name") == NULL ||
		    (xlate_get(fn, "arguments") != NULL &&
		    xlate_str(fn, "arguments") == NULL))
			return xlate_fail(x, "tool_calls[%zu] is malformed", i);
	}
	return 0;
}

int
xlate_chat_answer_read(struct xlate *x, struct json_object *resp,
    struct xlate_chat_answer *a)
{
	struct json_object	*choices, *c0, *msg, *content;
	int			 other;

	choices = xlate_get(resp, "choices");
	memset(a, 0, sizeof(*a));
	a->resp = resp;
	if (!xlate_is(choices, json_type_array) ||
	    json_object_array_length(choices) == 0)
		return xlate_fail(x, "the upstream's answer has no choices");
	c0 = json_object_array_get_idx(choices, 0);
	if (!xlate_is(msg = xlate_get(c0, "message"), json_type_object))
		return xlate_fail(x, "the upstream's answer has no message");
	content = xlate_get(msg, "content");
	if (xlate_is(content, json_type_string))
		a->text = xlate_dup(content);
	else if (xlate_is(content, json_type_array))
		a->text = xlate_join_text(content, chat_text, "", &other);
	else if (content != NULL)
		return xlate_fail(x, "the upstream's message content is "
		    "malformed");
	a->refusal = xlate_get(msg, "refusal");
	a->calls = xlate_get(msg, "tool_calls");
	if ((a->refusal != NULL && !xlate_is(a->refusal, json_type_string)) ||
	    (a->calls != NULL && check_calls(x, a->calls) == -1)) {
		json_object_put(a->text);
		a->text = NULL;
		return xlate_fail(x, "the upstream's message is malformed");
	}
	if ((a->finish = xlate_str(c0, "finish_reason")) == NULL)
		a->finish = "";
	if (xlate_is(xlate_get(resp, "usage"), json_type_object))
		a->usage = xlate_get(resp, "usage");
	return 0;
}

struct json_object *
xlate_chat_message(const char *role, struct json_object *content)
{
	struct json_object	*m;

	m = json_object_new_object();
	xlate_set_str(m, "role", role);
	json_object_object_add(m, "content", content);
	return m;
}

static struct json_object *
error_text(struct json_object *content)
{
	static const char	 mark[] = "[tool error] ";
	struct printbuf		*pb;
	struct json_object	*s;

	if ((pb = printbuf_new()) == NULL)
		return content;
	printbuf_memappend(pb, mark, sizeof(mark) - 1);
	printbuf_memappend(pb, json_object_get_string(content),
	    json_object_get_string_len(content));
	s = json_object_new_string_len(pb->buf, pb->bpos);
	printbuf_free(pb);
	json_object_put(content);
	return s;
}

int
xlate_chat_tool_result(struct xlate *x, struct json_object *msgs,
    const char *call_id,
    struct json_object *parts, int is_error, struct json_object *user_parts)
{
	static const char *const text_types[] = { "text", NULL };
	struct json_object	*content, *m, *p;
	size_t			 i, n;
	int			 other;
	const char		*type;

	if (xlate_is(parts, json_type_string))
		content = xlate_dup(parts);
	else if (parts == NULL)
		content = json_object_new_string("");
	else if ((content = xlate_join_text(parts, text_types, "\n",
	    &other)) == NULL)
		return xlate_fail(x, "a tool result's content is malformed");
	else if (other > 0) {
		n = json_object_array_length(parts);
		for (i = 0; i < n; i++) {
			p = json_object_array_get_idx(parts, i);
			type = xlate_str(p, "type");
			if (type == NULL || strcmp(type, "text") != 0)
				json_object_array_add(user_parts, xlate_dup(p));
		}
	}
	/* Chat has no error flag on a tool result: say so in the text. */
	if (is_error)
		content = error_text(content);
	m = xlate_chat_message("tool", content);
	xlate_set_str(m, "tool_call_id", call_id);
	json_object_array_add(msgs, m);
	return 0;
}

struct json_object *
xlate_chat_function(struct xlate *x, struct json_object *t, const char *schema)
{
	struct json_object	*fn;

	if (xlate_str(t, "name") == NULL) {
		xlate_fail(x, "a tool has no name");
		return NULL;
	}
	fn = json_object_new_object();
	xlate_copy(fn, "name", t, "name");
	xlate_copy(fn, "description", t, "description");
	xlate_copy(fn, "parameters", t, schema);
	return xlate_part("function", "function", fn);
}

void
xlate_chat_stream(struct json_object *chat, struct json_object *req)
{
	struct json_object	*so, *stream;

	stream = xlate_get(req, "stream");
	if (stream == NULL)
		return;
	json_object_object_add(chat, "stream", xlate_dup(stream));
	if (json_object_get_boolean(stream)) {
		so = json_object_new_object();
		json_object_object_add(so, "include_usage",
		    json_object_new_boolean(1));
		json_object_object_add(chat, "stream_options", so);
	}
}
