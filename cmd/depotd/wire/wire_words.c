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
 * wire_words.c: the words the two providers use for the same thing:
 * why an answer stopped; and the token counts they report, which are
 * the upstream's word too.  One table each, for the whole-answer
 * translation (xlate_messages_*.c) and the stream translation
 * (xstream_messages.c).  What kind an error is: wire_errors.c.
 */
#include <stdint.h>
#include <string.h>

#include <json-c/json.h>

#include "wire.h"

int64_t
wire_tokens(struct json_object *v)
{
	int64_t	 n;

	if (!json_object_is_type(v, json_type_int))
		return -1;
	n = json_object_get_int64(v);
	if (n < 0)
		return -1;
	return n < WIRE_TOKENS_MAX ? n : WIRE_TOKENS_MAX;
}

/* An Anthropic stop_reason as a chat finish_reason; NULL for NULL. */
const char *
wire_stop_to_chat(const char *stop)
{
	if (stop == NULL)
		return NULL;
	if (strcmp(stop, "max_tokens") == 0 ||
	    strcmp(stop, "model_context_window_exceeded") == 0)
		return "length";
	if (strcmp(stop, "tool_use") == 0)
		return "tool_calls";
	if (strcmp(stop, "refusal") == 0)
		return "content_filter";
	return "stop";
}

/*
 * A chat finish_reason as an Anthropic stop_reason ("end_turn" for
 * "stop" and what has no counterpart; a matched stop sequence is the
 * caller's to tell).
 */
const char *
wire_stop_to_messages(const char *finish)
{
	if (finish == NULL)
		return "end_turn";
	if (strcmp(finish, "length") == 0)
		return "max_tokens";
	if (strcmp(finish, "tool_calls") == 0 ||
	    strcmp(finish, "function_call") == 0)
		return "tool_use";
	if (strcmp(finish, "content_filter") == 0)
		return "refusal";
	return "end_turn";
}

/*
 * llama-server's Messages endpoint answers stop_reason "end_turn" with
 * the stop_sequence that matched; Anthropic says "stop_sequence" then.
 * o holds both (an answer, a message_delta's delta).
 */
void
wire_stop_named(struct json_object *o)
{
	struct json_object	*seq, *reason;

	if (!json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, "stop_sequence", &seq) ||
	    !json_object_is_type(seq, json_type_string) ||
	    json_object_get_string_len(seq) == 0 ||
	    !json_object_object_get_ex(o, "stop_reason", &reason) ||
	    !json_object_is_type(reason, json_type_string) ||
	    strcmp(json_object_get_string(reason), "end_turn") != 0)
		return;
	json_object_object_add(o, "stop_reason",
	    json_object_new_string("stop_sequence"));
}
