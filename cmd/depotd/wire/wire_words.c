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
 * wire_words.c: the words the two providers use for the same things:
 * why an answer stopped, and what kind an error is; and the token
 * counts they report, which are the upstream's word too.  One table each,
 * for the whole-answer translation (xlate_manswer.c), the stream
 * translation (xstream_messages.c) and the error envelopes
 * (fe_reply.c).
 */
#include <stdint.h>
#include <string.h>

#include <json-c/json.h>

#include "fe_model.h"

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
stop_to_chat(const char *stop)
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
stop_to_messages(const char *finish)
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

/* The type of an Anthropic error of this HTTP status. */
const char *
anthropic_error_type(int status)
{
	switch (status) {
	case 401:
		return "authentication_error";
	case 403:
		return "permission_error";
	case 404:
		return "not_found_error";
	case 413:
		return "request_too_large";
	case 429:
		return "rate_limit_error";
	case 503:
	case 529:
		return "overloaded_error";
	case 504:
		return "timeout_error";
	default:
		return status >= 500 ? "api_error" : "invalid_request_error";
	}
}
