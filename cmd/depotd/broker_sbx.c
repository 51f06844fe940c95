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
 * broker_sbx.c: HTTP requests to the sandbox backend, one per
 * struct sbx_request, many at once on the broker's loop.
 *
 * File bytes never sit whole in the broker: PutFile reads the
 * descriptor the storage helper handed over as curl sends, GetFile
 * writes into the storage helper's descriptor as curl receives, and
 * either side that is not ready pauses the transfer until it is.
 */
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "jsontext.h"
#include "log.h"
#include "curlev.h"
#include "broker_sbx.h"

#define SBX_ANSWER_MAX	(4 * 1024 * 1024)	/* a JSON answer */
#define SBX_JSON_DEPTH	32			/* and its nesting */
#define SBX_CONNECT_TIMEOUT	10L		/* seconds: no setting names it */

struct sbx_request {
	struct sbx_backend	*be;
	CURL			*easy;
	struct curl_slist	*hdrs;
	struct curl_slist	*resolve;
	curl_mime		*mime;
	char			*reqbody;
	char			*ans;
	size_t			 anslen;
	int			 fd;		/* put: source; get: sink */
	int64_t			 size;		/* put: bytes to send */
	int64_t			 bytes;		/* moved so far */
	int64_t			 cap;		/* get: at most */
	int			 over;		/* get: past cap */
	struct event		*fdev;		/* waiting on fd */
	sbx_tap_cb		 tap;
	sbx_done_cb		 done;
	void			*arg;
};

int
sbx_backend_set(struct sbx_backend *be, const char *url, const char *token)
{
	be->token = token;
	be->sock[0] = '\0';
	if (strncmp(url, "unix:", 5) == 0) {
		/* Over a socket the host is only a name for the request. */
		if (strlcpy(be->sock, url + 5, sizeof(be->sock)) >=
		    sizeof(be->sock))
			return -1;
		strlcpy(be->base, "http://sandbox", sizeof(be->base));
		return 0;
	}
	if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
		return -1;
	if (strlcpy(be->base, url, sizeof(be->base)) >= sizeof(be->base))
		return -1;
	/* Paths are appended: no trailing slash. */
	while (be->base[0] != '\0' && be->base[strlen(be->base) - 1] == '/')
		be->base[strlen(be->base) - 1] = '\0';
	return 0;
}

static void
sbx_request_free(struct sbx_request *c)
{
	if (c->easy != NULL) {
		curlev_remove(c->be->curl, c->easy);
		curl_easy_cleanup(c->easy);
	}
	curl_slist_free_all(c->hdrs);
	curl_slist_free_all(c->resolve);
	curl_mime_free(c->mime);
	if (c->fdev != NULL)
		event_free(c->fdev);
	if (c->fd != -1)
		close(c->fd);
	free(c->reqbody);
	free(c->ans);
	free(c);
}

void
sbx_cancel(struct sbx_request *c)
{
	if (c != NULL)
		sbx_request_free(c);
}

static void
sbx_finished(void *arg, CURLcode cc)
{
	struct sbx_request	*c = arg;
	struct json_object	*body = NULL;
	const char		*err = NULL;
	long			 status = 0;

	if (c->over)
		err = "file over the per-call output cap";
	else if (cc == CURLE_OPERATION_TIMEDOUT) {
		err = "timed out";
		status = SBX_TIMEDOUT;
	} else if (cc != CURLE_OK)
		err = curl_easy_strerror(cc);
	else
		curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &status);
	if (c->ans != NULL && c->anslen > 0) {
		body = json_text_parse(c->ans, c->anslen, SBX_JSON_DEPTH);
	}
	/* The sink is complete only when closed: close before telling. */
	if (c->fd != -1) {
		close(c->fd);
		c->fd = -1;
	}
	c->done(c->arg, status, body, c->bytes, err);
	json_object_put(body);
	sbx_request_free(c);
}

/* A JSON answer, bounded. */
static size_t
sbx_write_answer(char *p, size_t size, size_t n, void *arg)
{
	struct sbx_request	*c = arg;
	size_t			 len = size * n;
	char			*a;

	if (c->anslen + len > SBX_ANSWER_MAX)
		return 0;
	if ((a = realloc(c->ans, c->anslen + len + 1)) == NULL)
		return 0;
	c->ans = a;
	memcpy(c->ans + c->anslen, p, len);
	c->anslen += len;
	return len;
}

static void
sbx_fd_ready(evutil_socket_t fd, short what, void *arg)
{
	struct sbx_request	*c = arg;

	curlev_unpause(c->be->curl, c->easy);
}

/* Waits, once, for fd to be ready the way curl needs it. */
static void
sbx_wait_fd(struct sbx_request *c, short what)
{
	if (c->fdev == NULL)
		c->fdev = event_new(curlev_base(c->be->curl), c->fd, what,
		    sbx_fd_ready, c);
	if (c->fdev != NULL)
		event_add(c->fdev, NULL);
}

static size_t
sbx_read_fd(char *p, size_t size, size_t n, void *arg)
{
	struct sbx_request	*c = arg;
	size_t			 want = size * n;
	ssize_t			 got;

	if ((int64_t)want > c->size - c->bytes)
		want = c->size - c->bytes;
	if (want == 0)
		return 0;
	if ((got = read(c->fd, p, want)) == -1) {
		if (errno == EAGAIN || errno == EINTR) {
			sbx_wait_fd(c, EV_READ);
			return CURL_READFUNC_PAUSE;
		}
		return CURL_READFUNC_ABORT;
	}
	if (got == 0)		/* shorter than it said: never send less */
		return CURL_READFUNC_ABORT;
	c->bytes += got;
	return got;
}

/* GetFile's bytes go to the sink; past the cap the call fails. */
static size_t
sbx_write_fd(char *p, size_t size, size_t n, void *arg)
{
	struct sbx_request	*c = arg;
	size_t			 len = size * n, done = 0;
	long			 status = 0;
	ssize_t			 w;

	curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200)	/* an error body: keep it as the answer */
		return sbx_write_answer(p, size, n, arg);
	if (c->bytes + (int64_t)len > c->cap) {
		c->over = 1;
		return 0;
	}
	while (done < len) {
		if ((w = write(c->fd, p + done, len - done)) == -1) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return 0;
			/* curl offers the same bytes again: take none. */
			if (done > 0)
				break;
			sbx_wait_fd(c, EV_WRITE);
			return CURL_WRITEFUNC_PAUSE;
		}
		if (c->tap != NULL)
			c->tap(c->arg, p + done, w);
		done += w;
	}
	c->bytes += done;
	return done;
}

/*
 * A remote backend: the master resolved its name and read its CA
 * bundle, for the broker can do neither.  No bundle, no https.
 */
static void
sbx_remote(struct sbx_request *c)
{
	struct sbx_backend	*be = c->be;
	struct curl_blob	 blob;

	if (be->resolve != NULL && be->resolve[0] != '\0' &&
	    (c->resolve = curl_slist_append(NULL, be->resolve)) != NULL)
		curl_easy_setopt(c->easy, CURLOPT_RESOLVE, c->resolve);
	if (strncmp(be->base, "https://", 8) != 0)
		return;
	memset(&blob, 0, sizeof(blob));
	blob.data = (void *)(be->ca_pem != NULL ? be->ca_pem : "");
	blob.len = be->ca_pem != NULL ? be->ca_len : 0;
	blob.flags = CURL_BLOB_COPY;
	curl_easy_setopt(c->easy, CURLOPT_CAINFO_BLOB, &blob);
	curl_easy_setopt(c->easy, CURLOPT_CAPATH, NULL);
}

static struct sbx_request *
sbx_request_new(struct sbx_backend *be, const char *method, const char *path,
    long timeout, sbx_done_cb done, void *arg)
{
	struct sbx_request	*c;
	char			 url[2048], auth[1100];

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->be = be;
	c->fd = -1;
	c->done = done;
	c->arg = arg;
	if (snprintf(url, sizeof(url), "%s%s", be->base, path) >=
	    (int)sizeof(url) || (c->easy = curl_easy_init()) == NULL) {
		free(c);
		return NULL;
	}
	if (be->token != NULL && be->token[0] != '\0') {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s",
		    be->token);
		c->hdrs = curl_slist_append(c->hdrs, auth);
		explicit_bzero(auth, sizeof(auth));
	}
	c->hdrs = curl_slist_append(c->hdrs, "Expect:");
	curl_easy_setopt(c->easy, CURLOPT_URL, url);
	if (be->sock[0] != '\0')
		curl_easy_setopt(c->easy, CURLOPT_UNIX_SOCKET_PATH, be->sock);
	sbx_remote(c);
	curl_easy_setopt(c->easy, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->easy, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c->easy, CURLOPT_CONNECTTIMEOUT, SBX_CONNECT_TIMEOUT);
	if (timeout > 0)
		curl_easy_setopt(c->easy, CURLOPT_TIMEOUT, timeout);
	curl_easy_setopt(c->easy, CURLOPT_WRITEFUNCTION, sbx_write_answer);
	curl_easy_setopt(c->easy, CURLOPT_WRITEDATA, c);
	return c;
}

static struct sbx_request *
sbx_start(struct sbx_request *c)
{
	curl_easy_setopt(c->easy, CURLOPT_HTTPHEADER, c->hdrs);
	if (curlev_add(c->be->curl, c->easy, sbx_finished, c) == -1) {
		sbx_request_free(c);
		return NULL;
	}
	return c;
}

struct sbx_request *
sbx_json(struct sbx_backend *be, const char *method, const char *path,
    struct json_object *req, long timeout, sbx_done_cb done, void *arg)
{
	struct sbx_request	*c;

	if ((c = sbx_request_new(be, method, path, timeout, done, arg)) == NULL)
		return NULL;
	if (req != NULL) {
		if ((c->reqbody = strdup(json_object_to_json_string_ext(req,
		    JSON_C_TO_STRING_PLAIN))) == NULL) {
			sbx_request_free(c);
			return NULL;
		}
		c->hdrs = curl_slist_append(c->hdrs,
		    "Content-Type: application/json");
		curl_easy_setopt(c->easy, CURLOPT_POSTFIELDS, c->reqbody);
		curl_easy_setopt(c->easy, CURLOPT_POSTFIELDSIZE_LARGE,
		    (curl_off_t)strlen(c->reqbody));
	}
	return sbx_start(c);
}

/*
 * A session id goes into paths and log lines: only what such ids are
 * made of.  Checked where an id enters (CreateSession's answer) and
 * again in every path made from one.
 */
int
sbx_session_ok(const char *s)
{
	if (*s == '\0' || strlen(s) > 128)
		return 0;
	for (; *s != '\0'; s++)
		if (!(*s >= 'a' && *s <= 'z') && !(*s >= 'A' && *s <= 'Z') &&
		    !(*s >= '0' && *s <= '9') && *s != '-' && *s != '_')
			return 0;
	return 1;
}

int
sbx_session_path(char *buf, size_t len, const char *session,
    const char *rest)
{
	if (!sbx_session_ok(session) || snprintf(buf, len, "/sessions/%s%s",
	    session, rest) >= (int)len)
		return -1;
	return 0;
}

struct sbx_request *
sbx_put(struct sbx_backend *be, const char *session, const char *name,
    int fd, int64_t size, sbx_done_cb done, void *arg)
{
	struct sbx_request	*c;
	curl_mimepart		*part;
	char			 path[256];

	if (sbx_session_path(path, sizeof(path), session, "/files") == -1 ||
	    (c = sbx_request_new(be, "POST", path, be->transfer_timeout, done,
	    arg)) == NULL) {
		close(fd);
		return NULL;
	}
	c->fd = fd;
	c->size = size;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	if ((c->mime = curl_mime_init(c->easy)) == NULL ||
	    (part = curl_mime_addpart(c->mime)) == NULL ||
	    curl_mime_name(part, "path") != CURLE_OK ||
	    curl_mime_data(part, name, CURL_ZERO_TERMINATED) != CURLE_OK ||
	    (part = curl_mime_addpart(c->mime)) == NULL ||
	    curl_mime_name(part, "file") != CURLE_OK ||
	    curl_mime_filename(part, name) != CURLE_OK ||
	    curl_mime_type(part, "application/octet-stream") != CURLE_OK ||
	    curl_mime_data_cb(part, size, sbx_read_fd, NULL, NULL, c) !=
	    CURLE_OK) {
		sbx_request_free(c);
		return NULL;
	}
	curl_easy_setopt(c->easy, CURLOPT_CUSTOMREQUEST, NULL);
	curl_easy_setopt(c->easy, CURLOPT_MIMEPOST, c->mime);
	return sbx_start(c);
}

struct sbx_request *
sbx_get(struct sbx_backend *be, const char *session, const char *relpath,
    int fd, int64_t cap, sbx_tap_cb tap, sbx_done_cb done, void *arg)
{
	struct sbx_request	*c;
	char			*q, path[2048];
	int			 n;

	if (!sbx_session_ok(session) || (q = curl_easy_escape(NULL, relpath,
	    0)) == NULL) {
		close(fd);
		return NULL;
	}
	n = snprintf(path, sizeof(path), "/sessions/%s/files?path=%s",
	    session, q);
	curl_free(q);
	if (n >= (int)sizeof(path) || (c = sbx_request_new(be, "GET", path,
	    be->transfer_timeout, done, arg)) == NULL) {
		close(fd);
		return NULL;
	}
	c->fd = fd;
	c->cap = cap;
	c->tap = tap;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	curl_easy_setopt(c->easy, CURLOPT_WRITEFUNCTION, sbx_write_fd);
	return sbx_start(c);
}
