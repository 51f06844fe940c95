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
 * fe_upcall_request.c: what a frontend's request to an upstream says
 * besides its body: the URL for the wire it speaks, the headers with
 * the gateway's own credential (never the caller's), the upstream's
 * CA bundle, and how its body goes, as curl takes them.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

#include "frontend.h"
#include "fe_upcall_request.h"

#define ANTHROPIC_VERSION	"2023-06-01"	/* when none is configured */

static const char *
upcall_path(enum wire w)
{
	switch (w) {
	case WIRE_RESPONSES:
		return "/responses";
	case WIRE_MESSAGES:
		return "/messages";
	default:
		return "/chat/completions";
	}
}

void
upcall_url(const char *base, enum wire w, char *url, size_t len)
{
	size_t	 n;

	strlcpy(url, base, len);
	n = strlen(url);
	while (n > 0 && url[n - 1] == '/')
		url[--n] = '\0';
	strlcat(url, upcall_path(w), len);
}

/* Adds one header line; the line, which may hold the key, is wiped. */
static int
upcall_header_add(struct curl_slist **list, const char *fmt, ...)
{
	struct curl_slist	*l;
	char			 line[1024];
	va_list			 ap;
	int			 n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	l = n < 0 || (size_t)n >= sizeof(line) ? NULL :
	    curl_slist_append(*list, line);
	explicit_bzero(line, sizeof(line));
	if (l == NULL)
		return -1;
	*list = l;
	return 0;
}

static int
upcall_header_credential(struct curl_slist **list,
    const struct upstream_conf *up)
{
	const char	*key = up->api_key;

	if (up->api == DIALECT_ANTHROPIC)
		return upcall_header_add(list, "anthropic-version: %s",
		    up->anthropic_version[0] ? up->anthropic_version :
		    ANTHROPIC_VERSION) == -1 || (key != NULL &&
		    upcall_header_add(list, "x-api-key: %s", key) == -1) ?
		    -1 : 0;
	if (key != NULL && upcall_header_add(list, "Authorization: Bearer %s",
	    key) == -1)
		return -1;
	return 0;
}

struct curl_slist *
upcall_headers(const struct upstream_conf *up, int stream)
{
	struct curl_slist	*list = NULL;

	if (upcall_header_add(&list, "Content-Type: application/json") == -1 ||
	    upcall_header_add(&list, "Accept: %s", stream ?
	    "text/event-stream" : "application/json") == -1 ||
	    upcall_header_add(&list, "Expect:") == -1 ||
	    upcall_header_credential(&list, up) == -1) {
		curl_slist_free_all(list);
		return NULL;
	}
	return list;
}

int
upcall_tls(CURL *easy, const struct upstream_conf *up)
{
	struct curl_blob	 blob;

	if (up->ca_pem == NULL || up->ca_len == 0)
		return 0;
	blob.data = (void *)up->ca_pem;
	blob.len = up->ca_len;
	blob.flags = CURL_BLOB_COPY;
	return curl_easy_setopt(easy, CURLOPT_CAINFO_BLOB, &blob) ==
	    CURLE_OK ? 0 : -1;
}

/*
 * A small body all in memory goes as CURLOPT_POSTFIELDS, not copied
 * (the route keeps the body until the call is freed): curl sends it
 * with the headers in one send, and sends it again by itself when a
 * kept-alive connection turns out dead.  Any other body streams
 * through rd, and rewinds through sk.  1: the body is in memory.
 */
int
upcall_body(CURL *e, struct upstream_body *ub, curl_read_callback rd,
    curl_seek_callback sk, void *arg)
{
	const char	*mem;
	size_t		 len;

	curl_easy_setopt(e, CURLOPT_POST, 1L);
	if ((mem = upstream_body_inline(ub, &len)) != NULL) {
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
		    (curl_off_t)len);
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, mem);
		return 1;
	}
	curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
	    (curl_off_t)upstream_body_length(ub));
	curl_easy_setopt(e, CURLOPT_READFUNCTION, rd);
	curl_easy_setopt(e, CURLOPT_READDATA, arg);
	curl_easy_setopt(e, CURLOPT_SEEKFUNCTION, sk);
	curl_easy_setopt(e, CURLOPT_SEEKDATA, arg);
	return 0;
}
