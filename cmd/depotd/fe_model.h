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
 * fe_model.h: the model routes' parts, all in the frontend.
 *
 *   fe_model.c	POST /v1/chat/completions, /v1/responses, /v1/messages:
 *			body, parse, model lookup, and the order of the rest
 *   fe_catalog.c	GET /v1/models and /v1/models/{id}, both dialects
 *   fe_upcall.c	one call to an upstream on libcurl's multi interface,
 *			with errors mapped into the caller's dialect
 *   fe_refs.c	file references: found, resolved under the caller's
 *			visibility, and rewritten inline or as text
 *   fe_upstream_body.c
 *			an upstream request body of memory pieces and file
 *			descriptors sent as base64, with a known length
 *   fe_extract.c	PDF to text, asked of the extract child
 *   wire/		requests, answers and streams between the three
 *			wire formats (wire/wire.h)
 *   lib/sse.c		the server-sent-events parser
 */
#ifndef DEPOTD_MODEL_H
#define DEPOTD_MODEL_H

#include <sys/types.h>
#include <stdint.h>

#include "config.h"
#include "jsontext.h"
#include "frontend.h"
#include "wire/wire.h"

struct json_object;
struct event_base;

/* fe_upstream_body.c: an upstream request body. */
struct upstream_body;
struct upstream_body	*upstream_body_new(struct event_base *);
/*
 * A placeholder string, to be put in the JSON where the base64 of fd's
 * size bytes belongs (inside a string value).  The body owns fd.
 */
const char	*upstream_body_placeholder(struct upstream_body *, int fd, int64_t size);
/* The same, naming the file (its id) the descriptor reads. */
const char	*upstream_body_placeholder_tagged(struct upstream_body *, int fd,
		    int64_t size, const char *tag);
/*
 * For a JSON sent again (a code-execution round): the same
 * placeholders; a regular file's is bound already (a duplicate of its
 * descriptor, read with pread), every other one is to be bound to a
 * fresh descriptor of the file its tag names.  NULL: out of memory or
 * descriptors.
 */
struct upstream_body	*upstream_body_again(const struct upstream_body *, struct event_base *);
size_t		 upstream_body_nfiles(const struct upstream_body *);
const char	*upstream_body_file_tag(const struct upstream_body *, size_t);
/* 1 when the i-th placeholder has its descriptor. */
int		 upstream_body_file_bound(const struct upstream_body *, size_t);
void		 upstream_body_bind(struct upstream_body *, size_t, int fd);
/* Serialises obj, cutting it at the placeholders.  0 or -1. */
int		 upstream_body_set_json(struct upstream_body *, struct json_object *);
int64_t		 upstream_body_length(const struct upstream_body *);
/*
 * CURLOPT_READFUNCTION (arg: the upstream body).  Returns CURL_READFUNC_PAUSE
 * when a descriptor has nothing yet; the wake-up callback then runs
 * once it has, and the owner unpauses the transfer.
 */
size_t		 upstream_body_read(char *, size_t, size_t, void *);
void		 upstream_body_on_wake(struct upstream_body *, void (*)(void *), void *);
/* Bytes of the body already read by curl (for the log). */
int64_t		 upstream_body_sent(const struct upstream_body *);
/* The whole body, when it is small and in memory (CURLOPT_POSTFIELDS). */
const char	*upstream_body_inline(const struct upstream_body *, size_t *);
void		 upstream_body_free(struct upstream_body *);

/* fe_refs.c: the request's file references. */

/* One resolved file, in the order the request first names it. */
struct fref {
	TAILQ_ENTRY(fref)	 entry;
	struct file_rec		 rec;
	int			 container_upload; /* named only as such */
	char			 seed_name[SBX_NAME_MAX]; /* in the sandbox */
};
TAILQ_HEAD(fref_list, fref);

struct refs;
/*
 * ok: 1 when every reference resolved and body was rewritten; 0 when
 * refs already replied (400 naming the id, or 502).
 */
typedef void	(*refs_done_cb)(void *arg, int ok);
/*
 * Finds every file reference in body (wire: the caller's), resolves
 * each under ar->who, and rewrites the blocks in place: natively read
 * files become inline base64 whose data is an upstream body placeholder; for a
 * text-only model (or a PDF under pdf-as-text) text, extracted text or
 * the omission marker.  sandbox: container_upload blocks become the
 * sandbox marker instead of documents.
 */
struct refs	*refs_resolve(struct api_req *, enum wire,
		    struct json_object *body, const struct model_conf *,
		    struct upstream_body *, int sandbox, refs_done_cb, void *);
struct fref_list *refs_files(struct refs *);
/* Cancels whatever is in flight; no callback after this. */
void		 refs_free(struct refs *);

/* fe_extract.c: PDF to text in the extract child. */
void		 fe_extract_attach(int fd);
/*
 * Takes ownership of pdf_fd.  cb gets a pipe carrying the text (the
 * callee closes it), or -1 when extraction failed.  Returns a call
 * number for fe_extract_cancel, 0 when the child is not there (cb
 * has then run with -1).
 */
uint32_t	 fe_extract(int pdf_fd, int pages, int timeout,
		    void (*cb)(void *arg, int fd), void *arg);
void		 fe_extract_cancel(uint32_t);

/*
 * fe_seed.c: the request's files into the sandbox, in order, each under
 * a name of its own (seed_names, in fe_refs_rewrite.c, gives them: the
 * stored name's last segment, then name-2.ext, name-3.ext on a clash).
 */
void		 seed_names(struct fref_list *);
struct seeding;
struct fe_broker_lease;
typedef void	(*fe_broker_status_cb)(void *arg, int status,
		    const char *message);
/* NULL, and no callback, when there is no file to seed. */
struct seeding	*fe_seed(struct api_req *, struct fe_broker_lease *,
		    const struct fref_list *, fe_broker_status_cb, void *);
void		 fe_seed_cancel(struct seeding *);

/* fe_broker.c: sandbox sessions leased from the broker. */
/* fe_broker_status_cb: 0, or what the request should get (502, 503). */
/*
 * result: {result_block, produced, outputs: [{path, filename, file_id,
 * size_bytes, mime_type}], skipped: [{path, reason}]}, NULL on failure.
 */
typedef void	(*fe_broker_result_cb)(void *arg, int status,
		    const char *message, struct json_object *result);
void		 fe_broker_attach(int fd);
/*
 * A session for the request: the caller's storage handle is delegated
 * to the broker (for the run's outputs), then the session is created;
 * or, when container names one, the storage helper grants the broker
 * that container's session first (404 another's or a missing one, 400
 * an expired one, 409 one in use).  NULL when there is no broker (cb
 * not called).
 */
struct fe_broker_lease *fe_broker_open(struct api_req *,
		    const char *container, fe_broker_status_cb, void *);
/* The container the lease runs in, once open; NULL for none. */
const struct cntr_rec *fe_broker_container(const struct fe_broker_lease *);
/* Takes ownership of fd; size bytes are sent under name. */
void		 fe_broker_seed(struct fe_broker_lease *, int fd,
		    const char *name, int64_t size, fe_broker_status_cb, void *);
/* req: {tool, input, tool_use_id?}. */
void		 fe_broker_exec(struct fe_broker_lease *,
		    struct json_object *req, fe_broker_result_cb, void *);
/* The session is destroyed; no callback runs after this. */
void		 fe_broker_close(struct fe_broker_lease *);

/* fe_model.c, fe_catalog.c */
void		 fe_model_route(struct api_req *, enum wire);
void		 fe_model_count_route(struct api_req *);
void		 fe_catalog_route(struct api_req *);
/* fe_catalog.c: 404 for a model not configured, in the dialect. */
void		 fe_catalog_not_found(struct api_req *, const char *name);

#endif
