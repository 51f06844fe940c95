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
 * http_reply.c: responses: the status line and headers, bodies from
 * memory, from a file with sendfile, from a pipe or socket, or piece by
 * piece; and the errors the layer answers itself.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/util.h>

#include "http_private.h"
#include "log.h"

const char *
http_status_text(int status)
{
	switch (status) {
	case 100: return "Continue";
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 204: return "No Content";
	case 206: return "Partial Content";
	case 301: return "Moved Permanently";
	case 302: return "Found";
	case 304: return "Not Modified";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 409: return "Conflict";
	case 411: return "Length Required";
	case 413: return "Payload Too Large";
	case 414: return "URI Too Long";
	case 415: return "Unsupported Media Type";
	case 416: return "Range Not Satisfiable";
	case 417: return "Expectation Failed";
	case 422: return "Unprocessable Entity";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	default: return "Unknown";
	}
}

/* Connection output. */

static void
reply_head(struct http_conn *c, struct http_request *req, int status,
    const char *ctype, int64_t length)
{
	struct evbuffer	*out = bufferevent_get_output(c->bev);
	char		 date[64];
	struct tm	 tm;
	time_t		 now = time(NULL);
	int		 bodyless_status;

	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\nDate: %s\r\n"
	    "Server: depotd\r\nrequest-id: %s\r\nx-request-id: %s\r\n",
	    status, http_status_text(status), date, req->id, req->id);
	if (ctype != NULL)
		evbuffer_add_printf(out, "Content-Type: %s\r\n", ctype);
	bodyless_status = status < 200 || status == 204 || status == 304;
	if (!bodyless_status) {
		if (length >= 0)
			evbuffer_add_printf(out, "Content-Length: %lld\r\n",
			    (long long)length);
		else if (c->resp_chunked)
			evbuffer_add_printf(out,
			    "Transfer-Encoding: chunked\r\n");
	}
	if (c->want_close)
		evbuffer_add_printf(out, "Connection: close\r\n");
	else if (c->parser.http_major == 1 && c->parser.http_minor == 0)
		evbuffer_add_printf(out, "Connection: keep-alive\r\n");
	evbuffer_add_buffer(out, c->resp_headers);
	evbuffer_add(out, "\r\n", 2);
}

/* A token (RFC 9110): letters, digits and !#$%&'*+-.^_`|~. */
static int
field_name_ok(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (!(*s >= 'a' && *s <= 'z') && !(*s >= 'A' && *s <= 'Z') &&
		    !(*s >= '0' && *s <= '9') &&
		    strchr("!#$%&'*+-.^_`|~", *s) == NULL)
			return 0;
	return 1;
}

/*
 * No control character but HT: a CR or LF would end the field and
 * start a header, or a response, of its own; the others (and DEL) are
 * no field content either.  A NUL ends the C string before it.
 */
static int
field_value_ok(const char *s)
{
	for (; *s != '\0'; s++)
		if (((unsigned char)*s < 0x20 && *s != '\t') || *s == 0x7f)
			return 0;
	return 1;
}

void
http_reply_header(struct http_request *req, const char *name,
    const char *value)
{
	struct http_conn	*c = req->conn;

	if (req->replied) {
		log_warnx("%s: %s after the status line", __func__, name);
		return;
	}
	if (!field_name_ok(name) || !field_value_ok(value)) {
		log_warnx("request %s: header %s: %s, refused: the response "
		    "becomes a 500", req->id, name, value);
		c->resp_refused = 1;
		return;
	}
	evbuffer_add_printf(c->resp_headers, "%s: %s\r\n", name, value);
}

/*
 * The response in place of one whose header would carry a control
 * character (see http.h): a 500 in the envelope of the layer's own
 * errors, without the handler's headers; what the handler goes on to
 * send is swallowed, and the connection closes after it.
 */
static void
reply_refused(struct http_conn *c, struct http_request *req)
{
	static const char	 body[] = "{\"error\":{\"message\":\"the "
	    "response could not be formed\",\"type\":\"server_error\","
	    "\"param\":null,\"code\":null}}";
	struct evbuffer		*out = bufferevent_get_output(c->bev);

	evbuffer_drain(c->resp_headers, evbuffer_get_length(c->resp_headers));
	c->resp_refused = 1;
	c->want_close = 1;
	c->resp_chunked = 0;
	c->resp_remaining = -1;
	req->status = 500;
	reply_head(c, req, 500, "application/json", sizeof(body) - 1);
	if (req->method != HTTP_M_HEAD) {
		evbuffer_add(out, body, sizeof(body) - 1);
		req->bytes_out += sizeof(body) - 1;
	}
	c->resp_nobody = 1;
	c->resp = RS_OPEN;
}

void
http_reply_start(struct http_request *req, int status, const char *ctype,
    int64_t length)
{
	struct http_conn	*c = req->conn;

	if (c->dead || req->replied) {
		log_warnx("%s: response already started", __func__);
		return;
	}
	req->replied = 1;
	req->status = status;
	if (!req->keepalive || c->srv->closing)
		c->want_close = 1;
	if (c->phase == PH_DISPATCH && c->has_body && !c->body_accepted) {
		/* The body stays unread: the connection cannot be reused. */
		c->want_close = 1;
		c->linger = !req->expect_continue;
		c->phase = PH_STOP;
	} else if (c->has_body && !c->msg_complete) {
		c->want_close = 1;
		c->linger = 1;
	}
	c->resp_nobody = req->method == HTTP_M_HEAD || status < 200 ||
	    status == 204 || status == 304;
	c->resp_chunked = 0;
	c->resp_remaining = length;
	if (length < 0 && !c->resp_nobody) {
		if (c->parser.http_major == 1 && c->parser.http_minor == 0)
			c->want_close = 1;	/* the close ends the body */
		else
			c->resp_chunked = 1;
	}
	if (!c->resp_refused && ctype != NULL && !field_value_ok(ctype)) {
		log_warnx("request %s: Content-Type: %s, refused: the "
		    "response becomes a 500", req->id, ctype);
		c->resp_refused = 1;
	}
	if (c->resp_refused) {
		reply_refused(c, req);
		return;
	}
	reply_head(c, req, status, ctype, length);
	c->resp = RS_OPEN;
}

int
http_reply_data(struct http_request *req, const void *data, size_t len)
{
	struct http_conn	*c = req->conn;
	struct evbuffer		*out;

	if (c->dead || c->resp != RS_OPEN)
		return -1;
	if (len == 0 || c->resp_refused)
		return 0;
	if (c->resp_remaining >= 0) {
		if ((uint64_t)len > (uint64_t)c->resp_remaining) {
			log_warnx("%s: more data than declared", __func__);
			return -1;
		}
		c->resp_remaining -= len;
	}
	req->bytes_out += len;
	if (c->resp_nobody)
		return 0;
	out = bufferevent_get_output(c->bev);
	if (c->resp_chunked && evbuffer_add_printf(out, "%zx\r\n", len) < 0)
		return -1;
	if (evbuffer_add(out, data, len) == -1)
		return -1;
	if (c->resp_chunked && evbuffer_add(out, "\r\n", 2) == -1)
		return -1;
	return 0;
}

void
http_reply_event(struct http_request *req, const char *event,
    const char *data, size_t len)
{
	if (event != NULL && event[0] != '\0') {
		http_reply_data(req, "event: ", 7);
		http_reply_data(req, event, strlen(event));
		http_reply_data(req, "\n", 1);
	}
	http_reply_data(req, "data: ", 6);
	http_reply_data(req, data, len);
	http_reply_data(req, "\n\n", 2);
}

void
http_reply_end(struct http_request *req)
{
	struct http_conn	*c = req->conn;
	struct evbuffer		*out;

	if (c->dead || c->resp != RS_OPEN)
		return;
	out = bufferevent_get_output(c->bev);
	if (c->resp_remaining > 0 && !c->resp_nobody) {
		/* The framing promised more: only a cut tells the client. */
		log_warnx("%s: response %s short by %lld bytes", __func__,
		    req->id, (long long)c->resp_remaining);
		http_conn_close(c);
		return;
	}
	if (c->resp_chunked)
		evbuffer_add(out, "0\r\n\r\n", 5);
	c->resp = RS_FLUSHING;
	if (evbuffer_get_length(out) == 0)
		http_conn_kick(c);
}

void
http_reply(struct http_request *req, int status, const char *ctype,
    const void *body, size_t len)
{
	struct http_conn	*c = req->conn;

	if (c->dead || req->replied) {
		log_warnx("%s: response already started", __func__);
		return;
	}
	c->inuse++;
	http_reply_start(req, status, ctype, (int64_t)len);
	if (http_reply_data(req, body, len) == -1)
		http_conn_close(c);
	else
		http_reply_end(req);
	http_conn_release(c);
}

/*
 * The start of a response whose body comes from fd.  Returns 1 when
 * the body is to be sent from fd; 0 when there is none to send (HEAD,
 * 204, 304, empty) or no response can start, fd then closed.  The
 * caller holds the connection (inuse).
 */
static int
reply_fd_start(struct http_request *req, int status, const char *ctype,
    int fd, int64_t length)
{
	struct http_conn	*c = req->conn;

	if (c->dead || req->replied) {
		log_warnx("%s: response already started", __func__);
		close(fd);
		return 0;
	}
	http_reply_start(req, status, ctype, length);
	if (!c->resp_nobody && length != 0)
		return 1;
	close(fd);
	if (length > 0 && !c->resp_refused)
		req->bytes_out += length;	/* as http_reply_data counts */
	c->resp_remaining = 0;
	http_reply_end(req);
	return 0;
}

/* Queues length bytes of fd at offset, sent with sendfile. */
static void
reply_file_segment(struct http_request *req, int fd, off_t offset,
    off_t length)
{
	struct http_conn		*c = req->conn;
	struct evbuffer_file_segment	*seg;
	int				 rv;

	if ((seg = evbuffer_file_segment_new(fd, offset, length,
	    EVBUF_FS_CLOSE_ON_FREE)) == NULL) {
		log_warn("%s: file segment", __func__);
		close(fd);
		http_conn_close(c);
		return;
	}
	/* Our reference goes; the buffer's keeps the fd until sent. */
	rv = evbuffer_add_file_segment(bufferevent_get_output(c->bev), seg,
	    0, length);
	evbuffer_file_segment_free(seg);
	if (rv == -1) {
		http_conn_close(c);
		return;
	}
	req->bytes_out += length;
	c->resp_remaining = 0;
	http_reply_end(req);
}

void
http_reply_file(struct http_request *req, int status, const char *ctype,
    int fd, off_t offset, off_t length)
{
	struct http_conn	*c = req->conn;

	if (length < 0) {
		log_warnx("%s: negative length", __func__);
		close(fd);
		return;
	}
	c->inuse++;
	if (reply_fd_start(req, status, ctype, fd, length))
		reply_file_segment(req, fd, offset, length);
	http_conn_release(c);
}

/*
 * A plain body needs no framing: read straight into a block of the
 * pool that the output then holds by reference.  Space reserved in the
 * output was a fresh malloc per read, freed once sent: a page fault
 * per page streamed.
 */
static ssize_t
stream_read_direct(struct http_conn *c, int fd, size_t want)
{
	struct evbuffer	*out = bufferevent_get_output(c->bev);
	size_t		 room;
	ssize_t		 n;
	void		*p;
	int		 saved;

	if ((p = bufpool_cur_room(&c->wcur, STREAM_READ_MIN, &room)) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	if ((n = read(fd, p, want < room ? want : room)) <= 0) {
		saved = errno;
		bufpool_cur_trim(&c->wcur);	/* a stream that waits */
		errno = saved;
		return n;
	}
	if (bufpool_cur_keep(&c->wcur, out, n, STREAM_COPY_MAX) == -1) {
		errno = ENOMEM;
		return -1;
	}
	return n;
}

/* A chunked body: each read becomes one chunk. */
static ssize_t
stream_read_chunk(struct http_conn *c, int fd, size_t want)
{
	struct evbuffer	*out = bufferevent_get_output(c->bev);
	ssize_t		 n;

	if ((n = read(fd, c->stream_buf, want)) > 0) {
		evbuffer_add_printf(out, "%zx\r\n", (size_t)n);
		evbuffer_add(out, c->stream_buf, n);
		evbuffer_add(out, "\r\n", 2);
	}
	return n;
}

/* After n bytes came from the stream into the output. */
static void
stream_read_end(struct http_conn *c, ssize_t n)
{
	struct evbuffer	*out = bufferevent_get_output(c->bev);

	c->req->bytes_out += n;
	if (c->resp_remaining >= 0)
		c->resp_remaining -= n;
	if (n == 0 || c->resp_remaining == 0) {
		/* Past the declared length is not ours to send; short is
		 * cut by reply_end. */
		http_stream_stop(c);
		http_reply_end(c->req);
	} else if (evbuffer_get_length(out) >= STREAM_HIGH_WATER) {
		event_del(c->stream);
		c->stream_blocked = 1;
	}
}

/*
 * Copies from the stream into the connection, in reads of up to
 * STREAM_READ bytes (a bufferevent would read 4096 at a time), and
 * stops reading while the connection holds STREAM_HIGH_WATER unsent.
 */
static void
stream_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http_conn	*c = arg;
	size_t			 want = STREAM_READ;
	ssize_t			 n;

	c->inuse++;
	if (c->resp_remaining >= 0 && (uint64_t)want >
	    (uint64_t)c->resp_remaining)
		want = c->resp_remaining;
	if (c->resp_chunked)
		n = stream_read_chunk(c, fd, want);
	else
		n = stream_read_direct(c, fd, want);
	if (n != -1)
		stream_read_end(c, n);
	else if (errno != EAGAIN && errno != EINTR) {
		log_warn("%s: response stream %s", __func__,
		    c->req ? c->req->id : "-");
		http_conn_close(c);
	}
	http_conn_release(c);
}

void
http_reply_stream_fd(struct http_request *req, int status,
    const char *ctype, int fd, int64_t length)
{
	struct http_conn	*c = req->conn;

	c->inuse++;
	if (!reply_fd_start(req, status, ctype, fd, length))
		goto done;
	if (evutil_make_socket_nonblocking(fd) == -1 ||
	    (c->resp_chunked &&		/* plain bodies need no copy */
	    (c->stream_buf = malloc(STREAM_READ)) == NULL) ||
	    (c->stream = event_new(c->srv->base, fd, EV_READ | EV_PERSIST,
	    stream_read_cb, c)) == NULL) {
		log_warn("%s", __func__);
		close(fd);
		free(c->stream_buf);
		c->stream_buf = NULL;
		http_conn_close(c);
		goto done;
	}
	c->stream_fd = fd;
	event_add(c->stream, NULL);
 done:
	http_conn_release(c);
}

size_t
http_reply_pending(const struct http_request *req)
{
	if (req->conn->dead)
		return 0;
	return evbuffer_get_length(bufferevent_get_output(req->conn->bev));
}

void
http_reply_ondrain(struct http_request *req,
    void (*cb)(struct http_request *, void *), void *arg)
{
	struct http_conn	*c = req->conn;

	c->ondrain = cb;
	c->ondrain_arg = arg;
	if (cb != NULL && http_reply_pending(req) <=
	    c->srv->limits.write_watermark)
		http_conn_kick(c);
}

void
http_reply_close(struct http_request *req)
{
	req->conn->want_close = 1;
}

void
http_abort(struct http_request *req)
{
	http_conn_close(req->conn);
}

/* Errors the layer answers itself, in the OpenAI envelope. */
void
http_layer_error(struct http_conn *c, int status, const char *message,
    int linger)
{
	char	 body[512];
	int	 len;

	if (c->req == NULL && http_request_new(c) == NULL) {
		http_conn_close(c);
		return;
	}
	c->phase = PH_STOP;
	c->want_close = 1;
	http_timer_clear(c);
	if (c->req->replied) {
		/* Too late for a status: end after the response. */
		return;
	}
	len = snprintf(body, sizeof(body), "{\"error\":{\"message\":\"%s\","
	    "\"type\":\"%s\",\"param\":null,\"code\":null}}", message,
	    status >= 500 ? "server_error" : "invalid_request_error");
	if (len < 0 || (size_t)len >= sizeof(body))
		len = 0;
	http_reply(c->req, status, "application/json", body, len);
	c->linger = linger;
}

