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
 * http_server.c: the server object, its listeners, and the connections
 * it refuses when it is full.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>
#include <event2/util.h>

#include "http_private.h"
#include "log.h"

#define LISTEN_RETRY_SEC	1		/* after accept fails (EMFILE) */

struct listener {
	TAILQ_ENTRY(listener)	 entry;
	struct http_server	*srv;
	struct evconnlistener	*evl;
	struct event		*retry;
};

/*
 * What a connection calls in the layers above http_conn.c: the parser
 * (http.c) and the reply writer (http_reply.c).
 */
static const struct http_conn_calls server_conn_calls = {
	http_conn_process,
	http_request_end,
	http_layer_error,
};

/* Why a connection is turned away at once. */
struct refusal {
	int		 status;
	const char	*type;		/* in the OpenAI error envelope */
	const char	*message;
};

static const struct refusal refuse_busy = {
	503, "server_error", "The server is busy; retry later."
};
static const struct refusal refuse_crowded = {
	429, "rate_limit_error",
	"Too many connections from your address; retry later."
};

/* Over a connection limit: one canned answer, then goodbye. */
static void
refuse(int fd, const struct refusal *why)
{
	char		 body[256], msg[800], id[33], date[64], sink[4096];
	struct tm	 tm;
	time_t		 now = time(NULL);
	int		 blen, len, i;

	http_request_id(id);
	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	blen = snprintf(body, sizeof(body), "{\"error\":{\"message\":\"%s\","
	    "\"type\":\"%s\",\"param\":null,\"code\":null}}", why->message,
	    why->type);
	len = snprintf(msg, sizeof(msg), "HTTP/1.1 %d %s\r\n"
	    "Date: %s\r\nServer: depotd\r\nrequest-id: %s\r\n"
	    "x-request-id: %s\r\n"
	    "Content-Type: application/json\r\nContent-Length: %d\r\n"
	    "Retry-After: 1\r\nConnection: close\r\n\r\n%s", why->status,
	    http_status_text(why->status), date, id, id, blen, body);
	(void)send(fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	shutdown(fd, SHUT_WR);
	/* Unread input would turn the close into a reset. */
	for (i = 0; i < 16; i++)
		if (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) <= 0)
			break;
	close(fd);
	log_info("- - %d 0 %d 0 user=- id=%s", why->status, blen, id);
}

static void
peer_name(const struct sockaddr *sa, char *buf, size_t len)
{
	char	 addr[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)sa;

		inet_ntop(AF_INET, &sin->sin_addr, addr, sizeof(addr));
		snprintf(buf, len, "%s:%u", addr, ntohs(sin->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)sa;

		inet_ntop(AF_INET6, &sin6->sin6_addr, addr, sizeof(addr));
		snprintf(buf, len, "[%s]:%u", addr, ntohs(sin6->sin6_port));
	} else
		strlcpy(buf, "unix", len);
}

static void
client_addr(const struct sockaddr *sa, struct http_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)sa;

		a->family = AF_INET;
		memcpy(a->prefix, &sin->sin_addr, sizeof(sin->sin_addr));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)sa;
		const unsigned char	*in6 = sin6->sin6_addr.s6_addr;

		/* On a dual-stack socket, IPv4 clients share ::ffff:0:0/96. */
		if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
			a->family = AF_INET;
			memcpy(a->prefix, in6 + 12, 4);
		} else {
			a->family = AF_INET6;
			memcpy(a->prefix, in6, sizeof(a->prefix));
		}
	}
}

/*
 * A walk over every connection: at most max_conns of them, once per
 * accept, is cheaper than keeping a table of counts in step.
 */
static int
addr_crowded(const struct http_server *srv, const struct http_addr *a)
{
	const struct http_conn	*c;
	int			 n = 0;

	if (a->family == 0 || srv->limits.max_conns_per_addr <= 0)
		return 0;
	TAILQ_FOREACH(c, &srv->conns, entry)
		if (memcmp(&c->addr, a, sizeof(*a)) == 0 &&
		    ++n >= srv->limits.max_conns_per_addr)
			return 1;
	return 0;
}

/* Serves fd from the client at sa, or turns it away over a limit. */
static int
admit(struct http_server *srv, int fd, const struct sockaddr *sa,
    const char *peer)
{
	struct http_addr	 a;

	client_addr(sa, &a);
	if (srv->closing || srv->nconns >= srv->limits.max_conns) {
		refuse(fd, &refuse_busy);
		return -1;
	}
	if (addr_crowded(srv, &a)) {
		refuse(fd, &refuse_crowded);
		return -1;
	}
	return http_conn_new(srv, fd, peer, &a, &server_conn_calls);
}

static void
listener_accept_cb(struct evconnlistener *evl, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct listener		*l = arg;
	char			 peer[64];
	int			 on = 1;

	/* Streamed events are small writes: none may wait for an ACK. */
	if (sa->sa_family == AF_INET || sa->sa_family == AF_INET6)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
	peer_name(sa, peer, sizeof(peer));
	admit(l->srv, fd, sa, peer);
}

static void
listener_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct listener	*l = arg;

	evconnlistener_enable(l->evl);
}

/* accept(2) failing (EMFILE) would otherwise spin: pause a second. */
static void
listener_error_cb(struct evconnlistener *evl, void *arg)
{
	struct listener	*l = arg;
	struct timeval	 tv = { LISTEN_RETRY_SEC, 0 };

	log_warn("accept");
	evconnlistener_disable(evl);
	evtimer_add(l->retry, &tv);
}

struct http_server *
http_server_new(struct event_base *base, const struct http_limits *limits,
    const struct http_handler *handler)
{
	struct http_server	*srv;

	if ((srv = calloc(1, sizeof(*srv))) == NULL)
		return NULL;
	srv->base = base;
	if (limits != NULL)
		srv->limits = *limits;
	else
		http_limits_default(&srv->limits);
	srv->handler = *handler;
	TAILQ_INIT(&srv->listeners);
	TAILQ_INIT(&srv->conns);
	return srv;
}

void
http_server_set_limits(struct http_server *srv, const struct http_limits *l)
{
	srv->limits = *l;
}

int
http_server_listen_fd(struct http_server *srv, int fd)
{
	struct listener	*l;

	if ((l = calloc(1, sizeof(*l))) == NULL)
		goto fail;
	l->srv = srv;
	if ((l->retry = evtimer_new(srv->base, listener_retry_cb, l)) == NULL ||
	    evutil_make_socket_nonblocking(fd) == -1 ||
	    (l->evl = evconnlistener_new(srv->base, listener_accept_cb, l,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, fd)) == NULL)
		goto fail;
	evconnlistener_set_error_cb(l->evl, listener_error_cb);
	TAILQ_INSERT_TAIL(&srv->listeners, l, entry);
	return 0;
 fail:
	log_warn("%s", __func__);
	close(fd);
	if (l != NULL) {
		if (l->retry)
			event_free(l->retry);
		free(l);
	}
	return -1;
}

int
http_server_attach_fd(struct http_server *srv, int fd, const char *peer)
{
	struct sockaddr_storage	 ss;
	socklen_t		 sslen = sizeof(ss);

	if (getpeername(fd, (struct sockaddr *)&ss, &sslen) == -1)
		ss.ss_family = AF_UNSPEC;
	return admit(srv, fd, (struct sockaddr *)&ss, peer ? peer : "-");
}

void
http_server_close_listeners(struct http_server *srv)
{
	struct listener		*l;
	struct http_conn	*c, *next;

	while ((l = TAILQ_FIRST(&srv->listeners)) != NULL) {
		TAILQ_REMOVE(&srv->listeners, l, entry);
		evconnlistener_free(l->evl);
		event_free(l->retry);
		free(l);
	}
	srv->closing = 1;
	/* Connections between requests have nothing left to finish. */
	for (c = TAILQ_FIRST(&srv->conns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->phase == PH_IDLE && c->req == NULL)
			http_conn_close(c);
	}
}

void
http_server_free(struct http_server *srv)
{
	struct http_conn	*c;

	if (srv == NULL)
		return;
	http_server_close_listeners(srv);
	while ((c = TAILQ_FIRST(&srv->conns)) != NULL)
		http_conn_close(c);
	free(srv);
}

int
http_server_nconns(const struct http_server *srv)
{
	return srv->nconns;
}

