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
 * imsg.c: framed messages with descriptor passing over a unix socket,
 * and the libevent driver around them (imsgev).  Written for depotd on
 * the model of OpenBSD's imsg; see imsg.h for the contract.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/util.h>

#include "log.h"
#include "imsg.h"

/* How many queued messages one sendmsg may gather. */
#define IMSG_WRITE_BATCH	64

struct imsg_out {
	TAILQ_ENTRY(imsg_out)	 entry;
	unsigned char		*buf;	/* header and payload */
	size_t			 len;
	size_t			 off;	/* bytes already sent */
	int			 fd;	/* to attach, -1 once sent */
};

struct imsg_fd {
	TAILQ_ENTRY(imsg_fd)	 entry;
	int			 fd;
};

int
imsgbuf_init(struct imsgbuf *ibuf, int fd)
{
	if (fd < 0) {
		errno = EBADF;
		return -1;
	}
	ibuf->fd = fd;
	ibuf->pid = getpid();
	ibuf->rlen = 0;
	TAILQ_INIT(&ibuf->outq);
	ibuf->outq_len = 0;
	TAILQ_INIT(&ibuf->fdq);
	return 0;
}

static void
imsg_out_free(struct imsg_out *out)
{
	if (out->fd != -1)
		close(out->fd);
	free(out->buf);
	free(out);
}

void
imsgbuf_clear(struct imsgbuf *ibuf)
{
	struct imsg_out	*out;
	struct imsg_fd	*qfd;

	while ((out = TAILQ_FIRST(&ibuf->outq)) != NULL) {
		TAILQ_REMOVE(&ibuf->outq, out, entry);
		imsg_out_free(out);
	}
	ibuf->outq_len = 0;
	while ((qfd = TAILQ_FIRST(&ibuf->fdq)) != NULL) {
		TAILQ_REMOVE(&ibuf->fdq, qfd, entry);
		close(qfd->fd);
		free(qfd);
	}
	ibuf->rlen = 0;
}

size_t
imsgbuf_queuelen(const struct imsgbuf *ibuf)
{
	return ibuf->outq_len;
}

/* Queues every descriptor of one control message, in order. */
static int
imsgbuf_take_fds(struct imsgbuf *ibuf, struct msghdr *msg)
{
	struct cmsghdr	*cmsg;
	struct imsg_fd	*qfd;
	int		*fds, nfds, i, rc = 0;

	for (cmsg = CMSG_FIRSTHDR(msg); cmsg != NULL;
	    cmsg = CMSG_NXTHDR(msg, cmsg)) {
		if (cmsg->cmsg_level != SOL_SOCKET ||
		    cmsg->cmsg_type != SCM_RIGHTS)
			continue;
		fds = (int *)CMSG_DATA(cmsg);
		nfds = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < nfds; i++) {
			/* Without a queue slot the fd can only be closed. */
			if (rc == -1 || (qfd = malloc(sizeof(*qfd))) == NULL) {
				close(fds[i]);
				rc = -1;
				continue;
			}
			qfd->fd = fds[i];
			TAILQ_INSERT_TAIL(&ibuf->fdq, qfd, entry);
		}
	}
	return rc;
}

ssize_t
imsgbuf_read(struct imsgbuf *ibuf)
{
	union {
		struct cmsghdr	 hdr;
		char		 buf[CMSG_SPACE(sizeof(int))];
	} cmsgbuf;
	struct msghdr	 msg;
	struct iovec	 iov;
	ssize_t		 n;

	if (ibuf->rlen >= sizeof(ibuf->rbuf)) {
		/* The caller did not drain complete messages first. */
		errno = ENOBUFS;
		return -1;
	}
	memset(&msg, 0, sizeof(msg));
	memset(&cmsgbuf, 0, sizeof(cmsgbuf));
	iov.iov_base = ibuf->rbuf + ibuf->rlen;
	iov.iov_len = sizeof(ibuf->rbuf) - ibuf->rlen;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cmsgbuf.buf;
	msg.msg_controllen = sizeof(cmsgbuf.buf);

	n = recvmsg(ibuf->fd, &msg, MSG_CMSG_CLOEXEC);
	if (n == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return 1;
		return -1;
	}
	if (imsgbuf_take_fds(ibuf, &msg) == -1) {
		errno = ENOMEM;
		return -1;
	}
	ibuf->rlen += n;
	return n;
}

/*
 * Gathers the head of the queue and the messages after it up to the
 * next one that carries a descriptor: a descriptor must ride with the
 * first byte of its own message, so such a message starts a new send.
 */
static int
imsgbuf_gather(struct imsgbuf *ibuf, struct iovec *iov, int *fd)
{
	struct imsg_out	*out;
	int		 n = 0;

	*fd = -1;
	TAILQ_FOREACH(out, &ibuf->outq, entry) {
		if (n == IMSG_WRITE_BATCH)
			break;
		if (out->fd != -1) {
			if (n > 0)
				break;
			*fd = out->fd;
		}
		iov[n].iov_base = out->buf + out->off;
		iov[n].iov_len = out->len - out->off;
		n++;
	}
	return n;
}

/* Drops what the kernel accepted, resuming a partial message later. */
static void
imsgbuf_consume(struct imsgbuf *ibuf, size_t sent)
{
	struct imsg_out	*out;
	size_t		 left;

	while (sent > 0 && (out = TAILQ_FIRST(&ibuf->outq)) != NULL) {
		left = out->len - out->off;
		if (sent < left) {
			out->off += sent;
			return;
		}
		sent -= left;
		TAILQ_REMOVE(&ibuf->outq, out, entry);
		ibuf->outq_len--;
		imsg_out_free(out);
	}
}

int
imsgbuf_write(struct imsgbuf *ibuf)
{
	union {
		struct cmsghdr	 hdr;
		char		 buf[CMSG_SPACE(sizeof(int))];
	} cmsgbuf;
	struct iovec	 iov[IMSG_WRITE_BATCH];
	struct msghdr	 msg;
	struct cmsghdr	*cmsg;
	struct imsg_out	*head;
	ssize_t		 n;
	int		 fd;

	while ((head = TAILQ_FIRST(&ibuf->outq)) != NULL) {
		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = iov;
		msg.msg_iovlen = imsgbuf_gather(ibuf, iov, &fd);
		if (fd != -1) {
			memset(&cmsgbuf, 0, sizeof(cmsgbuf));
			msg.msg_control = cmsgbuf.buf;
			msg.msg_controllen = sizeof(cmsgbuf.buf);
			cmsg = CMSG_FIRSTHDR(&msg);
			cmsg->cmsg_len = CMSG_LEN(sizeof(int));
			cmsg->cmsg_level = SOL_SOCKET;
			cmsg->cmsg_type = SCM_RIGHTS;
			memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
		}
		n = sendmsg(ibuf->fd, &msg, MSG_NOSIGNAL);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -1;
		}
		if (fd != -1) {
			/* The kernel holds its own reference now. */
			close(fd);
			head->fd = -1;
		}
		imsgbuf_consume(ibuf, n);
	}
	return 0;
}

int
imsgbuf_flush(struct imsgbuf *ibuf)
{
	struct pollfd	 pfd;

	while (ibuf->outq_len > 0) {
		if (imsgbuf_write(ibuf) == -1)
			return -1;
		if (ibuf->outq_len == 0)
			break;
		pfd.fd = ibuf->fd;
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, -1) == -1 && errno != EINTR)
			return -1;
	}
	return 0;
}

int
imsg_get(struct imsgbuf *ibuf, struct imsg *imsg)
{
	struct imsg_hdr	 hdr;
	struct imsg_fd	*qfd = NULL;
	size_t		 datalen;
	void		*data = NULL;

	if (ibuf->rlen < IMSG_HDRSIZE)
		return 0;
	memcpy(&hdr, ibuf->rbuf, sizeof(hdr));
	if (hdr.len < IMSG_HDRSIZE || hdr.len > IMSG_MAXSIZE) {
		errno = EBADMSG;
		return -1;
	}
	if (ibuf->rlen < hdr.len)
		return 0;
	if (hdr.flags & IMSGF_HASFD) {
		if ((qfd = TAILQ_FIRST(&ibuf->fdq)) == NULL) {
			errno = EBADMSG;
			return -1;
		}
	}
	datalen = hdr.len - IMSG_HDRSIZE;
	if (datalen > 0) {
		if ((data = malloc(datalen)) == NULL)
			return -1;
		memcpy(data, ibuf->rbuf + IMSG_HDRSIZE, datalen);
	}
	imsg->hdr = hdr;
	imsg->data = data;
	imsg->datalen = datalen;
	imsg->fd = -1;
	if (qfd != NULL) {
		TAILQ_REMOVE(&ibuf->fdq, qfd, entry);
		imsg->fd = qfd->fd;
		free(qfd);
	}
	ibuf->rlen -= hdr.len;
	memmove(ibuf->rbuf, ibuf->rbuf + hdr.len, ibuf->rlen);
	return 1;
}

int
imsg_get_fd(struct imsg *imsg)
{
	int	 fd = imsg->fd;

	imsg->fd = -1;
	return fd;
}

void
imsg_free(struct imsg *imsg)
{
	if (imsg->fd != -1)
		close(imsg->fd);
	imsg->fd = -1;
	free(imsg->data);
	imsg->data = NULL;
	imsg->datalen = 0;
}

static const struct imsg_rule *
imsg_rule_find(const struct imsg_channel *chan, uint32_t type)
{
	size_t	 i;

	for (i = 0; i < chan->nrules; i++)
		if (chan->rules[i].type == type)
			return &chan->rules[i];
	return NULL;
}

int
imsg_check(const struct imsg_channel *chan, const struct imsg *imsg,
    char *why, size_t whylen)
{
	const struct imsg_rule	*r;

	if ((r = imsg_rule_find(chan, imsg->hdr.type)) == NULL)
		snprintf(why, whylen, "type %u not allowed", imsg->hdr.type);
	else if (imsg->datalen < r->min || imsg->datalen > r->max)
		snprintf(why, whylen, "type %u with %zu bytes (want %u..%u)",
		    imsg->hdr.type, imsg->datalen, r->min, r->max);
	else if (imsg->fd != -1 && r->fd == IMSG_FD_NO)
		snprintf(why, whylen, "type %u with a descriptor",
		    imsg->hdr.type);
	else if (imsg->fd == -1 && r->fd == IMSG_FD_MUST)
		snprintf(why, whylen, "type %u without a descriptor",
		    imsg->hdr.type);
	else
		return 0;
	return -1;
}

int
imsg_composev(struct imsgbuf *ibuf, uint32_t type, uint32_t peerid,
    pid_t pid, int fd, const struct iovec *iov, int iovcnt)
{
	struct imsg_out	*out;
	struct imsg_hdr	 hdr;
	size_t		 datalen = 0, off;
	int		 i;

	if (iovcnt < 0) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len > IMSG_MAXSIZE - IMSG_HDRSIZE - datalen) {
			errno = EMSGSIZE;
			return -1;
		}
		datalen += iov[i].iov_len;
	}
	memset(&hdr, 0, sizeof(hdr));
	hdr.type = type;
	hdr.len = IMSG_HDRSIZE + datalen;
	hdr.flags = fd != -1 ? IMSGF_HASFD : 0;
	hdr.peerid = peerid;
	hdr.pid = pid != 0 ? pid : ibuf->pid;

	if ((out = calloc(1, sizeof(*out))) == NULL)
		return -1;
	if ((out->buf = malloc(hdr.len)) == NULL) {
		free(out);
		return -1;
	}
	memcpy(out->buf, &hdr, sizeof(hdr));
	off = IMSG_HDRSIZE;
	for (i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len == 0)
			continue;
		memcpy(out->buf + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	out->len = hdr.len;
	out->fd = fd;
	TAILQ_INSERT_TAIL(&ibuf->outq, out, entry);
	ibuf->outq_len++;
	return 0;
}

int
imsg_compose(struct imsgbuf *ibuf, uint32_t type, uint32_t peerid,
    pid_t pid, int fd, const void *data, size_t datalen)
{
	struct iovec	 iov;

	iov.iov_base = (void *)data;
	iov.iov_len = datalen;
	return imsg_composev(ibuf, type, peerid, pid, fd, &iov,
	    datalen > 0 ? 1 : 0);
}

/*
 * imsgev
 */

static void	imsgev_handler(evutil_socket_t, short, void *);

/* Releases everything; the struct itself stays the caller's. */
static void
imsgev_teardown(struct imsgev *iev)
{
	if (iev->ev != NULL) {
		event_free(iev->ev);
		iev->ev = NULL;
	}
	if (iev->ibuf.fd != -1) {
		imsgbuf_clear(&iev->ibuf);
		close(iev->ibuf.fd);
		iev->ibuf.fd = -1;
	}
	iev->events = 0;
	iev->dead = 1;
	iev->in_dispatch = 0;
}

/* Arms EV_READ, plus EV_WRITE while anything is queued. */
static void
imsgev_arm(struct imsgev *iev)
{
	short	 want = EV_READ;

	if (iev->dead || iev->ev == NULL)
		return;
	if (imsgbuf_queuelen(&iev->ibuf) > 0)
		want |= EV_WRITE;
	if (want == iev->events &&
	    event_pending(iev->ev, EV_READ | EV_WRITE, NULL))
		return;
	event_del(iev->ev);
	event_assign(iev->ev, iev->base, iev->ibuf.fd, want, imsgev_handler,
	    iev);
	/* event_assign gave it the default again. */
	if (iev->priority >= 0)
		event_priority_set(iev->ev, iev->priority);
	iev->events = want;
	event_add(iev->ev, NULL);
}

int
imsgev_init(struct imsgev *iev, struct event_base *base, int fd,
    imsgev_dispatch_cb dispatch, imsgev_closed_cb closed, void *arg)
{
	memset(iev, 0, sizeof(*iev));
	iev->ibuf.fd = -1;
	iev->priority = -1;
	if (evutil_make_socket_nonblocking(fd) == -1)
		return -1;
	if (imsgbuf_init(&iev->ibuf, fd) == -1)
		return -1;
	iev->base = base;
	iev->dispatch = dispatch;
	iev->closed = closed;
	iev->arg = arg;
	iev->ev = event_new(base, fd, EV_READ, imsgev_handler, iev);
	if (iev->ev == NULL) {
		iev->ibuf.fd = -1;
		return -1;
	}
	iev->events = EV_READ;
	if (event_add(iev->ev, NULL) == -1) {
		event_free(iev->ev);
		iev->ev = NULL;
		iev->ibuf.fd = -1;
		return -1;
	}
	return 0;
}

int
imsgev_composev(struct imsgev *iev, uint32_t type, uint32_t peerid,
    pid_t pid, int fd, const struct iovec *iov, int iovcnt)
{
	if (iev->dead) {
		errno = EPIPE;
		return -1;
	}
	if (imsg_composev(&iev->ibuf, type, peerid, pid, fd, iov,
	    iovcnt) == -1)
		return -1;
	/* Inside the handler, the handler re-arms on its way out. */
	if (iev->in_dispatch == 0)
		imsgev_arm(iev);
	return 0;
}

int
imsgev_compose(struct imsgev *iev, uint32_t type, uint32_t peerid,
    pid_t pid, int fd, const void *data, size_t datalen)
{
	struct iovec	 iov;

	iov.iov_base = (void *)data;
	iov.iov_len = datalen;
	return imsgev_composev(iev, type, peerid, pid, fd, &iov,
	    datalen > 0 ? 1 : 0);
}

void
imsgev_clear(struct imsgev *iev)
{
	/*
	 * Tear down now and tell a running handler, through its own stack,
	 * that iev is gone: the caller may free iev as soon as we return.
	 */
	if (iev->gone != NULL) {
		*iev->gone = 1;
		iev->gone = NULL;
	}
	imsgev_teardown(iev);
}

int
imsgev_set_priority(struct imsgev *iev, int priority)
{
	if (iev->ev == NULL || event_priority_set(iev->ev, priority) == -1)
		return -1;
	iev->priority = priority;
	return 0;
}

void
imsgev_set_channel(struct imsgev *iev, const struct imsg_channel *chan)
{
	iev->chan = chan;
}

/*
 * The one place where a channel's rules are applied.  A descriptor
 * left over once every byte received is consumed is refused as well:
 * an fd rides with the first byte of its message, so no message can
 * still claim it.
 */
static int
imsgev_allowed(struct imsgev *iev, struct imsg *imsg, char *why,
    size_t whylen)
{
	char	 reason[128];

	if (iev->chan == NULL)
		return 1;
	if (imsg_check(iev->chan, imsg, reason, sizeof(reason)) == -1)
		;
	else if (iev->ibuf.rlen == 0 && !TAILQ_EMPTY(&iev->ibuf.fdq))
		snprintf(reason, sizeof(reason), "a descriptor no message "
		    "claims");
	else
		return 1;
	if (iev->chan->fatal)
		fatalx("%s: refused message: %s", iev->chan->name, reason);
	strlcpy(why, "refused message: ", whylen);
	strlcat(why, reason, whylen);
	return 0;
}

/* Reads and dispatches.  NULL, or why the channel is finished. */
static const char *
imsgev_read(struct imsgev *iev, const int *gone, char *why, size_t whylen)
{
	struct imsg	 imsg;
	ssize_t		 n;
	int		 rc;

	n = imsgbuf_read(&iev->ibuf);
	if (n == -1) {
		snprintf(why, whylen, "read: %s", strerror(errno));
		return why;
	}
	if (n == 0)
		return "connection closed";
	for (;;) {
		rc = imsg_get(&iev->ibuf, &imsg);
		if (rc == 0)
			break;
		if (rc == -1) {
			snprintf(why, whylen, "bad message: %s",
			    strerror(errno));
			return why;
		}
		if (!imsgev_allowed(iev, &imsg, why, whylen)) {
			imsg_free(&imsg);
			return why;
		}
		iev->dispatch(iev, &imsg, iev->arg);
		imsg_free(&imsg);
		if (*gone)
			return NULL;	/* iev may be freed memory now */
	}
	return NULL;
}

static void
imsgev_handler(evutil_socket_t fd, short what, void *arg)
{
	struct imsgev	*iev = arg;
	const char	*why = NULL;
	char		 buf[128];
	int		 gone = 0, *outer = iev->gone;

	iev->events = 0;	/* a fired non-persistent event is disarmed */
	iev->gone = &gone;
	iev->in_dispatch++;
	if ((what & EV_WRITE) && imsgbuf_write(&iev->ibuf) == -1) {
		snprintf(buf, sizeof(buf), "write: %s", strerror(errno));
		why = buf;
	}
	if (why == NULL && (what & EV_READ))
		why = imsgev_read(iev, &gone, buf, sizeof(buf));
	if (gone) {
		/* Cleared in dispatch(); pass the news to an outer handler. */
		if (outer != NULL)
			*outer = 1;
		return;
	}
	iev->in_dispatch--;
	iev->gone = outer;

	if (why != NULL && !iev->dead) {
		iev->dead = 1;
		event_del(iev->ev);
		/* Last use of iev here: closed() may clear and free it. */
		if (iev->closed != NULL)
			iev->closed(iev, why, iev->arg);
		return;
	}
	imsgev_arm(iev);
}
