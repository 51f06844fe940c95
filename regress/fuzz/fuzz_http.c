/* fuzz-sources: lib/bufpool.c lib/http.c lib/http_conn.c lib/http_limits.c lib/http_reply.c lib/http_server.c lib/http_query.c lib/log.c lib/randpool.c */
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
 * fuzz_http.c: arbitrary bytes from a client into the HTTP layer.
 *
 * The input goes down one end of a socketpair whose other end is served
 * by an http_server with small limits and a handler that exercises each
 * kind of response; the event loop runs until the server falls quiet,
 * then everything is freed, so that leaks show up per input.
 */
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "http.h"
#include "log.h"

#define MAX_INPUT	65536

static struct event_base	*base;

/*
 * Open descriptors among the first few hundred: unchanged unless one
 * leaked.  Datagram sockets are not counted: the only one is syslog's,
 * which libc opens, closes and reopens on its own whenever a syslog
 * daemon comes, goes or refuses a line, and the HTTP layer owns none.
 */
static int
open_fds(void)
{
	socklen_t	 len;
	int		 fd, type, n = 0;

	for (fd = 0; fd < 128; fd++) {
		if (fcntl(fd, F_GETFD) == -1)
			continue;
		len = sizeof(type);
		if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
		    type == SOCK_DGRAM)
			continue;
		n++;
	}
	return n;
}

static void
reply_stream(struct http_request *req, int declared)
{
	int	 p[2];

	if (pipe(p) == -1) {
		http_reply(req, 500, NULL, "", 0);
		return;
	}
	(void)!write(p[1], "abcdef", 6);
	close(p[1]);
	http_reply_stream_fd(req, 200, "text/plain", p[0], declared ? 6 : -1);
}

static void
reply_file(struct http_request *req)
{
	int	 fd = memfd_create("fuzz", 0);

	if (fd == -1 || write(fd, "0123456789", 10) != 10) {
		if (fd != -1)
			close(fd);
		http_reply(req, 500, NULL, "", 0);
		return;
	}
	http_reply_file(req, 200, "text/plain", fd, 2, 8);
}

static void
on_request(struct http_request *req, void *arg)
{
	char	 buf[64];

	switch (req->path[0] == '/' ? req->path[1] : '\0') {
	case 'e':		/* read the body */
	case 'p':		/* read it with pauses */
		http_body_accept(req);
		break;
	case 'r':		/* refuse the body */
		http_reply(req, 413, "application/json", "{}", 2);
		break;
	case 's':
		reply_stream(req, req->path[2] == 'l');
		break;
	case 'f':
		reply_file(req);
		break;
	case 'c':		/* chunked, piecewise */
		http_reply_header(req, "X-Test", req->path);
		http_reply_start(req, 200, NULL, -1);
		http_reply_data(req, "ab", 2);
		http_reply_data(req, "cd", 2);
		http_reply_end(req);
		break;
	default:
		if (http_query_param(req->query, "a", buf, sizeof(buf),
		    NULL) >= 0)
			http_reply_header(req, "X-A", buf);
		http_reply(req, 200, "text/plain", "ok", 2);
		break;
	}
}

static void
on_body(struct http_request *req, const void *p, size_t len, void *arg)
{
	if (req->path[1] == 'p') {
		http_body_pause(req);
		http_body_resume(req);
	}
}

static void
on_body_end(struct http_request *req, void *arg)
{
	http_reply(req, 200, "text/plain", "done", 4);
}

static void
on_free(struct http_request *req, void *arg)
{
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_handler	 h = { on_request, on_body, on_body_end,
				    on_free, NULL };
	struct http_limits	 lim;
	struct http_server	*srv;
	char			 sink[65536];
	size_t			 off = 0, piece;
	ssize_t			 n;
	int			 sv[2], i, quiet = 0, fd0;

	if (size > MAX_INPUT)
		return 0;
	if (base == NULL) {
		signal(SIGPIPE, SIG_IGN);
		/* syslog: access lines would drown libFuzzer's output. */
		log_init("fuzz_http", 0, 0);
		if ((base = event_base_new()) == NULL)
			abort();
	}
	fd0 = open_fds();
	http_limits_default(&lim);
	lim.max_header_bytes = 1024;
	lim.max_headers = 8;
	lim.max_uri = 256;
	lim.read_watermark = 4096;
	lim.write_watermark = 1024;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
		abort();
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
	if ((srv = http_server_new(base, &lim, &h)) == NULL)
		abort();
	http_server_attach_fd(srv, sv[0], "fuzz");

	/*
	 * The first byte sets the size of the pieces the rest arrives in,
	 * so that every parser state meets the end of a read.
	 */
	if (size < 1)
		piece = 1;
	else {
		piece = data[0] & 0x80 ? MAX_INPUT : (size_t)data[0] + 1;
		data++;
		size--;
	}
	/* Until the server neither reads nor writes for a few rounds. */
	for (i = 0; i < 4000 && quiet < 4; i++) {
		quiet++;
		if (off < size && (n = write(sv[1], data + off,
		    size - off < piece ? size - off : piece)) > 0) {
			off += n;
			quiet = 0;
		}
		event_base_loop(base, EVLOOP_NONBLOCK);
		while ((n = read(sv[1], sink, sizeof(sink))) > 0)
			quiet = 0;
	}
	close(sv[1]);
	for (i = 0; i < 4; i++)
		event_base_loop(base, EVLOOP_NONBLOCK);
	http_server_free(srv);
	if ((i = open_fds()) != fd0) {
		/* Said, so that a CI log tells this abort from others. */
		fprintf(stderr, "fuzz_http: %d descriptors open before, %d "
		    "after: one outlived its connection\n", fd0, i);
		abort();
	}
	return 0;
}
