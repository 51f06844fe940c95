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
 * http.h: a streaming HTTP/1.1 server on libevent bufferevents.
 *
 * evhttp buffers whole request bodies in memory; this layer hands the
 * body to the handler piece by piece as it arrives, with a read
 * high-water mark so that a slow consumer applies TCP back-pressure.
 * Request parsing is done by Debian's libhttp-parser.
 *
 * Life of a request:
 *   on_request(req)	headers are complete.  The handler routes.  It may
 *			reply at once (a body, if any, is then discarded
 *			under a bounded lingering close), or call
 *			http_body_accept() to receive the body (which sends
 *			"100 Continue" when the client asked for it).
 *   on_body(req,p,n)	a piece of the decoded (de-chunked) body.
 *   on_body_end(req)	the whole body arrived (called after accept, also
 *			for an empty body).
 *   on_free(req)	the request is finished or the connection is gone;
 *			the handler releases req->arg.  After this the
 *			request pointer is invalid.
 *
 * The handler may reply from any callback or later, asynchronously, as
 * long as on_free has not been called.  Every response carries
 * request-id and x-request-id headers and is logged in one access-log
 * line when it completes.
 *
 * A client that goes away (EOF or error on its socket) ends the request
 * at once: on_free is called and every descriptor held for it closed.
 * So does a body too slow for its window (min_body_rate bytes a second
 * over each body_timeout, time paused by the handler not counted).
 * The program must ignore SIGPIPE.  Responses stalled on a client that
 * does not read are cut after body_timeout.
 *
 * The layer answers by itself: 400 for a malformed request or a
 * Content-Length past INT64_MAX, 408, 414 and 431 for the head's
 * limits, 503 past max_conns and 429 past max_conns_per_addr.  A body
 * the handler never accepts is discarded under a bounded linger.
 */
#ifndef DEPOT_HTTP_H
#define DEPOT_HTTP_H

#include <sys/types.h>
#include <sys/queue.h>
#include <stdint.h>
#include <time.h>

#include <event2/event.h>

enum http_method {
	HTTP_M_OTHER = 0,
	HTTP_M_GET,
	HTTP_M_HEAD,
	HTTP_M_POST,
	HTTP_M_PUT,
	HTTP_M_DELETE,
	HTTP_M_OPTIONS,
};

struct http_header {
	TAILQ_ENTRY(http_header) entry;
	char			*name;
	char			*value;
};
TAILQ_HEAD(http_headers, http_header);

struct http_limits {
	size_t	 max_header_bytes;	/* request line + headers; 16 KiB */
	int	 max_headers;		/* 100 */
	size_t	 max_uri;		/* 8 KiB */
	int	 header_timeout;	/* s to receive the headers; 10 */
	int	 idle_timeout;		/* s idle between requests; 60 */
	int	 body_timeout;		/* s per body window, and to take
					   a response; 60 */
	size_t	 min_body_rate;		/* bytes/s a body brings in each
					   window, 0 any progress; 1 KiB */
	int	 linger_timeout;	/* s to discard an unread body; 5 */
	int	 max_conns;		/* per server; 1024 */
	int	 max_conns_per_addr;	/* per client address (IPv6: its
					   /64), 0 none; 64 */
	size_t	 read_watermark;	/* input high-water mark; 1 MiB */
	size_t	 write_watermark;	/* output low-water mark; 256 KiB */
	int64_t	 max_request_size;	/* model request bodies; 32 MiB
					   (the routes check it) */
	int64_t	 max_json_values;	/* values in a model request
					   body (the routes check it) */
	int64_t	 max_json_memory;	/* bytes its tree may take */
};

struct http_conn;

struct http_request {
	struct http_conn	*conn;
	enum http_method	 method;
	char			 method_str[16];
	char			*target;	/* raw request-target */
	char			*path;		/* target before '?' */
	char			*query;		/* after '?', or NULL */
	struct http_headers	 headers;
	int64_t			 content_length; /* -1 when absent */
	int			 chunked;
	int			 expect_continue;
	int			 keepalive;
	char			 id[33];	/* request id, hex */
	struct timespec		 start;
	char			 peer[64];	/* "addr:port" or "unix" */

	void			*arg;		/* the handler's state */

	/* For the access log and metrics; set by the handler. */
	const char		*route;		/* e.g. "files.upload" */
	char			 log_user[64];
	char			*log_more;	/* the route's own fields */

	/* Filled in by the layer. */
	int			 status;
	uint64_t		 bytes_in;	/* body bytes received */
	uint64_t		 bytes_out;	/* body bytes sent */
	int			 replied;	/* status line queued */
};

struct http_handler {
	void	(*on_request)(struct http_request *, void *);
	void	(*on_body)(struct http_request *, const void *, size_t,
		    void *);
	void	(*on_body_end)(struct http_request *, void *);
	void	(*on_free)(struct http_request *, void *);
	void	*arg;
};

struct http_server;

void	 http_limits_default(struct http_limits *);
struct http_server *
	 http_server_new(struct event_base *, const struct http_limits *,
	    const struct http_handler *);
/* Limits for what comes next: timers set later, new connections. */
void	 http_server_set_limits(struct http_server *,
	    const struct http_limits *);
/*
 * Serves connections accepted on fd, a bound, listening socket.  The
 * server owns fd from then on and closes it in close_listeners or free.
 */
int	 http_server_listen_fd(struct http_server *, int fd);
/*
 * Serves one already-connected socket (a connection handed over by
 * another process, or one end of a socketpair in tests).  Takes
 * ownership of fd, even on failure.  peer names it in the log.
 */
int	 http_server_attach_fd(struct http_server *, int fd, const char *peer);
/* Stops accepting; open connections finish their current request. */
void	 http_server_close_listeners(struct http_server *);
void	 http_server_free(struct http_server *);
int	 http_server_nconns(const struct http_server *);

/* Request inspection. */
const char *http_header_get(const struct http_request *, const char *name);
const char *http_status_text(int status);
/*
 * The route's own fields for the request's log line, appended after
 * the access fields: one line per request however much a route says.
 * A second call replaces the first.
 */
void	 http_request_log_more(struct http_request *, const char *fmt, ...)
	    __attribute__((__format__(__printf__, 2, 3)));
/*
 * Finds parameter name in a query string and percent-decodes it into
 * buf.  Returns the decoded length, -1 when absent, -2 when it does not
 * fit or is badly encoded.  *from (may be NULL) starts the search after
 * a previous match, for repeated parameters.
 */
ssize_t	 http_query_param(const char *query, const char *name, char *buf,
	    size_t buflen, const char **from);

/* Body. */
void	 http_body_accept(struct http_request *);
/* Stop and restart reading the body (back-pressure from a slow sink). */
void	 http_body_pause(struct http_request *);
void	 http_body_resume(struct http_request *);

/*
 * Responses.  Headers added before the status goes out.
 *
 * No header the layer writes carries a control character but HT: a
 * name must be a token, and a value (the Content-Type's too) may hold
 * no CR, LF, other C0 control or DEL.  A response with one is logged
 * and becomes a 500 in the envelope of the layer's own errors, without
 * the handler's headers; whatever body the handler then sends is
 * swallowed and the connection closes after.  500, not 502: the values
 * come from the handler, and through it from callers, stores and
 * backends, which the layer cannot tell apart; a value this far is a
 * check missed above it, the server's own fault.  Dropping the header
 * alone would send a response the handler did not mean (a download
 * without its Content-Disposition, say).
 */
void	 http_reply_header(struct http_request *, const char *name,
	    const char *value);
/* A complete response with a body held in memory. */
void	 http_reply(struct http_request *, int status, const char *ctype,
	    const void *body, size_t len);
/*
 * A complete response from a regular file: length bytes at offset,
 * with sendfile.  Takes ownership of fd.
 */
void	 http_reply_file(struct http_request *, int status, const char *ctype,
	    int fd, off_t offset, off_t length);
/*
 * A complete response streamed from a pipe or socket until EOF, with
 * back-pressure both ways.  length >= 0 sends Content-Length and cuts
 * the connection if the stream ends early; -1 sends chunked.  Takes
 * ownership of fd.
 */
void	 http_reply_stream_fd(struct http_request *, int status,
	    const char *ctype, int fd, int64_t length);
/* Piecewise responses: start, data..., end. length -1 for chunked. */
void	 http_reply_start(struct http_request *, int status,
	    const char *ctype, int64_t length);
int	 http_reply_data(struct http_request *, const void *, size_t);
/* One server-sent event: "event: NAME" when NAME is set, one data line. */
void	 http_reply_event(struct http_request *, const char *event,
	    const char *data, size_t len);
void	 http_reply_end(struct http_request *);
/* Bytes queued on the socket, and a callback when they drain. */
size_t	 http_reply_pending(const struct http_request *);
void	 http_reply_ondrain(struct http_request *,
	    void (*)(struct http_request *, void *), void *);
/* Marks the connection to close after this response. */
void	 http_reply_close(struct http_request *);
/* Cuts the connection at once (an error after the status went out). */
void	 http_abort(struct http_request *);

#endif
