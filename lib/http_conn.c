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
 * http_conn.c: a connection's life: reading its socket, its one timer,
 * lingering after a refused body, reuse between requests, and the end.
 * The bottom of the layer: what it asks of the parser and the reply
 * writer above it (parse the input, end the request, answer an error)
 * goes through the connection's calls, set by http_server.c, as a
 * bufferevent calls its callbacks.
 *
 * Freeing: a connection may be closed from inside any callback, even
 * from inside http_parser_execute().  http_conn_close() tears
 * everything down at once (the handler's on_free, every descriptor),
 * but the memory holding the parser is released only when the
 * outermost entry point returns (the inuse count).
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/util.h>

#include "http_private.h"
#include "log.h"

/* Timers: one per connection, its meaning given by the phase. */

void
http_timer_clear(struct http_conn *c)
{
	evtimer_del(c->timer);
	c->timer_kind = TM_NONE;
}

void
http_timer_set(struct http_conn *c, enum timer_kind kind, int seconds)
{
	struct timeval	 tv = { seconds, 0 };

	if (seconds <= 0) {
		http_timer_clear(c);
		return;
	}
	c->timer_kind = kind;
	evtimer_add(c->timer, &tv);
}

void
http_conn_kick(struct http_conn *c)
{
	if (!c->dead)
		event_active(c->kick, EV_TIMEOUT, 1);
}

/*
 * The body's window.  A request body must bring min_body_rate bytes a
 * second in every window of body_timeout seconds (or all that is left
 * of a shorter body), else the connection is cut and the handler's
 * on_free runs.  A timer restarted by every byte would let one byte a
 * minute hold a connection, and an upload, for ever.  Time during
 * which the handler holds the body paused does not count.
 */
static long
ms_until(const struct timespec *due)
{
	struct timespec	 now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (due->tv_sec - now.tv_sec) * 1000L +
	    (due->tv_nsec - now.tv_nsec) / 1000000;
}

static void
body_timer_arm(struct http_conn *c, long ms)
{
	struct timeval	 tv = { ms / 1000, (ms % 1000) * 1000 };

	clock_gettime(CLOCK_MONOTONIC, &c->body_due);
	c->body_due.tv_sec += tv.tv_sec;
	c->body_due.tv_nsec += tv.tv_usec * 1000L;
	if (c->body_due.tv_nsec >= 1000000000L) {
		c->body_due.tv_sec++;
		c->body_due.tv_nsec -= 1000000000L;
	}
	c->body_held = 0;
	c->timer_kind = TM_BODY;
	evtimer_add(c->timer, &tv);
}

void
http_body_window_start(struct http_conn *c)
{
	const struct http_limits *lim = &c->srv->limits;
	const struct http_request *req = c->req;
	uint64_t		 need;

	if (lim->body_timeout <= 0) {
		http_timer_clear(c);
		return;
	}
	need = (uint64_t)lim->min_body_rate * lim->body_timeout;
	if (req->content_length >= 0 &&
	    need > (uint64_t)req->content_length - req->bytes_in)
		need = (uint64_t)req->content_length - req->bytes_in;
	/* With no rate asked, any progress opens the next window. */
	c->body_need = need > 0 ? need : 1;
	body_timer_arm(c, lim->body_timeout * 1000L);
}

void
http_body_window_progress(struct http_conn *c, size_t len)
{
	if (c->timer_kind != TM_BODY)
		return;
	if (len < c->body_need)
		c->body_need -= len;
	else
		http_body_window_start(c);
}

void
http_body_window_hold(struct http_conn *c)
{
	long	 left;

	if (c->timer_kind != TM_BODY)
		return;
	left = ms_until(&c->body_due);
	http_timer_clear(c);
	c->body_left_ms = left > 0 ? left : 1;
	c->body_held = 1;
}

void
http_body_window_resume(struct http_conn *c)
{
	if (c->body_held)
		body_timer_arm(c, c->body_left_ms);
	else
		http_body_window_start(c);
}

/*
 * The socket is read here rather than by the bufferevent: libevent
 * 2.1's evbuffer_read() takes at most 4096 bytes a call, which on a
 * fast link spends more time in system calls than in the work.  The
 * bufferevent still holds the input buffer, and writes what the socket
 * did not take at once (see conn_flush).
 *
 * Each read lands in the connection's block from the process's pool
 * (bufpool.c), not in space reserved in the evbuffer: that space was a
 * fresh malloc each time, freed once the parser drained it, and glibc
 * gave it back to the kernel, so that an upload faulted in every page
 * it read (442 page faults and 10 brk calls per MiB).  A read is handed
 * to the evbuffer by reference and the next one goes on after it in the
 * same block, so that the blocks a connection pins stay within its
 * read watermark and one block more.  A small read while nothing of
 * the block is in the evbuffer (a chat request) is copied out instead,
 * and a block no span holds goes back to the pool as soon as the input
 * is parsed: a connection that waits holds no block.
 */
#define READ_COPY_MAX	(16 * 1024)
#define READ_MIN	4096

void
http_conn_read_update(struct http_conn *c)
{
	size_t	 len = evbuffer_get_length(bufferevent_get_input(c->bev));

	if (c->rd_want && len < c->srv->limits.read_watermark)
		event_add(c->rd, NULL);
	else
		event_del(c->rd);
}

void
http_conn_read_set(struct http_conn *c, int want)
{
	c->rd_want = want;
	if (!c->dead)
		http_conn_read_update(c);
}

static void	conn_read_cb(struct bufferevent *, void *);
static void	conn_event_cb(struct bufferevent *, short, void *);

static void
conn_rd_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http_conn	*c = arg;
	struct evbuffer		*in = bufferevent_get_input(c->bev);
	size_t			 buffered = evbuffer_get_length(in), room;
	size_t			 want;
	void			*p;
	ssize_t			 n;

	if ((p = bufpool_cur_room(&c->rcur, READ_MIN, &room)) == NULL) {
		conn_event_cb(c->bev, BEV_EVENT_READING | BEV_EVENT_ERROR, c);
		return;
	}
	want = buffered < c->srv->limits.read_watermark ?
	    c->srv->limits.read_watermark - buffered : 0;
	if (want < READ_MIN)
		want = READ_MIN;
	n = read(fd, p, want < room ? want : room);
	if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
		bufpool_cur_trim(&c->rcur);
		return;
	}
	if (n <= 0) {
		conn_event_cb(c->bev, BEV_EVENT_READING |
		    (n == 0 ? BEV_EVENT_EOF : BEV_EVENT_ERROR), c);
		return;
	}
	if (bufpool_cur_keep(&c->rcur, in, n, READ_COPY_MAX) == -1) {
		conn_event_cb(c->bev, BEV_EVENT_READING | BEV_EVENT_ERROR, c);
		return;
	}
	c->inuse++;
	conn_read_cb(c->bev, c);
	if (!c->dead)
		bufpool_cur_trim(&c->rcur);
	http_conn_release(c);
}

/* A response's stream (http_reply_stream_fd) ends: fd, event, buffer. */
void
http_stream_stop(struct http_conn *c)
{
	if (c->stream != NULL) {
		event_free(c->stream);
		c->stream = NULL;
		close(c->stream_fd);
		c->stream_fd = -1;
	}
	free(c->stream_buf);
	c->stream_buf = NULL;
	/* What the output still holds keeps its block until sent. */
	bufpool_cur_free(&c->wcur);
	c->stream_blocked = 0;
}

/* The memory of a connection closed, or one half made. */
static void
conn_free(struct http_conn *c)
{
	struct evbuffer	*bufs[] = { c->url, c->hname, c->hvalue,
			    c->resp_headers };
	struct event	*evs[] = { c->timer, c->kick, c->flush, c->rd };
	size_t		 i;

	for (i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		if (bufs[i] != NULL)
			evbuffer_free(bufs[i]);
	for (i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		if (evs[i] != NULL)
			event_free(evs[i]);
	if (c->bev != NULL)
		bufferevent_free(c->bev);
	/* Spans in the evbuffers held references of their own. */
	bufpool_cur_free(&c->rcur);
	bufpool_cur_free(&c->wcur);
	free(c);
}

void
http_conn_release(struct http_conn *c)
{
	if (--c->inuse > 0 || !c->dead)
		return;
	conn_free(c);
}

/* Connection life. */

static void
linger_start(struct http_conn *c)
{
	c->phase = PH_LINGER;
	shutdown(bufferevent_getfd(c->bev), SHUT_WR);
	http_conn_read_set(c, 1);
	http_timer_set(c, TM_LINGER, c->srv->limits.linger_timeout);
	if (c->timer_kind != TM_LINGER) {
		http_conn_close(c);
		return;
	}
	http_conn_kick(c);
}

static void
conn_reset(struct http_conn *c)
{
	http_parser_init(&c->parser, HTTP_REQUEST);
	c->parser.data = c;
	c->phase = PH_IDLE;
	c->has_body = c->body_accepted = c->body_paused = 0;
	c->msg_complete = c->end_pending = c->parse_status = 0;
	c->parse_why = NULL;
	c->body_held = 0;
	c->head_bytes = c->uri_len = 0;
	c->nheaders = c->header_in_value = 0;
	evbuffer_drain(c->url, evbuffer_get_length(c->url));
	evbuffer_drain(c->hname, evbuffer_get_length(c->hname));
	evbuffer_drain(c->hvalue, evbuffer_get_length(c->hvalue));
	evbuffer_drain(c->resp_headers, evbuffer_get_length(c->resp_headers));
	c->resp = RS_NONE;
	c->resp_chunked = c->resp_nobody = c->resp_refused = 0;
	c->resp_remaining = -1;
	c->ondrain = NULL;
	c->ondrain_arg = NULL;
}

/* The response left: finish the request, then reuse or close. */
static void
response_done(struct http_conn *c)
{
	c->resp = RS_NONE;
	c->calls->request_end(c);
	if (c->dead)
		return;
	if (c->srv->closing)
		c->want_close = 1;
	if (c->want_close || !c->msg_complete) {
		if (c->linger)
			linger_start(c);
		else
			http_conn_close(c);
		return;
	}
	conn_reset(c);
	http_conn_read_set(c, 1);
	http_timer_set(c, TM_IDLE, c->srv->limits.idle_timeout);
	http_conn_kick(c);
}

void
http_conn_close(struct http_conn *c)
{
	struct http_server	*srv = c->srv;

	if (c->dead)
		return;
	c->dead = 1;
	c->inuse++;
	c->calls->request_end(c);
	http_stream_stop(c);
	/* Closes the socket and any file still queued for sending. */
	event_free(c->rd);
	c->rd = NULL;
	bufferevent_free(c->bev);
	c->bev = NULL;
	evtimer_del(c->timer);
	event_del(c->kick);
	event_del(c->flush);
	TAILQ_REMOVE(&srv->conns, c, entry);
	srv->nconns--;
	http_conn_release(c);
}

static void
conn_read_cb(struct bufferevent *bev, void *arg)
{
	struct http_conn	*c = arg;

	c->inuse++;
	c->calls->process(c);
	http_conn_release(c);
}

static void
conn_write_cb(struct bufferevent *bev, void *arg)
{
	struct http_conn	*c = arg;
	size_t			 pending;
	void			(*cb)(struct http_request *, void *);

	c->inuse++;
	pending = evbuffer_get_length(bufferevent_get_output(bev));
	/* Empty: what is added next is written at once (conn_flush). */
	if (pending == 0)
		bufferevent_disable(bev, EV_WRITE);
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
	http_conn_release(c);
}

/*
 * Writing.  A reply goes to the socket as soon as the callback that
 * queued it returns.  Left to the bufferevent, every reply armed
 * EPOLLOUT (an epoll_ctl), waited a loop turn for it (an epoll_wait),
 * was written and disarmed EPOLLOUT again (another epoll_ctl): three
 * system calls and a turn a reply, where one writev does.  So the
 * bufferevent's EV_WRITE stays off while the socket takes what it is
 * given; whatever adds to the output makes the flush event active, and
 * that writes all the output holds in one writev (a sendfile segment
 * in a sendfile of its own), once the callback that is adding returns:
 * a reply built of many pieces still goes in one call, and no handler
 * sees its request end under it.  Only what the socket does not take
 * is left to the bufferevent, EPOLLOUT and write timeout included,
 * until the output is empty again (conn_write_cb).
 */
#define FLUSH_CALLS	4	/* writes in one flush, then others' turn */

static int
conn_writing(struct http_conn *c)
{
	return (bufferevent_get_enabled(c->bev) & EV_WRITE) != 0;
}

static void
conn_out_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct http_conn	*c = arg;

	if (info->n_added > 0 && !c->dead && !conn_writing(c))
		event_active(c->flush, EV_TIMEOUT, 1);
}

/*
 * Writes what the output holds, up to the bufferevent's largest single
 * write (the loop's other connections wait meanwhile).  Returns the
 * bytes written, or -1 with errno for an error that is no EAGAIN.
 */
static ssize_t
conn_write_now(struct http_conn *c)
{
	struct evbuffer	*out = bufferevent_get_output(c->bev);
	evutil_socket_t	 fd = bufferevent_getfd(c->bev);
	ssize_t		 max = bufferevent_get_max_single_write(c->bev);
	ssize_t		 total = 0;
	int		 i, n = 0, saved;

	/* The bufferevent keeps the output's start frozen but to write. */
	evbuffer_unfreeze(out, 1);
	for (i = 0; i < FLUSH_CALLS && total < max &&
	    evbuffer_get_length(out) > 0; i++) {
		/* 0: a sendfile that met EAGAIN, or a file cut short. */
		if ((n = evbuffer_write_atmost(out, fd, max - total)) <= 0)
			break;
		total += n;
	}
	saved = errno;
	evbuffer_freeze(out, 1);
	if (n == -1 && saved != EAGAIN && saved != EWOULDBLOCK &&
	    saved != EINTR) {
		errno = saved;
		return -1;
	}
	return total;
}

static void
conn_flush(struct http_conn *c)
{
	struct evbuffer	*out;
	ssize_t		 n;

	if (c->dead || conn_writing(c))
		return;
	out = bufferevent_get_output(c->bev);
	if (evbuffer_get_length(out) == 0)
		return;
	if ((n = conn_write_now(c)) == -1) {
		/* EPIPE, ECONNRESET: as when the bufferevent meets them. */
		conn_event_cb(c->bev, BEV_EVENT_WRITING | BEV_EVENT_ERROR, c);
		return;
	}
	/* The rest waits for EPOLLOUT, and the cases above for errors. */
	if (evbuffer_get_length(out) > 0)
		bufferevent_enable(c->bev, EV_WRITE);
	/* What the bufferevent would have called after its write. */
	if (n > 0 && evbuffer_get_length(out) <=
	    c->srv->limits.write_watermark)
		conn_write_cb(c->bev, c);
}

static void
conn_flush_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http_conn	*c = arg;

	c->inuse++;
	conn_flush(c);
	http_conn_release(c);
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
	http_conn_close(c);
	http_conn_release(c);
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
		c->calls->process(c);
	if (!c->dead)
		bufpool_cur_trim(&c->rcur);
	http_conn_release(c);
}

static void
conn_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http_conn	*c = arg;
	enum timer_kind		 kind = c->timer_kind;

	c->inuse++;
	c->timer_kind = TM_NONE;
	if (kind == TM_HEADER && c->phase == PH_HEAD)
		c->calls->layer_error(c, 408,
		    "Timed out reading the request headers.", 0);
	else {
		if (kind == TM_BODY)
			log_info("%s: request body too slow: %llu bytes short "
			    "at the end of a %ds window", c->peer,
			    (unsigned long long)c->body_need,
			    c->srv->limits.body_timeout);
		http_conn_close(c);
	}
	http_conn_release(c);
}

int
http_conn_new(struct http_server *srv, int fd, const char *peer,
    const struct http_addr *addr, const struct http_conn_calls *calls)
{
	const struct http_limits *lim = &srv->limits;
	struct http_conn	*c;
	struct timeval		 wtv = { lim->body_timeout, 0 };

	if ((c = calloc(1, sizeof(*c))) == NULL)
		goto fail;
	c->srv = srv;
	c->calls = calls;
	strlcpy(c->peer, peer, sizeof(c->peer));
	c->addr = *addr;
	c->resp_remaining = -1;
	http_parser_init(&c->parser, HTTP_REQUEST);
	c->parser.data = c;
	c->url = evbuffer_new();
	c->hname = evbuffer_new();
	c->hvalue = evbuffer_new();
	c->resp_headers = evbuffer_new();
	c->timer = evtimer_new(srv->base, conn_timer_cb, c);
	c->kick = event_new(srv->base, -1, 0, conn_kick_cb, c);
	c->flush = event_new(srv->base, -1, 0, conn_flush_cb, c);
	if (c->url == NULL || c->hname == NULL || c->hvalue == NULL ||
	    c->resp_headers == NULL || c->timer == NULL || c->kick == NULL ||
	    c->flush == NULL ||
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
	/* EV_WRITE only while the socket is behind: see conn_flush. */
	bufferevent_disable(c->bev, EV_READ | EV_WRITE);
	if (evbuffer_add_cb(bufferevent_get_output(c->bev), conn_out_cb,
	    c) == NULL)
		goto fail;
	/* The bufferevent keeps the input's end frozen for its own reads. */
	evbuffer_unfreeze(bufferevent_get_input(c->bev), 0);
	if ((c->rd = event_new(srv->base, fd, EV_READ | EV_PERSIST,
	    conn_rd_cb, c)) == NULL)
		goto fail;
	http_conn_read_set(c, 1);
	TAILQ_INSERT_TAIL(&srv->conns, c, entry);
	srv->nconns++;
	http_timer_set(c, TM_HEADER, lim->header_timeout);
	return 0;
 fail:
	log_warn("%s", __func__);
	/* Once the bufferevent holds fd, freeing it closes fd. */
	if (c == NULL || c->bev == NULL)
		close(fd);
	if (c != NULL)
		conn_free(c);
	return -1;
}

