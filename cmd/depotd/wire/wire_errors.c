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
 * wire_errors.c: the error type each provider gives an HTTP status, one
 * map per dialect, for every error depotd writes in a provider's
 * envelope: whole replies (fe_reply.c) and the error events of a
 * stream already under way (xstream_chat.c, xstream_responses.c,
 * xstream_messages.c).
 *
 * Anthropic documents its types by status (the API's "Errors" page and
 * the SDKs' ErrorType): 400 invalid_request_error (also "other 4XX
 * status codes not listed"), 401 authentication_error, 403
 * permission_error, 404 not_found_error, 413 request_too_large, 429
 * rate_limit_error, 500 api_error, 504 timeout_error, 529
 * overloaded_error.  depotd answers 503 when it is out of room, which
 * is Anthropic's overloaded_error; other 5xx are api_error.
 *
 * OpenAI's error codes guide names the statuses (400, 401, 403, 404,
 * 429, 500, 503) but not one type per status, and its SDKs raise by
 * status alone (BadRequestError 400, AuthenticationError 401,
 * PermissionDeniedError 403, NotFoundError 404, RateLimitError 429,
 * InternalServerError 5xx).  The types below are the words of those
 * classes as OpenAI-compatible servers write them, and as
 * ../shared/SPEC.md §3 has them: authentication_error,
 * permission_error, not_found_error, rate_limit_error, server_error
 * for every 5xx, invalid_request_error for the rest.  The stream
 * writers used to say invalid_request_error for 401 to 404 and 429
 * (Responses), or for 403 and 404 and "timeout" for 504 (chat), a
 * type OpenAI documents nowhere: a client that reads the type saw a
 * different word for the same status in a stream and in a reply.
 */
#include <stddef.h>

#include "wire.h"

struct wire_error_word {
	int		 status;
	const char	*word;
};

static const struct wire_error_word openai_types[] = {
	{ 401, "authentication_error" },
	{ 403, "permission_error" },
	{ 404, "not_found_error" },
	{ 429, "rate_limit_error" },
	{ 0, NULL }
};

static const struct wire_error_word anthropic_types[] = {
	{ 401, "authentication_error" },
	{ 403, "permission_error" },
	{ 404, "not_found_error" },
	{ 413, "request_too_large" },
	{ 429, "rate_limit_error" },
	{ 503, "overloaded_error" },
	{ 529, "overloaded_error" },
	{ 504, "timeout_error" },
	{ 0, NULL }
};

/*
 * A Responses stream's error event carries a code beside the type
 * (ResponseErrorEvent.code, free text): the codes of a failed
 * response's error where one fits (rate_limit_exceeded,
 * server_error), else the type.
 */
static const struct wire_error_word responses_codes[] = {
	{ 429, "rate_limit_exceeded" },
	{ 504, "timeout" },
	{ 0, NULL }
};

/* The word for status in map, else the dialect's word for its class. */
static const char *
wire_error_word(const struct wire_error_word *map, int status,
    const char *server, const char *client)
{
	for (; map->word != NULL; map++)
		if (map->status == status)
			return map->word;
	return status >= 500 ? server : client;
}

const char *
wire_error_type_openai(int status)
{
	return wire_error_word(openai_types, status, "server_error",
	    "invalid_request_error");
}

const char *
wire_error_type_anthropic(int status)
{
	return wire_error_word(anthropic_types, status, "api_error",
	    "invalid_request_error");
}

const char *
wire_error_code_responses(int status)
{
	return wire_error_word(responses_codes, status, "server_error",
	    "invalid_request_error");
}
