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
 * api.c: the routes of the code-execution protocol, version 1.
 *
 *	POST   /sessions			CreateSession
 *	POST   /sessions/{id}/exec		Execute
 *	DELETE /sessions/{id}			DestroySession
 *	GET    /sessions/{id}/files/list	ListFiles
 *	GET    /sessions/{id}/files		GetFile
 *	POST   /sessions/{id}/files		PutFile (multipart)
 *	GET    /health				liveness, session count
 *
 * A program's failure is a 200 with its return code; statuses are for
 * the protocol's own errors.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "http.h"
#include "log.h"
#include "multipart.h"
#include "util.h"
#include "sandboxd.h"
#include "api.h"

void
api_error(struct http_request *req, int status, const char *message)
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
api_json(struct http_request *req, int status, struct json_object *o)
{
	const char	*s;

	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	http_reply(req, status, "application/json", s, strlen(s));
	json_object_put(o);
}

static int
api_authorized(struct http_request *req)
{
	const char	*h;

	if (sbx_conf->token == NULL)
		return 1;
	if ((h = http_header_get(req, "authorization")) == NULL ||
	    strncasecmp(h, "Bearer ", 7) != 0)
		return 0;
	h += 7;
	while (*h == ' ')
		h++;
	return timingsafe_streq(h, sbx_conf->token);
}

/* "/sessions/ID/rest" -> sid = ID, returns "/rest" or "" or NULL. */
static const char *
api_split(const char *path, char *sid, size_t sidlen)
{
	const char	*p, *slash;
	size_t		 n;

	if (strncmp(path, "/sessions/", 10) != 0)
		return NULL;
	p = path + 10;
	slash = strchr(p, '/');
	n = slash ? (size_t)(slash - p) : strlen(p);
	if (n == 0 || n >= sidlen)
		return NULL;
	memcpy(sid, p, n);
	sid[n] = '\0';
	return slash ? slash : "";
}

struct session *
api_session(struct api_req *a)
{
	struct session	*s;

	if ((s = session_find(a->sid)) == NULL) {
		api_error(a->req, 404, "no such session");
		return NULL;
	}
	session_touch(s);
	return s;
}

/* Parses the JSON body; an empty body is an empty object. */
struct json_object *
api_body_json(struct api_req *a)
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

/* An optional integer field; -1 on a wrong type. */
static void
api_route(struct api_req *a)
{
	struct http_request	*req = a->req;
	const char		*rest;

	if (strcmp(req->path, "/health") == 0 && req->method == HTTP_M_GET) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "status",
		    json_object_new_string("ok"));
		json_object_object_add(o, "sessions",
		    json_object_new_int(session_count()));
		api_json(req, 200, o);
		return;
	}
	if (strcmp(req->path, "/sessions") == 0) {
		if (req->method != HTTP_M_POST) {
			api_error(req, 405, "method not allowed");
			return;
		}
		req->route = "create";
		a->route = R_CREATE;
		http_body_accept(req);
		return;
	}
	if ((rest = api_split(req->path, a->sid, sizeof(a->sid))) == NULL) {
		api_error(req, 404, "no such route");
		return;
	}
	if (*rest == '\0' && req->method == HTTP_M_DELETE) {
		req->route = "destroy";
		api_destroy(a);
	} else if (strcmp(rest, "/exec") == 0 && req->method == HTTP_M_POST) {
		req->route = "exec";
		a->route = R_EXEC;
		http_body_accept(req);
	} else if (strcmp(rest, "/files/list") == 0 &&
	    req->method == HTTP_M_GET) {
		req->route = "list";
		api_list(a);
	} else if (strcmp(rest, "/files") == 0 && req->method == HTTP_M_GET) {
		req->route = "get";
		api_get(a);
	} else if (strcmp(rest, "/files") == 0 && req->method == HTTP_M_POST) {
		req->route = "put";
		a->route = R_PUT;
		api_put_begin(a);
	} else if (*rest == '\0' || strcmp(rest, "/exec") == 0 ||
	    strcmp(rest, "/files") == 0 || strcmp(rest, "/files/list") == 0)
		api_error(req, 405, "method not allowed");
	else
		api_error(req, 404, "no such route");
}

static int
api_is_files_path(const char *path)
{
	size_t	 n = strlen(path);

	return n >= 6 && strcmp(path + n - 6, "/files") == 0;
}

static void
api_on_request(struct http_request *req, void *arg)
{
	struct api_req	*a;

	if ((a = calloc(1, sizeof(*a))) == NULL) {
		api_error(req, 500, "out of memory");
		return;
	}
	a->req = req;
	a->tmpfd = -1;
	req->arg = a;
	if (!api_authorized(req)) {
		api_error(req, 401, "missing or wrong bearer token");
		return;
	}
	if (req->method == HTTP_M_POST && req->content_length > API_MAX_JSON &&
	    !api_is_files_path(req->path)) {
		api_error(req, 413, "request body too large");
		return;
	}
	api_route(a);
}

static void
api_on_body(struct http_request *req, const void *data, size_t len,
    void *arg)
{
	struct api_req	*a = req->arg;
	char		*p;

	if (a == NULL || a->replied || req->replied)
		return;
	if (a->route == R_PUT) {
		if (multipart_feed(a->mp, data, len) == -1) {
			if (a->put_status == 0) {
				a->put_status = 400;
				a->put_error = multipart_error(a->mp);
			}
			api_put_fail(a, a->put_status, a->put_error);
		}
		return;
	}
	if (a->len + len > API_MAX_JSON) {
		a->replied = 1;
		api_error(req, 413, "request body too large");
		return;
	}
	if ((p = realloc(a->body, a->len + len + 1)) == NULL) {
		a->replied = 1;
		api_error(req, 500, "out of memory");
		return;
	}
	a->body = p;
	memcpy(a->body + a->len, data, len);
	a->len += len;
	a->body[a->len] = '\0';
}

static void
api_on_body_end(struct http_request *req, void *arg)
{
	struct api_req	*a = req->arg;

	if (a == NULL || a->replied || req->replied)
		return;
	switch (a->route) {
	case R_CREATE:
		api_create(a);
		break;
	case R_EXEC:
		api_exec(a);
		break;
	case R_PUT:
		api_put_end(a);
		break;
	default:
		break;
	}
}

static void
api_on_free(struct http_request *req, void *arg)
{
	struct api_req	*a = req->arg;

	if (a == NULL)
		return;
	if (a->exec != NULL)
		session_exec_cancel(a->exec);
	api_put_discard(a);
	if (a->mp != NULL)
		multipart_free(a->mp);
	free(a->body);
	free(a);
	req->arg = NULL;
}

void
api_handler(struct http_handler *h)
{
	memset(h, 0, sizeof(*h));
	h->on_request = api_on_request;
	h->on_body = api_on_body;
	h->on_body_end = api_on_body_end;
	h->on_free = api_on_free;
}
