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
 * test_imsg.c: imsg framing, descriptor passing, malformed streams,
 * partial writes and the imsgev driver, over real socketpairs; the
 * channel tables (proto.c) and their one check before dispatch.
 */
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "imsg.h"
#include "proto.h"
#include "t.h"

static int
pair(int sv[2], int nonblock)
{
	int	 type = SOCK_STREAM | (nonblock ? SOCK_NONBLOCK : 0);

	return socketpair(AF_UNIX, type, 0, sv);
}

/*
 * Waits (2 s at most) for the next complete message.  1 with *imsg
 * filled, 0 on EOF or timeout, -1 on error.
 */
static int
recv_one(struct imsgbuf *ibuf, struct imsg *imsg)
{
	struct pollfd	 pfd;
	ssize_t		 n;
	int		 rc;

	for (;;) {
		if ((rc = imsg_get(ibuf, imsg)) != 0)
			return rc;
		pfd.fd = ibuf->fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 2000) <= 0)
			return 0;
		if ((n = imsgbuf_read(ibuf)) <= 0)
			return (int)n;
	}
}

static void
test_roundtrip(void)
{
	struct imsgbuf	 a, b;
	struct imsg	 m;
	int		 sv[2], v = 42;

	T_OK(pair(sv, 0) == 0, "socketpair");
	imsgbuf_init(&a, sv[0]);
	imsgbuf_init(&b, sv[1]);
	T_EQ_INT(imsg_compose(&a, 1, 0, 0, -1, NULL, 0), 0, "compose empty");
	T_EQ_INT(imsg_compose(&a, 2, 7, 1234, -1, "hello", 5), 0,
	    "compose hello");
	T_EQ_INT(imsg_compose(&a, 3, 9, 0, -1, &v, sizeof(v)), 0,
	    "compose int");
	T_EQ_INT(imsgbuf_queuelen(&a), 3, "three queued");
	T_EQ_INT(imsgbuf_flush(&a), 0, "flush");
	T_EQ_INT(imsgbuf_queuelen(&a), 0, "queue empty after flush");

	T_EQ_INT(recv_one(&b, &m), 1, "first message");
	T_EQ_INT(m.hdr.type, 1, "type 1");
	T_EQ_INT(m.hdr.len, IMSG_HDRSIZE, "len is the header");
	T_OK(m.data == NULL && m.datalen == 0, "no payload");
	T_EQ_INT(m.fd, -1, "no fd");
	T_EQ_INT(m.hdr.pid, getpid(), "pid 0 means ours");
	imsg_free(&m);

	T_EQ_INT(recv_one(&b, &m), 1, "second message");
	T_EQ_INT(m.hdr.type, 2, "type 2");
	T_EQ_INT(m.hdr.peerid, 7, "peerid");
	T_EQ_INT(m.hdr.pid, 1234, "explicit pid");
	T_OK(m.datalen == 5 && memcmp(m.data, "hello", 5) == 0, "payload");
	imsg_free(&m);

	T_EQ_INT(recv_one(&b, &m), 1, "third message");
	T_OK(m.datalen == sizeof(v) && memcmp(m.data, &v, sizeof(v)) == 0,
	    "int payload");
	imsg_free(&m);
	T_EQ_INT(imsg_get(&b, &m), 0, "nothing more buffered");

	imsgbuf_clear(&a);
	imsgbuf_clear(&b);
	close(sv[0]);
	T_EQ_INT(imsgbuf_read(&b), 0, "EOF reads 0");
	close(sv[1]);
}

static void
test_sizes(void)
{
	struct imsgbuf	 a, b;
	struct imsg	 m;
	struct iovec	 iov[3];
	unsigned char	*big, *max;
	size_t		 maxdata = IMSG_MAXSIZE - IMSG_HDRSIZE, i;
	pid_t		 pid;
	int		 sv[2], status;

	T_OK(pair(sv, 0) == 0, "socketpair");
	imsgbuf_init(&a, sv[0]);
	imsgbuf_init(&b, sv[1]);
	big = malloc(60 * 1024);
	max = malloc(maxdata + 1);
	for (i = 0; i < 60 * 1024; i++)
		big[i] = (unsigned char)(i * 31 + 7);
	for (i = 0; i < maxdata + 1; i++)
		max[i] = (unsigned char)(i ^ 0x5a);

	T_EQ_INT(imsg_compose(&a, 10, 0, 0, -1, big, 60 * 1024), 0,
	    "compose 60 KiB");
	T_EQ_INT(imsg_compose(&a, 11, 0, 0, -1, max, maxdata), 0,
	    "compose the largest payload");
	errno = 0;
	T_EQ_INT(imsg_compose(&a, 12, 0, 0, -1, max, maxdata + 1), -1,
	    "one byte over the maximum refused");
	T_EQ_INT(errno, EMSGSIZE, "errno EMSGSIZE");
	iov[0].iov_base = max;
	iov[0].iov_len = maxdata / 2;
	iov[1].iov_base = max + maxdata / 2;
	iov[1].iov_len = maxdata - maxdata / 2;
	iov[2].iov_base = max;
	iov[2].iov_len = 1;
	errno = 0;
	T_EQ_INT(imsg_composev(&a, 13, 0, 0, -1, iov, 3), -1,
	    "composev over the maximum refused");
	T_EQ_INT(errno, EMSGSIZE, "composev errno EMSGSIZE");
	T_EQ_INT(imsg_composev(&a, 14, 0, 0, -1, iov, 2), 0,
	    "composev of two halves");
	T_EQ_INT(imsgbuf_queuelen(&a), 3, "refused messages not queued");

	/* A blocking flush of ~190 KiB needs the reader running: fork. */
	if ((pid = fork()) == 0)
		_exit(imsgbuf_flush(&a) == 0 ? 0 : 1);
	T_EQ_INT(recv_one(&b, &m), 1, "60 KiB arrives");
	T_OK(m.hdr.type == 10 && m.datalen == 60 * 1024 &&
	    memcmp(m.data, big, m.datalen) == 0, "60 KiB intact");
	imsg_free(&m);
	T_EQ_INT(recv_one(&b, &m), 1, "largest arrives");
	T_OK(m.hdr.type == 11 && m.datalen == maxdata &&
	    memcmp(m.data, max, maxdata) == 0, "largest intact");
	imsg_free(&m);
	T_EQ_INT(recv_one(&b, &m), 1, "composev message arrives");
	T_OK(m.hdr.type == 14 && m.datalen == maxdata &&
	    memcmp(m.data, max, maxdata) == 0, "composev intact");
	imsg_free(&m);
	T_OK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 0, "writer flushed without error");

	imsgbuf_clear(&a);
	imsgbuf_clear(&b);
	close(sv[0]);
	close(sv[1]);
	free(big);
	free(max);
}

static void
test_fds(void)
{
	struct imsgbuf	 a, b;
	struct imsg	 m;
	int		 sv[2], p[3][2], i, fd, ok;
	char		 c;

	T_OK(pair(sv, 0) == 0, "socketpair");
	imsgbuf_init(&a, sv[0]);
	imsgbuf_init(&b, sv[1]);
	for (i = 0; i < 3; i++) {
		if (pipe(p[i]) == -1)
			T_OK(0, "pipe");
		/* Payload i names the pipe; a plain message goes between. */
		imsg_compose(&a, 20, 0, 0, p[i][0], &i, sizeof(i));
		imsg_compose(&a, 21, 0, 0, -1, &i, sizeof(i));
	}
	T_EQ_INT(imsgbuf_flush(&a), 0, "flush with fds");
	T_OK(fcntl(p[0][0], F_GETFD) == -1 && errno == EBADF,
	    "sender closed the passed fd");

	for (i = 0; i < 3; i++) {
		T_OK(recv_one(&b, &m) == 1, "fd message %d", i);
		T_OK(m.hdr.type == 20 && (m.hdr.flags & IMSGF_HASFD) &&
		    m.fd != -1, "flagged and carries an fd");
		fd = imsg_get_fd(&m);
		T_EQ_INT(m.fd, -1, "imsg_get_fd takes it");
		T_EQ_INT(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC,
		    "received fd is close-on-exec");
		c = 'a' + i;
		ok = write(p[i][1], &c, 1) == 1;
		c = 0;
		ok = ok && read(fd, &c, 1) == 1 && c == 'a' + i &&
		    *(int *)m.data == i;
		T_OK(ok, "fd %d is pipe %d, in order", i, i);
		close(fd);
		close(p[i][1]);
		imsg_free(&m);

		T_OK(recv_one(&b, &m) == 1, "plain message %d", i);
		T_OK(m.hdr.type == 21 && m.fd == -1 &&
		    !(m.hdr.flags & IMSGF_HASFD), "plain has no fd");
		imsg_free(&m);
	}

	/* An unclaimed fd is closed by imsg_free, a queued one by clear. */
	if (pipe(p[0]) == -1)
		T_OK(0, "pipe");
	imsg_compose(&a, 22, 0, 0, p[0][0], NULL, 0);
	imsgbuf_flush(&a);
	T_EQ_INT(recv_one(&b, &m), 1, "unclaimed fd message");
	fd = m.fd;
	imsg_free(&m);
	T_OK(fcntl(fd, F_GETFD) == -1, "imsg_free closed the fd");
	close(p[0][1]);

	imsgbuf_clear(&a);
	imsgbuf_clear(&b);
	close(sv[0]);
	close(sv[1]);
}

/* Writes raw bytes, then asks imsg_get what it thinks of them. */
static void
malformed(const void *raw, size_t len, const char *what)
{
	struct imsgbuf	 b;
	struct imsg	 m;
	int		 sv[2], rc;

	if (pair(sv, 0) == -1 || write(sv[0], raw, len) != (ssize_t)len) {
		T_OK(0, "%s: setup", what);
		return;
	}
	imsgbuf_init(&b, sv[1]);
	imsgbuf_read(&b);
	errno = 0;
	rc = imsg_get(&b, &m);
	T_OK(rc == -1 && errno == EBADMSG, "%s: refused with EBADMSG", what);
	imsgbuf_clear(&b);
	close(sv[0]);
	close(sv[1]);
}

static void
test_malformed(void)
{
	struct imsg_hdr	 hdr;

	memset(&hdr, 0, sizeof(hdr));
	hdr.type = 1;
	hdr.len = 3;
	malformed(&hdr, sizeof(hdr), "len 3");
	hdr.len = IMSG_MAXSIZE + 1;
	malformed(&hdr, sizeof(hdr), "len over the maximum");
	hdr.len = IMSG_HDRSIZE;
	hdr.flags = IMSGF_HASFD;
	malformed(&hdr, sizeof(hdr), "HASFD without an fd");
}

static void
test_partial(void)
{
	struct imsgbuf	 a, b;
	struct imsg	 m;
	unsigned char	 payload[30000];
	int		 sv[2], p[2], sent = 0, got = 0, bad = 0, rounds = 0;
	int		 saw_eagain = 0, fds = 0, sndbuf = 4096, fd;
	const int	 total = 200;
	size_t		 i;
	char		 c;

	T_OK(pair(sv, 1) == 0, "non-blocking socketpair");
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	imsgbuf_init(&a, sv[0]);
	imsgbuf_init(&b, sv[1]);
	if (pipe(p) == -1)
		T_OK(0, "pipe");
	for (sent = 0; sent < total; sent++) {
		for (i = 0; i < sizeof(payload); i++)
			payload[i] = (unsigned char)(sent + i * 13);
		/* Every 40th message carries a dup of the pipe's read end. */
		imsg_compose(&a, 30, sent, 0, sent % 40 == 0 ? dup(p[0]) : -1,
		    payload, sizeof(payload) - sent);
	}
	while (got < total && rounds++ < 100000) {
		if (imsgbuf_write(&a) == -1)
			bad++;
		if (rounds == 1 && imsgbuf_queuelen(&a) > 0)
			saw_eagain = 1;
		if (imsgbuf_read(&b) == -1)
			break;
		while (imsg_get(&b, &m) == 1) {
			if (m.hdr.peerid != (uint32_t)got ||
			    m.datalen != sizeof(payload) - got)
				bad++;
			for (i = 0; i < m.datalen; i++)
				if (((unsigned char *)m.data)[i] !=
				    (unsigned char)(got + i * 13)) {
					bad++;
					break;
				}
			if ((got % 40 == 0) != (m.fd != -1))
				bad++;
			if (m.fd != -1) {
				fd = imsg_get_fd(&m);
				c = 'x';
				if (write(p[1], &c, 1) != 1 ||
				    read(fd, &c, 1) != 1 || c != 'x')
					bad++;
				close(fd);
				fds++;
			}
			imsg_free(&m);
			got++;
		}
	}
	T_OK(saw_eagain, "the first write stopped short at EAGAIN");
	T_EQ_INT(got, total, "every message arrived");
	T_EQ_INT(fds, total / 40, "every fd arrived");
	T_EQ_INT(bad, 0, "no message damaged or out of order");
	T_EQ_INT(imsgbuf_queuelen(&a), 0, "queue drained");
	close(p[0]);
	close(p[1]);
	imsgbuf_clear(&a);
	imsgbuf_clear(&b);
	close(sv[0]);
	close(sv[1]);
}

/*
 * imsgev
 */

struct side {
	struct imsgev	*iev;
	int		 dispatched;
	int		 closed;
	int		 clear_in_dispatch;
	int		 free_in_dispatch;
	int		 clear_in_closed;
	int		 last_type;
	int		 fd_ok;
	char		 why[128];
};

static void
side_dispatch(struct imsgev *iev, struct imsg *m, void *arg)
{
	struct side	*s = arg;
	int		 fd;
	char		 c = 0;

	s->dispatched++;
	s->last_type = m->hdr.type;
	if ((fd = imsg_get_fd(m)) != -1) {
		s->fd_ok = read(fd, &c, 1) == 1 && c == 'z';
		close(fd);
	}
	if (m->hdr.type == 1)
		imsgev_compose(iev, 100 + s->dispatched, 0, 0, -1, NULL, 0);
	if (s->clear_in_dispatch)
		imsgev_clear(iev);
	if (s->free_in_dispatch) {
		/* Poison first, so that a later use shows even without ASan. */
		memset(iev, 0xa5, sizeof(*iev));
		free(iev);
		s->iev = NULL;
	}
}

static void
side_closed(struct imsgev *iev, const char *why, void *arg)
{
	struct side	*s = arg;

	s->closed++;
	strlcpy(s->why, why, sizeof(s->why));
	if (s->clear_in_closed) {
		imsgev_clear(iev);
		free(iev);
		s->iev = NULL;
	}
}

/* A has to go once B heard enough; polled from a timer. */
static void
close_when_done(evutil_socket_t fd, short what, void *arg)
{
	struct side	*b = arg;
	struct side	*a = b + 1;

	if (b->dispatched >= 5 && a->dispatched >= 5 && a->iev != NULL &&
	    !a->iev->dead)
		imsgev_clear(a->iev);
}

static void
test_imsgev(void)
{
	struct event_base	*base;
	struct event		*tick;
	struct side		 sides[2];	/* [0] is B, [1] is A */
	struct side		*a = &sides[1], *b = &sides[0];
	struct timeval		 tv = { 0, 10000 }, limit = { 5, 0 };
	int			 sv[2], p[2], i;
	char			 c = 'z';

	memset(sides, 0, sizeof(sides));
	base = event_base_new();
	T_OK(pair(sv, 0) == 0, "socketpair");
	a->iev = calloc(1, sizeof(*a->iev));
	b->iev = calloc(1, sizeof(*b->iev));
	b->clear_in_closed = 1;
	T_EQ_INT(imsgev_init(a->iev, base, sv[0], side_dispatch, side_closed,
	    a), 0, "imsgev_init A");
	T_EQ_INT(imsgev_init(b->iev, base, sv[1], side_dispatch, side_closed,
	    b), 0, "imsgev_init B");
	T_OK(fcntl(sv[0], F_GETFL) & O_NONBLOCK, "made non-blocking");
	for (i = 0; i < 4; i++)
		imsgev_compose(a->iev, 1, 0, 0, -1, &i, sizeof(i));
	if (pipe(p) == -1 || write(p[1], &c, 1) != 1)
		T_OK(0, "pipe");
	close(p[1]);
	imsgev_compose(a->iev, 1, 0, 0, p[0], NULL, 0);
	T_OK(a->iev->events & EV_WRITE, "EV_WRITE armed while queued");

	tick = event_new(base, -1, EV_PERSIST, close_when_done, b);
	event_add(tick, &tv);
	event_base_loopexit(base, &limit);
	/* Stop once B has gone, whatever else is pending. */
	while (b->closed == 0 && !event_base_got_exit(base))
		event_base_loop(base, EVLOOP_ONCE);

	T_EQ_INT(b->dispatched, 5, "B got five messages");
	T_OK(b->fd_ok, "B got the fd and read through it");
	T_EQ_INT(a->dispatched, 5, "A got five replies");
	T_EQ_INT(a->last_type, 105, "replies in order");
	T_OK(!(a->iev->events & EV_WRITE), "EV_WRITE disarmed when drained");
	T_EQ_INT(b->closed, 1, "B's closed() ran once on EOF");
	T_EQ_STR(b->why, "connection closed", "closed reason");
	T_OK(b->iev == NULL, "closed() could clear and free B");
	T_EQ_INT(a->closed, 0, "clearing A did not call its closed()");
	T_EQ_INT(imsgev_compose(a->iev, 1, 0, 0, -1, NULL, 0), -1,
	    "compose on a cleared imsgev fails");

	event_free(tick);
	free(a->iev);
	event_base_free(base);
}

/*
 * dispatch() answers the first of three buffered messages, then clears
 * its imsgev, and with free_it also frees the memory, as a connection
 * object would.
 */
static void
clear_in_dispatch(int free_it)
{
	struct event_base	*base;
	struct imsgev		 embedded, *iev;
	struct imsgbuf		 peer;
	struct imsg		 m;
	struct side		 s;
	struct timeval		 limit = { 5, 0 };
	const char		*how = free_it ? "clear+free" : "clear";
	int			 sv[2], i;

	memset(&s, 0, sizeof(s));
	s.clear_in_dispatch = 1;
	s.free_in_dispatch = free_it;
	iev = free_it ? malloc(sizeof(*iev)) : &embedded;
	s.iev = iev;
	base = event_base_new();
	T_OK(pair(sv, 0) == 0, "socketpair");
	imsgbuf_init(&peer, sv[0]);
	for (i = 0; i < 3; i++)
		imsg_compose(&peer, 1, 0, 0, -1, &i, sizeof(i));
	imsgbuf_flush(&peer);
	T_OK(imsgev_init(iev, base, sv[1], side_dispatch, side_closed,
	    &s) == 0, "%s: imsgev_init", how);
	event_base_loopexit(base, &limit);
	event_base_dispatch(base);

	T_OK(s.dispatched == 1, "%s: no dispatch after clear (%d)", how,
	    s.dispatched);
	T_OK(s.closed == 0, "%s: no closed() after clear", how);
	if (!free_it)
		T_OK(iev->dead && iev->ev == NULL && iev->ibuf.fd == -1 &&
		    iev->gone == NULL, "%s: torn down", how);
	/* dispatch() queued a reply before clearing: it must be dropped. */
	T_OK(recv_one(&peer, &m) == 0 && imsgbuf_read(&peer) == 0,
	    "%s: peer sees the socket closed, no reply", how);

	imsgbuf_clear(&peer);
	close(sv[0]);
	event_base_free(base);
}

static void
test_clear_in_dispatch(void)
{
	clear_in_dispatch(0);
	clear_in_dispatch(1);
}

static void
test_malformed_ev(void)
{
	struct event_base	*base;
	struct imsgev		 iev;
	struct imsg_hdr		 hdr;
	struct side		 s;
	struct timeval		 limit = { 5, 0 };
	int			 sv[2];

	memset(&s, 0, sizeof(s));
	memset(&hdr, 0, sizeof(hdr));
	hdr.len = 2;
	base = event_base_new();
	T_OK(pair(sv, 0) == 0 &&
	    write(sv[0], &hdr, sizeof(hdr)) == sizeof(hdr), "garbage sent");
	imsgev_init(&iev, base, sv[1], side_dispatch, side_closed, &s);
	event_base_loopexit(base, &limit);
	event_base_dispatch(base);
	T_EQ_INT(s.closed, 1, "closed() on a malformed stream");
	T_OK(strncmp(s.why, "bad message", 11) == 0, "reason: %s", s.why);
	T_EQ_INT(s.dispatched, 0, "nothing dispatched");
	imsgev_clear(&iev);
	close(sv[0]);
	event_base_free(base);
}

/* A message as a dispatcher would see it, for imsg_check alone. */
static struct imsg
fake(uint32_t type, size_t len, int fd)
{
	static char	 buf[IMSG_MAXSIZE];
	struct imsg	 m;

	memset(&m, 0, sizeof(m));
	m.hdr.type = type;
	m.hdr.len = IMSG_HDRSIZE + len;
	m.data = len > 0 ? buf : NULL;
	m.datalen = len;
	m.fd = fd;
	return m;
}

static int
allowed(enum proc_role receiver, enum proc_role sender, uint32_t type,
    size_t len, int fd)
{
	const struct imsg_channel	*chan;
	struct imsg			 m = fake(type, len, fd);
	char				 why[128];

	if ((chan = proto_channel(receiver, sender)) == NULL)
		return -1;
	return imsg_check(chan, &m, why, sizeof(why)) == 0;
}

static void
test_channel_tables(void)
{
	T_EQ_INT(allowed(ROLE_STORAGE, ROLE_FRONTEND, IMSG_FILE_GET,
	    sizeof(struct file_key), -1), 1, "storage <- frontend: FILE_GET");
	T_EQ_INT(allowed(ROLE_STORAGE, ROLE_FRONTEND, IMSG_CTL_CMD,
	    sizeof(struct ctl_cmd), -1), 0,
	    "storage <- frontend: a control command is not allowed");
	T_EQ_INT(allowed(ROLE_STORAGE, ROLE_FRONTEND, IMSG_FILE_GET,
	    sizeof(struct file_key) - 1, -1), 0,
	    "storage <- frontend: FILE_GET one byte short is refused");
	T_EQ_INT(allowed(ROLE_STORAGE, ROLE_FRONTEND, IMSG_FILE_GET,
	    sizeof(struct file_key) + 1, -1), 0,
	    "storage <- frontend: FILE_GET one byte long is refused");
	T_EQ_INT(allowed(ROLE_STORAGE, ROLE_FRONTEND, IMSG_FILE_GET,
	    sizeof(struct file_key), 0), 0,
	    "storage <- frontend: an fd where none may ride is refused");
	T_EQ_INT(allowed(ROLE_STORAGE, ROLE_BROKER, IMSG_FILE_OPEN,
	    sizeof(struct file_open), -1), 0,
	    "storage <- broker: FILE_OPEN is not the broker's to send");
	T_EQ_INT(allowed(ROLE_STORAGE, ROLE_BROKER, IMSG_AUTH_LOOKUP,
	    sizeof(struct auth_lookup), -1), 0,
	    "storage <- broker: AUTH_LOOKUP is not the broker's to send");
	T_EQ_INT(allowed(ROLE_STORAGE, ROLE_BROKER, IMSG_FILE_CREATE,
	    sizeof(struct file_create), -1), 1,
	    "storage <- broker: FILE_CREATE, under a lent handle");
	T_EQ_INT(allowed(ROLE_STORAGE, ROLE_BROKER, IMSG_FILE_GET,
	    sizeof(struct file_key), -1), 0,
	    "storage <- broker: FILE_GET is not the broker's to send");
	T_EQ_INT(allowed(ROLE_STORAGE, ROLE_BROKER, IMSG_FILE_LIST,
	    sizeof(struct file_list_req), -1), 0,
	    "storage <- broker: FILE_LIST is not the broker's to send");
	T_EQ_INT(allowed(ROLE_STORAGE, ROLE_BROKER, IMSG_FILE_DELETE,
	    sizeof(struct file_key), -1), 0,
	    "storage <- broker: FILE_DELETE is not the broker's to send");
	T_EQ_INT(allowed(ROLE_STORAGE, ROLE_BROKER, IMSG_AUTH_DELEGATE,
	    sizeof(struct auth_release), -1), 0,
	    "storage <- broker: it cannot lend handles itself");
	T_EQ_INT(allowed(ROLE_BROKER, ROLE_FRONTEND, IMSG_SBX_SEED,
	    sizeof(struct sbx_seed), -1), 0,
	    "broker <- frontend: a seed without its file is refused");
	T_EQ_INT(allowed(ROLE_BROKER, ROLE_FRONTEND, IMSG_SBX_OPEN,
	    sizeof(struct sbx_open), -1), 1,
	    "broker <- frontend: SBX_OPEN");
	T_EQ_INT(allowed(ROLE_STORAGE, ROLE_FRONTEND, IMSG_FILE_CREATE,
	    sizeof(struct file_create), -1), 1,
	    "storage <- frontend: FILE_CREATE names its handle");
	T_EQ_INT(allowed(ROLE_STORAGE, ROLE_FRONTEND, IMSG_AUTH_RELEASE,
	    sizeof(struct auth_release), -1), 1,
	    "storage <- frontend: AUTH_RELEASE");
	T_EQ_INT(allowed(ROLE_STORAGE, ROLE_FRONTEND, IMSG_FILE_PROGRESS,
	    sizeof(struct file_key), -1), 1,
	    "storage <- frontend: FILE_PROGRESS");
	T_EQ_INT(allowed(ROLE_BROKER, ROLE_FRONTEND, IMSG_HEALTH_REQ, 0, -1),
	    0, "broker <- frontend: only the lease messages");
	T_EQ_INT(allowed(ROLE_EXTRACT, ROLE_FRONTEND, IMSG_EXTRACT,
	    sizeof(struct extract_req), 0), 1,
	    "extract <- frontend: EXTRACT with the PDF's fd");
	T_EQ_INT(allowed(ROLE_EXTRACT, ROLE_FRONTEND, IMSG_EXTRACT,
	    sizeof(struct extract_req), -1), 0,
	    "extract <- frontend: EXTRACT without an fd is refused");
	T_EQ_INT(allowed(ROLE_EXTRACT, ROLE_FRONTEND, IMSG_FILE_GET,
	    sizeof(struct file_key), -1), 0,
	    "extract <- frontend: nothing but EXTRACT");
	T_EQ_INT(allowed(ROLE_FRONTEND, ROLE_EXTRACT, IMSG_EXTRACTED,
	    sizeof(struct extract_res), -1), 1,
	    "frontend <- extract: EXTRACTED may come without an fd (failed)");
	T_EQ_INT(allowed(ROLE_EXTRACT, ROLE_MASTER, IMSG_CONF_SECRET,
	    sizeof(struct secret_msg), -1), 1,
	    "extract <- master: the common set-up (no secret is sent)");
	T_EQ_INT(allowed(ROLE_EXTRACT, ROLE_MASTER, IMSG_CONF_FILES,
	    sizeof(struct files_msg), -1), 0,
	    "extract <- master: no configuration part");
	T_EQ_INT(allowed(ROLE_EXTRACT, ROLE_STORAGE, IMSG_FILE_INFO,
	    sizeof(struct file_rec), -1), -1,
	    "extract <- storage: no channel at all");
	T_EQ_INT(allowed(ROLE_FRONTEND, ROLE_STORAGE, IMSG_FILE_CREATED,
	    sizeof(struct file_rec), -1), 0,
	    "frontend <- storage: FILE_CREATED without its fd is refused");
	T_EQ_INT(allowed(ROLE_FRONTEND, ROLE_STORAGE, IMSG_FILE_CREATED,
	    sizeof(struct file_rec), 0), 1,
	    "frontend <- storage: FILE_CREATED with its fd");
	T_EQ_INT(allowed(ROLE_FRONTEND, ROLE_STORAGE, IMSG_FILE_OPENED,
	    sizeof(struct file_opened), -1), 1,
	    "frontend <- storage: FILE_OPENED may come without an fd (416)");
	T_EQ_INT(allowed(ROLE_FRONTEND, ROLE_MASTER, IMSG_CONF_STORE,
	    sizeof(struct store_msg), -1), 0,
	    "frontend <- master: the store's settings are not a frontend's");
	T_EQ_INT(allowed(ROLE_STORAGE, ROLE_MASTER, IMSG_LISTEN_FD, 0, 0), 0,
	    "storage <- master: no listening socket");
	/* show models: a frontend answers (the master relays only the
	 * answer of the child the command went to: master_control.c). */
	T_EQ_INT(allowed(ROLE_MASTER, ROLE_FRONTEND, IMSG_CTL_LINE, 5, -1), 1,
	    "master <- frontend: control lines (depotctl show models)");
	T_EQ_INT(allowed(ROLE_MASTER, ROLE_FRONTEND, IMSG_CTL_LINE,
	    CTL_LINE_MAX + 1, -1), 0,
	    "master <- frontend: a control line over its maximum");
	T_EQ_INT(allowed(ROLE_MASTER, ROLE_STORAGE, IMSG_CTL_LINE,
	    CTL_LINE_MAX + 1, -1), 0,
	    "master <- storage: a control line over its maximum");
	T_EQ_INT(allowed(ROLE_MASTER, ROLE_STORAGE, IMSG_CTL_LINE, 1, -1), 1,
	    "master <- storage: a one-byte control line");
	T_OK(proto_channel(ROLE_FRONTEND, ROLE_FRONTEND) == NULL,
	    "frontends have no channel to each other");
}

/* Sends one message with an fd the header does not announce. */
static void
send_stray_fd(int sock)
{
	union {
		struct cmsghdr	 hdr;
		char		 buf[CMSG_SPACE(sizeof(int))];
	} cm;
	struct imsg_hdr	 hdr;
	struct msghdr	 msg;
	struct iovec	 iov;
	int		 fd = STDIN_FILENO;

	memset(&hdr, 0, sizeof(hdr));
	hdr.type = IMSG_HEALTH_REQ;
	hdr.len = IMSG_HDRSIZE;
	memset(&msg, 0, sizeof(msg));
	memset(&cm, 0, sizeof(cm));
	iov.iov_base = &hdr;
	iov.iov_len = sizeof(hdr);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cm.buf;
	msg.msg_controllen = sizeof(cm.buf);
	CMSG_FIRSTHDR(&msg)->cmsg_len = CMSG_LEN(sizeof(int));
	CMSG_FIRSTHDR(&msg)->cmsg_level = SOL_SOCKET;
	CMSG_FIRSTHDR(&msg)->cmsg_type = SCM_RIGHTS;
	memcpy(CMSG_DATA(CMSG_FIRSTHDR(&msg)), &fd, sizeof(fd));
	if (sendmsg(sock, &msg, 0) == -1)
		T_OK(0, "sendmsg");
}

/*
 * One good message, then a bad one (how: 0 a type not allowed, 1 a
 * wrong size, 2 an fd on a channel without fds, 3 an fd no header
 * claims), on the storage <- frontend table made non-fatal: the good
 * one is dispatched, the bad one never, and the channel is closed.
 * (With a stray fd, the message that arrived with it is the one
 * refused: once it is taken, the fd is left over.)
 */
static void
channel_refuses(int how)
{
	static const char	*what[] = { "a type not allowed",
				    "a wrong size", "an fd on a channel without fds",
				    "an fd no message claims" };
	struct imsg_channel	 chan = *proto_channel(ROLE_STORAGE,
				    ROLE_FRONTEND);
	struct event_base	*base = event_base_new();
	struct imsgbuf		 peer;
	struct imsgev		 iev;
	struct side		 s;
	struct timeval		 limit = { 5, 0 };
	struct file_key		 fk;
	int			 sv[2];

	memset(&s, 0, sizeof(s));
	memset(&fk, 0, sizeof(fk));
	chan.fatal = 0;
	T_OK(pair(sv, 0) == 0, "socketpair");
	imsgbuf_init(&peer, sv[0]);
	imsg_compose(&peer, IMSG_FILE_GET, 0, 0, -1, &fk, sizeof(fk));
	if (how == 0)
		imsg_compose(&peer, IMSG_CTL_CMD, 0, 0, -1, NULL, 0);
	else if (how == 1)
		imsg_compose(&peer, IMSG_FILE_GET, 0, 0, -1, &fk, 3);
	else if (how == 2)
		imsg_compose(&peer, IMSG_HEALTH_REQ, 0, 0, dup(STDIN_FILENO),
		    NULL, 0);
	imsgbuf_flush(&peer);
	if (how == 3)
		send_stray_fd(sv[0]);
	imsgev_init(&iev, base, sv[1], side_dispatch, side_closed, &s);
	imsgev_set_channel(&iev, &chan);
	event_base_loopexit(base, &limit);
	event_base_dispatch(base);
	T_OK(s.dispatched == 1,
	    "%s: only the good messages dispatched (%d)", what[how],
	    s.dispatched);
	T_OK(s.closed == 1 && strncmp(s.why, "refused message", 15) == 0,
	    "%s: the channel is closed (%s)", what[how], s.why);
	imsgev_clear(&iev);
	imsgbuf_clear(&peer);
	close(sv[0]);
	event_base_free(base);
}

/* Between depotd's processes a refused message ends the receiver. */
static void
test_channel_fatal(void)
{
	struct event_base	*base;
	struct imsgbuf		 peer;
	struct imsgev		 iev;
	struct side		 s;
	int			 sv[2], status = 0;
	pid_t			 pid;

	T_OK(pair(sv, 0) == 0, "socketpair");
	imsgbuf_init(&peer, sv[0]);
	imsg_compose(&peer, IMSG_AUTH_LOOKUP, 0, 0, -1, NULL, 0);
	imsgbuf_flush(&peer);
	if ((pid = fork()) == 0) {
		memset(&s, 0, sizeof(s));
		base = event_base_new();
		imsgev_init(&iev, base, sv[1], side_dispatch, side_closed, &s);
		imsgev_set_channel(&iev, proto_channel(ROLE_STORAGE,
		    ROLE_FRONTEND));
		event_base_dispatch(base);
		_exit(s.dispatched > 0 ? 3 : 0);
	}
	waitpid(pid, &status, 0);
	T_OK(WIFEXITED(status) && WEXITSTATUS(status) == 1,
	    "a short AUTH_LOOKUP from a frontend is fatal (status %d)",
	    WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	imsgbuf_clear(&peer);
	close(sv[0]);
	close(sv[1]);
}

static void
test_channels(void)
{
	int	 how;

	test_channel_tables();
	for (how = 0; how < 4; how++)
		channel_refuses(how);
	test_channel_fatal();
}

int
main(void)
{
	test_roundtrip();
	test_sizes();
	test_fds();
	test_malformed();
	test_partial();
	test_imsgev();
	test_clear_in_dispatch();
	test_malformed_ev();
	test_channels();
	return t_done();
}
