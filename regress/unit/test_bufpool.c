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
 * test_bufpool.c: the read blocks of lib/bufpool.c, on their own and
 * under a real http_server: blocks come back once drained, the free
 * list stays bounded, a connection holds no more than its read
 * watermark and an idle one holds none, and a large body is read
 * without a block allocated per read.
 *
 * The server runs in a child on an ephemeral 127.0.0.1 port; GET /pool
 * answers the child's pool figures as "out=N idle=N made=N".
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "bufpool.h"
#include "http.h"
#include "log.h"
#include "t.h"
#include "tsock.h"

#define BIG_BODY	(16 * 1024 * 1024)
#define PIPE_BODY	(4 * 1024 * 1024)
#define IDLE_CONNS	20

static int	 port;

/* Server. */

struct held {
	struct http_request	*req;
	struct event		*ev;
	size_t			 len;
};

static struct event_base	*sbase;

static void
reply_text(struct http_request *req, const char *text)
{
	http_reply(req, 200, "text/plain", text, strlen(text));
}

static void
slow_reply(evutil_socket_t fd, short what, void *arg)
{
	struct held	*h = arg;

	reply_text(h->req, "slow");
}

static void
on_request(struct http_request *req, void *arg)
{
	struct bufpool_stats	 st;
	struct held		*h;
	char			 buf[96];

	if (strcmp(req->path, "/pool") == 0) {
		bufpool_stats(&st);
		snprintf(buf, sizeof(buf), "out=%zu idle=%zu made=%zu",
		    st.out, st.idle, st.made);
		reply_text(req, buf);
		return;
	}
	if ((h = calloc(1, sizeof(*h))) == NULL)
		abort();
	h->req = req;
	h->ev = evtimer_new(sbase, slow_reply, h);
	req->arg = h;
	/* /slow: answered a second later; what follows it waits. */
	if (strcmp(req->path, "/slow") == 0) {
		struct timeval	 tv = { 1, 0 };

		evtimer_add(h->ev, &tv);
		return;
	}
	http_body_accept(req);
}

static void
on_body(struct http_request *req, const void *data, size_t len, void *arg)
{
	struct held	*h = req->arg;

	h->len += len;
}

static void
on_body_end(struct http_request *req, void *arg)
{
	struct held	*h = req->arg;
	char		 buf[64];

	snprintf(buf, sizeof(buf), "len=%zu", h->len);
	reply_text(req, buf);
}

static void
on_free(struct http_request *req, void *arg)
{
	struct held	*h = req->arg;

	if (h == NULL)
		return;
	event_free(h->ev);
	free(h);
}

static void
server_main(int lfd)
{
	struct http_handler	 hd = { on_request, on_body, on_body_end,
				    on_free, NULL };
	struct http_limits	 lim;
	struct http_server	*srv;

	log_init("test_bufpool", 1, 0);
	http_limits_default(&lim);
	lim.body_timeout = 10;
	if ((sbase = event_base_new()) == NULL ||
	    (srv = http_server_new(sbase, &lim, &hd)) == NULL ||
	    http_server_listen_fd(srv, lfd) == -1)
		_exit(1);
	event_base_dispatch(sbase);
	_exit(0);
}

/* Client. */

static int
tconnect(void)
{
	struct sockaddr_in	 sin = { .sin_family = AF_INET };
	int			 fd;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(port);
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
		perror("connect");
		exit(2);
	}
	return fd;
}

/*
 * Reads one response with a Content-Length, its body into body, and
 * not a byte of the next: it is peeked at until it is all there.
 */
static int
read_reply(int fd, char *body, size_t cap)
{
	char		 buf[4096], *end, *cl;
	size_t		 want, whole;
	ssize_t		 n;

	for (;;) {
		if ((n = recv(fd, buf, sizeof(buf) - 1, MSG_PEEK)) <= 0)
			return -1;
		buf[n] = '\0';
		if ((end = strstr(buf, "\r\n\r\n")) != NULL &&
		    (cl = strcasestr(buf, "content-length:")) != NULL) {
			want = strtoul(cl + 15, NULL, 10);
			end += 4;
			whole = end - buf + want;
			if (want >= cap || whole >= sizeof(buf))
				return -1;
			if ((size_t)n >= whole)
				break;
		}
		usleep(1000);
	}
	if (recv(fd, buf, whole, 0) != (ssize_t)whole)
		return -1;
	memcpy(body, end, want);
	body[want] = '\0';
	return 0;
}

static int
pool_get(int fd, struct bufpool_stats *st)
{
	static const char get[] = "GET /pool HTTP/1.1\r\nHost: t\r\n\r\n";
	char		 body[128];

	if (t_send_all(fd, get, sizeof(get) - 1) == -1 ||
	    read_reply(fd, body, sizeof(body)) == -1 ||
	    sscanf(body, "out=%zu idle=%zu made=%zu", &st->out, &st->idle,
	    &st->made) != 3)
		return -1;
	return 0;
}

static int
post(int fd, const char *path, size_t len)
{
	static char	 chunk[65536];
	char		 head[256];
	size_t		 n;

	memset(chunk, 'x', sizeof(chunk));
	snprintf(head, sizeof(head), "POST %s HTTP/1.1\r\nHost: t\r\n"
	    "Content-Length: %zu\r\n\r\n", path, len);
	if (t_send_all(fd, head, strlen(head)) == -1)
		return -1;
	for (; len > 0; len -= n) {
		n = len < sizeof(chunk) ? len : sizeof(chunk);
		if (t_send_all(fd, chunk, n) == -1)
			return -1;
	}
	return 0;
}

/* Tests. */

static void
test_pool_alone(void)
{
	struct bufpool_stats	 st;
	struct evbuffer		*buf;
	void			*b[2 * BUFPOOL_KEEP], *a, *c;
	size_t			 i;

	a = bufpool_get();
	bufpool_put(a);
	c = bufpool_get();
	T_OK(a != NULL && a == c, "a returned block is the next one taken");
	bufpool_put(c);
	bufpool_stats(&st);
	T_EQ_INT(st.made, 1, "one block made for two takes");

	for (i = 0; i < 2 * BUFPOOL_KEEP; i++)
		b[i] = bufpool_get();
	for (i = 0; i < 2 * BUFPOOL_KEEP; i++)
		bufpool_put(b[i]);
	bufpool_stats(&st);
	T_EQ_INT(st.out, 0, "every block back");
	T_EQ_INT(st.idle, BUFPOOL_KEEP, "the free list keeps BUFPOOL_KEEP");

	buf = evbuffer_new();
	a = bufpool_get();
	memset(a, 'y', 3000);
	T_OK(bufpool_add(buf, a, 0, 1000) == 0 &&
	    bufpool_add(buf, a, 1000, 2000) == 0,
	    "two spans of a block handed to an evbuffer");
	T_EQ_INT(bufpool_refs(a), 3, "the taker's reference and the spans'");
	bufpool_put(a);
	evbuffer_drain(buf, 2999);
	bufpool_stats(&st);
	T_EQ_INT(st.out, 1, "held while a byte of it is unread");
	evbuffer_drain(buf, 1);
	bufpool_stats(&st);
	T_EQ_INT(st.out, 0, "back once drained");
	a = bufpool_get();
	bufpool_add(buf, a, 0, 10);
	bufpool_put(a);
	evbuffer_free(buf);
	bufpool_stats(&st);
	T_EQ_INT(st.out, 0, "back when the evbuffer is freed");
	bufpool_trim();
	bufpool_stats(&st);
	T_EQ_INT(st.idle, 0, "trim frees the idle blocks");
}

static void
test_big_body(void)
{
	struct bufpool_stats	 st0, st;
	char			 body[64];
	int			 fd = tconnect();

	T_OK(pool_get(fd, &st0) == 0, "pool figures");
	T_OK(post(fd, "/sink", BIG_BODY) == 0 &&
	    read_reply(fd, body, sizeof(body)) == 0 &&
	    strtoul(body + 4, NULL, 10) == BIG_BODY, "16 MiB body read: %s",
	    body);
	T_OK(pool_get(fd, &st) == 0, "pool figures after it");
	T_EQ_INT(st.out, 0, "no block held after the body");
	T_OK(st.made - st0.made <= 1 + (1024 * 1024) / BUFPOOL_BLOCK,
	    "blocks made for 16 MiB: %zu, not one per read",
	    st.made - st0.made);
	close(fd);
}

/*
 * Pipelined input waits behind a slow response, read up to the 1 MiB
 * watermark and no further: the blocks holding it are the bound.
 */
static void
test_pipelined(void)
{
	static const char slow[] = "GET /slow HTTP/1.1\r\nHost: t\r\n\r\n";
	struct bufpool_stats	 st;
	char			 body[64];
	int			 fd = tconnect(), q = tconnect();
	pid_t			 pid;

	if ((pid = fork()) == 0) {
		if (t_send_all(fd, slow, sizeof(slow) - 1) == 0)
			post(fd, "/sink", PIPE_BODY);
		_exit(0);
	}
	usleep(500000);
	T_OK(pool_get(q, &st) == 0, "pool figures behind a slow response");
	T_OK(st.out >= 1 && st.out <= (1024 * 1024) / BUFPOOL_BLOCK + 2,
	    "pipelined input holds %zu blocks, within the 1 MiB watermark",
	    st.out);
	T_OK(read_reply(fd, body, sizeof(body)) == 0 &&
	    strcmp(body, "slow") == 0, "the slow response");
	T_OK(read_reply(fd, body, sizeof(body)) == 0 &&
	    strtoul(body + 4, NULL, 10) == PIPE_BODY,
	    "the pipelined body read: %s", body);
	T_OK(pool_get(q, &st) == 0 && st.out == 0, "all back after it");
	waitpid(pid, NULL, 0);
	close(fd);
	close(q);
}

static void
test_idle_conns(void)
{
	static const char part[] = "POST /sink HTTP/1.1\r\nHost: t\r\n"
	    "X-Pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n";
	struct bufpool_stats	 st;
	int			 fds[IDLE_CONNS], q, i;

	for (i = 0; i < IDLE_CONNS; i++) {
		fds[i] = tconnect();
		t_send_all(fds[i], part, sizeof(part) - 1);
	}
	usleep(200000);
	q = tconnect();
	T_OK(pool_get(q, &st) == 0, "pool figures with idle connections");
	T_EQ_INT(st.out, 0, "connections waiting on a small read hold no "
	    "block");
	for (i = 0; i < IDLE_CONNS; i++)
		close(fds[i]);
	close(q);
}

int
main(void)
{
	struct sockaddr_in	 sin = { .sin_family = AF_INET };
	socklen_t		 slen = sizeof(sin);
	pid_t			 pid;
	int			 lfd;

	signal(SIGPIPE, SIG_IGN);
	test_pool_alone();
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
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		server_main(lfd);
	}
	close(lfd);
	test_big_body();
	test_pipelined();
	test_idle_conns();
	kill(pid, SIGTERM);
	return t_done();
}
