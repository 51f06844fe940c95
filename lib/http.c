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
 * http.c: requests as Debian's libhttp-parser reads them.  See http.h
 * for the life of a request.
 *
 * A connection serves one request at a time.  The parser is paused at
 * the end of the headers (the handler decides whether the body is read
 * at all), when the handler applies back-pressure, and at the end of
 * every message, so that pipelined requests wait in the input buffer,
 * bounded by the read high-water mark, until the response before them
 * is complete.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "http_private.h"
#include "log.h"
#include "randpool.h"

#define LOG_PATH_MAX		256

static int	p_message_begin(http_parser *);
static int	p_url(http_parser *, const char *, size_t);
static int	p_header_field(http_parser *, const char *, size_t);
static int	p_header_value(http_parser *, const char *, size_t);
static int	p_headers_complete(http_parser *);
static int	p_body(http_parser *, const char *, size_t);
static int	p_message_complete(http_parser *);

static const http_parser_settings parser_settings = {
	.on_message_begin = p_message_begin,
	.on_url = p_url,
	.on_header_field = p_header_field,
	.on_header_value = p_header_value,
	.on_headers_complete = p_headers_complete,
	.on_body = p_body,
	.on_message_complete = p_message_complete,
};

/* Requests. */

void
http_request_id(char id[33])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char	 rnd[16];
	int		 i;

	/* From the pool: one getrandom(2) for 256 ids, not one each. */
	randpool_bytes(rnd, sizeof(rnd));
	for (i = 0; i < 16; i++) {
		id[2 * i] = hex[rnd[i] >> 4];
		id[2 * i + 1] = hex[rnd[i] & 0xf];
	}
	id[32] = '\0';
}

struct http_request *
http_request_new(struct http_conn *c)
{
	struct http_request	*req;

	if ((req = calloc(1, sizeof(*req))) == NULL)
		return NULL;
	req->conn = c;
	TAILQ_INIT(&req->headers);
	req->content_length = -1;
	strlcpy(req->method_str, "-", sizeof(req->method_str));
	http_request_id(req->id);
	clock_gettime(CLOCK_MONOTONIC, &req->start);
	strlcpy(req->peer, c->peer, sizeof(req->peer));
	c->req = req;
	return req;
}

static void
access_log(const struct http_request *req)
{
	struct timespec	 now;
	char		 path[LOG_PATH_MAX];
	const char	*src = req->path ? req->path : "-";
	long long	 ms;
	size_t		 i;

	/* The path only: a query string may carry secrets. */
	for (i = 0; src[i] != '\0' && i < sizeof(path) - 1; i++)
		path[i] = (src[i] > 0x20 && src[i] < 0x7f) ? src[i] : '?';
	path[i] = '\0';
	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (now.tv_sec - req->start.tv_sec) * 1000LL +
	    (now.tv_nsec - req->start.tv_nsec) / 1000000;
	log_info("%s %s %d %llu %llu %lld user=%s id=%s%s%s", req->method_str,
	    path, req->status, (unsigned long long)req->bytes_in,
	    (unsigned long long)req->bytes_out, ms,
	    req->log_user[0] ? req->log_user : "-", req->id,
	    req->log_more ? " " : "", req->log_more ? req->log_more : "");
}

void
http_request_log_more(struct http_request *req, const char *fmt, ...)
{
	va_list	 ap;
	char	*more;

	va_start(ap, fmt);
	if (vasprintf(&more, fmt, ap) == -1)
		more = NULL;
	va_end(ap);
	free(req->log_more);
	req->log_more = more;
}

static void
headers_free(struct http_headers *list)
{
	struct http_header	*h;

	while ((h = TAILQ_FIRST(list)) != NULL) {
		TAILQ_REMOVE(list, h, entry);
		free(h->name);
		free(h->value);
		free(h);
	}
}

/* Logs the request, releases the handler's state, frees it. */
void
http_request_end(struct http_conn *c)
{
	struct http_request	*req = c->req;
	struct http_server	*srv = c->srv;

	if (req == NULL)
		return;
	c->req = NULL;
	/* The handler first: what it adds to the log line is the end. */
	if (c->dispatched && srv->handler.on_free != NULL)
		srv->handler.on_free(req, srv->handler.arg);
	c->dispatched = 0;
	access_log(req);
	free(req->log_more);
	http_stream_stop(c);
	headers_free(&req->headers);
	free(req->target);
	free(req->path);
	free(req);
}

/* Parser callbacks. */

static int
p_message_begin(http_parser *p)
{
	struct http_conn	*c = p->data;

	if (c->dead)
		return -1;
	if (c->req == NULL && http_request_new(c) == NULL) {
		c->parse_status = 503;
		return -1;
	}
	c->phase = PH_HEAD;
	/* A fresh connection's clock started at accept: keep it. */
	if (c->timer_kind != TM_HEADER)
		http_timer_set(c, TM_HEADER, c->srv->limits.header_timeout);
	return 0;
}

static int
p_url(http_parser *p, const char *at, size_t len)
{
	struct http_conn	*c = p->data;

	c->uri_len += len;
	if (c->uri_len > c->srv->limits.max_uri) {
		c->parse_status = 414;
		return -1;
	}
	return evbuffer_add(c->url, at, len);
}

static char *
evbuffer_strdup(struct evbuffer *buf)
{
	size_t	 len = evbuffer_get_length(buf);
	char	*s;

	if ((s = malloc(len + 1)) == NULL)
		return NULL;
	evbuffer_remove(buf, s, len);
	s[len] = '\0';
	return s;
}

static int
header_push(struct http_conn *c)
{
	struct http_header	*h;
	size_t			 len;

	c->header_in_value = 0;
	if ((h = calloc(1, sizeof(*h))) == NULL ||
	    (h->name = evbuffer_strdup(c->hname)) == NULL ||
	    (h->value = evbuffer_strdup(c->hvalue)) == NULL) {
		if (h != NULL) {
			free(h->name);
			free(h);
		}
		c->parse_status = 503;
		return -1;
	}
	/* The parser strips leading whitespace, not trailing. */
	len = strlen(h->value);
	while (len > 0 && (h->value[len - 1] == ' ' ||
	    h->value[len - 1] == '\t'))
		h->value[--len] = '\0';
	TAILQ_INSERT_TAIL(&c->req->headers, h, entry);
	return 0;
}

static int
p_header_field(http_parser *p, const char *at, size_t len)
{
	struct http_conn	*c = p->data;

	if (c->phase != PH_HEAD)	/* chunked trailers: ignored */
		return 0;
	if (c->header_in_value && header_push(c) == -1)
		return -1;
	if (evbuffer_get_length(c->hname) == 0 &&
	    ++c->nheaders > c->srv->limits.max_headers) {
		c->parse_status = 431;
		return -1;
	}
	return evbuffer_add(c->hname, at, len);
}

static int
p_header_value(http_parser *p, const char *at, size_t len)
{
	struct http_conn	*c = p->data;

	if (c->phase != PH_HEAD)
		return 0;
	c->header_in_value = 1;
	return evbuffer_add(c->hvalue, at, len);
}

static enum http_method
method_of(unsigned int m)
{
	switch (m) {
	case HTTP_GET:		return HTTP_M_GET;
	case HTTP_HEAD:		return HTTP_M_HEAD;
	case HTTP_POST:		return HTTP_M_POST;
	case HTTP_PUT:		return HTTP_M_PUT;
	case HTTP_DELETE:	return HTTP_M_DELETE;
	case HTTP_OPTIONS:	return HTTP_M_OPTIONS;
	default:		return HTTP_M_OTHER;
	}
}

static int
p_headers_complete(http_parser *p)
{
	struct http_conn	*c = p->data;
	struct http_request	*req = c->req;
	const char		*expect;
	char			*q;

	if (c->header_in_value && header_push(c) == -1)
		return -1;
	/* A request line without a version is HTTP/0.9: not served. */
	if (p->http_major == 0) {
		c->parse_status = 400;
		return -1;
	}
	if ((req->target = evbuffer_strdup(c->url)) == NULL) {
		c->parse_status = 503;
		return -1;
	}
	if ((q = strchr(req->target, '?')) != NULL)
		req->query = q + 1;
	req->path = strndup(req->target, q ? (size_t)(q - req->target) :
	    strlen(req->target));
	if (req->path == NULL) {
		c->parse_status = 503;
		return -1;
	}
	req->method = method_of(p->method);
	strlcpy(req->method_str, http_method_str(p->method),
	    sizeof(req->method_str));
	req->keepalive = http_should_keep_alive(p);
	req->chunked = (p->flags & F_CHUNKED) != 0;
	if (p->flags & F_CONTENTLENGTH) {
		/* The parser counts in 64 unsigned bits; we do not. */
		if (p->content_length > INT64_MAX) {
			c->parse_status = 400;
			c->parse_why = "The Content-Length is too large.";
			return -1;
		}
		req->content_length = (int64_t)p->content_length;
	}
	/* Request smuggling: never guess which framing the peer meant. */
	if (http_header_get(req, "content-length") != NULL &&
	    http_header_get(req, "transfer-encoding") != NULL) {
		c->parse_status = 400;
		return -1;
	}
	expect = http_header_get(req, "expect");
	req->expect_continue = expect != NULL &&
	    strcasecmp(expect, "100-continue") == 0 &&
	    (p->http_major > 1 || (p->http_major == 1 && p->http_minor >= 1));
	/* From the framing the parser saw, never from a number's sign. */
	c->has_body = req->chunked ||
	    ((p->flags & F_CONTENTLENGTH) && p->content_length > 0);
	c->phase = PH_DISPATCH;
	http_parser_pause(p, 1);
	return 0;
}

static int
p_body(http_parser *p, const char *at, size_t len)
{
	struct http_conn	*c = p->data;
	struct http_server	*srv = c->srv;

	if (c->dead || c->req == NULL)
		return -1;
	c->req->bytes_in += len;
	http_body_window_progress(c, len);
	if (c->body_accepted && srv->handler.on_body != NULL)
		srv->handler.on_body(c->req, at, len, srv->handler.arg);
	return c->dead ? -1 : 0;
}

static int
p_message_complete(http_parser *p)
{
	struct http_conn	*c = p->data;

	if (c->dead)
		return -1;
	c->msg_complete = 1;
	c->end_pending = c->body_accepted;
	c->phase = PH_DONE;
	if (c->timer_kind == TM_BODY)
		http_timer_clear(c);
	http_parser_pause(p, 1);
	return 0;
}

/* Connection input. */

static void
dispatch(struct http_conn *c)
{
	struct http_server	*srv = c->srv;

	http_timer_clear(c);
	c->dispatched = 1;
	if (srv->handler.on_request != NULL)
		srv->handler.on_request(c->req, srv->handler.arg);
	if (c->dead || c->phase != PH_DISPATCH)
		return;
	/* Nothing to refuse: read the end of the message. */
	if (!c->has_body)
		c->phase = PH_BODY;
}

/* Answered by http_layer_error, above this file: see http_conn_calls. */
static void
parse_failed(struct http_conn *c)
{
	enum http_errno	 err = HTTP_PARSER_ERRNO(&c->parser);
	char		 msg[160];
	int		 status = c->parse_status;

	if (status == 0)
		status = err == HPE_HEADER_OVERFLOW ? 431 : 400;
	if (c->parse_why != NULL) {
		c->calls->layer_error(c, status, c->parse_why, 1);
		return;
	}
	switch (status) {
	case 414:
		c->calls->layer_error(c, 414, "The request URI is too long.",
		    1);
		break;
	case 431:
		c->calls->layer_error(c, 431, "The request header fields "
		    "are too large or too many.", 1);
		break;
	case 503:
		c->calls->layer_error(c, 503, "Out of memory.", 0);
		break;
	default:
		snprintf(msg, sizeof(msg), "Malformed HTTP request: %s.",
		    http_errno_description(err));
		c->calls->layer_error(c, 400, msg, 1);
		break;
	}
}

static void	conn_parse_input(struct http_conn *);

void
http_conn_process(struct http_conn *c)
{
	conn_parse_input(c);
	if (!c->dead)
		http_conn_read_update(c);
}

static void
linger_drain(struct http_conn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->bev);
	size_t		 n = evbuffer_get_length(in);

	c->linger_bytes += n;
	evbuffer_drain(in, n);
	if (c->linger_bytes > LINGER_MAX_BYTES)
		http_conn_close(c);
}

/* Feeds buffered input to the parser for as long as the phase allows. */
static void
conn_parse_input(struct http_conn *c)
{
	const struct http_limits *lim = &c->srv->limits;
	struct evbuffer		*in;
	struct evbuffer_iovec	 v;
	enum http_errno		 err;
	size_t			 len, n;
	int			 in_head;

	while (!c->dead) {
		if (c->phase == PH_LINGER) {
			linger_drain(c);
			return;
		}
		if (c->phase == PH_DISPATCH && c->req != NULL &&
		    !c->dispatched) {
			dispatch(c);
			continue;
		}
		if (c->phase == PH_DONE && c->end_pending) {
			c->end_pending = 0;
			if (c->srv->handler.on_body_end != NULL)
				c->srv->handler.on_body_end(c->req,
				    c->srv->handler.arg);
			continue;
		}
		if (c->phase != PH_IDLE && c->phase != PH_HEAD &&
		    c->phase != PH_BODY)
			return;
		if (c->body_paused)
			return;
		in = bufferevent_get_input(c->bev);
		if (evbuffer_peek(in, -1, NULL, &v, 1) < 1 || v.iov_len == 0)
			return;
		len = v.iov_len;
		in_head = c->phase == PH_IDLE || c->phase == PH_HEAD;
		if (in_head && len > lim->max_header_bytes + 1 - c->head_bytes)
			len = lim->max_header_bytes + 1 - c->head_bytes;
		if (HTTP_PARSER_ERRNO(&c->parser) == HPE_PAUSED)
			http_parser_pause(&c->parser, 0);
		n = http_parser_execute(&c->parser, &parser_settings,
		    v.iov_base, len);
		if (c->dead)
			return;
		evbuffer_drain(in, n);
		if (in_head)
			c->head_bytes += n;
		err = HTTP_PARSER_ERRNO(&c->parser);
		if (err != HPE_OK && err != HPE_PAUSED) {
			parse_failed(c);
			return;
		}
		if ((c->phase == PH_IDLE || c->phase == PH_HEAD) &&
		    c->head_bytes > lim->max_header_bytes) {
			c->parse_status = 431;
			parse_failed(c);
			return;
		}
	}
}

/* Body flow control. */

void
http_body_accept(struct http_request *req)
{
	struct http_conn	*c = req->conn;

	if (c->dead || c->phase != PH_DISPATCH || c->body_accepted)
		return;
	c->body_accepted = 1;
	c->phase = PH_BODY;
	if (c->has_body) {
		if (req->expect_continue && !req->replied)
			evbuffer_add_printf(bufferevent_get_output(c->bev),
			    "HTTP/1.1 100 Continue\r\n\r\n");
		if (!c->body_paused)
			http_body_window_start(c);
	}
	http_conn_kick(c);
}

void
http_body_pause(struct http_request *req)
{
	struct http_conn	*c = req->conn;
	enum http_errno		 err = HTTP_PARSER_ERRNO(&c->parser);

	if (c->dead || c->body_paused)
		return;
	c->body_paused = 1;
	/* From inside on_body this stops the parser after the piece. */
	if (err == HPE_OK || err == HPE_PAUSED)
		http_parser_pause(&c->parser, 1);
	http_conn_read_set(c, 0);
	http_body_window_hold(c);
}

void
http_body_resume(struct http_request *req)
{
	struct http_conn	*c = req->conn;

	if (c->dead || !c->body_paused)
		return;
	c->body_paused = 0;
	http_conn_read_set(c, 1);
	if (c->phase == PH_BODY && c->has_body && c->body_accepted &&
	    !c->msg_complete)
		http_body_window_resume(c);
	http_conn_kick(c);
}

/* Request inspection. */

const char *
http_header_get(const struct http_request *req, const char *name)
{
	const struct http_header	*h;

	TAILQ_FOREACH(h, &req->headers, entry)
		if (strcasecmp(h->name, name) == 0)
			return h->value;
	return NULL;
}

