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
 * fe_coderun.h: a model request that runs code in a sandbox session
 * (fe_coderun.c), as the model route hands it over.
 */
#ifndef DEPOTD_FE_CODERUN_H
#define DEPOTD_FE_CODERUN_H

#include "fe_model.h"

struct upcall_result;

typedef void	(*coderun_done_cb)(void *arg, const struct upcall_result *);

struct coderun_params {
	struct api_req		*ar;
	enum wire		 caller;
	enum wire		 wire;		/* the upstream's */
	const char		*upstream;	/* its name */
	const char		*asked;		/* the caller's model name */
	int			 stream;
	int			 usage;		/* chat caller's include_usage */
	int			 max_rounds;	/* max-tool-iterations */
	/* The upstream request (code_execution declared), not taken. */
	struct json_object	*upstream_request;
	/* Its body, placeholders bound; the route keeps and frees it. */
	struct upstream_body		*body;
	const struct fref_list	*files;		/* to seed, or NULL */
	int			 native;	/* provider's own tool asked */
	const char		*container;	/* its id, "" a new session */
	coderun_done_cb		 done;		/* once, when answered */
	void			*arg;
};

struct coderun;
/* NULL when it could not start (the caller was answered). */
struct coderun	*coderun_start(const struct coderun_params *);
void		 coderun_result(const struct coderun *,
		    struct upcall_result *);
void		 coderun_free(struct coderun *);

/* fe_coderun_native.c: the provider's own blocks for the gateway's runs. */
/* container: the id the run ran in, NULL none. */
void		 native_record(struct json_object *runs,
		    struct json_object *call, struct json_object *result,
		    const char *container);
void		 native_text(struct json_object *runs, const char *text,
		    const char *id);
/* Blocks (Messages) or output items (Responses), new; NULL for chat. */
struct json_object *native_blocks(enum wire caller,
		    struct json_object *runs, size_t from, int native);
struct cntr_rec;
/* A Messages answer's container, new; NULL for c NULL. */
struct json_object *native_container(const struct cntr_rec *c);
void		 native_prepend(enum wire caller, struct json_object *answer,
		    struct json_object *runs, int native);

#endif
