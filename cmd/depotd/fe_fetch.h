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
 * fe_fetch.h: a small JSON call to an upstream that is not a model
 * call (fe_fetch.c): capability discovery and token counting ask the
 * model server itself, on the paths its own documentation gives.
 */
#ifndef DEPOTD_FE_FETCH_H
#define DEPOTD_FE_FETCH_H

#include <stddef.h>

struct upstream_conf;
struct json_object;

/*
 * status: the HTTP status, 0 when no answer came; answer: the body
 * when it is JSON (NULL otherwise), valid during the callback only;
 * url: what was asked (no credential in it).
 */
typedef void	(*fe_fetch_cb)(void *arg, int status,
		    struct json_object *answer, const char *url);

struct fe_fetch;
/*
 * GET (post NULL) or POST the serialised post to path under the
 * upstream's root (root: its URL less a trailing /v1) or its URL.
 * Nothing of up is kept: a reload may free it.  cb runs once, from
 * the loop, then the call is gone.  NULL: it could not start.
 */
struct fe_fetch	*fe_fetch(const struct upstream_conf *, int root,
		    const char *path, struct json_object *post, fe_fetch_cb,
		    void *);
/* No callback after this. */
void		 fe_fetch_cancel(struct fe_fetch *);

#endif
