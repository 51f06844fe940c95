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
 * conf_url.c: the host and port of an upstream's URL, which the master
 * resolves for the frontends and whose ports their Landlock rules
 * allow.  The parse.y check on a url and these agree on what a URL is.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

/*
 * scheme "://" [userinfo "@"] host [":" port] [path]; host is a name,
 * an IPv4 literal or an IPv6 literal in brackets.
 */
int
conf_url_host_port(const char *url, char *host, size_t hostlen,
    uint16_t *port)
{
	const char	*p, *end, *at, *h, *hend, *colon;
	const char	*errstr;
	char		 num[8];
	size_t		 n;

	if (strncmp(url, "http://", 7) == 0) {
		p = url + 7;
		*port = 80;
	} else if (strncmp(url, "https://", 8) == 0) {
		p = url + 8;
		*port = 443;
	} else
		return -1;
	end = p + strcspn(p, "/?#");
	if ((at = memrchr(p, '@', end - p)) != NULL)
		p = at + 1;
	if (*p == '[') {
		h = p + 1;
		if ((hend = memchr(h, ']', end - h)) == NULL)
			return -1;
		colon = hend + 1 < end ? hend + 1 : NULL;
		if (colon != NULL && *colon != ':')
			return -1;
	} else {
		h = p;
		colon = memchr(h, ':', end - h);
		hend = colon != NULL ? colon : end;
	}
	n = hend - h;
	if (n == 0 || n >= hostlen)
		return -1;
	memcpy(host, h, n);
	host[n] = '\0';
	if (colon == NULL || colon + 1 == end)
		return 0;
	n = end - (colon + 1);
	if (n >= sizeof(num))
		return -1;
	memcpy(num, colon + 1, n);
	num[n] = '\0';
	*port = strtonum(num, 1, 65535, &errstr);
	return errstr == NULL ? 0 : -1;
}

/* A sandbox "URL"'s port: 1 and *port, or 0 for none (local, none). */
size_t
conf_sandbox_port(const struct depotd_conf *c, uint16_t *port)
{
	char	 host[256];

	if (c->sandbox != SANDBOX_URL ||
	    conf_url_host_port(c->sandbox_url, host, sizeof(host), port) == -1)
		return 0;
	return 1;
}

size_t
conf_upstream_ports(const struct depotd_conf *c, uint16_t *ports,
    size_t max)
{
	const struct upstream_conf	*u;
	char				 host[256];
	uint16_t			 port;
	size_t				 n = 0, i;

	size_t				 r;

	TAILQ_FOREACH(u, &c->upstreams, entry) {
		for (r = 0; r < conf_replicas(u); r++) {
			if (conf_url_host_port(conf_replica_url(u, r), host,
			    sizeof(host), &port) == -1)
				continue;
			for (i = 0; i < n; i++)
				if (ports[i] == port)
					break;
			if (i == n && n < max)
				ports[n++] = port;
		}
	}
	return n;
}

size_t
conf_replicas(const struct upstream_conf *u)
{
	return 1 + u->nmore;
}

const char *
conf_replica_url(const struct upstream_conf *u, size_t i)
{
	return i == 0 ? u->url : u->more[i - 1].url;
}

const char *
conf_replica_resolve(const struct upstream_conf *u, size_t i)
{
	return i == 0 ? u->resolve : u->more[i - 1].resolve;
}

int
conf_replica_weight(const struct upstream_conf *u, size_t i)
{
	return i == 0 ? u->weight : u->more[i - 1].weight;
}

int
conf_replica_add(struct upstream_conf *u, const char *url, int weight)
{
	struct replica_conf	*r;

	if (u->url[0] == '\0') {
		strlcpy(u->url, url, sizeof(u->url));
		u->weight = weight;
		return 0;
	}
	if (conf_replicas(u) >= CONF_REPLICAS_MAX)
		return -1;
	if ((r = reallocarray(u->more, u->nmore + 1, sizeof(*r))) == NULL)
		return -1;
	u->more = r;
	r += u->nmore++;
	memset(r, 0, sizeof(*r));
	strlcpy(r->url, url, sizeof(r->url));
	r->weight = weight;
	return 0;
}
