/*
 * http.c: a streaming HTTP/1.1 server on libevent bufferevents and
 * Debian's libhttp-parser.  See http.h for the life of a request.
 *
 * A connection serves one request at a time.  The parser is paused at
 * the end of the headers (the handler decides whether the body is read
 * at all), when the handler applies back-pressure, and at the end of
 * every message, so that pipelined requests wait in the input buffer,
 * bounded by the read high-water mark, until the response before them
 * is complete.
 *
 * Freeing: a connection may be closed from inside any callback, even
 * from inside http_parser_execute().  conn_close() tears everything
 * down at once (the handler's on_free, every descriptor), but the
 * memory holding the parser is released only when the outermost entry
 * point returns (the inuse count).
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/util.h>

/* Both http.h and http_parser.h name an enum http_method. */
#define http_method http_parser_method
#include <http_parser.h>
#undef http_method

#include "http.h"
#include "log.h"

#define LINGER_MAX_BYTES	(256ULL << 20)	/* discarded, then give up */
#define STREAM_HIGH_WATER	(1 << 20)	/* unsent, for stream_fd */
#define STREAM_READ		(128 * 1024)	/* one read from a stream */
#define LISTEN_RETRY_SEC	1		/* after accept fails (EMFILE) */
#define LOG_PATH_MAX		256

enum phase {
	PH_IDLE,	/* between requests, nothing of the next one read */
	PH_HEAD,	/* reading the request line and headers */
	PH_DISPATCH,	/* headers read; the handler decides about the body */
	PH_BODY,	/* parsing the body, or the end of a bodiless message */
	PH_DONE,	/* message read; waiting for the response to finish */
	PH_STOP,	/* input no longer parsed (error, body refused) */
	PH_LINGER,	/* response sent; discarding input before closing */
};

enum timer_kind {
	TM_NONE,
	TM_IDLE,
	TM_HEADER,
	TM_BODY,
	TM_LINGER,
};

enum resp_state {
	RS_NONE,	/* no status line yet */
	RS_OPEN,	/* status line queued, body may follow */
	RS_FLUSHING,	/* complete; waiting for the socket to take it */
};

struct listener {
	TAILQ_ENTRY(listener)	 entry;
	struct http_server	*srv;
	struct evconnlistener	*evl;
	struct event		*retry;
};

struct http_conn {
	TAILQ_ENTRY(http_conn)	 entry;
	struct http_server	*srv;
	struct bufferevent	*bev;
	struct event		*rd;		/* our reads: see conn_rd_cb */
	int			 rd_want;
	struct event		*timer;
	struct event		*kick;
	enum timer_kind		 timer_kind;
	char			 peer[64];
	int			 inuse;
	int			 dead;

	http_parser		 parser;
	enum phase		 phase;
	struct http_request	*req;
	int			 dispatched;	/* on_free is owed */
	int			 has_body;
	int			 body_accepted;
	int			 body_paused;
	int			 msg_complete;
	int			 end_pending;	/* on_body_end is owed */
	int			 parse_status;	/* chosen by a parser callback */
	size_t			 head_bytes;
	size_t			 uri_len;
	int			 nheaders;
	int			 header_in_value;
	struct evbuffer		*url;
	struct evbuffer		*hname;
	struct evbuffer		*hvalue;

	enum resp_state		 resp;
	int			 resp_chunked;
	int			 resp_nobody;
	int64_t			 resp_remaining; /* -1 when not declared */
	int			 want_close;
	int			 linger;
	uint64_t		 linger_bytes;
	struct evbuffer		*resp_headers;
	struct event		*stream;	/* http_reply_stream_fd */
	int			 stream_fd;
	char			*stream_buf;
	int			 stream_blocked;
	void			(*ondrain)(struct http_request *, void *);
	void			*ondrain_arg;
};

struct http_server {
	struct event_base	*base;
	struct http_limits	 limits;
	struct http_handler	 handler;
	TAILQ_HEAD(, listener)	 listeners;
	TAILQ_HEAD(, http_conn)	 conns;
	int			 nconns;
	int			 closing;
};

static void	conn_process(struct http_conn *);
static void	stream_stop(struct http_conn *);
static void	conn_read_set(struct http_conn *, int);
static void	conn_read_update(struct http_conn *);
static void	conn_close(struct http_conn *);
static void	layer_error(struct http_conn *, int, const char *, int);

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

void
http_limits_default(struct http_limits *l)
{
	l->max_header_bytes = 16 * 1024;
	l->max_headers = 100;
	l->max_uri = 8 * 1024;
	l->header_timeout = 10;
	l->idle_timeout = 60;
	l->body_timeout = 60;
	l->linger_timeout = 5;
	l->max_conns = 1024;
	l->read_watermark = 1024 * 1024;
	l->write_watermark = 256 * 1024;
}

const char *
http_status_text(int status)
{
	switch (status) {
	case 100: return "Continue";
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 204: return "No Content";
	case 206: return "Partial Content";
	case 301: return "Moved Permanently";
	case 302: return "Found";
	case 304: return "Not Modified";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 409: return "Conflict";
	case 411: return "Length Required";
	case 413: return "Payload Too Large";
	case 414: return "URI Too Long";
	case 415: return "Unsupported Media Type";
	case 416: return "Range Not Satisfiable";
	case 417: return "Expectation Failed";
	case 422: return "Unprocessable Entity";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	default: return "Unknown";
	}
}

/* Timers: one per connection, its meaning given by the phase. */

static void
timer_clear(struct http_conn *c)
{
	evtimer_del(c->timer);
	c->timer_kind = TM_NONE;
}

static void
timer_set(struct http_conn *c, enum timer_kind kind, int seconds)
{
	struct timeval	 tv = { seconds, 0 };

	if (seconds <= 0) {
		timer_clear(c);
		return;
	}
	c->timer_kind = kind;
	evtimer_add(c->timer, &tv);
}

static void
conn_kick(struct http_conn *c)
{
	if (!c->dead)
		event_active(c->kick, EV_TIMEOUT, 1);
}

/* Requests. */

static void
request_id(char id[33])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char	 rnd[16];
	int		 i;

	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		arc4random_buf(rnd, sizeof(rnd));
	for (i = 0; i < 16; i++) {
		id[2 * i] = hex[rnd[i] >> 4];
		id[2 * i + 1] = hex[rnd[i] & 0xf];
	}
	id[32] = '\0';
}

static struct http_request *
request_new(struct http_conn *c)
{
	struct http_request	*req;

	if ((req = calloc(1, sizeof(*req))) == NULL)
		return NULL;
	req->conn = c;
	TAILQ_INIT(&req->headers);
	req->content_length = -1;
	strlcpy(req->method_str, "-", sizeof(req->method_str));
	request_id(req->id);
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
	log_info("%s %s %d %llu %llu %lld user=%s id=%s", req->method_str,
	    path, req->status, (unsigned long long)req->bytes_in,
	    (unsigned long long)req->bytes_out, ms,
	    req->log_user[0] ? req->log_user : "-", req->id);
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
static void
request_end(struct http_conn *c)
{
	struct http_request	*req = c->req;
	struct http_server	*srv = c->srv;

	if (req == NULL)
		return;
	c->req = NULL;
	access_log(req);
	if (c->dispatched && srv->handler.on_free != NULL)
		srv->handler.on_free(req, srv->handler.arg);
	c->dispatched = 0;
	stream_stop(c);
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
	if (c->req == NULL && request_new(c) == NULL) {
		c->parse_status = 503;
		return -1;
	}
	c->phase = PH_HEAD;
	/* A fresh connection's clock started at accept: keep it. */
	if (c->timer_kind != TM_HEADER)
		timer_set(c, TM_HEADER, c->srv->limits.header_timeout);
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
	if (p->flags & F_CONTENTLENGTH)
		req->content_length = (int64_t)p->content_length;
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
	c->has_body = req->chunked || req->content_length > 0;
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
		timer_clear(c);
	http_parser_pause(p, 1);
	return 0;
}

/* Connection input. */

static void
dispatch(struct http_conn *c)
{
	struct http_server	*srv = c->srv;

	timer_clear(c);
	c->dispatched = 1;
	if (srv->handler.on_request != NULL)
		srv->handler.on_request(c->req, srv->handler.arg);
	if (c->dead || c->phase != PH_DISPATCH)
		return;
	/* Nothing to refuse: read the end of the message. */
	if (!c->has_body)
		c->phase = PH_BODY;
}

static void
parse_failed(struct http_conn *c)
{
	enum http_errno	 err = HTTP_PARSER_ERRNO(&c->parser);
	char		 msg[160];
	int		 status = c->parse_status;

	if (status == 0)
		status = err == HPE_HEADER_OVERFLOW ? 431 : 400;
	switch (status) {
	case 414:
		layer_error(c, 414, "The request URI is too long.", 1);
		break;
	case 431:
		layer_error(c, 431, "The request header fields are too large "
		    "or too many.", 1);
		break;
	case 503:
		layer_error(c, 503, "Out of memory.", 0);
		break;
	default:
		snprintf(msg, sizeof(msg), "Malformed HTTP request: %s.",
		    http_errno_description(err));
		layer_error(c, 400, msg, 1);
		break;
	}
}

static void	conn_parse_input(struct http_conn *);

static void
conn_process(struct http_conn *c)
{
	conn_parse_input(c);
	if (!c->dead)
		conn_read_update(c);
}

/*
 * The socket is read here rather than by the bufferevent: libevent
 * 2.1's evbuffer_read() takes at most 4096 bytes a call, which on a
 * fast link spends more time in system calls than in the work.  The
 * bufferevent still holds the input buffer and does all the writing.
 */
#define READ_CHUNK	(256 * 1024)

static void
conn_read_update(struct http_conn *c)
{
	size_t	 len = evbuffer_get_length(bufferevent_get_input(c->bev));

	if (c->rd_want && len < c->srv->limits.read_watermark)
		event_add(c->rd, NULL);
	else
		event_del(c->rd);
}

static void
conn_read_set(struct http_conn *c, int want)
{
	c->rd_want = want;
	if (!c->dead)
		conn_read_update(c);
}

static void	conn_read_cb(struct bufferevent *, void *);
static void	conn_event_cb(struct bufferevent *, short, void *);

static void
conn_rd_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http_conn	*c = arg;
	struct evbuffer		*in = bufferevent_get_input(c->bev);
	struct evbuffer_iovec	 v[2];
	struct iovec		 iov[2];
	size_t			 room, left;
	ssize_t			 n;
	int			 i, nv;

	room = c->srv->limits.read_watermark - evbuffer_get_length(in);
	if (room > READ_CHUNK)
		room = READ_CHUNK;
	if (room < 4096)
		room = 4096;
	if ((nv = evbuffer_reserve_space(in, room, v, 2)) < 1) {
		conn_event_cb(c->bev, BEV_EVENT_READING | BEV_EVENT_ERROR, c);
		return;
	}
	for (i = 0; i < nv; i++) {
		iov[i].iov_base = v[i].iov_base;
		iov[i].iov_len = v[i].iov_len;
	}
	n = readv(fd, iov, nv);
	if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
		evbuffer_commit_space(in, v, 0);
		return;
	}
	if (n <= 0) {
		evbuffer_commit_space(in, v, 0);
		conn_event_cb(c->bev, BEV_EVENT_READING |
		    (n == 0 ? BEV_EVENT_EOF : BEV_EVENT_ERROR), c);
		return;
	}
	for (i = 0, left = n; i < nv; i++) {
		if (v[i].iov_len > left)
			v[i].iov_len = left;
		left -= v[i].iov_len;
	}
	evbuffer_commit_space(in, v, nv);
	conn_read_cb(c->bev, c);
}

static void
linger_drain(struct http_conn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->bev);
	size_t		 n = evbuffer_get_length(in);

	c->linger_bytes += n;
	evbuffer_drain(in, n);
	if (c->linger_bytes > LINGER_MAX_BYTES)
		conn_close(c);
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
		if (c->phase == PH_BODY && c->has_body && n > 0 &&
		    !c->body_paused)
			timer_set(c, TM_BODY, lim->body_timeout);
	}
}

/* Connection output. */

static void
reply_head(struct http_conn *c, struct http_request *req, int status,
    const char *ctype, int64_t length)
{
	struct evbuffer	*out = bufferevent_get_output(c->bev);
	char		 date[64];
	struct tm	 tm;
	time_t		 now = time(NULL);
	int		 bodyless_status;

	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\nDate: %s\r\n"
	    "Server: depotd\r\nrequest-id: %s\r\nx-request-id: %s\r\n",
	    status, http_status_text(status), date, req->id, req->id);
	if (ctype != NULL)
		evbuffer_add_printf(out, "Content-Type: %s\r\n", ctype);
	bodyless_status = status < 200 || status == 204 || status == 304;
	if (!bodyless_status) {
		if (length >= 0)
			evbuffer_add_printf(out, "Content-Length: %lld\r\n",
			    (long long)length);
		else if (c->resp_chunked)
			evbuffer_add_printf(out,
			    "Transfer-Encoding: chunked\r\n");
	}
	if (c->want_close)
		evbuffer_add_printf(out, "Connection: close\r\n");
	else if (c->parser.http_major == 1 && c->parser.http_minor == 0)
		evbuffer_add_printf(out, "Connection: keep-alive\r\n");
	evbuffer_add_buffer(out, c->resp_headers);
	evbuffer_add(out, "\r\n", 2);
}

void
http_reply_header(struct http_request *req, const char *name,
    const char *value)
{
	struct http_conn	*c = req->conn;

	if (req->replied) {
		log_warnx("%s: %s after the status line", __func__, name);
		return;
	}
	/* Header injection: a CR or LF would start a header of its own. */
	if (name[0] == '\0' || strpbrk(name, "\r\n: \t") != NULL ||
	    strpbrk(value, "\r\n") != NULL) {
		log_warnx("%s: refusing malformed header %s", __func__, name);
		return;
	}
	evbuffer_add_printf(c->resp_headers, "%s: %s\r\n", name, value);
}

void
http_reply_start(struct http_request *req, int status, const char *ctype,
    int64_t length)
{
	struct http_conn	*c = req->conn;

	if (c->dead || req->replied) {
		log_warnx("%s: response already started", __func__);
		return;
	}
	req->replied = 1;
	req->status = status;
	if (!req->keepalive || c->srv->closing)
		c->want_close = 1;
	if (c->phase == PH_DISPATCH && c->has_body && !c->body_accepted) {
		/* The body stays unread: the connection cannot be reused. */
		c->want_close = 1;
		c->linger = !req->expect_continue;
		c->phase = PH_STOP;
	} else if (c->has_body && !c->msg_complete) {
		c->want_close = 1;
		c->linger = 1;
	}
	c->resp_nobody = req->method == HTTP_M_HEAD || status < 200 ||
	    status == 204 || status == 304;
	c->resp_chunked = 0;
	c->resp_remaining = length;
	if (length < 0 && !c->resp_nobody) {
		if (c->parser.http_major == 1 && c->parser.http_minor == 0)
			c->want_close = 1;	/* the close ends the body */
		else
			c->resp_chunked = 1;
	}
	reply_head(c, req, status, ctype, length);
	c->resp = RS_OPEN;
}

int
http_reply_data(struct http_request *req, const void *data, size_t len)
{
	struct http_conn	*c = req->conn;
	struct evbuffer		*out;

	if (c->dead || c->resp != RS_OPEN)
		return -1;
	if (len == 0)
		return 0;
	if (c->resp_remaining >= 0) {
		if ((uint64_t)len > (uint64_t)c->resp_remaining) {
			log_warnx("%s: more data than declared", __func__);
			return -1;
		}
		c->resp_remaining -= len;
	}
	req->bytes_out += len;
	if (c->resp_nobody)
		return 0;
	out = bufferevent_get_output(c->bev);
	if (c->resp_chunked && evbuffer_add_printf(out, "%zx\r\n", len) < 0)
		return -1;
	if (evbuffer_add(out, data, len) == -1)
		return -1;
	if (c->resp_chunked && evbuffer_add(out, "\r\n", 2) == -1)
		return -1;
	return 0;
}

void
http_reply_end(struct http_request *req)
{
	struct http_conn	*c = req->conn;
	struct evbuffer		*out;

	if (c->dead || c->resp != RS_OPEN)
		return;
	out = bufferevent_get_output(c->bev);
	if (c->resp_remaining > 0 && !c->resp_nobody) {
		/* The framing promised more: only a cut tells the client. */
		log_warnx("%s: response %s short by %lld bytes", __func__,
		    req->id, (long long)c->resp_remaining);
		conn_close(c);
		return;
	}
	if (c->resp_chunked)
		evbuffer_add(out, "0\r\n\r\n", 5);
	c->resp = RS_FLUSHING;
	if (evbuffer_get_length(out) == 0)
		conn_kick(c);
}

static void
conn_release(struct http_conn *c)
{
	if (--c->inuse > 0 || !c->dead)
		return;
	event_free(c->timer);
	event_free(c->kick);
	evbuffer_free(c->url);
	evbuffer_free(c->hname);
	evbuffer_free(c->hvalue);
	evbuffer_free(c->resp_headers);
	free(c);
}

void
http_reply(struct http_request *req, int status, const char *ctype,
    const void *body, size_t len)
{
	struct http_conn	*c = req->conn;

	if (c->dead || req->replied) {
		log_warnx("%s: response already started", __func__);
		return;
	}
	c->inuse++;
	http_reply_start(req, status, ctype, (int64_t)len);
	if (http_reply_data(req, body, len) == -1)
		conn_close(c);
	else
		http_reply_end(req);
	conn_release(c);
}

void
http_reply_file(struct http_request *req, int status, const char *ctype,
    int fd, off_t offset, off_t length)
{
	struct http_conn		*c = req->conn;
	struct evbuffer_file_segment	*seg;
	int				 rv;

	if (c->dead || req->replied || length < 0) {
		log_warnx("%s: cannot start the response", __func__);
		close(fd);
		return;
	}
	c->inuse++;
	http_reply_start(req, status, ctype, length);
	if (c->resp_nobody || length == 0) {
		close(fd);
		req->bytes_out += length;
		c->resp_remaining = 0;
		http_reply_end(req);
		conn_release(c);
		return;
	}
	if ((seg = evbuffer_file_segment_new(fd, offset, length,
	    EVBUF_FS_CLOSE_ON_FREE)) == NULL) {
		log_warn("%s: file segment", __func__);
		close(fd);
		conn_close(c);
		conn_release(c);
		return;
	}
	/* Our reference goes; the buffer's keeps the fd until sent. */
	rv = evbuffer_add_file_segment(bufferevent_get_output(c->bev), seg,
	    0, length);
	evbuffer_file_segment_free(seg);
	if (rv == -1) {
		conn_close(c);
	} else {
		req->bytes_out += length;
		c->resp_remaining = 0;
		http_reply_end(req);
	}
	conn_release(c);
}

static void
stream_stop(struct http_conn *c)
{
	if (c->stream != NULL) {
		event_free(c->stream);
		c->stream = NULL;
		close(c->stream_fd);
		c->stream_fd = -1;
	}
	free(c->stream_buf);
	c->stream_buf = NULL;
	c->stream_blocked = 0;
}

/* A plain body needs no framing: read straight into the output. */
static ssize_t
stream_read_direct(struct http_conn *c, int fd, size_t want)
{
	struct evbuffer		*out = bufferevent_get_output(c->bev);
	struct evbuffer_iovec	 v;
	ssize_t			 n;
	int			 saved;

	if (evbuffer_reserve_space(out, want, &v, 1) != 1) {
		errno = ENOMEM;
		return -1;
	}
	n = read(fd, v.iov_base, want);
	saved = errno;
	v.iov_len = n > 0 ? n : 0;
	evbuffer_commit_space(out, &v, n > 0 ? 1 : 0);
	errno = saved;
	return n;
}

/* A chunked body: each read becomes one chunk. */
static ssize_t
stream_read_chunk(struct http_conn *c, int fd, size_t want)
{
	struct evbuffer	*out = bufferevent_get_output(c->bev);
	ssize_t		 n;

	if ((n = read(fd, c->stream_buf, want)) > 0) {
		evbuffer_add_printf(out, "%zx\r\n", (size_t)n);
		evbuffer_add(out, c->stream_buf, n);
		evbuffer_add(out, "\r\n", 2);
	}
	return n;
}

/* After n bytes came from the stream into the output. */
static void
stream_read_end(struct http_conn *c, ssize_t n)
{
	struct evbuffer	*out = bufferevent_get_output(c->bev);

	c->req->bytes_out += n;
	if (c->resp_remaining >= 0)
		c->resp_remaining -= n;
	if (n == 0 || c->resp_remaining == 0) {
		/* Past the declared length is not ours to send; short is
		 * cut by reply_end. */
		stream_stop(c);
		http_reply_end(c->req);
	} else if (evbuffer_get_length(out) >= STREAM_HIGH_WATER) {
		event_del(c->stream);
		c->stream_blocked = 1;
	}
}

/*
 * Copies from the stream into the connection, in reads of up to
 * STREAM_READ bytes (a bufferevent would read 4096 at a time), and
 * stops reading while the connection holds STREAM_HIGH_WATER unsent.
 */
static void
stream_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http_conn	*c = arg;
	size_t			 want = STREAM_READ;
	ssize_t			 n;

	c->inuse++;
	if (c->resp_remaining >= 0 && (uint64_t)want >
	    (uint64_t)c->resp_remaining)
		want = c->resp_remaining;
	if (c->resp_chunked)
		n = stream_read_chunk(c, fd, want);
	else
		n = stream_read_direct(c, fd, want);
	if (n != -1)
		stream_read_end(c, n);
	else if (errno != EAGAIN && errno != EINTR) {
		log_warn("%s: response stream %s", __func__,
		    c->req ? c->req->id : "-");
		conn_close(c);
	}
	conn_release(c);
}

void
http_reply_stream_fd(struct http_request *req, int status,
    const char *ctype, int fd, int64_t length)
{
	struct http_conn	*c = req->conn;

	if (c->dead || req->replied) {
		log_warnx("%s: response already started", __func__);
		close(fd);
		return;
	}
	c->inuse++;
	http_reply_start(req, status, ctype, length);
	if (c->resp_nobody || length == 0) {
		close(fd);
		c->resp_remaining = 0;
		http_reply_end(req);
		conn_release(c);
		return;
	}
	if (evutil_make_socket_nonblocking(fd) == -1 ||
	    (c->resp_chunked &&		/* plain bodies need no copy */
	    (c->stream_buf = malloc(STREAM_READ)) == NULL) ||
	    (c->stream = event_new(c->srv->base, fd, EV_READ | EV_PERSIST,
	    stream_read_cb, c)) == NULL) {
		log_warn("%s", __func__);
		close(fd);
		free(c->stream_buf);
		c->stream_buf = NULL;
		conn_close(c);
		conn_release(c);
		return;
	}
	c->stream_fd = fd;
	event_add(c->stream, NULL);
	conn_release(c);
}

size_t
http_reply_pending(const struct http_request *req)
{
	if (req->conn->dead)
		return 0;
	return evbuffer_get_length(bufferevent_get_output(req->conn->bev));
}

void
http_reply_ondrain(struct http_request *req,
    void (*cb)(struct http_request *, void *), void *arg)
{
	struct http_conn	*c = req->conn;

	c->ondrain = cb;
	c->ondrain_arg = arg;
	if (cb != NULL && http_reply_pending(req) <=
	    c->srv->limits.write_watermark)
		conn_kick(c);
}

void
http_reply_close(struct http_request *req)
{
	req->conn->want_close = 1;
}

void
http_abort(struct http_request *req)
{
	conn_close(req->conn);
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
			timer_set(c, TM_BODY, c->srv->limits.body_timeout);
	}
	conn_kick(c);
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
	conn_read_set(c, 0);
	if (c->timer_kind == TM_BODY)
		timer_clear(c);
}

void
http_body_resume(struct http_request *req)
{
	struct http_conn	*c = req->conn;

	if (c->dead || !c->body_paused)
		return;
	c->body_paused = 0;
	conn_read_set(c, 1);
	if (c->phase == PH_BODY && c->has_body && c->body_accepted &&
	    !c->msg_complete)
		timer_set(c, TM_BODY, c->srv->limits.body_timeout);
	conn_kick(c);
}

/* Errors the layer answers itself, in the OpenAI envelope. */
static void
layer_error(struct http_conn *c, int status, const char *message,
    int linger)
{
	char	 body[512];
	int	 len;

	if (c->req == NULL && request_new(c) == NULL) {
		conn_close(c);
		return;
	}
	c->phase = PH_STOP;
	c->want_close = 1;
	timer_clear(c);
	if (c->req->replied) {
		/* Too late for a status: end after the response. */
		return;
	}
	len = snprintf(body, sizeof(body), "{\"error\":{\"message\":\"%s\","
	    "\"type\":\"%s\",\"param\":null,\"code\":null}}", message,
	    status >= 500 ? "server_error" : "invalid_request_error");
	if (len < 0 || (size_t)len >= sizeof(body))
		len = 0;
	http_reply(c->req, status, "application/json", body, len);
	c->linger = linger;
}

/* Connection life. */

static void
linger_start(struct http_conn *c)
{
	c->phase = PH_LINGER;
	shutdown(bufferevent_getfd(c->bev), SHUT_WR);
	conn_read_set(c, 1);
	timer_set(c, TM_LINGER, c->srv->limits.linger_timeout);
	if (c->timer_kind != TM_LINGER) {
		conn_close(c);
		return;
	}
	conn_kick(c);
}

static void
conn_reset(struct http_conn *c)
{
	http_parser_init(&c->parser, HTTP_REQUEST);
	c->parser.data = c;
	c->phase = PH_IDLE;
	c->has_body = c->body_accepted = c->body_paused = 0;
	c->msg_complete = c->end_pending = c->parse_status = 0;
	c->head_bytes = c->uri_len = 0;
	c->nheaders = c->header_in_value = 0;
	evbuffer_drain(c->url, evbuffer_get_length(c->url));
	evbuffer_drain(c->hname, evbuffer_get_length(c->hname));
	evbuffer_drain(c->hvalue, evbuffer_get_length(c->hvalue));
	evbuffer_drain(c->resp_headers, evbuffer_get_length(c->resp_headers));
	c->resp = RS_NONE;
	c->resp_chunked = c->resp_nobody = 0;
	c->resp_remaining = -1;
	c->ondrain = NULL;
	c->ondrain_arg = NULL;
}

/* The response left: finish the request, then reuse or close. */
static void
response_done(struct http_conn *c)
{
	c->resp = RS_NONE;
	request_end(c);
	if (c->dead)
		return;
	if (c->srv->closing)
		c->want_close = 1;
	if (c->want_close || !c->msg_complete) {
		if (c->linger)
			linger_start(c);
		else
			conn_close(c);
		return;
	}
	conn_reset(c);
	conn_read_set(c, 1);
	timer_set(c, TM_IDLE, c->srv->limits.idle_timeout);
	conn_kick(c);
}

static void
conn_close(struct http_conn *c)
{
	struct http_server	*srv = c->srv;

	if (c->dead)
		return;
	c->dead = 1;
	c->inuse++;
	request_end(c);
	stream_stop(c);
	/* Closes the socket and any file still queued for sending. */
	event_free(c->rd);
	c->rd = NULL;
	bufferevent_free(c->bev);
	c->bev = NULL;
	evtimer_del(c->timer);
	event_del(c->kick);
	TAILQ_REMOVE(&srv->conns, c, entry);
	srv->nconns--;
	conn_release(c);
}

static void
conn_read_cb(struct bufferevent *bev, void *arg)
{
	struct http_conn	*c = arg;

	c->inuse++;
	conn_process(c);
	conn_release(c);
}

static void
conn_write_cb(struct bufferevent *bev, void *arg)
{
	struct http_conn	*c = arg;
	size_t			 pending;
	void			(*cb)(struct http_request *, void *);

	c->inuse++;
	pending = evbuffer_get_length(bufferevent_get_output(bev));
	if (c->stream_blocked && pending <= c->srv->limits.write_watermark) {
		c->stream_blocked = 0;
		event_add(c->stream, NULL);
	}
	if (c->ondrain != NULL && c->req != NULL &&
	    pending <= c->srv->limits.write_watermark) {
		cb = c->ondrain;
		c->ondrain = NULL;
		cb(c->req, c->ondrain_arg);
	}
	if (!c->dead && c->resp == RS_FLUSHING &&
	    evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		response_done(c);
	conn_release(c);
}

static void
conn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct http_conn	*c = arg;

	c->inuse++;
	if (what & BEV_EVENT_TIMEOUT)
		log_info("%s: write timeout", c->peer);
	else if ((what & BEV_EVENT_ERROR) && c->phase != PH_LINGER)
		log_debug("%s: %s", c->peer,
		    evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
	/* EOF included: a client that leaves releases everything now. */
	conn_close(c);
	conn_release(c);
}

static void
conn_kick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http_conn	*c = arg;
	struct evbuffer		*out;
	void			(*cb)(struct http_request *, void *);

	c->inuse++;
	out = bufferevent_get_output(c->bev);
	if (c->resp == RS_FLUSHING && evbuffer_get_length(out) == 0)
		response_done(c);
	else if (c->ondrain != NULL && c->req != NULL &&
	    evbuffer_get_length(out) <= c->srv->limits.write_watermark) {
		cb = c->ondrain;
		c->ondrain = NULL;
		cb(c->req, c->ondrain_arg);
	}
	if (!c->dead)
		conn_process(c);
	conn_release(c);
}

static void
conn_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http_conn	*c = arg;
	enum timer_kind		 kind = c->timer_kind;

	c->inuse++;
	c->timer_kind = TM_NONE;
	if (kind == TM_HEADER && c->phase == PH_HEAD)
		layer_error(c, 408, "Timed out reading the request headers.",
		    0);
	else {
		if (kind == TM_BODY)
			log_info("%s: body timeout", c->peer);
		conn_close(c);
	}
	conn_release(c);
}

static int
conn_new(struct http_server *srv, int fd, const char *peer)
{
	const struct http_limits *lim = &srv->limits;
	struct http_conn	*c;
	struct timeval		 wtv = { lim->body_timeout, 0 };

	if ((c = calloc(1, sizeof(*c))) == NULL)
		goto fail;
	c->srv = srv;
	strlcpy(c->peer, peer, sizeof(c->peer));
	c->resp_remaining = -1;
	http_parser_init(&c->parser, HTTP_REQUEST);
	c->parser.data = c;
	c->url = evbuffer_new();
	c->hname = evbuffer_new();
	c->hvalue = evbuffer_new();
	c->resp_headers = evbuffer_new();
	c->timer = evtimer_new(srv->base, conn_timer_cb, c);
	c->kick = event_new(srv->base, -1, 0, conn_kick_cb, c);
	if (c->url == NULL || c->hname == NULL || c->hvalue == NULL ||
	    c->resp_headers == NULL || c->timer == NULL || c->kick == NULL ||
	    evutil_make_socket_nonblocking(fd) == -1 ||
	    (c->bev = bufferevent_socket_new(srv->base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL)
		goto fail;
	bufferevent_setwatermark(c->bev, EV_READ, 0, lim->read_watermark);
	bufferevent_setwatermark(c->bev, EV_WRITE, lim->write_watermark, 0);
	/* libevent would write 16 KiB per call: a syscall per 16 KiB. */
	bufferevent_set_max_single_write(c->bev, STREAM_HIGH_WATER);
	bufferevent_set_timeouts(c->bev, NULL, lim->body_timeout > 0 ?
	    &wtv : NULL);
	bufferevent_setcb(c->bev, conn_read_cb, conn_write_cb, conn_event_cb,
	    c);
	bufferevent_enable(c->bev, EV_WRITE);
	bufferevent_disable(c->bev, EV_READ);
	/* The bufferevent keeps the input's end frozen for its own reads. */
	evbuffer_unfreeze(bufferevent_get_input(c->bev), 0);
	if ((c->rd = event_new(srv->base, fd, EV_READ | EV_PERSIST,
	    conn_rd_cb, c)) == NULL)
		goto fail;
	conn_read_set(c, 1);
	TAILQ_INSERT_TAIL(&srv->conns, c, entry);
	srv->nconns++;
	timer_set(c, TM_HEADER, lim->header_timeout);
	return 0;
 fail:
	log_warn("%s", __func__);
	close(fd);
	if (c != NULL) {
		if (c->url)
			evbuffer_free(c->url);
		if (c->hname)
			evbuffer_free(c->hname);
		if (c->hvalue)
			evbuffer_free(c->hvalue);
		if (c->resp_headers)
			evbuffer_free(c->resp_headers);
		if (c->timer)
			event_free(c->timer);
		if (c->kick)
			event_free(c->kick);
		free(c);
	}
	return -1;
}

/* Over the connection limit: one canned answer, then goodbye. */
static void
refuse(int fd)
{
	static const char body[] = "{\"error\":{\"message\":\"The server is "
	    "busy; retry later.\",\"type\":\"server_error\",\"param\":null,"
	    "\"code\":null}}";
	char		 msg[600], id[33], date[64], sink[4096];
	struct tm	 tm;
	time_t		 now = time(NULL);
	int		 len, i;

	request_id(id);
	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	len = snprintf(msg, sizeof(msg), "HTTP/1.1 503 Service Unavailable\r\n"
	    "Date: %s\r\nServer: depotd\r\nrequest-id: %s\r\n"
	    "x-request-id: %s\r\n"
	    "Content-Type: application/json\r\nContent-Length: %zu\r\n"
	    "Retry-After: 1\r\nConnection: close\r\n\r\n%s", date, id, id,
	    sizeof(body) - 1, body);
	(void)send(fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	shutdown(fd, SHUT_WR);
	/* Unread input would turn the close into a reset. */
	for (i = 0; i < 16; i++)
		if (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) <= 0)
			break;
	close(fd);
	log_info("- - 503 0 %zu 0 user=- id=%s", sizeof(body) - 1, id);
}

static void
peer_name(const struct sockaddr *sa, char *buf, size_t len)
{
	char	 addr[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)sa;

		inet_ntop(AF_INET, &sin->sin_addr, addr, sizeof(addr));
		snprintf(buf, len, "%s:%u", addr, ntohs(sin->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)sa;

		inet_ntop(AF_INET6, &sin6->sin6_addr, addr, sizeof(addr));
		snprintf(buf, len, "[%s]:%u", addr, ntohs(sin6->sin6_port));
	} else
		strlcpy(buf, "unix", len);
}

static void
listener_accept_cb(struct evconnlistener *evl, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct listener		*l = arg;
	struct http_server	*srv = l->srv;
	char			 peer[64];

	if (srv->nconns >= srv->limits.max_conns) {
		refuse(fd);
		return;
	}
	peer_name(sa, peer, sizeof(peer));
	conn_new(srv, fd, peer);
}

static void
listener_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct listener	*l = arg;

	evconnlistener_enable(l->evl);
}

/* accept(2) failing (EMFILE) would otherwise spin: pause a second. */
static void
listener_error_cb(struct evconnlistener *evl, void *arg)
{
	struct listener	*l = arg;
	struct timeval	 tv = { LISTEN_RETRY_SEC, 0 };

	log_warn("accept");
	evconnlistener_disable(evl);
	evtimer_add(l->retry, &tv);
}

struct http_server *
http_server_new(struct event_base *base, const struct http_limits *limits,
    const struct http_handler *handler)
{
	struct http_server	*srv;

	if ((srv = calloc(1, sizeof(*srv))) == NULL)
		return NULL;
	srv->base = base;
	if (limits != NULL)
		srv->limits = *limits;
	else
		http_limits_default(&srv->limits);
	srv->handler = *handler;
	TAILQ_INIT(&srv->listeners);
	TAILQ_INIT(&srv->conns);
	return srv;
}

void
http_server_set_limits(struct http_server *srv, const struct http_limits *l)
{
	srv->limits = *l;
}

int
http_server_listen_fd(struct http_server *srv, int fd)
{
	struct listener	*l;

	if ((l = calloc(1, sizeof(*l))) == NULL)
		goto fail;
	l->srv = srv;
	if ((l->retry = evtimer_new(srv->base, listener_retry_cb, l)) == NULL ||
	    evutil_make_socket_nonblocking(fd) == -1 ||
	    (l->evl = evconnlistener_new(srv->base, listener_accept_cb, l,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, fd)) == NULL)
		goto fail;
	evconnlistener_set_error_cb(l->evl, listener_error_cb);
	TAILQ_INSERT_TAIL(&srv->listeners, l, entry);
	return 0;
 fail:
	log_warn("%s", __func__);
	close(fd);
	if (l != NULL) {
		if (l->retry)
			event_free(l->retry);
		free(l);
	}
	return -1;
}

int
http_server_attach_fd(struct http_server *srv, int fd, const char *peer)
{
	if (srv->closing || srv->nconns >= srv->limits.max_conns) {
		refuse(fd);
		return -1;
	}
	return conn_new(srv, fd, peer ? peer : "-");
}

void
http_server_close_listeners(struct http_server *srv)
{
	struct listener		*l;
	struct http_conn	*c, *next;

	while ((l = TAILQ_FIRST(&srv->listeners)) != NULL) {
		TAILQ_REMOVE(&srv->listeners, l, entry);
		evconnlistener_free(l->evl);
		event_free(l->retry);
		free(l);
	}
	srv->closing = 1;
	/* Connections between requests have nothing left to finish. */
	for (c = TAILQ_FIRST(&srv->conns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->phase == PH_IDLE && c->req == NULL)
			conn_close(c);
	}
}

void
http_server_free(struct http_server *srv)
{
	struct http_conn	*c;

	if (srv == NULL)
		return;
	http_server_close_listeners(srv);
	while ((c = TAILQ_FIRST(&srv->conns)) != NULL)
		conn_close(c);
	free(srv);
}

int
http_server_nconns(const struct http_server *srv)
{
	return srv->nconns;
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

static int
hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Form decoding of src[0..len) into dst, NUL-terminated; -1 on error. */
static ssize_t
form_decode(const char *src, size_t len, char *dst, size_t dstlen)
{
	size_t	 i, o = 0;
	int	 ch, hi, lo;

	if (dstlen == 0)
		return -1;
	for (i = 0; i < len; i++) {
		ch = (unsigned char)src[i];
		if (ch == '+')
			ch = ' ';
		else if (ch == '%') {
			if (i + 2 >= len)
				return -1;
			hi = hexval((unsigned char)src[i + 1]);
			lo = hexval((unsigned char)src[i + 2]);
			/* %00 would cut the C string short of its length. */
			if (hi < 0 || lo < 0 || (hi | lo) == 0)
				return -1;
			ch = hi << 4 | lo;
			i += 2;
		}
		if (o + 1 >= dstlen)
			return -1;
		dst[o++] = ch;
	}
	dst[o] = '\0';
	return o;
}

ssize_t
http_query_param(const char *query, const char *name, char *buf,
    size_t buflen, const char **from)
{
	const char	*p, *end, *eq;
	char		 key[256];
	ssize_t		 r;

	if (query == NULL)
		return -1;
	p = (from != NULL && *from != NULL) ? *from : query;
	while (*p != '\0') {
		if ((end = strchr(p, '&')) == NULL)
			end = p + strlen(p);
		eq = memchr(p, '=', end - p);
		r = form_decode(p, (eq ? eq : end) - p, key, sizeof(key));
		if (r >= 0 && strcmp(key, name) == 0) {
			if (from != NULL)
				*from = *end ? end + 1 : end;
			if (eq == NULL) {
				if (buflen == 0)
					return -2;
				buf[0] = '\0';
				return 0;
			}
			r = form_decode(eq + 1, end - eq - 1, buf, buflen);
			return r < 0 ? -2 : r;
		}
		p = *end ? end + 1 : end;
	}
	return -1;
}
