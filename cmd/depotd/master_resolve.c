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
 * master_resolve.c: the master looks up the upstreams' host names for
 * the frontends, which can resolve nothing (no file system, no DNS
 * socket), at start and at every reload.  Each upstream gets the
 * addresses as "host:port:addr[,addr...]", the form of libcurl's
 * CURLOPT_RESOLVE.  The lookup blocks the master for as long as the
 * resolver takes: it runs only when a configuration is read.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "config.h"
#include "conf_int.h"

#define RESOLVE_MAX_ADDRS	8

static int
is_literal(const char *host)
{
	struct in6_addr	 a6;
	struct in_addr	 a4;

	return inet_pton(AF_INET, host, &a4) == 1 ||
	    inet_pton(AF_INET6, host, &a6) == 1;
}

/* Appends the addresses of ai to buf, IPv6 in brackets: how many. */
static int
append_addrs(char *buf, size_t len, const struct addrinfo *ai)
{
	char	 addr[INET6_ADDRSTRLEN];
	char	 seen[RESOLVE_MAX_ADDRS][INET6_ADDRSTRLEN + 2];
	int	 n = 0, i;

	for (; ai != NULL && n < RESOLVE_MAX_ADDRS; ai = ai->ai_next) {
		if (getnameinfo(ai->ai_addr, ai->ai_addrlen, addr,
		    sizeof(addr), NULL, 0, NI_NUMERICHOST) != 0)
			continue;
		snprintf(seen[n], sizeof(seen[n]), ai->ai_family ==
		    AF_INET6 ? "[%s]" : "%s", addr);
		/* getaddrinfo may name one address more than once. */
		for (i = 0; i < n; i++)
			if (strcmp(seen[i], seen[n]) == 0)
				break;
		if (i < n)
			continue;
		if (strlen(buf) + strlen(seen[n]) + 2 > len)
			break;
		if (n > 0)
			strlcat(buf, ",", len);
		strlcat(buf, seen[n], len);
		n++;
	}
	return n;
}

static void
resolve_url(const char *name, const char *url, char *out, size_t outlen)
{
	struct addrinfo	 hints, *res;
	char		 host[256];
	uint16_t	 port;
	int		 rv;

	out[0] = '\0';
	if (conf_url_host_port(url, host, sizeof(host), &port) == -1 ||
	    is_literal(host))
		return;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if ((rv = getaddrinfo(host, NULL, &hints, &res)) != 0) {
		log_warnx("upstream \"%s\": cannot resolve %s: %s; its "
		    "models answer 502 until a reload resolves it", name,
		    host, gai_strerror(rv));
		return;
	}
	snprintf(out, outlen, "%s:%u:", host, (unsigned)port);
	if (append_addrs(out, outlen, res) == 0) {
		log_warnx("upstream \"%s\": %s has no usable address",
		    name, host);
		out[0] = '\0';
	}
	freeaddrinfo(res);
}

/* Every replica's host, at every load and reload: the pool follows. */
static void
resolve_one(struct upstream_conf *u)
{
	size_t	 i;

	resolve_url(u->name, u->url, u->resolve, sizeof(u->resolve));
	for (i = 0; i < u->nmore; i++)
		resolve_url(u->name, u->more[i].url, u->more[i].resolve,
		    sizeof(u->more[i].resolve));
}

void
conf_resolve_upstreams(struct depotd_conf *c)
{
	struct upstream_conf	*u;

	int			 fd;

	/* A remote sandbox is resolved for the broker the same way. */
	memset(&c->sandbox_link, 0, sizeof(c->sandbox_link));
	if (c->sandbox == SANDBOX_URL) {
		strlcpy(c->sandbox_link.name, "sandbox",
		    sizeof(c->sandbox_link.name));
		strlcpy(c->sandbox_link.url, c->sandbox_url,
		    sizeof(c->sandbox_link.url));
		strlcpy(c->sandbox_link.ca_file, c->sandbox_ca_file,
		    sizeof(c->sandbox_link.ca_file));
		resolve_one(&c->sandbox_link);
		c->sandbox_link.name[0] = '\0';
		if ((fd = conf_ca_open(&c->sandbox_link)) != -1)
			close(fd);
	}
	TAILQ_FOREACH(u, &c->upstreams, entry) {
		resolve_one(u);
		/* Said now (and by -n), not only when it is sent. */
		if ((fd = conf_ca_open(u)) != -1)
			close(fd);
	}
}
