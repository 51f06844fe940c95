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
 * xstream_replay.c: a whole chat completion told again as the chunks
 * a streaming upstream would have sent, into a translator from chat
 * completions.  When the gateway runs code for the model it asks the
 * upstream without streaming, round after round; the last answer then
 * reaches a streaming caller through the same translation as any
 * streamed answer, in the caller's own wire.
 */
#include <sys/types.h>

#include <string.h>

#include <json-c/json.h>

#include "wire.h"

static int
replay_chunk(struct xstream *xs, struct json_object *tmpl,
    struct json_object *delta, struct json_object *finish,
    struct json_object *usage)
{
	struct json_object	*chunk, *choices, *choice;
	const char		*s;
	int			 rc;

	chunk = json_object_new_object();
	json_object_object_add(chunk, "id", json_object_get(
	    json_object_object_get(tmpl, "id")));
	json_object_object_add(chunk, "object",
	    json_object_new_string("chat.completion.chunk"));
	json_object_object_add(chunk, "created", json_object_get(
	    json_object_object_get(tmpl, "created")));
	json_object_object_add(chunk, "model", json_object_get(
	    json_object_object_get(tmpl, "model")));
	choices = json_object_new_array();
	if (delta != NULL) {
		choice = json_object_new_object();
		json_object_object_add(choice, "index", json_object_new_int(0));
		json_object_object_add(choice, "delta", delta);
		json_object_object_add(choice, "finish_reason", finish);
		json_object_array_add(choices, choice);
	}
	json_object_object_add(chunk, "choices", choices);
	if (usage != NULL)
		json_object_object_add(chunk, "usage", json_object_get(usage));
	s = json_object_to_json_string_ext(chunk, JSON_C_TO_STRING_PLAIN);
	rc = xstream_event(xs, "", s, strlen(s));
	json_object_put(chunk);
	return rc;
}

static struct json_object *
replay_delta(const char *key, struct json_object *value)
{
	struct json_object	*d;

	d = json_object_new_object();
	json_object_object_add(d, key, value);
	return d;
}

/* Each tool call as its first fragment, with its whole arguments. */
static int
replay_tool_calls(struct xstream *xs, struct json_object *tmpl,
    struct json_object *calls)
{
	struct json_object	*c, *one, *list;
	size_t			 i;

	for (i = 0; i < json_object_array_length(calls); i++) {
		c = json_object_get(json_object_array_get_idx(calls, i));
		one = json_object_new_object();
		json_object_object_add(one, "index", json_object_new_int(i));
		json_object_object_foreach(c, k, v)
			json_object_object_add(one, k, json_object_get(v));
		json_object_put(c);
		list = json_object_new_array();
		json_object_array_add(list, one);
		if (replay_chunk(xs, tmpl, replay_delta("tool_calls", list),
		    NULL, NULL) == -1)
			return -1;
	}
	return 0;
}

/*
 * Feeds xs (made from WIRE_CHAT) the chunks of a chat.completion:
 * the role, the text, the tool calls, the finish reason, the usage,
 * [DONE].  -1 when the translator refused one.
 */
int
xstream_replay(struct xstream *xs, struct json_object *completion)
{
	struct json_object	*choice, *msg, *v;

	choice = json_object_array_get_idx(json_object_object_get(completion,
	    "choices"), 0);
	if ((msg = json_object_object_get(choice, "message")) == NULL)
		return -1;
	if (replay_chunk(xs, completion, replay_delta("role",
	    json_object_new_string("assistant")), NULL, NULL) == -1)
		return -1;
	if ((v = json_object_object_get(msg, "content")) != NULL &&
	    json_object_is_type(v, json_type_string) &&
	    replay_chunk(xs, completion, replay_delta("content",
	    json_object_get(v)), NULL, NULL) == -1)
		return -1;
	if ((v = json_object_object_get(msg, "tool_calls")) != NULL &&
	    json_object_is_type(v, json_type_array) &&
	    replay_tool_calls(xs, completion, v) == -1)
		return -1;
	v = json_object_object_get(choice, "finish_reason");
	if (replay_chunk(xs, completion, json_object_new_object(),
	    json_object_get(v != NULL ? v : NULL), NULL) == -1)
		return -1;
	if ((v = json_object_object_get(completion, "usage")) != NULL &&
	    replay_chunk(xs, completion, NULL, NULL, v) == -1)
		return -1;
	return xstream_event(xs, "", "[DONE]", 6);
}
