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
 * imsg.h: framed messages over a unix socket, after OpenBSD's imsg model,
 * written for this project.
 *
 * A message is a fixed header followed by up to IMSG_MAXSIZE - header
 * bytes of payload.  At most one file descriptor travels with a message
 * (SCM_RIGHTS, attached to the first byte of the message).  The reader
 * keeps received descriptors in arrival order and hands each to the
 * message whose header carries IMSGF_HASFD.
 */
#ifndef DEPOT_IMSG_H
#define DEPOT_IMSG_H

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/uio.h>
#include <stdint.h>

#include <event2/event.h>

#define IMSG_MAXSIZE		65536	/* header included */
#define IMSG_READBUF		(IMSG_MAXSIZE * 2)
#define IMSGF_HASFD		0x1

struct imsg_hdr {
	uint32_t	 type;
	uint32_t	 len;		/* header + payload */
	uint32_t	 flags;
	uint32_t	 peerid;
	uint32_t	 pid;
};
#define IMSG_HDRSIZE		sizeof(struct imsg_hdr)

struct imsg {
	struct imsg_hdr	 hdr;
	int		 fd;		/* -1 when none or taken */
	void		*data;		/* payload, NULL when empty */
	size_t		 datalen;
};

struct imsg_out;			/* a queued outgoing message */
struct imsg_fd;				/* a received, unclaimed fd */

struct imsgbuf {
	int			 fd;
	pid_t			 pid;
	unsigned char		 rbuf[IMSG_READBUF];
	size_t			 rlen;
	TAILQ_HEAD(, imsg_out)	 outq;
	size_t			 outq_len;	/* messages queued */
	TAILQ_HEAD(, imsg_fd)	 fdq;
};

/* Returns 0, or -1 with errno set. */
int	 imsgbuf_init(struct imsgbuf *, int fd);
/* Frees every queued message and closes every queued descriptor. */
void	 imsgbuf_clear(struct imsgbuf *);
/*
 * Reads what the socket has.  Returns >0 when bytes were read, 0 on EOF,
 * -1 on error (errno), and 1 with nothing read on EAGAIN/EINTR.
 */
ssize_t	 imsgbuf_read(struct imsgbuf *);
/* Writes what it can.  0 on success or EAGAIN, -1 on error (errno). */
int	 imsgbuf_write(struct imsgbuf *);
/* Blocking flush of the whole queue (for simple clients). */
int	 imsgbuf_flush(struct imsgbuf *);
size_t	 imsgbuf_queuelen(const struct imsgbuf *);

/*
 * Takes the next complete message off the read buffer.  Returns 1 and
 * fills *imsg, 0 when no complete message is buffered, -1 on a malformed
 * stream (bad length, fd promised but none received): errno EBADMSG.
 */
int	 imsg_get(struct imsgbuf *, struct imsg *);
/* Takes ownership of the message's descriptor; -1 when it has none. */
int	 imsg_get_fd(struct imsg *);
/* Frees the payload and closes a descriptor nobody took. */
void	 imsg_free(struct imsg *);

/*
 * Queues a message.  fd (or -1) is passed and closed after sending.
 * Returns 0, or -1 (errno EMSGSIZE when data exceeds the maximum); on
 * failure fd is not taken and stays the caller's to close.  pid 0
 * stands for the sender's own pid.
 */
int	 imsg_compose(struct imsgbuf *, uint32_t type, uint32_t peerid,
	    pid_t pid, int fd, const void *data, size_t datalen);
int	 imsg_composev(struct imsgbuf *, uint32_t type, uint32_t peerid,
	    pid_t pid, int fd, const struct iovec *iov, int iovcnt);

/*
 * Typed channels: what one peer may send another.  Each rule names a
 * message type, the payload size allowed (min == max for a fixed
 * struct) and whether a descriptor must, may or must not ride with it.
 * A message no rule allows is refused whole.
 */
enum imsg_fdrule {
	IMSG_FD_NO,
	IMSG_FD_MAY,
	IMSG_FD_MUST,
};

struct imsg_rule {
	uint32_t		 type;
	uint32_t		 min;		/* payload bytes */
	uint32_t		 max;
	enum imsg_fdrule	 fd;
};

struct imsg_channel {
	const char		*name;		/* "storage <- frontend" */
	const struct imsg_rule	*rules;
	size_t			 nrules;
	int			 fatal;		/* refusal ends the process */
};

/* 0 when chan allows imsg; -1 with the reason in why otherwise. */
int	 imsg_check(const struct imsg_channel *, const struct imsg *,
	    char *why, size_t whylen);

/*
 * imsgev: an imsgbuf driven by one libevent event.  EV_WRITE is armed
 * only while messages are queued.  dispatch() is called for each
 * message; the message is freed when it returns (take the fd with
 * imsg_get_fd to keep it).  closed() is called once on EOF, a read or
 * write error or a malformed stream; after it the imsgev is dead.
 *
 * Either callback may call imsgev_clear() on its own imsgev and then
 * free the memory holding it: the handler does not touch a cleared
 * imsgev again.  Clearing from dispatch() stops further dispatching and
 * does not call closed().
 */
struct imsgev;
typedef void	(*imsgev_dispatch_cb)(struct imsgev *, struct imsg *, void *);
typedef void	(*imsgev_closed_cb)(struct imsgev *, const char *why, void *);

struct imsgev {
	struct imsgbuf		 ibuf;
	struct event		*ev;
	struct event_base	*base;
	short			 events;
	imsgev_dispatch_cb	 dispatch;
	imsgev_closed_cb	 closed;
	void			*arg;
	int			 dead;
	int			 in_dispatch;
	int			*gone;		/* handler's flag, set by clear */
	const struct imsg_channel *chan;	/* NULL: nothing checked */
	int			 priority;	/* -1: the base's default */
};

/* Makes fd non-blocking.  On failure (-1) fd stays the caller's. */
int	 imsgev_init(struct imsgev *, struct event_base *, int fd,
	    imsgev_dispatch_cb, imsgev_closed_cb, void *arg);
/*
 * Every message is checked against chan before dispatch() sees it.  A
 * refused one ends the process (fatalx) when chan->fatal, and is
 * otherwise the end of the channel (closed() with the reason).
 */
void	 imsgev_set_channel(struct imsgev *, const struct imsg_channel *);
/* The channel's libevent priority (event_base_priority_init's range). */
int	 imsgev_set_priority(struct imsgev *, int);
int	 imsgev_compose(struct imsgev *, uint32_t type, uint32_t peerid,
	    pid_t pid, int fd, const void *data, size_t datalen);
int	 imsgev_composev(struct imsgev *, uint32_t type, uint32_t peerid,
	    pid_t pid, int fd, const struct iovec *iov, int iovcnt);
/*
 * Stops the event, clears the buffer and closes the socket.  Composing
 * on a dead or cleared imsgev fails with EPIPE.
 */
void	 imsgev_clear(struct imsgev *);

#endif
