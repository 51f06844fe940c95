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
 * fe_upcall_request.h: the URL, headers, TLS bundle and body of a
 * request to an upstream (fe_upcall_request.c).
 */
#ifndef DEPOTD_FE_UPSTREAM_REQUEST_H
#define DEPOTD_FE_UPSTREAM_REQUEST_H

#include <stddef.h>

#include <curl/curl.h>

#include "fe_model.h"

struct upstream_conf;

/* The upstream's base URL, less trailing slashes, and the wire's path. */
void			 upcall_url(const char *base, enum wire, char *,
			    size_t);
/* The request's headers, the gateway's key among them; NULL: no memory. */
struct curl_slist	*upcall_headers(const struct upstream_conf *,
			    int stream);
int			 upcall_tls(CURL *, const struct upstream_conf *);
/* How the body goes: 1 as CURLOPT_POSTFIELDS, 0 through the callbacks. */
int			 upcall_body(CURL *, struct upstream_body *,
			    curl_read_callback, curl_seek_callback, void *);

#endif /* DEPOTD_FE_UPSTREAM_REQUEST_H */
