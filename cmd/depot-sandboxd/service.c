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
 * service.c: what the route files of the code-execution protocol share,
 * below them: the error envelope and JSON replies, the session a path
 * names, and a request's JSON body.  The router (service_route.c) and
 * the routes (service_session.c, service_files.c) call down into it.
 */
#include <sys/types.h>

#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "util.h"
#include "sandboxd.h"
#include "service.h"

/* Protocol v1's error envelope, its type chosen by the status. */
void
service_error(struct http_request *req, int status, const char *message)
{
	struct json_object	*o, *e;
	const char		*type, *s;

	switch (status) {
	case 401:
		type = "authentication_error";
		break;
	case 403:
		type = "permission_error";
		break;
	case 404:
		type = "not_found_error";
		break;
	case 413:
		type = "request_too_large";
		break;
	case 503:
		type = "overloaded_error";
		break;
	default:
		type = status >= 500 ? "api_error" : "invalid_request_error";
	}
	o = json_object_new_object();
	e = json_object_new_object();
	json_object_object_add(e, "type", json_object_new_string(type));
	json_object_object_add(e, "message", json_object_new_string(message));
	json_object_object_add(o, "type", json_object_new_string("error"));
	json_object_object_add(o, "error", e);
	/* What clients of the reference backend read. */
	json_object_object_add(o, "detail", json_object_new_string(message));
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	http_reply(req, status, "application/json", s, strlen(s));
	json_object_put(o);
}

void
service_json(struct http_request *req, int status, struct json_object *o)
{
	const char	*s;

	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	http_reply(req, status, "application/json", s, strlen(s));
	json_object_put(o);
}

struct session *
service_named_session(struct service_req *a)
{
	struct session	*s;

	if ((s = session_find(a->sid)) == NULL) {
		service_error(a->req, 404, "no such session");
		return NULL;
	}
	session_touch(s);
	return s;
}

/* Parses the JSON body; an empty body is an empty object. */
struct json_object *
service_body_json(struct service_req *a)
{
	struct json_tokener	*tok;
	struct json_object	*o;

	if (a->len == 0)
		return json_object_new_object();
	if ((tok = json_tokener_new()) == NULL)
		return NULL;
	o = json_tokener_parse_ex(tok, a->body, a->len);
	if (o != NULL && (json_tokener_get_error(tok) != json_tokener_success
	    || tok->char_offset != (int)a->len)) {
		/* Trailing garbage after the object. */
		size_t i;

		for (i = tok->char_offset; i < a->len; i++)
			if (strchr(" \t\r\n", a->body[i]) == NULL) {
				json_object_put(o);
				o = NULL;
				break;
			}
	}
	json_tokener_free(tok);
	if (o != NULL && !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		o = NULL;
	}
	return o;
}
