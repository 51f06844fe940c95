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
 * service.h: what the files of depot-sandboxd's protocol service share:
 * the state of one request and the reply helpers.  Calls go down the
 * list: the router calls the routes, and both call service.c.
 *
 *	service_route.c		authentication, routing, request bodies
 *	service_session.c	CreateSession, Execute, DestroySession
 *	service_files.c		ListFiles, GetFile, PutFile
 *	service.c		replies, the session a path names, JSON bodies
 */
#ifndef DEPOT_SANDBOXD_SERVICE_H
#define DEPOT_SANDBOXD_SERVICE_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define SERVICE_MAX_JSON	(4 * 1024 * 1024)

enum service_route {
	ROUTE_NONE,
	ROUTE_CREATE,
	ROUTE_EXEC,
	ROUTE_PUT,
};

struct http_request;
struct multipart;
struct json_object;
struct session;

struct service_req {
	struct http_request	*req;
	enum service_route		 route;
	char			 sid[ID_BUFSIZE];
	char			*body;
	size_t			 len;
	int			 replied;
	void			*exec;
	int			 exec_done;
	char			 tool[64];
	char			 tool_use_id[256];
	/* PutFile */
	struct multipart	*mp;
	int			 tmpfd;
	char			 tmpname[64];
	int64_t			 written;
	int			 part;		/* 1 file, 2 path, 0 other */
	int			 have_file;
	char			 filename[4096];
	char			 path[4096];
	size_t			 pathlen;
	int			 put_status;
	const char		*put_error;
};

/* service.c */
void	 service_error(struct http_request *, int status,
	    const char *message);
/* Replies with o as the body and drops the reference. */
void	 service_json(struct http_request *, int status,
	    struct json_object *o);
/* The session the path names, touched; NULL after a 404 reply. */
struct session *service_named_session(struct service_req *);
/* The JSON body as an object (an empty body is {}); NULL if it is not. */
struct json_object *service_body_json(struct service_req *);

/* service_session.c */
void	 service_session_create(struct service_req *);
void	 service_session_exec(struct service_req *);
void	 service_session_destroy(struct service_req *);

/* service_files.c */
void	 service_files_list(struct service_req *);
void	 service_files_get(struct service_req *);
void	 service_files_put_begin(struct service_req *);
void	 service_files_put_end(struct service_req *);
void	 service_files_put_fail(struct service_req *, int status,
	    const char *message);
/* Drops the upload's temporary file, if any. */
void	 service_files_put_discard(struct service_req *);

#endif
