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
 * test_http.c: the HTTP layer against raw sockets.
 *
 * A child process runs an http_server on an ephemeral 127.0.0.1 port
 * with a small test handler; the parent speaks HTTP by hand, the way
 * well-behaved and abusive clients do, and checks what comes back.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "http.h"
#include "log.h"
#include "t.h"
#include "tsock.h"

#define FILE_SIZE	200000
#define STREAM_SIZE	(3 * 1024 * 1024)
#define MAX_CONNS	8
#define MAX_PER_ADDR	4	/* connections from one client address */
#define MIN_RATE	64	/* bytes/s a body must bring */
#define BIG_STREAM	(48 * 1024 * 1024)

static int	 port;
static int	 port_mapped;	/* IPv6, dual-stack: IPv4 clients mapped */
static char	 basic_id[33];	/* of the basic GET, for the log check */

/* Shared by both sides. */

static unsigned char
pattern(uint64_t i)
{
	return (unsigned char)(i % 251);
}

static uint32_t
fnv1a(uint32_t h, const void *p, size_t n)
{
	const unsigned char	*s = p;

	while (n-- > 0)
		h = (h ^ *s++) * 16777619u;
	return h;
}

#define FNV_INIT	2166136261u

/* The server side, in the child. */

enum route { R_ECHO = 1, R_ECHO_SLOW, R_ECHO_HOLD, R_SLOW };

struct rstate {
	enum route		 route;
	uint64_t		 len;
	uint32_t		 sum;
	struct event		*ev;
	struct http_request	*req;
};

static struct event_base	*sbase;
static struct http_server	*ssrv;
static int			 nactive;

static void
reply_text(struct http_request *req, int status, const char *text)
{
	http_reply(req, status, "text/plain", text, strlen(text));
}

static void
slow_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rstate	*st = arg;

	reply_text(st->req, 200, "slow");
}

static void
resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rstate	*st = arg;

	http_body_resume(st->req);
}

static struct rstate *
state_new(struct http_request *req, enum route route,
    void (*cb)(evutil_socket_t, short, void *))
{
	struct rstate	*st;

	if ((st = calloc(1, sizeof(*st))) == NULL)
		abort();
	st->route = route;
	st->req = req;
	st->sum = FNV_INIT;
	if (cb != NULL)
		st->ev = evtimer_new(sbase, cb, st);
	req->arg = st;
	nactive++;
	return st;
}

static void
route_file(struct http_request *req)
{
	char		 path[] = "/tmp/test_http.XXXXXX";
	unsigned char	 buf[FILE_SIZE];
	int		 fd, i;

	for (i = 0; i < FILE_SIZE; i++)
		buf[i] = pattern(i);
	if ((fd = mkstemp(path)) == -1 ||
	    write(fd, buf, sizeof(buf)) != sizeof(buf))
		abort();
	unlink(path);
	http_reply_file(req, 200, "application/octet-stream", fd, 0,
	    FILE_SIZE);
}

/* A pipe fed by a grandchild writing `produce' bytes of the pattern. */
static void
route_stream(struct http_request *req, size_t produce, int64_t declared)
{
	unsigned char	 buf[65536];
	size_t		 off, n, i;
	int		 p[2];

	if (pipe(p) == -1)
		abort();
	switch (fork()) {
	case -1:
		abort();
	case 0:
		close(p[0]);
		for (off = 0; off < produce; off += n) {
			n = produce - off < sizeof(buf) ? produce - off :
			    sizeof(buf);
			for (i = 0; i < n; i++)
				buf[i] = pattern(off + i);
			if (write(p[1], buf, n) != (ssize_t)n)
				_exit(1);
		}
		_exit(0);
	}
	close(p[1]);
	http_reply_stream_fd(req, 200, "application/octet-stream", p[0],
	    declared);
}

static void
route_rss(struct http_request *req)
{
	FILE	*f = fopen("/proc/self/status", "r");
	char	 line[256], out[64] = "-1";

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "VmHWM:", 6) == 0)
			snprintf(out, sizeof(out), "%ld", atol(line + 6));
	if (f != NULL)
		fclose(f);
	reply_text(req, 200, out);
}

/*
 * Headers with control characters, as a hostile backend would hand
 * them on (a model name, a stored media type), each before a reply of
 * another kind.
 */
static void
route_bad(struct http_request *req, const char *kind)
{
	static const char	 inject[] = "m\r\nSet-Cookie: evil=1";

	http_reply_header(req, "X-Before", "fine");
	if (strcmp(kind, "value") == 0)
		http_reply_header(req, "X-Model", inject);
	else if (strcmp(kind, "lf") == 0)
		http_reply_header(req, "X-Model", "m\nSet-Cookie: evil=1");
	else if (strcmp(kind, "name") == 0)
		http_reply_header(req, "X-A\r\nSet-Cookie", "evil=1");
	else if (strcmp(kind, "space") == 0)
		http_reply_header(req, "X A", "evil=1");
	else if (strcmp(kind, "esc") == 0)
		http_reply_header(req, "X-Esc", "a\x1b[2Jevil");
	else if (strcmp(kind, "del") == 0)
		http_reply_header(req, "X-Del", "a\x7f" "evil");
	else if (strcmp(kind, "tab") == 0)
		http_reply_header(req, "X-Tab", "a\tb");
	if (strcmp(kind, "ctype") == 0)
		http_reply(req, 200, "text/plain\r\nSet-Cookie: evil=1",
		    "sent anyway", 11);
	else if (strcmp(kind, "file") == 0) {
		http_reply_header(req, "X-Model", inject);
		route_file(req);
	} else if (strcmp(kind, "stream") == 0) {
		http_reply_header(req, "X-Model", inject);
		route_stream(req, STREAM_SIZE, -1);
	} else if (strcmp(kind, "piece") == 0) {
		http_reply_start(req, 200, "text/event-stream\nevil: 1", -1);
		http_reply_data(req, "sent ", 5);
		http_reply_data(req, "anyway", 6);
		http_reply_end(req);
	} else
		reply_text(req, 200, "sent anyway");
}

static void
on_request(struct http_request *req, void *arg)
{
	const char	*p = req->path;
	char		 buf[64];
	struct timeval	 tv = { 0, 300000 };

	strlcpy(req->log_user, "tester", sizeof(req->log_user));
	if (strcmp(p, "/hello") == 0)
		reply_text(req, 200, "hello");
	else if (strcmp(p, "/echo") == 0 && req->method == HTTP_M_POST) {
		state_new(req, R_ECHO, NULL);
		http_body_accept(req);
	} else if (strcmp(p, "/echoslow") == 0) {
		state_new(req, R_ECHO_SLOW, resume_cb);
		http_body_accept(req);
	} else if (strcmp(p, "/echohold") == 0) {
		state_new(req, R_ECHO_HOLD, resume_cb);
		http_body_accept(req);
	} else if (strcmp(p, "/reject") == 0)
		http_reply(req, 413, "application/json",
		    "{\"error\":{\"message\":\"too large\"}}", 33);
	else if (strcmp(p, "/file") == 0)
		route_file(req);
	else if (strcmp(p, "/stream") == 0)
		route_stream(req, STREAM_SIZE, -1);
	else if (strcmp(p, "/bigstream") == 0)
		route_stream(req, BIG_STREAM, -1);
	else if (strcmp(p, "/streamlen") == 0)
		route_stream(req, STREAM_SIZE, STREAM_SIZE);
	else if (strcmp(p, "/streamshort") == 0)
		route_stream(req, 1000, 5000);
	else if (strcmp(p, "/slow") == 0)
		evtimer_add(state_new(req, R_SLOW, slow_cb)->ev, &tv);
	else if (strcmp(p, "/rss") == 0)
		route_rss(req);
	else if (strcmp(p, "/shutdown") == 0) {
		http_server_close_listeners(ssrv);
		reply_text(req, 200, "bye");
	} else if (strcmp(p, "/fds") == 0) {
		int fd, n = 0;

		for (fd = 0; fd < 1024; fd++)
			n += fcntl(fd, F_GETFD) != -1;
		snprintf(buf, sizeof(buf), "%d", n);
		reply_text(req, 200, buf);
	} else if (strcmp(p, "/active") == 0) {
		snprintf(buf, sizeof(buf), "%d", nactive);
		reply_text(req, 200, buf);
	} else if (strncmp(p, "/bad/", 5) == 0)
		route_bad(req, p + 5);
	else
		reply_text(req, 404, "no such route");
}

static void
on_body(struct http_request *req, const void *data, size_t len, void *arg)
{
	struct rstate	*st = req->arg;
	struct timeval	 tv = { 0, 1000 }, hold = { 2, 500000 };

	if (st->route == R_ECHO_SLOW) {
		/* A slow sink: stop the body, come back a little later. */
		http_body_pause(req);
		evtimer_add(st->ev, &tv);
	} else if (st->route == R_ECHO_HOLD && st->len == 0) {
		/* A sink that stalls longer than the body window. */
		http_body_pause(req);
		evtimer_add(st->ev, &hold);
	}
	st->len += len;
	st->sum = fnv1a(st->sum, data, len);
}

static void
on_body_end(struct http_request *req, void *arg)
{
	struct rstate	*st = req->arg;
	char		 buf[64];

	snprintf(buf, sizeof(buf), "len=%llu sum=%08x",
	    (unsigned long long)st->len, st->sum);
	reply_text(req, 200, buf);
}

static void
on_free(struct http_request *req, void *arg)
{
	struct rstate	*st = req->arg;

	if (st == NULL)
		return;
	if (st->ev != NULL)
		event_free(st->ev);
	free(st);
	nactive--;
}

static void
server_main(int lfd, int lfd_mapped)
{
	struct http_handler	 h = { on_request, on_body, on_body_end,
				    on_free, NULL };
	struct http_limits	 lim;
	signal(SIGCHLD, SIG_IGN);	/* stream feeders reap themselves */
	log_init("test_http", 1, 0);
	http_limits_default(&lim);
	lim.header_timeout = 1;
	lim.idle_timeout = 5;
	lim.body_timeout = 2;
	lim.linger_timeout = 5;
	lim.max_conns = MAX_CONNS;
	lim.max_conns_per_addr = MAX_PER_ADDR;
	lim.min_body_rate = MIN_RATE;
	if ((sbase = event_base_new()) == NULL ||
	    (ssrv = http_server_new(sbase, &lim, &h)) == NULL ||
	    http_server_listen_fd(ssrv, lfd) == -1 ||
	    http_server_listen_fd(ssrv, lfd_mapped) == -1)
		_exit(1);
	/* Returns once nothing is left: no listener, connection or timer. */
	event_base_dispatch(sbase);
	http_server_free(ssrv);
	event_base_free(sbase);
	_exit(nactive == 0 ? 0 : 3);
}

/* The client side, in the parent. */

struct rd {
	int	 fd;
	char	*base;		/* the allocation */
	char	*buf;		/* unread bytes start here */
	size_t	 len, cap;
};

struct resp {
	int	 status;
	char	 head[16384];
	char	*body;
	size_t	 blen, bcap;
};

/* A connection from the loopback address src (NULL: 127.0.0.1). */
static int
tconnect_from(const char *src)
{
	struct sockaddr_in	 sin = { .sin_family = AF_INET };
	struct sockaddr_in	 from = { .sin_family = AF_INET };
	struct timeval		 tv = { 5, 0 };
	int			 fd;

	sin.sin_port = htons(port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    (src != NULL && (inet_pton(AF_INET, src, &from.sin_addr) != 1 ||
	    bind(fd, (struct sockaddr *)&from, sizeof(from)) == -1)) ||
	    connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
		perror("connect");
		exit(2);
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return fd;
}

static int
tconnect(void)
{
	return tconnect_from(NULL);
}

static int
send_str(int fd, const char *s)
{
	return t_send_all(fd, s, strlen(s));
}

static ssize_t
rd_more(struct rd *r)
{
	ssize_t	 n;

	if (r->base == NULL || (size_t)(r->buf - r->base) + r->len + 65536 >
	    r->cap) {
		if (r->base != NULL)
			memmove(r->base, r->buf, r->len);
		if (r->len + 65536 > r->cap) {
			r->cap = r->cap * 2 + 65536;
			if ((r->base = realloc(r->base, r->cap)) == NULL)
				abort();
		}
		r->buf = r->base;
	}
	n = read(r->fd, r->buf + r->len, r->cap - r->len -
	    (r->buf - r->base));
	if (n > 0)
		r->len += n;
	return n;
}

/* Advances past n bytes; no copying, so big bodies stay linear. */
static void
rd_consume(struct rd *r, size_t n)
{
	r->buf += n;
	r->len -= n;
}

static void
rd_free(struct rd *r)
{
	free(r->base);
	r->base = r->buf = NULL;
	r->len = r->cap = 0;
}

static const char *
hdr(const struct resp *rp, const char *name)
{
	static char	 val[512];
	const char	*line, *end;
	size_t		 n = strlen(name), i;

	for (line = strstr(rp->head, "\r\n"); line != NULL;
	    line = strstr(line, "\r\n")) {
		line += 2;
		if (strncasecmp(line, name, n) == 0 && line[n] == ':') {
			line += n + 1;
			while (*line == ' ')
				line++;
			end = strstr(line, "\r\n");
			for (i = 0; line + i < end && i < sizeof(val) - 1; i++)
				val[i] = line[i];
			val[i] = '\0';
			return val;
		}
	}
	return NULL;
}

static int
body_add(struct resp *rp, const char *p, size_t n)
{
	/* Geometric growth: a realloc per chunk would be quadratic. */
	if (rp->blen + n + 1 > rp->bcap) {
		rp->bcap = (rp->blen + n + 1) * 2;
		if ((rp->body = realloc(rp->body, rp->bcap)) == NULL)
			abort();
	}
	memcpy(rp->body + rp->blen, p, n);
	rp->blen += n;
	rp->body[rp->blen] = '\0';
	return 0;
}

static int
read_chunked(struct rd *r, struct resp *rp)
{
	char		*eol;
	unsigned long	 size;

	for (;;) {
		while ((eol = memmem(r->buf, r->len, "\r\n", 2)) == NULL)
			if (rd_more(r) <= 0)
				return -1;
		size = strtoul(r->buf, NULL, 16);
		rd_consume(r, eol - r->buf + 2);
		while (r->len < size + 2)
			if (rd_more(r) <= 0)
				return -1;
		body_add(rp, r->buf, size);
		rd_consume(r, size + 2);
		if (size == 0)
			return 0;
	}
}

/* One response; 0 when complete, -1 when the connection ended first. */
static int
read_response(struct rd *r, struct resp *rp, int head_only)
{
	const char	*v;
	char		*end;
	size_t		 hlen, n;

	free(rp->body);
	memset(rp, 0, sizeof(*rp));
	body_add(rp, "", 0);
	while (r->buf == NULL ||
	    (end = memmem(r->buf, r->len, "\r\n\r\n", 4)) == NULL)
		if (r->len > 65536 || rd_more(r) <= 0)
			return -1;
	hlen = end - r->buf + 4;
	n = hlen < sizeof(rp->head) ? hlen : sizeof(rp->head) - 1;
	memcpy(rp->head, r->buf, n);
	rp->head[n] = '\0';
	rd_consume(r, hlen);
	if (sscanf(rp->head, "HTTP/1.%*d %d", &rp->status) != 1)
		return -1;
	if (rp->status == 100 || head_only || rp->status == 204)
		return 0;
	if ((v = hdr(rp, "content-length")) != NULL) {
		n = strtoull(v, NULL, 10);
		while (r->len < n)
			if (rd_more(r) <= 0)
				return -1;
		body_add(rp, r->buf, n);
		rd_consume(r, n);
		return 0;
	}
	if ((v = hdr(rp, "transfer-encoding")) != NULL &&
	    strcasecmp(v, "chunked") == 0)
		return read_chunked(r, rp);
	while (rd_more(r) > 0)
		;
	body_add(rp, r->buf, r->len);
	rd_consume(r, r->len);
	return 0;
}

/* 1 when the server closed the connection within a few seconds. */
static int
closed_by_server(struct rd *r)
{
	ssize_t	 n;

	while ((n = rd_more(r)) > 0)
		;
	return n == 0 || (n == -1 && errno == ECONNRESET);
}

/* A request on a connection of its own. */
static int
exchange(const char *raw, size_t len, struct resp *rp, int *closed)
{
	struct rd	 r = { .fd = tconnect() };
	int		 rv;

	t_send_all(r.fd, raw, len);
	rv = read_response(&r, rp, 0);
	if (closed != NULL)
		*closed = rv == 0 && closed_by_server(&r);
	close(r.fd);
	rd_free(&r);
	return rv;
}

static int
is_hex32(const char *s)
{
	int	 i;

	if (s == NULL || strlen(s) != 32)
		return 0;
	for (i = 0; i < 32; i++)
		if (!isxdigit((unsigned char)s[i]) ||
		    isupper((unsigned char)s[i]))
			return 0;
	return 1;
}

static void
still_serving(const char *after)
{
	struct resp	 rp = { 0 };
	const char	*get = "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n";

	T_OK(exchange(get, strlen(get), &rp, NULL) == 0 && rp.status == 200 &&
	    strcmp(rp.body, "hello") == 0, "still serving after %s", after);
	free(rp.body);
}

static void
expect_body(const struct resp *rp, const char *want, const char *what)
{
	T_EQ_STR(rp->body, want, what);
}

static void
test_query_param(void)
{
	const char	*q = "a=1&b=hello+world&c=%41%42&a=2&flag&"
			    "expires_after%5Banchor%5D=created_at&bad=%zz";
	const char	*from = NULL;
	char		 buf[64], tiny[3];

	T_EQ_INT(http_query_param(q, "a", buf, sizeof(buf), &from), 1,
	    "query: first a");
	T_EQ_STR(buf, "1", "query: first a value");
	T_EQ_INT(http_query_param(q, "a", buf, sizeof(buf), &from), 1,
	    "query: second a");
	T_EQ_STR(buf, "2", "query: repeated a via from");
	T_EQ_INT(http_query_param(q, "a", buf, sizeof(buf), &from), -1,
	    "query: no third a");
	T_EQ_INT(http_query_param(q, "b", buf, sizeof(buf), NULL), 11,
	    "query: plus is space");
	T_EQ_STR(buf, "hello world", "query: b decoded");
	http_query_param(q, "c", buf, sizeof(buf), NULL);
	T_EQ_STR(buf, "AB", "query: percent decoding");
	T_EQ_INT(http_query_param(q, "flag", buf, sizeof(buf), NULL), 0,
	    "query: bare name is empty");
	T_EQ_INT(http_query_param(q, "expires_after[anchor]", buf,
	    sizeof(buf), NULL), 10, "query: encoded name matches");
	T_EQ_INT(http_query_param(q, "bad", buf, sizeof(buf), NULL), -2,
	    "query: bad escape is -2");
	T_EQ_INT(http_query_param(q, "b", tiny, sizeof(tiny), NULL), -2,
	    "query: too long for the buffer is -2");
	T_EQ_INT(http_query_param(q, "zzz", buf, sizeof(buf), NULL), -1,
	    "query: absent is -1");
	T_EQ_INT(http_query_param(NULL, "a", buf, sizeof(buf), NULL), -1,
	    "query: no query is -1");
	T_EQ_INT(http_query_param("x=%00", "x", buf, sizeof(buf), NULL), -2,
	    "query: %%00 refused");
}

static void
test_basic(void)
{
	struct resp	 rp = { 0 };
	const char	*get = "GET /hello?key=secret HTTP/1.1\r\n"
			    "Host: t\r\n\r\n";
	char		 id[64];

	T_OK(exchange(get, strlen(get), &rp, NULL) == 0, "basic GET answered");
	T_EQ_INT(rp.status, 200, "basic GET status");
	expect_body(&rp, "hello", "basic GET body");
	T_OK(is_hex32(hdr(&rp, "request-id")), "request-id is 32 hex");
	strlcpy(id, hdr(&rp, "request-id") ? hdr(&rp, "request-id") : "",
	    sizeof(id));
	T_EQ_STR(hdr(&rp, "x-request-id"), id,
	    "x-request-id equals request-id");
	strlcpy(basic_id, id, sizeof(basic_id));
	T_OK(hdr(&rp, "date") != NULL, "Date header");
	T_EQ_STR(hdr(&rp, "server"), "depotd", "Server header");
	T_EQ_STR(hdr(&rp, "content-length"), "5", "Content-Length header");
	T_OK(hdr(&rp, "connection") == NULL, "no Connection: close on 1.1");
	free(rp.body);
}

static void
test_keepalive_and_pipelining(void)
{
	struct resp	 rp = { 0 };
	struct rd	 r = { .fd = tconnect() };
	const char	*get = "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n";
	const char	*pipe3 = "GET /slow HTTP/1.1\r\nHost: t\r\n\r\n"
			    "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n"
			    "HEAD /hello HTTP/1.1\r\nHost: t\r\n\r\n"
			    "GET /slow HTTP/1.1\r\nHost: t\r\n\r\n";
	char		 id1[64];

	send_str(r.fd, get);
	T_OK(read_response(&r, &rp, 0) == 0 && rp.status == 200,
	    "keep-alive: first response");
	strlcpy(id1, hdr(&rp, "request-id") ? hdr(&rp, "request-id") : "",
	    sizeof(id1));
	send_str(r.fd, get);
	T_OK(read_response(&r, &rp, 0) == 0 && rp.status == 200 &&
	    strcmp(rp.body, "hello") == 0,
	    "keep-alive: second response on the same connection");
	T_OK(hdr(&rp, "request-id") && strcmp(hdr(&rp, "request-id"), id1) != 0,
	    "keep-alive: a new request-id per request");

	send_str(r.fd, pipe3);
	T_OK(read_response(&r, &rp, 0) == 0 && strcmp(rp.body, "slow") == 0,
	    "pipelined: slow answer first");
	T_OK(read_response(&r, &rp, 0) == 0 && strcmp(rp.body, "hello") == 0,
	    "pipelined: then hello");
	T_OK(read_response(&r, &rp, 1) == 0 && rp.status == 200 &&
	    hdr(&rp, "content-length") && strcmp(hdr(&rp, "content-length"),
	    "5") == 0, "pipelined: HEAD has a length");
	T_OK(read_response(&r, &rp, 0) == 0 && strcmp(rp.body, "slow") == 0,
	    "pipelined: HEAD carried no body, the next response follows");
	close(r.fd);
	rd_free(&r);
	free(rp.body);
}

static void
test_http10(void)
{
	struct resp	 rp = { 0 };
	struct rd	 r = { .fd = tconnect() };
	const char	*get10 = "GET /hello HTTP/1.0\r\n\r\n";
	const char	*get10ka = "GET /hello HTTP/1.0\r\n"
			    "Connection: keep-alive\r\n\r\n";
	int		 closed;

	T_OK(exchange(get10, strlen(get10), &rp, &closed) == 0 &&
	    rp.status == 200 && closed, "HTTP/1.0: served, then closed");
	T_EQ_STR(hdr(&rp, "connection"), "close",
	    "HTTP/1.0: Connection: close");
	send_str(r.fd, get10ka);
	T_OK(read_response(&r, &rp, 0) == 0 && rp.status == 200,
	    "HTTP/1.0 keep-alive: first");
	T_EQ_STR(hdr(&rp, "connection"), "keep-alive",
	    "HTTP/1.0 keep-alive: Connection: keep-alive");
	send_str(r.fd, get10ka);
	T_OK(read_response(&r, &rp, 0) == 0 && rp.status == 200,
	    "HTTP/1.0 keep-alive: second on the same connection");
	close(r.fd);
	rd_free(&r);
	free(rp.body);
}

static void
test_bodies(void)
{
	struct resp	 rp = { 0 };
	const char	*chunked = "POST /echo HTTP/1.1\r\nHost: t\r\n"
			    "Transfer-Encoding: chunked\r\n\r\n"
			    "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
	const char	*badchunk = "POST /echo HTTP/1.1\r\nHost: t\r\n"
			    "Transfer-Encoding: chunked\r\n\r\n"
			    "5\r\nhello\r\nzz\r\n";
	const char	*both = "POST /echo HTTP/1.1\r\nHost: t\r\n"
			    "Content-Length: 5\r\n"
			    "Transfer-Encoding: chunked\r\n\r\n"
			    "0\r\n\r\n";
	char		 want[64];
	unsigned char	*big;
	size_t		 i, n = 2 * 1024 * 1024 + 17;
	int		 closed, fd;
	struct rd	 r = { 0 };

	snprintf(want, sizeof(want), "len=11 sum=%08x",
	    fnv1a(FNV_INIT, "hello world", 11));
	T_OK(exchange(chunked, strlen(chunked), &rp, NULL) == 0 &&
	    rp.status == 200, "chunked upload answered");
	expect_body(&rp, want, "chunked upload decoded");

	T_OK(exchange(badchunk, strlen(badchunk), &rp, &closed) == 0 &&
	    rp.status == 400 && closed, "bad chunk framing: 400 and close");
	T_OK(strstr(rp.body, "\"type\":\"invalid_request_error\"") != NULL,
	    "bad chunk framing: OpenAI error envelope");
	still_serving("bad chunk framing");

	T_OK(exchange(both, strlen(both), &rp, &closed) == 0 &&
	    rp.status == 400 && closed,
	    "Content-Length with Transfer-Encoding: 400 and close");

	/* A slow sink pausing the body after every piece. */
	if ((big = malloc(n)) == NULL)
		abort();
	for (i = 0; i < n; i++)
		big[i] = pattern(i * 3);
	r.fd = fd = tconnect();
	dprintf(fd, "POST /echoslow HTTP/1.1\r\nHost: t\r\n"
	    "Content-Length: %zu\r\n\r\n", n);
	t_send_all(fd, big, n);
	snprintf(want, sizeof(want), "len=%zu sum=%08x", n,
	    fnv1a(FNV_INIT, big, n));
	T_OK(read_response(&r, &rp, 0) == 0 && rp.status == 200,
	    "paused body: answered");
	expect_body(&rp, want, "paused body: every byte, in order");
	close(fd);
	rd_free(&r);
	free(big);
	free(rp.body);
}

static void
test_limits(void)
{
	struct resp	 rp = { 0 };
	char		*raw;
	size_t		 cap = 64 * 1024, off;
	int		 i, closed;

	if ((raw = malloc(cap)) == NULL)
		abort();

	snprintf(raw, cap, "GET / HTTP/A.B\r\nHost: t\r\n\r\n");
	T_OK(exchange(raw, strlen(raw), &rp, &closed) == 0 &&
	    rp.status == 400 && closed, "malformed version: 400 and close");
	T_OK(strstr(rp.body, "\"error\":{\"message\":") != NULL,
	    "malformed version: error body");
	still_serving("malformed version");
	snprintf(raw, cap, "GET /hello\r\n\r\n");
	T_OK(exchange(raw, strlen(raw), &rp, &closed) == 0 &&
	    rp.status == 400 && closed, "HTTP/0.9 request line: 400 and close");
	snprintf(raw, cap, "G(T / HTTP/1.1\r\nHost: t\r\n\r\n");
	T_OK(exchange(raw, strlen(raw), &rp, &closed) == 0 &&
	    rp.status == 400 && closed, "malformed method: 400 and close");
	still_serving("malformed method");

	off = snprintf(raw, cap, "GET /hello HTTP/1.1\r\nX-Big: ");
	memset(raw + off, 'a', 20000);
	strcpy(raw + off + 20000, "\r\n\r\n");
	T_OK(exchange(raw, strlen(raw), &rp, &closed) == 0 &&
	    rp.status == 431 && closed, "oversized header: 431 and close");
	still_serving("oversized header");

	off = snprintf(raw, cap, "GET /hello HTTP/1.1\r\n");
	for (i = 0; i < 150; i++)
		off += snprintf(raw + off, cap - off, "X-H%d: v\r\n", i);
	strcpy(raw + off, "\r\n");
	T_OK(exchange(raw, strlen(raw), &rp, &closed) == 0 &&
	    rp.status == 431 && closed, "too many headers: 431 and close");
	still_serving("too many headers");

	off = snprintf(raw, cap, "GET /");
	memset(raw + off, 'u', 9000);
	strcpy(raw + off + 9000, " HTTP/1.1\r\nHost: t\r\n\r\n");
	T_OK(exchange(raw, strlen(raw), &rp, &closed) == 0 &&
	    rp.status == 414 && closed, "long URI: 414 and close");
	still_serving("long URI");
	free(raw);
	free(rp.body);
}

static double
now_s(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
test_slowloris(void)
{
	struct rd	 r = { .fd = tconnect() };
	double		 t0 = now_s();
	int		 i, gone = 0;
	struct pollfd	 pfd;

	send_str(r.fd, "GET /hello HTTP/1.1\r\n");
	for (i = 0; i < 12 && !gone; i++) {
		usleep(250000);
		pfd.fd = r.fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 0) == 1 ||
		    send_str(r.fd, "X-Slow: a\r\n") == -1)
			gone = 1;
	}
	T_OK(gone && now_s() - t0 < 2.5,
	    "slowloris: headers cut off after the header timeout (%.1fs)",
	    now_s() - t0);
	T_OK(closed_by_server(&r), "slowloris: connection closed");
	T_OK(r.len == 0 || strncmp(r.buf, "HTTP/1.1 408", 12) == 0,
	    "slowloris: 408 or nothing before the close");
	close(r.fd);
	rd_free(&r);
	still_serving("slowloris");
}

static void
test_timeouts(void)
{
	struct rd	 r = { .fd = tconnect() };
	double		 t0 = now_s();

	T_OK(closed_by_server(&r) && now_s() - t0 < 2.5 && r.len == 0,
	    "silent connection closed after the header timeout (%.1fs)",
	    now_s() - t0);
	close(r.fd);
	rd_free(&r);

	r.fd = tconnect();
	send_str(r.fd, "POST /echo HTTP/1.1\r\nHost: t\r\n"
	    "Content-Length: 100\r\n\r\n0123456789");
	t0 = now_s();
	T_OK(closed_by_server(&r) && now_s() - t0 > 1.5 &&
	    now_s() - t0 < 3.5 && r.len == 0,
	    "stalled body: closed after the body timeout (%.1fs)",
	    now_s() - t0);
	close(r.fd);
	rd_free(&r);
	still_serving("timeouts");
}

/* A number the test server reports on route path; -1 on failure. */
static int
server_number(const char *path)
{
	struct resp	 rp = { 0 };
	char		 get[128];
	int		 n = -1;

	snprintf(get, sizeof(get), "GET %s HTTP/1.1\r\nHost: t\r\n\r\n",
	    path);
	if (exchange(get, strlen(get), &rp, NULL) == 0 && rp.status == 200)
		n = atoi(rp.body);
	free(rp.body);
	return n;
}

/*
 * Past INT64_MAX the parser's unsigned count turned negative, the body
 * went unseen, and no timer watched it: a 400 must come at once.
 */
static void
test_huge_length(void)
{
	static const char *lengths[] = {
		"9223372036854775808", "18446744073709551000",
	};
	struct resp	 rp = { 0 };
	char		 raw[256];
	double		 t0;
	size_t		 i;
	int		 closed;

	for (i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
		snprintf(raw, sizeof(raw), "POST /echo HTTP/1.1\r\nHost: t\r\n"
		    "Content-Length: %s\r\n\r\n0123456789", lengths[i]);
		t0 = now_s();
		T_OK(exchange(raw, strlen(raw), &rp, &closed) == 0 &&
		    rp.status == 400 && closed && now_s() - t0 < 1.0,
		    "Content-Length %s: 400 at once, then close "
		    "(status %d after %.1fs)", lengths[i], rp.status,
		    now_s() - t0);
		T_OK(rp.body != NULL && strstr(rp.body,
		    "\"invalid_request_error\"") != NULL,
		    "Content-Length %s: error envelope", lengths[i]);
	}
	T_EQ_INT(server_number("/active"), 0,
	    "huge Content-Length: no handler state left");
	free(rp.body);
	still_serving("huge Content-Length");
}

/*
 * A byte every 200 ms: each inside the 2 s body timeout, but far
 * below MIN_RATE.  The body window must cut it, and on_free run.
 */
static void
test_slow_drip(void)
{
	struct rd	 r = { .fd = tconnect() };
	struct pollfd	 pfd = { .fd = r.fd, .events = POLLIN };
	double		 t0, cut = -1;
	int		 i;

	send_str(r.fd, "POST /echo HTTP/1.1\r\nHost: t\r\n"
	    "Content-Length: 1000\r\n\r\n");
	t0 = now_s();
	for (i = 0; i < 40 && cut < 0; i++) {
		if (poll(&pfd, 1, 200) == 1 || send_str(r.fd, "x") == -1)
			cut = now_s() - t0;
	}
	T_OK(cut > 1.5 && cut < 3.5,
	    "slow drip: cut at the end of the body window (%.1fs)", cut);
	T_OK(closed_by_server(&r) && r.len == 0,
	    "slow drip: closed without a response");
	close(r.fd);
	rd_free(&r);
	T_EQ_INT(server_number("/active"), 0,
	    "slow drip: on_free released the handler's state");
	still_serving("slow drip");
}

/* Above MIN_RATE, a body may take longer than one window. */
static void
test_steady_body(void)
{
	struct resp	 rp = { 0 };
	struct rd	 r = { .fd = tconnect() };
	char		 piece[100], want[64];
	uint32_t	 sum = FNV_INIT;
	int		 i;

	memset(piece, 'y', sizeof(piece));
	send_str(r.fd, "POST /echo HTTP/1.1\r\nHost: t\r\n"
	    "Content-Length: 700\r\n\r\n");
	for (i = 0; i < 7; i++) {
		usleep(500000);
		t_send_all(r.fd, piece, sizeof(piece));
		sum = fnv1a(sum, piece, sizeof(piece));
	}
	snprintf(want, sizeof(want), "len=700 sum=%08x", sum);
	T_OK(read_response(&r, &rp, 0) == 0 && rp.status == 200,
	    "steady body over 3.5s at 200 B/s: answered");
	expect_body(&rp, want, "steady body: every byte");
	close(r.fd);
	rd_free(&r);
	free(rp.body);
}

/* While the handler holds the body paused, the window stands still. */
static void
test_held_body(void)
{
	struct resp	 rp = { 0 };
	struct rd	 r = { .fd = tconnect() };
	char		 half[50], want[64];

	memset(half, 'z', sizeof(half));
	send_str(r.fd, "POST /echohold HTTP/1.1\r\nHost: t\r\n"
	    "Content-Length: 100\r\n\r\n");
	t_send_all(r.fd, half, sizeof(half));
	usleep(1000000);
	t_send_all(r.fd, half, sizeof(half));
	snprintf(want, sizeof(want), "len=100 sum=%08x",
	    fnv1a(fnv1a(FNV_INIT, half, sizeof(half)), half, sizeof(half)));
	T_OK(read_response(&r, &rp, 0) == 0 && rp.status == 200,
	    "body paused by the handler past the window: not cut");
	expect_body(&rp, want, "held body: every byte");
	close(r.fd);
	rd_free(&r);
	free(rp.body);
}

/* Opens n kept-alive connections from src; returns how many got 200. */
static int
hold_conns(struct rd *r, int n, const char *src)
{
	struct resp	 rp = { 0 };
	int		 i, ok = 0;

	for (i = 0; i < n; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].fd = tconnect_from(src);
		send_str(r[i].fd, "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n");
		ok += read_response(&r[i], &rp, 0) == 0 && rp.status == 200;
	}
	free(rp.body);
	return ok;
}

static void
drop_conns(struct rd *r, int n)
{
	int	 i;

	for (i = 0; i < n; i++) {
		close(r[i].fd);
		rd_free(&r[i]);
	}
	usleep(100000);
}

static void
test_per_address(void)
{
	struct resp	 rp = { 0 };
	struct rd	 r[MAX_PER_ADDR + 1];
	const char	*get = "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n";
	int		 closed;

	usleep(200000);		/* earlier connections wind down */
	T_EQ_INT(hold_conns(r, MAX_PER_ADDR, "127.0.0.1"), MAX_PER_ADDR,
	    "per address: the first connections are served");
	T_OK(exchange(get, strlen(get), &rp, &closed) == 0 &&
	    rp.status == 429 && closed,
	    "per address: one more from the same address gets 429 "
	    "(status %d)", rp.status);
	T_OK(rp.body != NULL && strstr(rp.body, "\"error\"") != NULL &&
	    hdr(&rp, "retry-after") != NULL,
	    "per address: error envelope and Retry-After");
	T_EQ_INT(hold_conns(&r[MAX_PER_ADDR], 1, "127.0.0.2"), 1,
	    "per address: another address is still served");
	drop_conns(r, MAX_PER_ADDR + 1);
	still_serving("per-address cap");
	free(rp.body);
}

/* On a dual-stack socket every IPv4 client is ::ffff:a.b.c.d: each
 * must still count as an address of its own. */
static void
test_mapped_address(void)
{
	struct rd	 r[MAX_PER_ADDR + 2];
	int		 saved = port;

	port = port_mapped;
	T_EQ_INT(hold_conns(r, MAX_PER_ADDR, "127.0.0.3"), MAX_PER_ADDR,
	    "v4-mapped: the first connections from one address are served");
	T_EQ_INT(hold_conns(&r[MAX_PER_ADDR], 1, "127.0.0.3"), 0,
	    "v4-mapped: one more from that address is refused");
	T_EQ_INT(hold_conns(&r[MAX_PER_ADDR + 1], 1, "127.0.0.4"), 1,
	    "v4-mapped: another IPv4 address is served");
	port = saved;
	drop_conns(r, MAX_PER_ADDR + 2);
	still_serving("v4-mapped clients");
}

static void
test_expect(void)
{
	struct resp	 rp = { 0 };
	struct rd	 r = { .fd = tconnect() };
	char		 want[64];
	int		 closed;
	const char	*rej = "POST /reject HTTP/1.1\r\nHost: t\r\n"
			    "Content-Length: 5\r\nExpect: 100-continue\r\n\r\n";

	send_str(r.fd, "POST /echo HTTP/1.1\r\nHost: t\r\n"
	    "Content-Length: 5\r\nExpect: 100-continue\r\n\r\n");
	T_OK(read_response(&r, &rp, 0) == 0 && rp.status == 100,
	    "Expect: 100 Continue before the body");
	send_str(r.fd, "hello");
	snprintf(want, sizeof(want), "len=5 sum=%08x",
	    fnv1a(FNV_INIT, "hello", 5));
	T_OK(read_response(&r, &rp, 0) == 0 && rp.status == 200,
	    "Expect: then the response");
	expect_body(&rp, want, "Expect: body read after 100");
	close(r.fd);
	rd_free(&r);

	T_OK(exchange(rej, strlen(rej), &rp, &closed) == 0 &&
	    rp.status == 413 && closed,
	    "Expect to /reject: 413 without 100 Continue, then close");
	T_EQ_STR(hdr(&rp, "connection"), "close",
	    "Expect to /reject: Connection: close");
	free(rp.body);
}

/* The client keeps sending a body the server refused. */
static void
test_linger(void)
{
	const size_t	 total = 64 * 1024 * 1024;
	static char	 chunk[65536];
	char		 in[4096];
	size_t		 sent = 0, got = 0;
	int		 fd = tconnect(), saw413 = 0, reset = 0, eof = 0;
	int		 cut = 0;
	double		 t0 = now_s();
	ssize_t		 n;
	struct pollfd	 pfd;

	memset(chunk, 'x', sizeof(chunk));
	dprintf(fd, "POST /reject HTTP/1.1\r\nHost: t\r\n"
	    "Content-Length: %zu\r\n\r\n", total);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	while (now_s() - t0 < 15 && !reset && !(cut && eof)) {
		pfd.fd = fd;
		/* Read only once well into the body, as a careless client. */
		pfd.events = (sent < total ? POLLOUT : 0) | (!eof &&
		    (sent >= 16 * 1024 * 1024 || sent == total) ? POLLIN : 0);
		if (poll(&pfd, 1, 1000) <= 0)
			continue;
		if (pfd.revents & POLLIN) {
			n = read(fd, in + got, sizeof(in) - 1 - got);
			if (n == 0)
				eof = 1;
			if (n < 0 && errno == ECONNRESET && !saw413)
				reset = 1;
			if (n > 0) {
				got += n;
				in[got] = '\0';
				if (strncmp(in, "HTTP/1.1 413", 12) == 0)
					saw413 = 1;
			}
		}
		if ((pfd.revents & POLLOUT) && sent < total) {
			n = write(fd, chunk, total - sent < sizeof(chunk) ?
			    total - sent : sizeof(chunk));
			if (n > 0)
				sent += n;
			else if (n < 0 && errno != EAGAIN)
				cut = 1;
		}
		if ((saw413 || eof) && (sent == total || cut))
			break;
	}
	T_OK(saw413 && !reset, "64 MiB to /reject: 413 arrives, no reset");
	T_OK(sent == total && !cut, "64 MiB to /reject: the server drained "
	    "all of it, no reset while sending "
	    "(sent %zu MiB)", sent >> 20);
	close(fd);
	still_serving("refused large body");
}

static void
test_memory(void)
{
	const size_t	 total = 32 * 1024 * 1024;
	struct resp	 rp = { 0 };
	struct rd	 r = { .fd = tconnect() };
	static char	 chunk[65536];
	uint32_t	 sum = FNV_INIT;
	size_t		 off, i;
	char		 want[64];
	const char	*rss = "GET /rss HTTP/1.1\r\nHost: t\r\n\r\n";

	dprintf(r.fd, "POST /echo HTTP/1.1\r\nHost: t\r\n"
	    "Content-Length: %zu\r\n\r\n", total);
	for (off = 0; off < total; off += sizeof(chunk)) {
		for (i = 0; i < sizeof(chunk); i++)
			chunk[i] = pattern(off + i);
		sum = fnv1a(sum, chunk, sizeof(chunk));
		if (t_send_all(r.fd, chunk, sizeof(chunk)) == -1)
			break;
	}
	snprintf(want, sizeof(want), "len=%zu sum=%08x", total, sum);
	T_OK(read_response(&r, &rp, 0) == 0 && rp.status == 200,
	    "32 MiB upload answered");
	expect_body(&rp, want, "32 MiB upload: length and checksum");
	/* A slow reader of a big stream: the pipe must wait, not pile up. */
	send_str(r.fd, "GET /bigstream HTTP/1.1\r\nHost: t\r\n\r\n");
	usleep(500000);
	T_OK(read_response(&r, &rp, 0) == 0 && rp.status == 200 &&
	    rp.blen == BIG_STREAM, "48 MiB stream to a slow reader (%zu bytes)",
	    rp.blen);
	send_str(r.fd, rss);
	T_OK(read_response(&r, &rp, 0) == 0 && rp.status == 200,
	    "rss answered");
#ifdef __SANITIZE_ADDRESS__
	/* ASan's quarantine and shadow memory make the peak meaningless. */
	printf("# VmHWM %s kB not checked under AddressSanitizer\n", rp.body);
#else
	T_OK(atol(rp.body) > 0 && atol(rp.body) < 40 * 1024,
	    "server VmHWM bounded after 32 MiB in and 48 MiB out (%s kB)",
	    rp.body);
#endif
	close(r.fd);
	rd_free(&r);
	free(rp.body);
}

static void
test_responses(void)
{
	struct resp	 rp = { 0 };
	const char	*file = "GET /file HTTP/1.1\r\nHost: t\r\n\r\n";
	const char	*st = "GET /stream HTTP/1.1\r\nHost: t\r\n\r\n";
	const char	*stl = "GET /streamlen HTTP/1.1\r\nHost: t\r\n\r\n";
	const char	*sts = "GET /streamshort HTTP/1.1\r\nHost: t\r\n\r\n";
	size_t		 i, bad;

	T_OK(exchange(file, strlen(file), &rp, NULL) == 0 && rp.status == 200 &&
	    rp.blen == FILE_SIZE, "file response: %zu bytes", rp.blen);
	for (bad = 0, i = 0; i < rp.blen; i++)
		bad += (unsigned char)rp.body[i] != pattern(i);
	T_EQ_INT(bad, 0, "file response: content");

	T_OK(exchange(st, strlen(st), &rp, NULL) == 0 && rp.status == 200 &&
	    rp.blen == STREAM_SIZE, "chunked stream: %zu bytes", rp.blen);
	T_EQ_STR(hdr(&rp, "transfer-encoding"), "chunked",
	    "chunked stream: Transfer-Encoding");
	for (bad = 0, i = 0; i < rp.blen; i++)
		bad += (unsigned char)rp.body[i] != pattern(i);
	T_EQ_INT(bad, 0, "chunked stream: content");

	T_OK(exchange(stl, strlen(stl), &rp, NULL) == 0 && rp.status == 200 &&
	    rp.blen == STREAM_SIZE, "sized stream: %zu bytes", rp.blen);
	for (bad = 0, i = 0; i < rp.blen; i++)
		bad += (unsigned char)rp.body[i] != pattern(i);
	T_EQ_INT(bad, 0, "sized stream: content");

	T_OK(exchange(sts, strlen(sts), &rp, NULL) == -1,
	    "stream shorter than declared: connection cut");
	still_serving("short stream");
	free(rp.body);
}

/*
 * No header goes out with a control character in it: the response
 * becomes the layer's 500, without the handler's headers or body, and
 * the connection closes after it.
 */
static void
test_header_refusal(void)
{
	static const char *const kinds[] = { "value", "lf", "name", "space",
	    "esc", "del", "ctype", "file", "stream", "piece" };
	struct resp	 rp = { 0 };
	struct rd	 r = { 0 };
	char		 get[128];
	size_t		 i;
	int		 closed;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		snprintf(get, sizeof(get), "GET /bad/%s HTTP/1.1\r\n"
		    "Host: t\r\n\r\n", kinds[i]);
		closed = 0;
		T_OK(exchange(get, strlen(get), &rp, &closed) == 0 &&
		    rp.status == 500, "header refused (%s): 500 (got %d)",
		    kinds[i], rp.status);
		T_OK(strstr(rp.head, "evil") == NULL &&
		    hdr(&rp, "x-before") == NULL &&
		    strstr(rp.head, "\x1b") == NULL,
		    "header refused (%s): none of the handler's headers",
		    kinds[i]);
		T_OK(strstr(rp.body, "\"server_error\"") != NULL &&
		    strstr(rp.body, "anyway") == NULL &&
		    strcmp(hdr(&rp, "content-type") ? hdr(&rp,
		    "content-type") : "", "application/json") == 0,
		    "header refused (%s): the layer's JSON error, not the "
		    "handler's body", kinds[i]);
		T_OK(closed, "header refused (%s): the connection closes",
		    kinds[i]);
	}

	/* HEAD: the head of the 500, and nothing after it. */
	r.fd = tconnect();
	send_str(r.fd, "HEAD /bad/value HTTP/1.1\r\nHost: t\r\n\r\n");
	T_OK(read_response(&r, &rp, 1) == 0 && rp.status == 500 &&
	    strstr(rp.head, "evil") == NULL, "header refused (HEAD): 500");
	T_OK(closed_by_server(&r) && r.len == 0,
	    "header refused (HEAD): no body (%zu bytes)", r.len);
	close(r.fd);
	rd_free(&r);

	snprintf(get, sizeof(get), "GET /bad/tab HTTP/1.1\r\nHost: t\r\n\r\n");
	T_OK(exchange(get, strlen(get), &rp, NULL) == 0 && rp.status == 200 &&
	    strcmp(rp.body, "sent anyway") == 0, "a header with HT is sent");
	T_EQ_STR(hdr(&rp, "x-tab"), "a\tb", "HT stays in the value");
	still_serving("refused headers");
	free(rp.body);
}

static void
test_disconnect(void)
{
	struct resp	 rp = { 0 };
	const char	*active = "GET /active HTTP/1.1\r\nHost: t\r\n\r\n";
	int		 fd = tconnect();

	send_str(fd, "GET /slow HTTP/1.1\r\nHost: t\r\n\r\n");
	usleep(50000);
	close(fd);
	usleep(100000);
	/* The slow reply is due at 300 ms; on_free must come sooner. */
	T_OK(exchange(active, strlen(active), &rp, NULL) == 0 &&
	    strcmp(rp.body, "0") == 0,
	    "client gone mid-request: on_free at once (active=%s)",
	    rp.body ? rp.body : "?");
	free(rp.body);
}

/* Spread over addresses, so that only the server's own cap bites. */
static void
test_max_conns(void)
{
	struct resp	 rp = { 0 };
	struct rd	 r[MAX_CONNS];
	const char	*get = "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n";
	char		 src[32];
	int		 i, ok = 0, closed;

	usleep(200000);		/* earlier connections wind down */
	for (i = 0; i < MAX_CONNS; i += MAX_PER_ADDR) {
		snprintf(src, sizeof(src), "127.0.0.%d", 10 + i);
		ok += hold_conns(&r[i], MAX_CONNS - i < MAX_PER_ADDR ?
		    MAX_CONNS - i : MAX_PER_ADDR, src);
	}
	T_EQ_INT(ok, MAX_CONNS, "max conns: all connections served");
	T_OK(exchange(get, strlen(get), &rp, &closed) == 0 &&
	    rp.status == 503 && closed, "max conns: one more gets 503");
	T_OK(strstr(rp.body, "\"server_error\"") != NULL,
	    "max conns: server_error envelope");
	drop_conns(r, MAX_CONNS);
	still_serving("max conns");
	free(rp.body);
}

/* The access log: one line per request, never the query string. */
static void
check_log(int fd)
{
	char	*log, want[128];
	off_t	 len = lseek(fd, 0, SEEK_END);

	if (len <= 0 || (log = calloc(1, len + 1)) == NULL ||
	    pread(fd, log, len, 0) != len) {
		T_OK(0, "access log readable");
		return;
	}
	snprintf(want, sizeof(want), "GET /hello 200 0 5 ");
	T_OK(strstr(log, want) != NULL, "access log: method path status bytes");
	snprintf(want, sizeof(want), "user=tester id=%s\n", basic_id);
	T_OK(basic_id[0] != '\0' && strstr(log, want) != NULL,
	    "access log: user and the response's request-id");
	T_OK(strstr(log, "secret") == NULL, "access log: no query string");
	T_OK(strstr(log, "POST /echo 200 33554432 ") != NULL,
	    "access log: bytes in counted");
	T_OK(strstr(log, "header X-Model: m\\r\\nSet-Cookie: evil=1, "
	    "refused: the response becomes a 500") != NULL,
	    "a refused header is logged, escaped");
	T_OK(strstr(log, "Content-Type: text/plain\\r\\nSet-Cookie: evil=1, "
	    "refused") != NULL, "so is a refused Content-Type");
	T_OK(strstr(log, "GET /bad/value 500 ") != NULL,
	    "access log: the refused response's status is 500");
	free(log);
	close(fd);
}

/* Closing the listeners lets the request finish, then the loop ends. */
static void
test_shutdown(pid_t pid)
{
	struct resp		 rp = { 0 };
	struct rd		 r = { .fd = tconnect() };
	struct sockaddr_in	 sin = { .sin_family = AF_INET };
	double			 t0;
	int			 fd, status = -1, exited = 0;

	send_str(r.fd, "GET /shutdown HTTP/1.1\r\nHost: t\r\n\r\n");
	T_OK(read_response(&r, &rp, 0) == 0 && rp.status == 200 &&
	    strcmp(rp.body, "bye") == 0, "shutdown: the request is answered");
	T_EQ_STR(hdr(&rp, "connection"), "close",
	    "shutdown: Connection: close");
	T_OK(closed_by_server(&r), "shutdown: then the connection closes");
	close(r.fd);
	rd_free(&r);
	for (t0 = now_s(); now_s() - t0 < 3 && !exited; usleep(20000))
		exited = waitpid(pid, &status, WNOHANG) == pid;
	T_OK(exited && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "shutdown: the event loop ran dry, no handler state left");
	if (!exited) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	sin.sin_port = htons(port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	T_OK(connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1,
	    "shutdown: the listener is closed");
	close(fd);
	free(rp.body);
}

static int
server_fds(void)
{
	return server_number("/fds");
}

/* A dual-stack IPv6 socket on ::ffff:127.0.0.1; sets port_mapped. */
static int
listen_mapped(void)
{
	struct sockaddr_in6	 sin6 = { .sin6_family = AF_INET6 };
	socklen_t		 slen = sizeof(sin6);
	int			 fd, off = 0;

	if ((fd = socket(AF_INET6, SOCK_STREAM, 0)) == -1 ||
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off,
	    sizeof(off)) == -1 ||
	    inet_pton(AF_INET6, "::ffff:127.0.0.1", &sin6.sin6_addr) != 1 ||
	    bind(fd, (struct sockaddr *)&sin6, sizeof(sin6)) == -1 ||
	    listen(fd, 128) == -1 ||
	    getsockname(fd, (struct sockaddr *)&sin6, &slen) == -1)
		return -1;
	port_mapped = ntohs(sin6.sin6_port);
	return fd;
}

int
main(void)
{
	struct sockaddr_in	 sin = { .sin_family = AF_INET };
	socklen_t		 slen = sizeof(sin);
	pid_t			 pid;
	int			 lfd, lfd_mapped, status, fds0, logfd;
	char			 logpath[] = "/tmp/test_http.log.XXXXXX";

	signal(SIGPIPE, SIG_IGN);
	test_query_param();
	T_EQ_STR(http_status_text(431), "Request Header Fields Too Large",
	    "status text");

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((lfd = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(lfd, 128) == -1 ||
	    getsockname(lfd, (struct sockaddr *)&sin, &slen) == -1) {
		perror("listen");
		return 2;
	}
	port = ntohs(sin.sin_port);
	if ((lfd_mapped = listen_mapped()) == -1) {
		perror("listen ::ffff:127.0.0.1");
		return 2;
	}
	if ((logfd = mkstemp(logpath)) == -1)
		return 2;
	unlink(logpath);
	if ((pid = fork()) == -1)
		return 2;
	if (pid == 0) {
		dup2(logfd, STDERR_FILENO);
		/* Never outlive a test that died. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		server_main(lfd, lfd_mapped);
	}
	close(lfd);
	close(lfd_mapped);

	fds0 = server_fds();
	test_basic();
	test_keepalive_and_pipelining();
	test_http10();
	test_bodies();
	test_limits();
	test_slowloris();
	test_timeouts();
	test_huge_length();
	test_slow_drip();
	test_steady_body();
	test_held_body();
	test_expect();
	test_linger();
	test_memory();
	test_responses();
	test_header_refusal();
	test_disconnect();
	test_per_address();
	test_mapped_address();
	test_max_conns();

	usleep(100000);
	T_OK(fds0 > 0 && server_fds() == fds0, "no descriptor left open in "
	    "the server (%d before)", fds0);
	T_OK(waitpid(pid, &status, WNOHANG) == 0, "server still running");
	test_shutdown(pid);
	check_log(logfd);
	return t_done();
}
