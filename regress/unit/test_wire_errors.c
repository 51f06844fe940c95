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
 * test_wire_errors.c: the one HTTP-status-to-error-type map of each
 * dialect (wire/wire_errors.c), every status depotd answers pinned,
 * and the stream writers' error events held to the same map as the
 * whole replies: the chat stream once said invalid_request_error for
 * 403 and 404 and "timeout" for 504, the Responses stream
 * invalid_request_error for 401 to 429.
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "t.h"
#include "wire/wire.h"

struct want {
	int		 status;
	const char	*openai;
	const char	*anthropic;
	const char	*responses_code;
};

/* ../shared/SPEC.md §3, and wire_errors.c's comment. */
static const struct want wants[] = {
	{ 400, "invalid_request_error", "invalid_request_error",
	    "invalid_request_error" },
	{ 401, "authentication_error", "authentication_error",
	    "invalid_request_error" },
	{ 402, "invalid_request_error", "invalid_request_error",
	    "invalid_request_error" },
	{ 403, "permission_error", "permission_error",
	    "invalid_request_error" },
	{ 404, "not_found_error", "not_found_error",
	    "invalid_request_error" },
	{ 405, "invalid_request_error", "invalid_request_error",
	    "invalid_request_error" },
	{ 409, "invalid_request_error", "invalid_request_error",
	    "invalid_request_error" },
	{ 413, "invalid_request_error", "request_too_large",
	    "invalid_request_error" },
	{ 414, "invalid_request_error", "invalid_request_error",
	    "invalid_request_error" },
	{ 416, "invalid_request_error", "invalid_request_error",
	    "invalid_request_error" },
	{ 422, "invalid_request_error", "invalid_request_error",
	    "invalid_request_error" },
	{ 429, "rate_limit_error", "rate_limit_error",
	    "rate_limit_exceeded" },
	{ 431, "invalid_request_error", "invalid_request_error",
	    "invalid_request_error" },
	{ 500, "server_error", "api_error", "server_error" },
	{ 501, "server_error", "api_error", "server_error" },
	{ 502, "server_error", "api_error", "server_error" },
	{ 503, "server_error", "overloaded_error", "server_error" },
	{ 504, "server_error", "timeout_error", "timeout" },
	{ 529, "server_error", "overloaded_error", "server_error" },
};

/* The last event an error writer sent, its data parsed. */
struct last {
	char			 event[32];
	struct json_object	*data;
};

static void
keep(void *arg, const char *event, const char *data, size_t len)
{
	struct last	*l = arg;

	json_object_put(l->data);
	l->data = json_tokener_parse(data);
	(void)len;
	strlcpy(l->event, event != NULL ? event : "", sizeof(l->event));
}

static const char *
member(struct json_object *o, const char *a, const char *b)
{
	struct json_object	*v;

	if (a != NULL && !json_object_object_get_ex(o, a, &o))
		return NULL;
	if (!json_object_object_get_ex(o, b, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static void
test_maps(void)
{
	const struct want	*w;
	char			 what[64];
	size_t			 i;

	for (i = 0; i < sizeof(wants) / sizeof(wants[0]); i++) {
		w = &wants[i];
		snprintf(what, sizeof(what), "OpenAI %d", w->status);
		T_EQ_STR(wire_error_type_openai(w->status), w->openai, what);
		snprintf(what, sizeof(what), "Anthropic %d", w->status);
		T_EQ_STR(wire_error_type_anthropic(w->status), w->anthropic,
		    what);
		snprintf(what, sizeof(what), "Responses code %d", w->status);
		T_EQ_STR(wire_error_code_responses(w->status),
		    w->responses_code, what);
	}
}

/* A stream's error event says what a whole reply of its status says. */
static void
test_streams(void)
{
	const struct want	*w;
	struct last		 l;
	char			 what[64];
	size_t			 i;

	memset(&l, 0, sizeof(l));
	for (i = 0; i < sizeof(wants) / sizeof(wants[0]); i++) {
		w = &wants[i];
		xstream_error(WIRE_CHAT, w->status, "m", keep, &l);
		snprintf(what, sizeof(what), "chat stream %d", w->status);
		T_EQ_STR(member(l.data, "error", "type"), w->openai, what);
		xstream_error(WIRE_RESPONSES, w->status, "m", keep, &l);
		snprintf(what, sizeof(what), "Responses stream %d",
		    w->status);
		T_EQ_STR(member(l.data, "error", "type"), w->openai, what);
		T_EQ_STR(member(l.data, NULL, "code"), w->responses_code,
		    what);
		xstream_error(WIRE_MESSAGES, w->status, "m", keep, &l);
		snprintf(what, sizeof(what), "Messages stream %d", w->status);
		T_EQ_STR(member(l.data, "error", "type"), w->anthropic, what);
	}
	json_object_put(l.data);
}

int
main(void)
{
	test_maps();
	test_streams();
	return t_done();
}
