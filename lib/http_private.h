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
 * http_private.h: what the files of the HTTP layer share and callers
 * never see.  http_conn.c runs a connection's life and timers, http.c
 * parses requests, http_reply.c writes responses, http_server.c
 * accepts connections, http_query.c decodes query strings.  Calls go
 * down that list, never up: what a connection needs of the parser and
 * the reply writer it calls through its http_conn_calls, which
 * http_server.c gives it.
 */
#ifndef DEPOT_HTTP_PRIVATE_H
#define DEPOT_HTTP_PRIVATE_H

#include <sys/types.h>
#include <sys/queue.h>
#include <stdint.h>
#include <time.h>

#include <event2/event.h>

#include "bufpool.h"
#include "http.h"

/* Both http.h and http_parser.h name an enum http_method. */
#define http_method http_parser_method
#include <http_parser.h>
#undef http_method

#define LINGER_MAX_BYTES	(256ULL << 20)	/* discarded, then give up */
#define STREAM_HIGH_WATER	(1 << 20)	/* unsent, for stream_fd */
#define STREAM_READ		(128 * 1024)	/* one read from a stream */
#define STREAM_READ_MIN		4096		/* room a stream read needs */
#define STREAM_COPY_MAX		(16 * 1024)	/* copied, not referenced */

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

/*
 * What a client is counted by for max_conns_per_addr: an IPv4 address,
 * or an IPv6 /64 (one host commonly holds a whole /64).  Family 0 (a
 * unix socket) is not counted.
 */
struct http_addr {
	int			 family;
	unsigned char		 prefix[8];
};

enum resp_state {
	RS_NONE,	/* no status line yet */
	RS_OPEN,	/* status line queued, body may follow */
	RS_FLUSHING,	/* complete; waiting for the socket to take it */
};

struct http_conn;

/* What a connection calls in the layers above it (see http_server.c). */
struct http_conn_calls {
	/* Input came, or the phase moved on: parse (http_conn_process). */
	void	(*process)(struct http_conn *);
	/* The response left, or the connection closes (http_request_end). */
	void	(*request_end)(struct http_conn *);
	/* An error the layer answers itself (http_layer_error). */
	void	(*layer_error)(struct http_conn *, int status,
		    const char *message, int linger);
};

struct http_conn {
	TAILQ_ENTRY(http_conn)	 entry;
	struct http_server	*srv;
	const struct http_conn_calls *calls;
	struct bufferevent	*bev;
	struct event		*rd;		/* our reads: see conn_rd_cb */
	int			 rd_want;
	struct bufpool_cur	 rcur;		/* read block: see conn_rd_cb */
	struct event		*timer;
	struct event		*kick;
	struct event		*flush;		/* see conn_flush */
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
	const char		*parse_why;	/* and its message, or NULL */
	size_t			 head_bytes;
	size_t			 uri_len;
	int			 nheaders;
	int			 header_in_value;
	struct evbuffer		*url;
	struct evbuffer		*hname;
	struct evbuffer		*hvalue;

	/* The body's window: see http_body_window_start. */
	uint64_t		 body_need;	/* bytes still due in it */
	struct timespec		 body_due;	/* when it ends */
	long			 body_left_ms;	/* of it, while paused */
	int			 body_held;	/* paused with time left */
	struct http_addr	 addr;		/* counted per address */

	enum resp_state		 resp;
	int			 resp_chunked;
	int			 resp_nobody;
	int			 resp_refused;	/* a header was: a 500 */
	int64_t			 resp_remaining; /* -1 when not declared */
	int			 want_close;
	int			 linger;
	uint64_t		 linger_bytes;
	struct evbuffer		*resp_headers;
	struct event		*stream;	/* http_reply_stream_fd */
	int			 stream_fd;
	char			*stream_buf;
	struct bufpool_cur	 wcur;		/* stream reads: see
						   stream_read_direct */
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

/* http_conn.c: a connection's life and its timer. */
int	 http_conn_new(struct http_server *, int fd, const char *peer,
	    const struct http_addr *, const struct http_conn_calls *);
void	 http_conn_close(struct http_conn *);
void	 http_conn_release(struct http_conn *);
void	 http_conn_kick(struct http_conn *);
void	 http_conn_read_set(struct http_conn *, int);
void	 http_conn_read_update(struct http_conn *);
void	 http_timer_set(struct http_conn *, enum timer_kind, int seconds);
void	 http_timer_clear(struct http_conn *);
void	 http_body_window_start(struct http_conn *);
void	 http_body_window_progress(struct http_conn *, size_t);
void	 http_body_window_hold(struct http_conn *);
void	 http_body_window_resume(struct http_conn *);
void	 http_stream_stop(struct http_conn *);

/* http.c: requests and the parser. */
void	 http_request_id(char [33]);
struct http_request *
	 http_request_new(struct http_conn *);
void	 http_request_end(struct http_conn *);
void	 http_conn_process(struct http_conn *);

/* http_reply.c: responses. */
void	 http_layer_error(struct http_conn *, int status, const char *,
	    int linger);

#endif
