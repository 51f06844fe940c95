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
 * curlev.h: libcurl's multi interface driven by a libevent loop.
 *
 * Easy handles added here run inside the loop; when one finishes, its
 * done callback runs from the loop with the curl result, after the
 * handle left the multi (the callback may clean it up or re-add it).
 */
#ifndef DEPOT_CURLEV_H
#define DEPOT_CURLEV_H

#include <curl/curl.h>
#include <event2/event.h>

struct curlev;

typedef void	(*curlev_done_cb)(void *arg, CURLcode);

struct curlev	*curlev_new(struct event_base *);
void		 curlev_free(struct curlev *);
struct event_base *curlev_base(const struct curlev *);
/* 0, or -1 if curl refused the handle. */
int		 curlev_add(struct curlev *, CURL *, curlev_done_cb, void *);
/* Takes a running handle out without calling its done callback. */
void		 curlev_remove(struct curlev *, CURL *);
/*
 * Resumes a paused transfer.  Called from outside curl's callbacks,
 * so that curl gets to run at once, not at the next timeout.
 */
void		 curlev_unpause(struct curlev *, CURL *);

#endif
