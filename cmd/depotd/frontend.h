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
 * frontend.h: the HTTP frontend's parts: the process and its routing
 * (frontend.c), requests to the storage helper (fe_storage.c),
 * authentication (fe_auth.c, its cache in fe_authcache.c), dialects
 * and errors (fe_reply.c), the Files API (fe_files.c, with uploads in
 * fe_upload.c and listings in fe_list.c, the file object in
 * fe_file_object.c), health (fe_health.c) and metrics (fe_metrics.c).
 */
#ifndef DEPOTD_FRONTEND_H
#define DEPOTD_FRONTEND_H

/*
 * Out of memory, the rule per process: in a frontend it is the
 * request's failure, never the process's.  Whatever a request makes
 * the frontend allocate (its body, its tree, its translation, the
 * upstream body) is checked, and a failure answers that request 503 in
 * its dialect (fe_reply_error, which falls back to constant text when it
 * cannot build its own answer); fatal() is kept for what comes before
 * any request (start-up, channels to the other children) and for
 * broken invariants.  Request paths use no allocator that calls
 * fatal.  The master, the storage helper, the broker and the extract
 * child keep fatal(): they read no caller's input, and their state
 * half changed is worse than their end (depotd(8)).
 */

#include "http.h"
#include "depotd.h"

struct json_object;
struct fe_authcache_entry;

/* The storage helper's reply to a request (fe_storage_request). */
typedef void	(*fe_storage_reply_cb)(void *arg, struct imsg *);

/*
 * The caller, once authenticated: a handle the storage helper issued
 * (empty until then, and for the admin key until it names a user) and
 * what replies and logs show.  Who owns what is the storage helper's
 * to know; the token's hash is kept only so that the admin key can
 * name its user later in an upload's form.
 */
struct principal {
	char		 handle[HANDLE_LEN];
	char		 token_sha256[65];
	char		 user_name[128];
	char		 workspace_name[128];	/* for logs */
	int		 admin;
	struct fe_authcache_entry *cached;	/* the handle's, held */
};

/*
 * Per-request state of every API route.  A route that reads a body
 * sets on_body and on_body_end; free_route runs when the request goes,
 * before any storage request still pending in ar->pending is
 * cancelled.
 */
struct api_req {
	struct http_request	*req;
	enum dialect		 dialect;
	struct principal	 who;
	uint32_t		 pending;	/* the storage request awaiting
						   its reply (fe_storage.c) */
	void			*auth;		/* authentication under way */
	void			*route;		/* the route's own state */
	void			(*free_route)(struct api_req *);
	void			(*on_body)(struct api_req *, const void *,
				    size_t);
	void			(*on_body_end)(struct api_req *);
	TAILQ_ENTRY(api_req)	 running;	/* frontend.c, oldest first */
};

struct frontend {
	struct event_base	*base;
	struct depotd_conf	*conf;
	struct http_server	*http;
	int			 instance;
};
extern struct frontend fe;

/* fe_storage.c */
void	 fe_storage_attach(int fd);
int	 fe_storage_up(void);
uint32_t fe_storage_request(uint32_t type, int fd, const void *, size_t,
	    fe_storage_reply_cb, void *);
void	 fe_storage_send(uint32_t type, const void *, size_t);
void	 fe_storage_cancel(uint32_t);
void	 fe_storage_progress(int64_t *last, const char *handle,
	    const char *id);

/* fe_auth.c */
void	 fe_authenticate(struct api_req *, void (*)(struct api_req *));
void	 fe_auth_admin_user(struct api_req *, const char *user,
	    const char *workspace, void (*)(struct api_req *));
void	 fe_auth_release(struct api_req *);
void	 fe_auth_init(void);

/* fe_reply.c */
enum dialect fe_reply_dialect(const struct http_request *);
void	 fe_reply_error(struct api_req *, int status, const char *param,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* With the providers' own types: OpenAI's type and code, Anthropic's. */
void	 fe_reply_error_typed(struct api_req *, int status, const char *oa_type,
	    const char *oa_code, const char *an_type, const char *msg);
void	 fe_reply_json(struct api_req *, int status, struct json_object *);
int	 fe_reply_storage_ok(struct api_req *, struct imsg *, uint32_t want,
	    size_t size);
int	 fe_reply_query_param(struct api_req *, const char *name, char *buf,
	    size_t len);

/* fe_files.c */
void	 fe_files_route(struct api_req *);
/* fe_container.c */
void	 fe_container_route(struct api_req *);
struct json_object *fe_container_object(const struct cntr_rec *);

/* fe_file_object.c */
struct json_object *fe_file_object(const struct file_rec *, enum dialect);

/* fe_upload.c */
void	 fe_upload_route(struct api_req *);

/* fe_list.c */
void	 fe_list_route(struct api_req *);

/* fe_health.c */
void	 fe_health_route(struct api_req *);
/* The storage helper's IMSG_HEALTH answer into hm: 1 when all is up. */
int	 fe_health_read(struct api_req *, struct imsg *, struct health_msg *);

/* fe_metrics.c: what one model request did, for its counters. */
struct model_sample {
	const char	*model;
	int		 error;			/* not a 2xx */
	int64_t		 tokens_in, tokens_out;	/* -1: unknown */
	int64_t		 ttfb_us;		/* -1: no byte came */
	int64_t		 duration_us;
};
void	 fe_metrics_route(struct api_req *);
void	 fe_metrics_count(const struct http_request *);
/* A model request: error 1 when the caller got no answer of 2xx. */
void	 fe_metrics_model(const struct model_sample *);

#endif
