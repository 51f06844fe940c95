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
 * test_http_write.c: how the HTTP layer writes replies.  A reply is
 * written as soon as it is queued, with no EPOLLOUT armed for it (the
 * server's epoll_ctl calls are counted: this file's epoll_ctl stands in
 * for libc's); and what the socket does not take still arrives, whole
 * and in order, to a reader slower than the socket buffer, while a
 * stream to a client that stopped reading is held to its watermark.
 */
#include <sys/types.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/event.h>

#include "http.h"
#include "log.h"
#include "t.h"
#include "tsock.h"

#define BIG		(4 * 1024 * 1024)	/* past any socket buffer */
#define PIECE		(64 * 1024)
#define PIECES_TOTAL	(16 * 1024 * 1024)
#define WATERMARK	(256 * 1024)		/* write_watermark */
#define STREAM_HIGH	(1024 * 1024)		/* STREAM_HIGH_WATER */
#define STREAM_READ_MAX	(128 * 1024)		/* one stream read */
#define TRIPS		50

static int	 port;
static long	 nepoll_ctl;	/* in the server */

/* libevent's calls land here; counted, then passed on to the kernel. */
int
epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	nepoll_ctl++;
	return syscall(SYS_epoll_ctl, epfd, op, fd, ev);
}

static unsigned char
pattern(uint64_t i)
{
	return (unsigned char)(i % 251);
}

/* The server side, in the child. */

static struct event_base	*sbase;
static struct http_request	*watched;	/* its output is sampled */
static size_t			 max_pending;
static size_t			 produced;
static unsigned char		*bigbuf;

static void
reply_num(struct http_request *req, long n)
{
	char	 buf[32];

	snprintf(buf, sizeof(buf), "%ld", n);
	http_reply(req, 200, "text/plain", buf, strlen(buf));
}

/* Pieces of a chunked reply, each while the output is at its mark. */
static void
pieces_more(struct http_request *req, void *arg)
{
	unsigned char	 buf[PIECE];
	size_t		 i;

	while (produced < PIECES_TOTAL &&
	    http_reply_pending(req) <= WATERMARK) {
		for (i = 0; i < PIECE; i++)
			buf[i] = pattern(produced + i);
		if (http_reply_data(req, buf, PIECE) == -1)
			return;
		produced += PIECE;
	}
	if (produced == PIECES_TOTAL)
		http_reply_end(req);
	else
		http_reply_ondrain(req, pieces_more, NULL);
}

static void
route_file(struct http_request *req)
{
	char	 path[] = "/tmp/test_http_write.XXXXXX";
	int	 fd;

	if ((fd = mkstemp(path)) == -1 ||
	    write(fd, bigbuf, BIG) != BIG)
		abort();
	unlink(path);
	http_reply_file(req, 200, "application/octet-stream", fd, 0, BIG);
}

/* A pipe fed by a grandchild that writes BIG bytes of the pattern. */
static void
route_stream(struct http_request *req)
{
	int	 p[2];

	if (pipe(p) == -1)
		abort();
	switch (fork()) {
	case -1:
		abort();
	case 0:
		close(p[0]);
		_exit(write(p[1], bigbuf, BIG) == BIG ? 0 : 1);
	}
	close(p[1]);
	watched = req;
	max_pending = 0;
	http_reply_stream_fd(req, 200, "application/octet-stream", p[0],
	    -1);
}

static void
on_request(struct http_request *req, void *arg)
{
	const char	*p = req->path;

	if (strcmp(p, "/hello") == 0)
		http_reply(req, 200, "text/plain", "hello", 5);
	else if (strcmp(p, "/epollctl") == 0)
		reply_num(req, nepoll_ctl);
	else if (strcmp(p, "/maxpending") == 0)
		reply_num(req, (long)max_pending);
	else if (strcmp(p, "/produced") == 0)
		reply_num(req, (long)produced);
	else if (strcmp(p, "/big") == 0)
		http_reply(req, 200, "application/octet-stream", bigbuf, BIG);
	else if (strcmp(p, "/file") == 0)
		route_file(req);
	else if (strcmp(p, "/stream") == 0)
		route_stream(req);
	else if (strcmp(p, "/pieces") == 0) {
		watched = req;
		max_pending = produced = 0;
		http_reply_start(req, 200, "application/octet-stream", -1);
		pieces_more(req, NULL);
	} else
		http_reply(req, 404, "text/plain", "no", 2);
}

static void
on_free(struct http_request *req, void *arg)
{
	if (req == watched)
		watched = NULL;
}

static void
sample_cb(evutil_socket_t fd, short what, void *arg)
{
	size_t	 n;

	if (watched != NULL && (n = http_reply_pending(watched)) >
	    max_pending)
		max_pending = n;
}

static void
server_main(int lfd)
{
	struct http_handler	 h = { on_request, NULL, NULL, on_free, NULL };
	struct http_limits	 lim;
	struct http_server	*srv;
	struct timeval		 tv = { 0, 2000 };
	struct event		*sample;
	size_t			 i;

	signal(SIGCHLD, SIG_IGN);
	log_init("test_http_write", 1, 0);
	if ((bigbuf = malloc(BIG)) == NULL)
		_exit(1);
	for (i = 0; i < BIG; i++)
		bigbuf[i] = pattern(i);
	http_limits_default(&lim);
	lim.write_watermark = WATERMARK;
	if ((sbase = event_base_new()) == NULL ||
	    (srv = http_server_new(sbase, &lim, &h)) == NULL ||
	    http_server_listen_fd(srv, lfd) == -1 ||
	    (sample = event_new(sbase, -1, EV_PERSIST, sample_cb,
	    NULL)) == NULL)
		_exit(1);
	event_add(sample, &tv);
	event_base_dispatch(sbase);
	_exit(0);
}

/* The client side, in the parent. */

static int
tconnect(int rcvbuf)
{
	struct sockaddr_in	 sin = { .sin_family = AF_INET };
	struct timeval		 tv = { 10, 0 };
	int			 fd;

	sin.sin_port = htons(port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		exit(2);
	/* Before connect, so that the window is small from the start. */
	if (rcvbuf > 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
		    sizeof(rcvbuf));
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
		perror("connect");
		exit(2);
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/* One byte at a time is slow but simple: used for the head only. */
static int
read_head(int fd, char *head, size_t cap)
{
	size_t	 n = 0;

	while (n + 1 < cap && read(fd, head + n, 1) == 1) {
		head[++n] = '\0';
		if (n >= 4 && memcmp(head + n - 4, "\r\n\r\n", 4) == 0)
			return atoi(head + 9);
	}
	return -1;
}

/* A body of Content-Length bytes, or a chunked one; its length. */
static ssize_t
read_body(int fd, const char *head, unsigned char **bodyp)
{
	const char	*cl = strcasestr(head, "\r\nContent-Length: ");
	unsigned char	*body = NULL;
	size_t		 len = 0, n;
	char		 line[32];

	if (cl != NULL) {
		len = strtoul(cl + 18, NULL, 10);
		if ((body = malloc(len + 1)) == NULL ||
		    t_read_full(fd, body, len) == -1)
			return -1;
		*bodyp = body;
		return len;
	}
	for (;;) {
		n = 0;
		line[0] = '\0';
		while (n + 1 < sizeof(line) && read(fd, line + n, 1) == 1 &&
		    line[n] != '\n')
			n++;
		line[n] = '\0';
		if ((n = strtoul(line, NULL, 16)) == 0)
			break;
		if ((body = realloc(body, len + n + 2)) == NULL ||
		    t_read_full(fd, body + len, n + 2) == -1)
			return -1;
		len += n;
	}
	t_read_full(fd, (unsigned char *)line, 2);	/* the last CRLF */
	*bodyp = body;
	return len;
}

static long
server_number(const char *path)
{
	char		 head[4096], req[128];
	unsigned char	*body = NULL;
	long		 v = -1;
	int		 fd = tconnect(0);

	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: t\r\n"
	    "Connection: close\r\n\r\n", path);
	if (write(fd, req, strlen(req)) > 0 &&
	    read_head(fd, head, sizeof(head)) == 200 &&
	    read_body(fd, head, &body) > 0)
		v = atol((char *)body);
	free(body);
	close(fd);
	return v;
}

static size_t
pattern_bad(const unsigned char *p, size_t len)
{
	size_t	 i, bad = 0;

	for (i = 0; i < len; i++)
		bad += p[i] != pattern(i);
	return bad;
}

static void
test_at_once(void)
{
	const char	*get = "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n";
	char		 head[4096];
	unsigned char	*body;
	long		 before, after;
	int		 fd = tconnect(0), i, ok = 0;

	before = server_number("/epollctl");
	for (i = 0; i < TRIPS; i++) {
		body = NULL;
		if (write(fd, get, strlen(get)) > 0 &&
		    read_head(fd, head, sizeof(head)) == 200 &&
		    read_body(fd, head, &body) == 5 &&
		    memcmp(body, "hello", 5) == 0)
			ok++;
		free(body);
	}
	close(fd);
	after = server_number("/epollctl");
	T_EQ_INT(ok, TRIPS, "keep-alive round trips answered");
	/* The two /epollctl connections cost an ADD and a DEL each. */
	T_OK(before >= 0 && after - before <= 8,
	    "replies written at once: %ld epoll_ctl for %d round trips "
	    "(EPOLLOUT armed per reply would be %d or more)",
	    after - before, TRIPS, 2 * TRIPS);
}

/* A reply far past the socket buffers to a reader that waits first. */
static void
test_slow_reader(const char *path, const char *what)
{
	char		 head[4096], req[128];
	unsigned char	*body = NULL;
	ssize_t		 len;
	int		 fd = tconnect(4096);

	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: t\r\n\r\n"
	    "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n", path);
	if (write(fd, req, strlen(req)) <= 0)
		return;
	usleep(300000);
	T_OK(read_head(fd, head, sizeof(head)) == 200 &&
	    (len = read_body(fd, head, &body)) == BIG,
	    "%s to a slow reader: all %d bytes", what, BIG);
	T_EQ_INT(body != NULL ? pattern_bad(body, BIG) : 1, 0,
	    "  and in order");
	free(body);
	body = NULL;
	T_OK(read_head(fd, head, sizeof(head)) == 200 &&
	    read_body(fd, head, &body) == 5 && memcmp(body, "hello", 5) == 0,
	    "%s: the pipelined request after it answered", what);
	free(body);
	close(fd);
}

/* A client that stops reading: the producer must stop too. */
static void
test_stalled(const char *path, size_t bound, const char *what)
{
	char		 head[4096], req[128];
	unsigned char	*body = NULL;
	long		 maxp;
	ssize_t		 len;
	int		 fd = tconnect(4096);

	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: t\r\n\r\n",
	    path);
	if (write(fd, req, strlen(req)) <= 0)
		return;
	sleep(1);
	maxp = server_number("/maxpending");
	T_OK(maxp > 0 && (size_t)maxp <= bound,
	    "%s to a client that stopped reading: %ld bytes held unsent "
	    "(at most %zu)", what, maxp, bound);
	if (strcmp(path, "/pieces") == 0)
		T_OK(server_number("/produced") < PIECES_TOTAL / 2,
		    "%s: the producer waits (%ld bytes made)", what,
		    server_number("/produced"));
	len = read_head(fd, head, sizeof(head)) == 200 ?
	    read_body(fd, head, &body) : -1;
	T_OK(len == (strcmp(path, "/pieces") == 0 ? PIECES_TOTAL : BIG) &&
	    pattern_bad(body, len) == 0,
	    "%s: whole and in order once read (%zd bytes)", what, len);
	free(body);
	close(fd);
}

int
main(void)
{
	struct sockaddr_in	 sin = { .sin_family = AF_INET };
	socklen_t		 slen = sizeof(sin);
	pid_t			 pid;
	int			 lfd, lfd_log;

	signal(SIGPIPE, SIG_IGN);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((lfd = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(lfd, 128) == -1 ||
	    getsockname(lfd, (struct sockaddr *)&sin, &slen) == -1) {
		perror("listen");
		return 2;
	}
	port = ntohs(sin.sin_port);
	if ((pid = fork()) == -1)
		return 2;
	if (pid == 0) {
		/* The access log is no part of the test's output. */
		if ((lfd_log = open("/dev/null", O_WRONLY)) != -1)
			dup2(lfd_log, STDERR_FILENO);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		server_main(lfd);
	}
	close(lfd);
	usleep(100000);
	test_at_once();
	test_slow_reader("/big", "4 MiB reply from memory");
	test_slow_reader("/file", "file reply (sendfile)");
	test_slow_reader("/stream", "stream reply");
	test_stalled("/pieces", WATERMARK + PIECE + 64, "piecewise reply");
	test_stalled("/stream", STREAM_HIGH + STREAM_READ_MAX + 64,
	    "stream reply");
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	return t_done();
}
