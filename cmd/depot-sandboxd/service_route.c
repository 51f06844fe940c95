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
 * service_route.c: the router of the code-execution protocol, version
 * 1: authentication, the routes, request bodies.
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
#include "service.h"

static int
service_route_authorized(struct http_request *req)
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
service_route_split(const char *path, char *sid, size_t sidlen)
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

static void
service_route_request(struct service_req *a)
{
	struct http_request	*req = a->req;
	const char		*rest;

	if (strcmp(req->path, "/health") == 0 && req->method == HTTP_M_GET) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "status",
		    json_object_new_string("ok"));
		json_object_object_add(o, "sessions",
		    json_object_new_int(session_count()));
		service_json(req, 200, o);
		return;
	}
	if (strcmp(req->path, "/sessions") == 0) {
		if (req->method != HTTP_M_POST) {
			service_error(req, 405, "method not allowed");
			return;
		}
		req->route = "create";
		a->route = ROUTE_CREATE;
		http_body_accept(req);
		return;
	}
	if ((rest = service_route_split(req->path, a->sid,
	    sizeof(a->sid))) == NULL) {
		service_error(req, 404, "no such route");
		return;
	}
	if (*rest == '\0' && req->method == HTTP_M_DELETE) {
		req->route = "destroy";
		service_session_destroy(a);
	} else if (strcmp(rest, "/exec") == 0 && req->method == HTTP_M_POST) {
		req->route = "exec";
		a->route = ROUTE_EXEC;
		http_body_accept(req);
	} else if (strcmp(rest, "/files/list") == 0 &&
	    req->method == HTTP_M_GET) {
		req->route = "list";
		service_files_list(a);
	} else if (strcmp(rest, "/files") == 0 && req->method == HTTP_M_GET) {
		req->route = "get";
		service_files_get(a);
	} else if (strcmp(rest, "/files") == 0 && req->method == HTTP_M_POST) {
		req->route = "put";
		a->route = ROUTE_PUT;
		service_files_put_begin(a);
	} else if (*rest == '\0' || strcmp(rest, "/exec") == 0 ||
	    strcmp(rest, "/files") == 0 || strcmp(rest, "/files/list") == 0)
		service_error(req, 405, "method not allowed");
	else
		service_error(req, 404, "no such route");
}

static int
service_route_is_files_path(const char *path)
{
	size_t	 n = strlen(path);

	return n >= 6 && strcmp(path + n - 6, "/files") == 0;
}

static void
service_route_on_request(struct http_request *req, void *arg)
{
	struct service_req	*a;

	if ((a = calloc(1, sizeof(*a))) == NULL) {
		service_error(req, 500, "out of memory");
		return;
	}
	a->req = req;
	a->tmpfd = -1;
	req->arg = a;
	if (!service_route_authorized(req)) {
		service_error(req, 401, "missing or wrong bearer token");
		return;
	}
	if (req->method == HTTP_M_POST &&
	    req->content_length > SERVICE_MAX_JSON &&
	    !service_route_is_files_path(req->path)) {
		service_error(req, 413, "request body too large");
		return;
	}
	service_route_request(a);
}

static void
service_route_on_body(struct http_request *req, const void *data, size_t len,
    void *arg)
{
	struct service_req	*a = req->arg;
	char		*p;

	if (a == NULL || a->replied || req->replied)
		return;
	if (a->route == ROUTE_PUT) {
		if (multipart_feed(a->mp, data, len) == -1) {
			if (a->put_status == 0) {
				a->put_status = 400;
				a->put_error = multipart_error(a->mp);
			}
			service_files_put_fail(a, a->put_status, a->put_error);
		}
		return;
	}
	if (a->len + len > SERVICE_MAX_JSON) {
		a->replied = 1;
		service_error(req, 413, "request body too large");
		return;
	}
	if ((p = realloc(a->body, a->len + len + 1)) == NULL) {
		a->replied = 1;
		service_error(req, 500, "out of memory");
		return;
	}
	a->body = p;
	memcpy(a->body + a->len, data, len);
	a->len += len;
	a->body[a->len] = '\0';
}

static void
service_route_on_body_end(struct http_request *req, void *arg)
{
	struct service_req	*a = req->arg;

	if (a == NULL || a->replied || req->replied)
		return;
	switch (a->route) {
	case ROUTE_CREATE:
		service_session_create(a);
		break;
	case ROUTE_EXEC:
		service_session_exec(a);
		break;
	case ROUTE_PUT:
		service_files_put_end(a);
		break;
	default:
		break;
	}
}

static void
service_route_on_free(struct http_request *req, void *arg)
{
	struct service_req	*a = req->arg;

	if (a == NULL)
		return;
	if (a->exec != NULL)
		session_exec_cancel(a->exec);
	service_files_put_discard(a);
	if (a->mp != NULL)
		multipart_free(a->mp);
	free(a->body);
	free(a);
	req->arg = NULL;
}

void
service_route_handler(struct http_handler *h)
{
	memset(h, 0, sizeof(*h));
	h->on_request = service_route_on_request;
	h->on_body = service_route_on_body;
	h->on_body_end = service_route_on_body_end;
	h->on_free = service_route_on_free;
}
