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
 * fe_upcall_end.c: the end of a model call, whichever way it comes:
 * the caller's answer from the upstream's status and body, or the end
 * of a stream already going (an error event when it went wrong).
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
#include "fe_upcall_int.h"

/* What an upstream may answer in all, streamed or whole. */
int64_t
upcall_answer_max(void)
{
	return fe.conf->max_answer_size;	/* conf_new() has the default */
}

int
upcall_tools_max(void)
{
	return fe.conf->max_tool_calls;
}

void
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
void
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
int64_t
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
void
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
void
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
void
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
