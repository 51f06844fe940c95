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
 * s3_get.c: the S3 store's reader.  The frontend gets one end of a
 * socketpair; curl writes the object's bytes into the other and is
 * paused while the socket is full.  Bytes that did not fit wait in a
 * small buffer until the socket drains.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>
#include <event2/buffer.h>
#include <event2/event.h>

#include "curlev.h"
#include "log.h"
#include "store_s3.h"

/* A read: curl's bytes into our end of the frontend's socketpair. */
struct s3_read {
	struct s3		*s3;
	struct s3_req		*req;
	int			 fd;		/* ours */
	int			 peer;		/* the frontend's, until handed */
	struct event		*wev;
	struct evbuffer		*pending;
	int			 opened;
	int			 paused;
	int			 req_done;
	store_open_cb		 cb;
	void			*arg;
};


static void
s3_get_free(struct s3_read *g)
{
	s3_req_free(g->req);
	if (g->wev != NULL)
		event_free(g->wev);
	if (g->pending != NULL)
		evbuffer_free(g->pending);
	if (g->fd != -1)
		close(g->fd);
	if (g->peer != -1)
		close(g->peer);
	free(g);
}

static void
s3_get_open(struct s3_read *g)
{
	int	peer = g->peer;

	g->opened = 1;
	g->peer = -1;
	g->cb(g->arg, 0, peer, 0);
}

/* Like evbuffer_write, but a gone reader is no SIGPIPE. */
static int
s3_get_flush(struct s3_read *g)
{
	size_t		 len = evbuffer_get_length(g->pending);
	ssize_t		 n;
	unsigned char	*p;

	if (len == 0)
		return 0;
	if ((p = evbuffer_pullup(g->pending, len)) == NULL)
		return -1;
	n = send(g->fd, p, len, MSG_NOSIGNAL);
	if (n == -1)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	evbuffer_drain(g->pending, n);
	return 0;
}

static void
s3_get_writable(evutil_socket_t fd, short what, void *arg)
{
	struct s3_read	*g = arg;

	if (s3_get_flush(g) == -1) {
		/* The frontend went away. */
		s3_get_free(g);
		return;
	}
	if (evbuffer_get_length(g->pending) > 0)
		return;
	event_del(g->wev);
	if (g->req_done)
		s3_get_free(g);
	else if (g->paused) {
		g->paused = 0;
		curlev_unpause(g->s3->curl, g->req->easy);
	}
}

static size_t
s3_get_sink(struct s3_req *req, char *data, size_t len)
{
	struct s3_read	*g = req->arg;
	ssize_t		 n;

	/* Bytes are going out: a retry could no longer start over. */
	req->no_retry = 1;
	if (!g->opened)
		s3_get_open(g);
	if (evbuffer_get_length(g->pending) > 0) {
		g->paused = 1;
		return CURL_WRITEFUNC_PAUSE;
	}
	n = send(g->fd, data, len, MSG_NOSIGNAL);
	if (n == -1) {
		if (errno != EAGAIN && errno != EINTR)
			return 0;
		n = 0;
	}
	if ((size_t)n < len) {
		if (evbuffer_add(g->pending, data + n, len - n) == -1)
			return 0;
		event_add(g->wev, NULL);
	}
	return len;
}

static void
s3_get_done(struct s3_req *req)
{
	struct s3_read	*g = req->arg;
	int		 error = s3_req_error(req);

	g->req = NULL;
	g->req_done = 1;
	if (!g->opened) {
		if (error == 0)
			s3_get_open(g);
		else {
			if (error != ENOENT)
				s3_req_log(req, "get");
			g->cb(g->arg, error, -1, 0);
		}
	} else if (error != 0)
		s3_req_log(req, "get, stream cut");
	s3_req_free(req);
	/* On error, closing early tells the frontend the stream is short. */
	if (error != 0 || evbuffer_get_length(g->pending) == 0)
		s3_get_free(g);
}

void
s3_get(struct store *st, const char *ref, off_t offset, off_t length,
    store_open_cb cb, void *arg)
{
	struct s3	*s3 = st->priv;
	struct s3_read	*g;
	char		*key = NULL;
	int		 sv[2], error = ENOMEM;

	if ((g = calloc(1, sizeof(*g))) == NULL)
		goto fail;
	g->s3 = s3;
	g->fd = g->peer = -1;
	g->cb = cb;
	g->arg = arg;
	if ((key = s3_req_key(s3, ref)) == NULL) {
		error = EINVAL;
		goto fail;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1) {
		error = errno;
		goto fail;
	}
	g->fd = sv[0];
	g->peer = sv[1];
	if (fcntl(g->fd, F_SETFL, O_NONBLOCK) == -1 ||
	    (g->pending = evbuffer_new()) == NULL ||
	    (g->wev = event_new(st->base, g->fd, EV_WRITE | EV_PERSIST,
	    s3_get_writable, g)) == NULL ||
	    (g->req = s3_req_new(s3, length == 0 ? "HEAD" : "GET", key, NULL,
	    s3_get_done, g)) == NULL)
		goto fail;
	free(key);
	g->req->sink = s3_get_sink;
	if (length > 0)
		snprintf(g->req->range, sizeof(g->req->range),
		    "bytes=%lld-%lld", (long long)offset,
		    (long long)(offset + length - 1));
	else if (length < 0 && offset > 0)
		snprintf(g->req->range, sizeof(g->req->range), "bytes=%lld-",
		    (long long)offset);
	s3_req_start(g->req);
	return;
 fail:
	free(key);
	if (g != NULL)
		s3_get_free(g);
	cb(arg, error, -1, 0);
}
