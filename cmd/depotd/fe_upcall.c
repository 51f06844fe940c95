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
 * fe_upcall.c: one call to a model upstream, on libcurl's multi
 * interface inside the frontend's event loop.
 *
 * The request body comes from an upstream body (memory and file descriptors
 * read as base64), so its length is known and curl sends it with a
 * Content-Length.  A plain answer is collected, bounded, translated
 * and sent whole; a streamed one is parsed event by event and each
 * event translated and written as it comes, with curl paused while
 * the caller reads slower than the upstream writes.  Only the
 * configured credential goes upstream, never a header of the caller.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "log.h"
#include "sse.h"
#include "curlev.h"
#include "fe_pool.h"
#include "jsontext.h"
#include "util.h"
#include "frontend.h"
#include "fe_upcall.h"
#include "fe_upcall_request.h"

#define SSE_EVENT_MAX		(4 * 1024 * 1024)	/* one event */
#include "fe_upcall_int.h"

static struct curlev	*fe_curl;

static void	upcall_destroy(struct upcall *);
static const struct upstream_conf *upcall_upstream(const char *);
static int	upcall_setup(struct upcall *, const struct upstream_conf *,
		    size_t);
static void	upcall_curl_done(void *, CURLcode);
static int	upcall_failover(struct upcall *, CURLcode);


void
upcall_init(void)
{
	if (fe_curl == NULL && (fe_curl = curlev_new(fe.base)) == NULL)
		fatalx("curlev_new");
}

/*
 * Easy handles outlive their calls: a new one costs libcurl's whole
 * setup and the allocation of its buffers, a reset one keeps the
 * buffers and starts from the defaults (CPU per round trip at 64
 * connections: 72-100 us against 89-105 before, regress/bench).  As
 * many are kept as calls ran at once, up to EASY_SPARE.
 */
#define EASY_SPARE	64

static CURL	*spare_easy[EASY_SPARE];
static int	 nspare_easy;

static CURL *
upcall_easy_get(void)
{
	if (nspare_easy > 0)
		return spare_easy[--nspare_easy];
	return curl_easy_init();
}

static void
upcall_easy_put(CURL *e)
{
	if (nspare_easy == EASY_SPARE) {
		curl_easy_cleanup(e);
		return;
	}
	curl_easy_reset(e);
	spare_easy[nspare_easy++] = e;
}

/* --- the upstream's liveness --- */

static void
upcall_idle_arm(struct upcall *u)
{
	struct timeval	 tv = { u->idle_timeout, 0 };

	evtimer_add(u->idle, &tv);
}

/* Bytes came from the upstream: it is alive. */
static void
upcall_heard(struct upcall *u)
{
	if (u->res.ttfb_us == -1)
		u->res.ttfb_us = mono_usec() - u->start_us;
	upcall_idle_arm(u);
}

static void
upcall_curl_done(void *arg, CURLcode rc)
{
	struct upcall	*u = arg;
	long		 code = 0;

	u->running = 0;
	evtimer_del(u->idle);
	if (u->res.upstream_status == 0 && curl_easy_getinfo(u->easy,
	    CURLINFO_RESPONSE_CODE, &code) == CURLE_OK)
		u->res.upstream_status = (int)code;
	if (upcall_failover(u, rc) == 0)
		return;
	u->busy++;
	if (u->started)
		upcall_stream_end(u, rc);
	else
		upcall_answer(u, rc);
	u->busy--;
	if (u->dead)
		upcall_destroy(u);
}

/*
 * Why the replica failed the call, for its health: it could not be
 * reached, went silent before its first byte, or answered 5xx.  NULL
 * when it did its part (a 4xx is the request's fault, not the
 * replica's; a failure after bytes came is the stream's).
 */
static const char *
upcall_replica_fault(struct upcall *u, CURLcode rc, char *why, size_t len)
{
	if (rc != CURLE_OK && u->res.ttfb_us == -1) {
		snprintf(why, len, "%s", rc == CURLE_OPERATION_TIMEDOUT &&
		    u->fail != 0 ? u->fail_message : curl_easy_strerror(rc));
		return why;
	}
	if (rc == CURLE_OK && u->res.upstream_status >= 500) {
		snprintf(why, len, "HTTP %d", u->res.upstream_status);
		return why;
	}
	return NULL;
}

/*
 * Before the first byte reached the caller, a call its replica failed
 * goes to the next one, at most the upstream's failover times, within
 * its timeout.  Only a body curl can send again (in memory, or not yet
 * read) goes twice.  0 when the call went on elsewhere.
 */
static int
upcall_failover(struct upcall *u, CURLcode rc)
{
	const struct upstream_conf	*up;
	char				 why[160];
	const char			*fault;
	int64_t				 left_ms;
	size_t				 i;

	fault = upcall_replica_fault(u, rc, why, sizeof(why));
	if (u->replica != NULL) {
		pool_end(u->replica, fault);
		u->replica = NULL;
	}
	/* The configuration of now: a reload may have come between. */
	if (fault == NULL || u->started || u->dead ||
	    (up = upcall_upstream(u->p.upstream)) == NULL ||
	    u->failovers >= up->max_failover)
		return -1;
	if (!u->inline_body && upstream_body_sent(u->p.body) > 0)
		return -1;
	left_ms = (int64_t)up->timeout * 1000 -
	    (mono_usec() - u->start_us) / 1000;
	if (left_ms <= 0)
		return -1;
	if ((u->replica = pool_choose(up, u->tried, &i)) == NULL)
		return -1;
	u->failovers++;
	u->tried |= 1U << i;
	pool_begin(u->replica);
	strlcpy(u->res.replica, u->replica->url, sizeof(u->res.replica));
	log_debug("model %s: %s failed (%s), on to %s", u->model,
	    up->name, why, u->replica->url);
	u->fail = 0;
	u->fail_message[0] = '\0';
	u->res.upstream_status = 0;
	u->res.ttfb_us = -1;
	u->retry_after[0] = '\0';
	u->event_stream = 0;
	evbuffer_drain(u->answer, evbuffer_get_length(u->answer));
	if (upcall_setup(u, up, i) == -1 ||
	    curlev_add(fe_curl, u->easy, upcall_curl_done, u) == -1) {
		pool_end(u->replica, "the call could not start");
		u->replica = NULL;
		return -1;
	}
	curl_easy_setopt(u->easy, CURLOPT_TIMEOUT_MS, (long)left_ms);
	u->running = 1;
	if (!u->inline_body)
		upcall_idle_arm(u);
	return 0;
}

/* Silence past idle-timeout: the call ends as a stall. */
static void
upcall_idle(evutil_socket_t fd, short what, void *arg)
{
	struct upcall	*u = arg;

	upcall_fail(u, 504, "the upstream went silent for %d s",
	    u->idle_timeout);
	if (u->running) {
		curlev_remove(fe_curl, u->easy);
		u->running = 0;
	}
	upcall_curl_done(u, CURLE_OPERATION_TIMEDOUT);
}

/* --- curl's callbacks --- */

static int
upcall_sse_event(void *arg, const char *event, const char *data, size_t len)
{
	struct upcall	*u = arg;

	if (u->fail != 0 || xstream_event(u->translator, event, data, len) == 0)
		return u->fail != 0 ? -1 : 0;
	switch (xstream_limit(u->translator)) {
	case XSTREAM_OVER_SIZE:
		upcall_fail(u, 502, "the upstream's answer is larger than "
		    "%" PRId64 " bytes (max-answer-size)", upcall_answer_max());
		break;
	case XSTREAM_OVER_TOOLS:
		upcall_fail(u, 502, "the upstream's answer makes more than %d "
		    "tool calls (max-tool-calls)", upcall_tools_max());
		break;
	default:
		upcall_fail(u, 502, "the upstream's stream is malformed");
	}
	return u->fail != 0 ? -1 : 0;
}

static int
upcall_stream_begin(struct upcall *u)
{
	if ((u->translator = xstream_new(u->p.wire, u->p.caller, u->model,
	    upcall_emit_cb, u)) == NULL ||
	    (u->sse = sse_new(SSE_EVENT_MAX, upcall_sse_event, u)) == NULL)
		return -1;
	xstream_limits(u->translator, upcall_answer_max(), upcall_tools_max());
	xstream_caller_usage(u->translator, u->p.usage);
	http_reply_header(u->ar->req, "Cache-Control", "no-cache");
	http_reply_start(u->ar->req, 200, "text/event-stream; charset=utf-8",
	    -1);
	u->started = 1;
	return 0;
}

static void
upcall_drained(struct http_request *req, void *arg)
{
	struct upcall	*u = arg;

	upcall_idle_arm(u);
	curlev_unpause(fe_curl, u->easy);
}

/*
 * A piece of a streamed answer.  While the caller has more than the
 * write watermark queued, the piece waits in curl (which hands it
 * again on resumption) and the idle timer stops: the silence is ours.
 */
static size_t
upcall_stream(struct upcall *u, char *buf, size_t len)
{
	if (!u->started && upcall_stream_begin(u) == -1) {
		upcall_fail(u, 502, "out of memory");
		return 0;
	}
	if (http_reply_pending(u->ar->req) > fe.conf->http.write_watermark) {
		evtimer_del(u->idle);
		http_reply_ondrain(u->ar->req, upcall_drained, u);
		return CURL_WRITEFUNC_PAUSE;
	}
	/* Whatever it is made of, comments and garbage count too. */
	u->streamed += len;
	if (u->streamed > upcall_answer_max()) {
		upcall_fail(u, 502, "the upstream's answer is larger than "
		    "%" PRId64 " bytes (max-answer-size)", upcall_answer_max());
		return 0;
	}
	if (sse_feed(u->sse, buf, len) == -1)
		upcall_fail(u, 502, "the upstream's stream is malformed or "
		    "has an event over %d MiB", SSE_EVENT_MAX >> 20);
	return u->fail != 0 ? 0 : len;
}

static size_t
upcall_write(char *buf, size_t size, size_t n, void *arg)
{
	struct upcall	*u = arg;
	long		 code = 0;
	size_t		 have, max;

	n *= size;
	upcall_heard(u);
	if (u->res.upstream_status == 0) {
		curl_easy_getinfo(u->easy, CURLINFO_RESPONSE_CODE, &code);
		u->res.upstream_status = (int)code;
	}
	if (u->p.stream && u->res.upstream_status == 200 && u->event_stream)
		return upcall_stream(u, buf, n);
	have = evbuffer_get_length(u->answer);
	max = u->res.upstream_status == 200 ? (size_t)upcall_answer_max() :
	    ERROR_BODY_MAX;
	if (have + n > max) {
		if (u->res.upstream_status != 200)
			return n;	/* the start says enough */
		upcall_fail(u, 502, "the upstream's answer is larger than "
		    "%zu bytes (max-answer-size)", max);
		return 0;
	}
	if (evbuffer_add(u->answer, buf, n) == -1) {
		upcall_fail(u, 502, "out of memory");
		return 0;
	}
	return n;
}

/* Retry-After and the answer's type; a new status line starts over. */
static size_t
upcall_header(char *buf, size_t size, size_t n, void *arg)
{
	struct upcall	*u = arg;
	size_t		 len = n * size, v;

	upcall_heard(u);
	if (len > 5 && strncmp(buf, "HTTP/", 5) == 0) {
		u->retry_after[0] = '\0';
		u->event_stream = 0;
	} else if (len > 12 && strncasecmp(buf, "retry-after:", 12) == 0) {
		v = 12 + strspn(buf + 12, " \t");
		len -= v;
		while (len > 0 && (buf[v + len - 1] == '\r' ||
		    buf[v + len - 1] == '\n' || buf[v + len - 1] == ' '))
			len--;
		retry_after_seconds(buf + v, len, u->retry_after,
		    sizeof(u->retry_after));
		return n * size;
	} else if (len > 13 && strncasecmp(buf, "content-type:", 13) == 0)
		u->event_stream = memmem(buf, len, "text/event-stream",
		    17) != NULL;
	return n * size;
}

/*
 * The body, from memory and descriptors; sending is liveness too.
 * Once it is all sent the model may think for a long while before its
 * first byte: that wait is the call's timeout's, not idle-timeout's,
 * which counts silence in an answer that has begun.  curl knows the
 * length and stops calling once it has it all: the last piece, not a
 * read of 0, is the end.
 */
static size_t
upcall_read(char *buf, size_t size, size_t n, void *arg)
{
	struct upcall	*u = arg;
	size_t		 got;

	got = upstream_body_read(buf, size, n, u->p.body);
	if (got == CURL_READFUNC_PAUSE || got == CURL_READFUNC_ABORT)
		return got;
	if (u->res.ttfb_us == -1 && (got == 0 ||
	    upstream_body_sent(u->p.body) >= upstream_body_length(u->p.body)))
		evtimer_del(u->idle);
	else
		upcall_idle_arm(u);
	return got;
}

/*
 * curl rewinds when a reused connection turns out closed: possible
 * only while nothing was read, since descriptors do not rewind.
 */
static int
upcall_seek(void *arg, curl_off_t offset, int origin)
{
	struct upcall	*u = arg;

	if (origin == SEEK_SET && offset == 0 && upstream_body_sent(u->p.body) == 0)
		return CURL_SEEKFUNC_OK;
	return CURL_SEEKFUNC_CANTSEEK;
}

static void
upcall_body_wake(void *arg)
{
	struct upcall	*u = arg;

	if (u->running)
		curlev_unpause(fe_curl, u->easy);
}

/* --- the call --- */

static const struct upstream_conf *
upcall_upstream(const char *name)
{
	const struct upstream_conf	*up;

	TAILQ_FOREACH(up, &fe.conf->upstreams, entry)
		if (strcmp(up->name, name) == 0)
			return up;
	return NULL;
}

static int
upcall_setup(struct upcall *u, const struct upstream_conf *up, size_t replica)
{
	CURL		*e = u->easy;
	char		 url[sizeof(up->url) + 32];
	const char	*resolve = conf_replica_resolve(up, replica);

	upcall_url(conf_replica_url(up, replica), u->p.wire, url, sizeof(url));
	curl_slist_free_all(u->resolve);
	u->resolve = NULL;
	if (resolve[0] != '\0' &&
	    (u->resolve = curl_slist_append(NULL, resolve)) == NULL)
		return -1;
	if (u->headers == NULL &&
	    (u->headers = upcall_headers(up, u->p.stream)) == NULL)
		return -1;
	if (
	    upcall_tls(e, up) == -1)
		return -1;
	/* Every setting as configured: conf_upstream_init has defaults. */
	u->idle_timeout = up->idle_timeout;
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_MAXAGE_CONN, (long)CONN_MAXAGE);
	u->inline_body = upcall_body(e, u->p.body, upcall_read, upcall_seek,
	    u);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, upcall_write);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, u);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, upcall_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, u);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, u->headers);
	curl_easy_setopt(e, CURLOPT_RESOLVE, u->resolve);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, (long)up->connect_timeout);
	curl_easy_setopt(e, CURLOPT_TIMEOUT, (long)up->timeout);
	return 0;
}

/* A call that cannot start; a collecting caller answers for itself. */
static void
upcall_refuse(struct api_req *ar, const struct upcall_params *p, int status,
    const char *msg)
{
	if (!p->collect)
		fe_reply_error(ar, status, NULL, "%s", msg);
}

struct upcall *
upcall_start(struct api_req *ar, const struct upcall_params *p,
    upcall_done_cb done, void *arg)
{
	static const struct depotd_conf	*seen;
	const struct upstream_conf	*up;
	struct upcall			*u;
	size_t				 replica;

	if (seen != fe.conf) {
		pool_sync(fe.conf);
		seen = fe.conf;
	}
	if ((up = upcall_upstream(p->upstream)) == NULL) {
		upcall_refuse(ar, p, 502, "the model's upstream is no longer "
		    "configured");
		return NULL;
	}
	upcall_init();
	if ((u = calloc(1, sizeof(*u))) == NULL) {
		upcall_refuse(ar, p, 503, "out of memory");
		return NULL;
	}
	u->ar = ar;
	u->p = *p;
	strlcpy(u->model, p->model, sizeof(u->model));
	u->p.model = u->model;
	u->res.tokens_in = u->res.tokens_out = u->res.ttfb_us = -1;
	u->done = done;
	u->arg = arg;
	u->start_us = mono_usec();
	if ((u->replica = pool_choose(up, 0, &replica)) != NULL) {
		u->tried = 1U << replica;
		pool_begin(u->replica);
		strlcpy(u->res.replica, u->replica->url,
		    sizeof(u->res.replica));
	}
	if ((u->answer = evbuffer_new()) == NULL ||
	    (u->frame = evbuffer_new()) == NULL ||
	    (u->idle = evtimer_new(fe.base, upcall_idle, u)) == NULL ||
	    (u->easy = upcall_easy_get()) == NULL ||
	    upcall_setup(u, up, replica) == -1 ||
	    curlev_add(fe_curl, u->easy, upcall_curl_done, u) == -1) {
		upcall_destroy(u);
		upcall_refuse(ar, p, 502, "the upstream call could not start");
		return NULL;
	}
	u->running = 1;
	upstream_body_on_wake(p->body, upcall_body_wake, u);
	/*
	 * A body in memory is out with the headers: from then until the
	 * first byte, the wait is the call's timeout's (upcall_read).
	 */
	if (!u->inline_body)
		upcall_idle_arm(u);
	return u;
}

static void
upcall_destroy(struct upcall *u)
{
	struct curl_slist	*l;

	if (u->running)
		curlev_remove(fe_curl, u->easy);
	/* A call cut short says nothing of its replica's health. */
	if (u->replica != NULL)
		pool_cancel(u->replica);
	if (u->easy != NULL)
		upcall_easy_put(u->easy);
	for (l = u->headers; l != NULL; l = l->next)
		explicit_bzero(l->data, strlen(l->data));
	curl_slist_free_all(u->headers);
	curl_slist_free_all(u->resolve);
	if (u->idle != NULL)
		event_free(u->idle);
	if (u->answer != NULL)
		evbuffer_free(u->answer);
	if (u->frame != NULL)
		evbuffer_free(u->frame);
	if (u->sse != NULL)
		sse_free(u->sse);
	if (u->translator != NULL)
		xstream_free(u->translator);
	free(u);
}

void
upcall_free(struct upcall *u)
{
	if (u == NULL)
		return;
	u->done = NULL;
	upstream_body_on_wake(u->p.body, NULL, NULL);
	if (u->busy)
		u->dead = 1;
	else
		upcall_destroy(u);
}

void
upcall_result(const struct upcall *u, struct upcall_result *res)
{
	*res = u->res;
	res->sent = upcall_sent(u);
	if (u->translator != NULL)
		xstream_usage(u->translator, &res->tokens_in, &res->tokens_out);
}
