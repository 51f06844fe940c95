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
 * s3_req.c: the S3 store's request engine.  A request is signed with
 * SigV4, runs in the storage helper's event loop through curl, waits in
 * a queue while max_transfers are running, and is retried as a whole,
 * with backoff, on trouble that may pass: until a sink took bytes of its
 * answer, starting over is always safe.  The object key a request names
 * and the text of its XML answer are read here too, for every caller.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "curlev.h"
#include "log.h"
#include "s3sign.h"
#include "store_s3.h"
#include "util.h"

#define S3_ATTEMPTS		5
#define S3_BACKOFF_MS		100
#define S3_RESP_MAX		(64 * 1024)
#define S3_SIGNED_BODY_MAX	(64 * 1024)
#define S3_IO_BUFFER		(256 * 1024)	/* curl's own buffers */

static void	s3_dispatch(struct s3 *);

static int
s3_http_errno(long status)
{
	if (status >= 200 && status < 300)
		return 0;
	if (status == 404)
		return ENOENT;
	if (status == 401 || status == 403)
		return EACCES;
	return EIO;
}

int
s3_req_error(struct s3_req *req)
{
	if (req->cc != CURLE_OK)
		return EIO;
	return s3_http_errno(req->status);
}

void
s3_req_log(struct s3_req *req, const char *what)
{
	if (req->cc != CURLE_OK)
		log_warnx("s3: %s %s %s/%s: %s", what, req->method,
		    req->s3->bucket, req->key ? req->key : "",
		    curl_easy_strerror(req->cc));
	else
		log_warnx("s3: %s %s %s/%s: HTTP %ld", what, req->method,
		    req->s3->bucket, req->key ? req->key : "", req->status);
}

/* The object key of ref under the prefix; NULL with errno set. */
char *
s3_req_key(struct s3 *s3, const char *ref)
{
	char	*key;

	if (!store_ref_valid(ref)) {
		errno = EINVAL;
		return NULL;
	}
	if (asprintf(&key, "%s%s%s", s3->prefix, s3->prefix[0] ? "/" : "",
	    ref) == -1)
		return NULL;
	return key;
}

/* The text of the first <tag> in an XML answer; malloc'd. */
char *
s3_req_xml_text(const char *xml, const char *tag)
{
	char		 open[64], close[64];
	const char	*a, *b;

	if (xml == NULL)
		return NULL;
	snprintf(open, sizeof(open), "<%s>", tag);
	snprintf(close, sizeof(close), "</%s>", tag);
	if ((a = strstr(xml, open)) == NULL)
		return NULL;
	a += strlen(open);
	if ((b = strstr(a, close)) == NULL)
		return NULL;
	return strndup(a, b - a);
}

struct s3_req *
s3_req_new(struct s3 *s3, const char *method, const char *key,
    const char *query, s3_req_cb done, void *arg)
{
	struct s3_req	*req;

	if ((req = calloc(1, sizeof(*req))) == NULL)
		return NULL;
	req->s3 = s3;
	req->method = method;
	req->done = done;
	req->arg = arg;
	if ((key != NULL && (req->key = strdup(key)) == NULL) ||
	    (query != NULL && (req->query = strdup(query)) == NULL) ||
	    (req->easy = curl_easy_init()) == NULL) {
		free(req->key);
		free(req->query);
		free(req);
		return NULL;
	}
	return req;
}

void
s3_req_free(struct s3_req *req)
{
	struct s3	*s3;

	if (req == NULL)
		return;
	s3 = req->s3;
	if (req->running) {
		curlev_remove(s3->curl, req->easy);
		s3->active--;
	}
	if (req->queued)
		TAILQ_REMOVE(&s3->queue, req, entry);
	if (req->retry_ev != NULL)
		event_free(req->retry_ev);
	curl_easy_cleanup(req->easy);
	curl_slist_free_all(req->hdrs);
	free(req->key);
	free(req->query);
	free(req->resp);
	free(req);
	if (s3->active < s3->max_transfers)
		s3_dispatch(s3);
}

static size_t
s3_req_header(char *data, size_t size, size_t n, void *arg)
{
	struct s3_req	*req = arg;
	size_t		 len = size * n, vlen;

	if (len >= 5 && strncasecmp(data, "HTTP/", 5) == 0) {
		/* A new response (after a 100 Continue): forget the old. */
		req->resp_len = 0;
		req->etag[0] = '\0';
	} else if (len > 5 && strncasecmp(data, "etag:", 5) == 0) {
		data += 5;
		len -= 5;
		while (len > 0 && (*data == ' ' || *data == '\t')) {
			data++;
			len--;
		}
		for (vlen = len; vlen > 0 && (data[vlen - 1] == '\r' ||
		    data[vlen - 1] == '\n' || data[vlen - 1] == ' '); vlen--)
			;
		if (vlen < sizeof(req->etag)) {
			memcpy(req->etag, data, vlen);
			req->etag[vlen] = '\0';
		}
	}
	return size * n;
}

static size_t
s3_req_write(char *data, size_t size, size_t n, void *arg)
{
	struct s3_req	*req = arg;
	size_t		 len = size * n, keep;
	char		*p;

	curl_easy_getinfo(req->easy, CURLINFO_RESPONSE_CODE, &req->status);
	if (req->sink != NULL && req->status >= 200 && req->status < 300)
		return req->sink(req, data, len);
	/* Error documents and small XML answers; the rest is dropped. */
	keep = len;
	if (req->resp_len + keep > S3_RESP_MAX)
		keep = S3_RESP_MAX - req->resp_len;
	if (keep > 0) {
		if ((p = realloc(req->resp, req->resp_len + keep + 1)) == NULL)
			return 0;
		req->resp = p;
		memcpy(req->resp + req->resp_len, data, keep);
		req->resp_len += keep;
		req->resp[req->resp_len] = '\0';
	}
	return len;
}

static size_t
s3_req_read(char *data, size_t size, size_t n, void *arg)
{
	struct s3_req	*req = arg;
	size_t		 len = size * n;

	if (len > req->body_len - req->body_off)
		len = req->body_len - req->body_off;
	memcpy(data, req->body + req->body_off, len);
	req->body_off += len;
	return len;
}

static int
s3_req_seek(void *arg, curl_off_t off, int origin)
{
	struct s3_req	*req = arg;

	if (origin != SEEK_SET || off < 0 || (size_t)off > req->body_len)
		return CURL_SEEKFUNC_FAIL;
	req->body_off = off;
	return CURL_SEEKFUNC_OK;
}

/* Temporary trouble: worth another attempt after a pause. */
static int
s3_req_transient(struct s3_req *req)
{
	switch (req->cc) {
	case CURLE_OK:
		return req->status >= 500 || req->status == 429;
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_SSL_CONNECT_ERROR:
		return 1;
	default:
		return 0;
	}
}

static void
s3_req_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct s3_req	*req = arg;

	if (req->start_failed)
		req->done(req);
	else
		s3_req_start(req);
}

/*
 * A request that cannot even start still reports from the loop, never
 * from inside the call that started it: callers need not be reentrant.
 */
static void
s3_req_fail_later(struct s3_req *req)
{
	struct timeval	tv = { 0, 0 };

	req->cc = CURLE_FAILED_INIT;
	req->start_failed = 1;
	if (req->retry_ev == NULL)
		req->retry_ev = evtimer_new(req->s3->st->base, s3_req_retry_cb,
		    req);
	if (req->retry_ev == NULL || evtimer_add(req->retry_ev, &tv) == -1)
		fatalx("s3: cannot schedule an event");
}

static void
s3_req_finished(void *arg, CURLcode cc)
{
	struct s3_req	*req = arg;
	struct s3	*s3 = req->s3;
	struct timeval	 tv;
	long		 ms;

	req->running = 0;
	s3->active--;
	req->cc = cc;
	curl_easy_getinfo(req->easy, CURLINFO_RESPONSE_CODE, &req->status);
	if (s3_req_transient(req) && !req->no_retry &&
	    req->attempts < S3_ATTEMPTS) {
		s3_req_log(req, "retrying");
		/* Exponential backoff, with full jitter on the upper half. */
		ms = S3_BACKOFF_MS << (req->attempts - 1);
		ms = ms / 2 + arc4random_uniform(ms / 2 + 1);
		tv.tv_sec = ms / 1000;
		tv.tv_usec = (ms % 1000) * 1000;
		if (req->retry_ev == NULL)
			req->retry_ev = evtimer_new(s3->st->base,
			    s3_req_retry_cb, req);
		if (req->retry_ev != NULL &&
		    evtimer_add(req->retry_ev, &tv) == 0) {
			s3_dispatch(s3);
			return;
		}
	}
	req->done(req);
	s3_dispatch(s3);
}

static int
s3_req_sign(struct s3_req *req, const char *path)
{
	struct s3		*s3 = req->s3;
	struct s3sign_hdr	 h[7];
	struct s3sign_cred	 cred = { s3->access_key, s3->secret_key,
	    s3->region, "s3" };
	struct s3sign_req	 sr;
	struct s3sign_out	 out;
	char			 date[17], hash[SHA256_HEXLEN], *line;
	size_t			 n = 0, i;
	int			 rv = -1;

	s3sign_amz_date(date, sizeof(date), time(NULL));
	if (!req->has_body)
		strlcpy(hash, S3SIGN_EMPTY_SHA256, sizeof(hash));
	else if (req->body_len <= S3_SIGNED_BODY_MAX)
		sha256_hex(req->body, req->body_len, hash);
	else
		strlcpy(hash, "UNSIGNED-PAYLOAD", sizeof(hash));
	h[n++] = (struct s3sign_hdr){ "host", s3->host };
	h[n++] = (struct s3sign_hdr){ "x-amz-date", date };
	h[n++] = (struct s3sign_hdr){ "x-amz-content-sha256", hash };
	if (s3->session_token != NULL)
		h[n++] = (struct s3sign_hdr){ "x-amz-security-token",
		    s3->session_token };
	if (req->range[0] != '\0')
		h[n++] = (struct s3sign_hdr){ "range", req->range };
	if (req->content_type != NULL)
		h[n++] = (struct s3sign_hdr){ "content-type",
		    req->content_type };
	sr = (struct s3sign_req){ req->method, path, req->query, h, n, hash,
	    date };
	if (s3sign(&sr, &cred, &out) == -1)
		return -1;
	curl_slist_free_all(req->hdrs);
	req->hdrs = NULL;
	for (i = 0; i < n; i++) {
		if (asprintf(&line, "%s: %s", h[i].name, h[i].value) == -1)
			goto done;
		req->hdrs = curl_slist_append(req->hdrs, line);
		freezero(line, strlen(line));
	}
	if (asprintf(&line, "Authorization: %s", out.authorization) == -1)
		goto done;
	req->hdrs = curl_slist_append(req->hdrs, line);
	free(line);
	/* No 100-continue round trip; S3 answers errors early anyway. */
	req->hdrs = curl_slist_append(req->hdrs, "Expect:");
	rv = 0;
 done:
	s3sign_out_free(&out);
	return rv;
}

static int
s3_req_setup(struct s3_req *req)
{
	struct s3	*s3 = req->s3;
	CURL		*c = req->easy;
	char		*enc = NULL, *path = NULL, *cq = NULL, *url = NULL;
	int		 rv = -1;

	curl_easy_reset(c);
	req->status = 0;
	req->resp_len = 0;
	req->body_off = 0;
	req->etag[0] = '\0';
	if (req->key != NULL) {
		if ((enc = s3sign_uri_encode(req->key, 1)) == NULL)
			goto done;
		if (asprintf(&path, "%s/%s", s3->base_path, enc) == -1)
			path = NULL;
	} else
		path = strdup(s3->base_path[0] ? s3->base_path : "/");
	if (path == NULL || (cq = s3sign_canonical_query(req->query)) == NULL)
		goto done;
	if (asprintf(&url, "%s%s%s%s", s3->origin, path, cq[0] ? "?" : "",
	    cq) == -1) {
		url = NULL;
		goto done;
	}
	if (s3_req_sign(req, path) == -1)
		goto done;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, req->hdrs);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 120L);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, s3_req_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, req);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, s3_req_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, req);
	/*
	 * Fewer, larger callbacks than the default 16 and 64 KiB, in the
	 * direction the bytes go only: curl allocates the download buffer
	 * for every request, and each part upload in flight has its own.
	 */
	if (strcmp(req->method, "GET") == 0)
		curl_easy_setopt(c, CURLOPT_BUFFERSIZE, S3_IO_BUFFER);
	if (strcmp(req->method, "HEAD") == 0)
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	else if (strcmp(req->method, "PUT") == 0) {
		curl_easy_setopt(c, CURLOPT_UPLOAD_BUFFERSIZE, S3_IO_BUFFER);
		curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE,
		    (curl_off_t)req->body_len);
	} else if (strcmp(req->method, "POST") == 0) {
		curl_easy_setopt(c, CURLOPT_POST, 1L);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
		    (curl_off_t)req->body_len);
	} else if (strcmp(req->method, "GET") != 0)
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, req->method);
	curl_easy_setopt(c, CURLOPT_READFUNCTION, s3_req_read);
	curl_easy_setopt(c, CURLOPT_READDATA, req);
	curl_easy_setopt(c, CURLOPT_SEEKFUNCTION, s3_req_seek);
	curl_easy_setopt(c, CURLOPT_SEEKDATA, req);
	rv = 0;
 done:
	free(enc);
	free(path);
	free(cq);
	free(url);
	return rv;
}

void
s3_req_start(struct s3_req *req)
{
	struct s3	*s3 = req->s3;

	if (s3->active >= s3->max_transfers) {
		req->queued = 1;
		TAILQ_INSERT_TAIL(&s3->queue, req, entry);
		return;
	}
	req->attempts++;
	if (s3_req_setup(req) == -1 ||
	    curlev_add(s3->curl, req->easy, s3_req_finished, req) == -1) {
		log_warnx("s3: %s %s/%s: cannot start the request",
		    req->method, s3->bucket, req->key ? req->key : "");
		s3_req_fail_later(req);
		return;
	}
	req->running = 1;
	s3->active++;
}

static void
s3_dispatch(struct s3 *s3)
{
	struct s3_req	*req;

	while (s3->active < s3->max_transfers &&
	    (req = TAILQ_FIRST(&s3->queue)) != NULL) {
		TAILQ_REMOVE(&s3->queue, req, entry);
		req->queued = 0;
		s3_req_start(req);
	}
}