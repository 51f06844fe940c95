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
 * fe_fetch.c: a small JSON call to an upstream beside the model calls
 * (GET /props, POST /tokenize, ...), on a curl multi of its own in
 * the frontend's loop.  The answer is collected whole, up to a cap,
 * and parsed; the configured credential goes along, as on a model
 * call, since the model server may ask for it on every path.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <event2/buffer.h>
#include <json-c/json.h>

#include "curlev.h"
#include "log.h"
#include "frontend.h"
#include "fe_fetch.h"
#include "fe_upcall_request.h"

#define FETCH_MAX	(4 * 1024 * 1024)	/* answer bytes */

struct fe_fetch {
	CURL			*easy;
	struct curl_slist	*headers;
	struct curl_slist	*resolve;
	struct evbuffer		*answer;
	char			*post;
	char			 url[1100];
	int			 too_big;
	fe_fetch_cb		 cb;
	void			*arg;
};

static struct curlev	*fetch_curl;

static void
fetch_free(struct fe_fetch *f)
{
	if (f->easy != NULL)
		curl_easy_cleanup(f->easy);
	curl_slist_free_all(f->headers);
	curl_slist_free_all(f->resolve);
	if (f->answer != NULL)
		evbuffer_free(f->answer);
	free(f->post);
	free(f);
}

/* The upstream's URL less trailing slashes and, for root, a last /v1. */
static void
fetch_url(const struct upstream_conf *up, int root, const char *path,
    char *out, size_t len)
{
	size_t	 n;

	strlcpy(out, up->url, len);
	n = strlen(out);
	while (n > 0 && out[n - 1] == '/')
		out[--n] = '\0';
	if (root && n >= 3 && strcmp(out + n - 3, "/v1") == 0)
		out[n - 3] = '\0';
	strlcat(out, path, len);
}

static size_t
fetch_write(char *buf, size_t size, size_t n, void *arg)
{
	struct fe_fetch	*f = arg;

	if (evbuffer_get_length(f->answer) + size * n > FETCH_MAX) {
		f->too_big = 1;
		return 0;
	}
	if (evbuffer_add(f->answer, buf, size * n) == -1)
		return 0;
	return size * n;
}

static void
fetch_done(void *arg, CURLcode rc)
{
	struct fe_fetch		*f = arg;
	struct json_object	*obj = NULL;
	const char		*text;
	long			 status = 0;
	size_t			 len;

	if (rc == CURLE_OK)
		curl_easy_getinfo(f->easy, CURLINFO_RESPONSE_CODE, &status);
	else
		log_debug("%s: %s%s", f->url, curl_easy_strerror(rc),
		    f->too_big ? " (answer too large)" : "");
	len = evbuffer_get_length(f->answer);
	if (status != 0 && len > 0 && evbuffer_add(f->answer, "", 1) == 0 &&
	    (text = (const char *)evbuffer_pullup(f->answer, -1)) != NULL)
		obj = json_tokener_parse(text);
	f->cb(f->arg, (int)status, obj, f->url);
	json_object_put(obj);
	fetch_free(f);
}

static int
fetch_setup(struct fe_fetch *f, const struct upstream_conf *up,
    struct json_object *post)
{
	CURL		*e = f->easy;
	const char	*s;

	if (up->resolve[0] != '\0' &&
	    (f->resolve = curl_slist_append(NULL, up->resolve)) == NULL)
		return -1;
	if ((f->headers = upcall_headers(up, 0)) == NULL ||
	    upcall_tls(e, up) == -1)
		return -1;
	curl_easy_setopt(e, CURLOPT_URL, f->url);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, f->headers);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, fetch_write);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, f);
	if (f->resolve != NULL)
		curl_easy_setopt(e, CURLOPT_RESOLVE, f->resolve);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, (long)up->connect_timeout);
	curl_easy_setopt(e, CURLOPT_TIMEOUT, (long)up->timeout);
	if (post != NULL) {
		s = json_object_to_json_string_ext(post, JSON_C_TO_STRING_PLAIN);
		if (s == NULL || (f->post = strdup(s)) == NULL)
			return -1;
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, f->post);
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)strlen(f->post));
	}
	return 0;
}

struct fe_fetch *
fe_fetch(const struct upstream_conf *up, int root, const char *path,
    struct json_object *post, fe_fetch_cb cb, void *arg)
{
	struct fe_fetch	*f;

	if (fetch_curl == NULL && (fetch_curl = curlev_new(fe.base)) == NULL)
		return NULL;
	if ((f = calloc(1, sizeof(*f))) == NULL)
		return NULL;
	f->cb = cb;
	f->arg = arg;
	fetch_url(up, root, path, f->url, sizeof(f->url));
	if ((f->answer = evbuffer_new()) == NULL ||
	    (f->easy = curl_easy_init()) == NULL ||
	    fetch_setup(f, up, post) == -1 ||
	    curlev_add(fetch_curl, f->easy, fetch_done, f) == -1) {
		fetch_free(f);
		return NULL;
	}
	return f;
}

void
fe_fetch_cancel(struct fe_fetch *f)
{
	if (f == NULL)
		return;
	curlev_remove(fetch_curl, f->easy);
	fetch_free(f);
}
