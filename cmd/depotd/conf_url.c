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

size_t
conf_upstream_ports(const struct depotd_conf *c, uint16_t *ports,
    size_t max)
{
	const struct upstream_conf	*u;
	char				 host[256];
	uint16_t			 port;
	size_t				 n = 0, i;

	TAILQ_FOREACH(u, &c->upstreams, entry) {
		if (conf_url_host_port(u->url, host, sizeof(host), &port) ==
		    -1)
			continue;
		for (i = 0; i < n; i++)
			if (ports[i] == port)
				break;
		if (i == n && n < max)
			ports[n++] = port;
	}
	return n;
}
