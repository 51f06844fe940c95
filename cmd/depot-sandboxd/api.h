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
 * api.h: what the route files of depot-sandboxd share: the state of one
 * request and the reply helpers.
 *
 *	api.c		authentication, routing, request bodies, replies
 *	api_session.c	CreateSession, Execute, DestroySession
 *	api_files.c	ListFiles, GetFile, PutFile
 */
#ifndef DEPOT_SANDBOXD_API_H
#define DEPOT_SANDBOXD_API_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define API_MAX_JSON	(4 * 1024 * 1024)

enum api_route {
	R_NONE,
	R_CREATE,
	R_EXEC,
	R_PUT,
};

struct http_request;
struct multipart;
struct json_object;
struct session;

struct api_req {
	struct http_request	*req;
	enum api_route		 route;
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

/* api.c */
void	 api_error(struct http_request *, int status, const char *message);
/* Replies with o as the body and drops the reference. */
void	 api_json(struct http_request *, int status, struct json_object *o);
/* The session the path names, touched; NULL after a 404 reply. */
struct session *api_session(struct api_req *);
/* The JSON body as an object (an empty body is {}); NULL if it is not. */
struct json_object *api_body_json(struct api_req *);

/* api_session.c */
void	 api_create(struct api_req *);
void	 api_exec(struct api_req *);
void	 api_destroy(struct api_req *);

/* api_files.c */
void	 api_list(struct api_req *);
void	 api_get(struct api_req *);
void	 api_put_begin(struct api_req *);
void	 api_put_end(struct api_req *);
void	 api_put_fail(struct api_req *, int status, const char *message);
/* Drops the upload's temporary file, if any. */
void	 api_put_discard(struct api_req *);

#endif
