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
#include "jsontext.h"
#include "util.h"
#include "frontend.h"
#include "fe_upcall.h"
#include "fe_upcall_request.h"

#define SSE_EVENT_MAX		(4 * 1024 * 1024)	/* one event */
#define ERROR_BODY_MAX		(64 * 1024)	/* what an error may say */
#define UPSTREAM_MESSAGE_MAX	400	/* of it, passed on */
/*
 * A pooled connection idle longer than this is not reused: model
 * servers (uvicorn, llama.cpp) close theirs after 5 s, and a request
 * sent on one closing under it cannot be sent again when its body is
 * read from descriptors, which do not rewind (a body in memory can:
 * upcall_setup).
 */
#define CONN_MAXAGE		2

struct upcall {
	struct api_req		*ar;
	struct upcall_params	 p;
	char			 model[128];
	CURL			*easy;
	int			 running;	/* in the multi */
	int			 inline_body;	/* CURLOPT_POSTFIELDS */
	struct curl_slist	*headers;
	struct curl_slist	*resolve;
	struct event		*idle;
	int			 idle_timeout;
	struct evbuffer		*answer;	/* plain answer or error */
	struct evbuffer		*frame;		/* one event to the caller */
	int64_t			 streamed;	/* bytes of the stream */
	struct sse_parser	*sse;
	struct xstream		*translator;	/* into the caller's wire */
	struct upcall_result	 res;
	int64_t			 start_us;		/* monotonic, usec */
	char			 retry_after[32];
	int			 event_stream;	/* its Content-Type says so */
	int			 started;	/* our SSE reply began */
	int			 fail;		/* status to report */
	char			 fail_message[160];
	int			 reported;
	int			 busy;		/* inside a callback */
	int			 dead;		/* freed while busy */
	upcall_done_cb		 done;
	void			*arg;
};

static struct curlev	*fe_curl;

/* What an upstream may answer in all, streamed or whole. */
static int64_t
upcall_answer_max(void)
{
	return fe.conf->max_answer_size;	/* conf_new() has the default */
}

static int
upcall_tools_max(void)
{
	return fe.conf->max_tool_calls;
}

static void	upcall_destroy(struct upcall *);
static void	upcall_emit_cb(void *, const char *, const char *, size_t);

void
upcall_init(void)
{
	if (fe_curl == NULL && (fe_curl = curlev_new(fe.base)) == NULL)
		fatalx("curlev_new");
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
upcall_fail(struct upcall *u, int status, const char *fmt, ...)
{
	va_list	 ap;

	if (u->fail != 0)
		return;
	u->fail = status;
	va_start(ap, fmt);
	vsnprintf(u->fail_message, sizeof(u->fail_message), fmt, ap);
	va_end(ap);
}

/* --- the end, whichever way it comes --- */

/*
 * One event to the caller.  Data with line breaks (none of the three
 * wire formats sends them, but a translator may pass text on) is
 * split over data lines, as SSE joins them back.
 */
static void
upcall_emit_cb(void *arg, const char *event, const char *data, size_t len)
{
	struct upcall	*u = arg;
	const char	*nl;
	size_t		 n;

	if (event != NULL && *event != '\0')
		evbuffer_add_printf(u->frame, "event: %s\n", event);
	do {
		nl = memchr(data, '\n', len);
		n = nl ? (size_t)(nl - data) : len;
		evbuffer_add(u->frame, "data: ", 6);
		evbuffer_add(u->frame, data, n);
		evbuffer_add(u->frame, "\n", 1);
		if (nl != NULL)
			n++;
		data += n;
		len -= n;
	} while (len > 0);
	evbuffer_add(u->frame, "\n", 1);
	http_reply_data(u->ar->req, evbuffer_pullup(u->frame, -1),
	    evbuffer_get_length(u->frame));
	evbuffer_drain(u->frame, evbuffer_get_length(u->frame));
}

/*
 * Bytes of the body sent: curl counts those of a body in memory, of
 * its last attempt when it sent it again on a fresh connection.
 */
static int64_t
upcall_sent(const struct upcall *u)
{
	curl_off_t	 n = 0;

	if (!u->inline_body)
		return upstream_body_sent(u->p.body);
	if (curl_easy_getinfo(u->easy, CURLINFO_SIZE_UPLOAD_T, &n) !=
	    CURLE_OK || n < 0)
		return 0;
	return n;
}

/* The route hears how it went before anything can free the request. */
static void
upcall_report(struct upcall *u, int status)
{
	if (u->reported)
		return;
	u->reported = 1;
	u->res.status = status;
	u->res.sent = upcall_sent(u);
	if (u->translator != NULL)
		xstream_usage(u->translator, &u->res.tokens_in,
		    &u->res.tokens_out);
	if (u->done != NULL)
		u->done(u->arg, &u->res);
}

static void
upcall_error(struct upcall *u, int status, const char *msg)
{
	if (u->p.collect) {
		strlcpy(u->res.message, msg, sizeof(u->res.message));
		strlcpy(u->res.retry_after, u->retry_after,
		    sizeof(u->res.retry_after));
		upcall_report(u, status);
		return;
	}
	upcall_report(u, status);
	if (status == 429 && u->retry_after[0] != '\0')
		http_reply_header(u->ar->req, "retry-after", u->retry_after);
	fe_reply_error(u->ar, status, NULL, "%s", msg);
}

/*
 * The upstream's own words, made safe to pass on: error.message (or a
 * top-level message, as vLLM writes), without control characters,
 * bounded, cut on a character boundary.
 */
static void
upcall_upstream_message(struct upcall *u, char *out, size_t outlen)
{
	struct json_object	*o, *e, *m = NULL;
	const char		*s;
	size_t			 i, n = 0;

	out[0] = '\0';
	o = json_text_parse_default((const char *)evbuffer_pullup(
	    u->answer, -1), evbuffer_get_length(u->answer));
	if (o != NULL) {
		if (json_object_object_get_ex(o, "error", &e) &&
		    json_object_is_type(e, json_type_object))
			json_object_object_get_ex(e, "message", &m);
		else if (json_object_object_get_ex(o, "error", &e) &&
		    json_object_is_type(e, json_type_string))
			m = e;
		else
			json_object_object_get_ex(o, "message", &m);
	}
	if (m != NULL && json_object_is_type(m, json_type_string)) {
		s = json_object_get_string(m);
		for (i = 0; s[i] != '\0' && n + 1 < outlen &&
		    n < UPSTREAM_MESSAGE_MAX; i++)
			if ((unsigned char)s[i] >= 0x20 && s[i] != 0x7f)
				out[n++] = s[i];
		/* A multi-byte character cut in half goes whole. */
		while (n > 0 && s[i] != '\0' &&
		    ((unsigned char)out[n - 1] & 0xc0) == 0x80)
			n--;
		if (n > 0 && s[i] != '\0' &&
		    ((unsigned char)out[n - 1] & 0xc0) == 0xc0)
			n--;
		out[n] = '\0';
	}
	json_object_put(o);
}

/*
 * More tool calls than max-tool-calls in one turn: the caller's own
 * tools are the caller's to run, so the gateway cannot answer the
 * extra ones for the model, and handing on only some would lose the
 * rest; the request ends with a 502 instead.
 */
static int
upcall_too_many_calls(struct upcall *u, struct json_object *resp)
{
	struct json_object	*calls;
	char			 msg[160];
	int			 foreign;
	size_t			 n;

	if ((calls = tools_calls(u->p.wire, resp, &foreign)) == NULL)
		return 0;	/* no calls, or xlate says what is wrong */
	n = json_object_array_length(calls) + (size_t)foreign;
	json_object_put(calls);
	if (n <= (size_t)upcall_tools_max())
		return 0;
	snprintf(msg, sizeof(msg), "the upstream's answer makes %zu tool "
	    "calls, more than %d (max-tool-calls)", n, upcall_tools_max());
	upcall_error(u, 502, msg);
	return 1;
}

/* A whole answer of 200: translated for the caller. */
static void
upcall_answer_ok(struct upcall *u)
{
	struct json_object	*resp, *out;
	char			 err[160];

	if (u->p.stream) {
		upcall_error(u, 502, "the upstream did not stream its answer");
		return;
	}
	resp = json_text_parse_default((const char *)evbuffer_pullup(
	    u->answer, -1), evbuffer_get_length(u->answer));
	if (resp == NULL || !json_object_is_type(resp, json_type_object)) {
		json_object_put(resp);
		upcall_error(u, 502, "the upstream's answer is not JSON");
		return;
	}
	xlate_usage(u->p.wire, resp, &u->res.tokens_in, &u->res.tokens_out);
	if (u->p.collect) {
		u->res.answer = resp;
		u->res.answer_len = evbuffer_get_length(u->answer);
		upcall_report(u, 200);
		u->res.answer = NULL;
		json_object_put(resp);
		return;
	}
	if (upcall_too_many_calls(u, resp)) {
		json_object_put(resp);
		return;
	}
	err[0] = '\0';
	out = xlate_response(u->p.wire, u->p.caller, resp, u->model, err,
	    sizeof(err));
	json_object_put(resp);
	if (out == NULL) {
		upcall_error(u, 502, err[0] ? err :
		    "the upstream's answer is malformed");
		return;
	}
	upcall_report(u, 200);
	fe_reply_json(u->ar, 200, out);
}

/* The upstream's status, in the caller's terms (SPEC 6, issue 13). */
static void
upcall_answer(struct upcall *u, CURLcode rc)
{
	char	 msg[UPSTREAM_MESSAGE_MAX + 64];
	int	 st = u->res.upstream_status;

	if (u->fail != 0) {
		upcall_error(u, u->fail, u->fail_message);
		return;
	}
	if (rc == CURLE_OPERATION_TIMEDOUT) {
		upcall_error(u, 504, "the upstream did not answer in time");
		return;
	}
	if (rc != CURLE_OK) {
		snprintf(msg, sizeof(msg), "the upstream could not be "
		    "reached: %s", curl_easy_strerror(rc));
		upcall_error(u, 502, msg);
		return;
	}
	switch (st) {
	case 200:
		upcall_answer_ok(u);
		return;
	case 400:
	case 404:
	case 413:
	case 422:
	case 429:
		upcall_upstream_message(u, msg, sizeof(msg));
		if (msg[0] == '\0')
			snprintf(msg, sizeof(msg), st == 429 ? "the upstream "
			    "is rate limited" : "the upstream refused the "
			    "request (HTTP %d)", st);
		upcall_error(u, st == 429 ? 429 : 400, msg);
		return;
	case 401:
	case 403:
		upcall_error(u, 502, "upstream refused the gateway's "
		    "credential");
		return;
	default:
		snprintf(msg, sizeof(msg), "the upstream failed (HTTP %d)",
		    st);
		upcall_error(u, 502, msg);
	}
}

/* A stream already going: an error event ends it if it went wrong. */
static void
upcall_stream_end(struct upcall *u, CURLcode rc)
{
	int	 status = 200;

	if (u->fail == 0 && rc == CURLE_OPERATION_TIMEDOUT)
		upcall_fail(u, 504, "the upstream went silent");
	else if (u->fail == 0 && rc != CURLE_OK)
		upcall_fail(u, 502, "the upstream's stream broke: %s",
		    curl_easy_strerror(rc));
	else if (u->fail == 0 && (sse_finish(u->sse) == -1 ||
	    xstream_end(u->translator) == -1))
		upcall_fail(u, 502, "the upstream ended its stream early");
	if (u->fail != 0) {
		status = u->fail;
		xstream_error(u->p.caller, u->fail, u->fail_message,
		    upcall_emit_cb, u);
	}
	upcall_report(u, status);
	http_reply_end(u->ar->req);
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
	u->busy++;
	if (u->started)
		upcall_stream_end(u, rc);
	else
		upcall_answer(u, rc);
	u->busy--;
	if (u->dead)
		upcall_destroy(u);
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
upcall_setup(struct upcall *u, const struct upstream_conf *up)
{
	CURL	*e = u->easy;
	char	 url[sizeof(up->url) + 32];

	upcall_url(up, u->p.wire, url, sizeof(url));
	if (up->resolve[0] != '\0' &&
	    (u->resolve = curl_slist_append(NULL, up->resolve)) == NULL)
		return -1;
	if ((u->headers = upcall_headers(up, u->p.stream)) == NULL ||
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
	if (u->resolve != NULL)
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
	const struct upstream_conf	*up;
	struct upcall			*u;

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
	if ((u->answer = evbuffer_new()) == NULL ||
	    (u->frame = evbuffer_new()) == NULL ||
	    (u->idle = evtimer_new(fe.base, upcall_idle, u)) == NULL ||
	    (u->easy = curl_easy_init()) == NULL ||
	    upcall_setup(u, up) == -1 ||
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
	if (u->easy != NULL)
		curl_easy_cleanup(u->easy);
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
