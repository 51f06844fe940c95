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
 * conf.c: the configuration object: its defaults (the only place they
 * live), freeing it, the restart-only settings a reload cannot change,
 * and the conninfo walker that finds passwords in place.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "store/store.h"
#include "conf_int.h"

struct depotd_conf *
conf_new(void)
{
	struct depotd_conf	*c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	TAILQ_INIT(&c->listens);
	TAILQ_INIT(&c->upstreams);
	TAILQ_INIT(&c->models);
	c->prefork = 2;
	c->frontend_timeout = 5;
	strlcpy(c->user, DEPOTD_USER, sizeof(c->user));
	strlcpy(c->storage_user, DEPOTD_STORAGE_USER,
	    sizeof(c->storage_user));
	strlcpy(c->control_socket, DEPOTD_SOCKET, sizeof(c->control_socket));
	c->db_pool = 4;
	strlcpy(c->storage.region, "us-east-1", sizeof(c->storage.region));
	c->storage.part_size = 16LL * 1024 * 1024;
	c->storage.max_transfers = 8;
	c->storage.keepalive = 30;
	c->max_size = 512LL * 1024 * 1024;
	c->retention = 0;
	c->sweep_interval = 3600;
	c->max_filename = 255;
	c->max_uploads_per_key = 8;
	c->writing_grace = 86400;
	c->extract_pages = 50;
	c->extract_size = 1024 * 1024;
	/* OpenAI's default idle expiry; a day at most; caps per tenant. */
	c->cntr_expires_after = 20;
	c->cntr_max_lifetime = 86400;
	c->cntr_max_per_key = 16;
	c->cntr_max_per_workspace = 64;
	http_limits_default(&c->http);
	/* Any body's tree under 64 MiB, whatever its shape (jsontext.h). */
	c->http.max_json_values = 1000000;
	c->http.max_json_memory = 64LL * 1024 * 1024;
	c->sandbox = SANDBOX_NONE;
	c->exec_timeout = 60;
	c->max_output_files = 20;
	c->max_output_size = 64LL * 1024 * 1024;
	c->max_sessions = 16;
	c->max_sessions_per_key = 0;	/* conf_sessions_per_key() */
	c->transfer_timeout = 300;
	c->max_tool_iterations = 8;
	c->max_answer_size = 64LL * 1024 * 1024;
	c->max_tool_calls = 128;
	c->request_timeout = 600;
	return c;
}

int
conf_sessions_per_key(const struct depotd_conf *c)
{
	int	 n = c->max_sessions_per_key;

	if (n <= 0)
		n = c->max_sessions / 2;
	if (n > c->max_sessions)
		n = c->max_sessions;
	return n > 0 ? n : 1;
}

int
conf_tool_iterations(const struct depotd_conf *c, const struct model_conf *m)
{
	return m->max_tool_iterations > 0 ? m->max_tool_iterations :
	    c->max_tool_iterations;
}

void
conf_upstream_init(struct upstream_conf *u)
{
	u->api = DIALECT_OPENAI;
	u->timeout = 300;
	u->connect_timeout = 10;
	u->idle_timeout = 60;
	u->weight = 1;
	u->max_failover = 2;
	u->discover = 1;	/* unknown servers keep today's behaviour */
	strlcpy(u->anthropic_version, "2023-06-01",
	    sizeof(u->anthropic_version));
}

/* A model's own defaults; the rest of its block is unset (0). */
void
conf_model_init(struct model_conf *m)
{
	m->max_tokens = 4096;
}

static void
wipe(char **s)
{
	if (*s != NULL)
		freezero(*s, strlen(*s));
	*s = NULL;
}

void
conf_free(struct depotd_conf *c)
{
	struct listen_conf	*l;
	struct upstream_conf	*u;
	struct model_conf	*m;

	if (c == NULL)
		return;
	while ((l = TAILQ_FIRST(&c->listens)) != NULL) {
		TAILQ_REMOVE(&c->listens, l, entry);
		free(l);
	}
	while ((u = TAILQ_FIRST(&c->upstreams)) != NULL) {
		TAILQ_REMOVE(&c->upstreams, u, entry);
		wipe(&u->api_key);
		free(u->ca_pem);
		free(u->more);
		free(u);
	}
	while ((m = TAILQ_FIRST(&c->models)) != NULL) {
		TAILQ_REMOVE(&c->models, m, entry);
		free(m);
	}
	wipe(&c->database);
	wipe(&c->storage.access_key);
	wipe(&c->storage.secret_key);
	wipe(&c->storage.session_token);
	wipe(&c->storage.passphrase);
	wipe(&c->sandbox_token);
	free(c->sandbox_link.ca_pem);
	wipe(&c->admin_key);
	freezero(c, sizeof(*c));
}

/*
 * Walks a conninfo and calls found() for each password value as the
 * span [start, end).  Handles "key = 'quoted value'" lists and
 * postgres:// URIs (user:password@ and ?password=).  Returns the number
 * of passwords seen.
 */
int
conninfo_passwords(const char *s, void (*found)(void *, size_t, size_t),
    void *arg)
{
	const char	*p, *key, *at, *slash, *colon, *q;
	size_t		 keylen;
	int		 n = 0;

	if (strncmp(s, "postgresql://", 13) == 0 ||
	    strncmp(s, "postgres://", 11) == 0) {
		p = strstr(s, "://") + 3;
		slash = p + strcspn(p, "/?");
		at = memchr(p, '@', slash - p);
		if (at != NULL && (colon = memchr(p, ':', at - p)) != NULL) {
			if (found != NULL)
				found(arg, colon + 1 - s, at - s);
			n++;
		}
		if ((q = strchr(slash, '?')) == NULL)
			return n;
		for (p = q + 1; *p != '\0'; p += *p == '&') {
			key = p;
			p += strcspn(p, "&");
			if (strncmp(key, "password=", 9) == 0) {
				if (found != NULL)
					found(arg, key + 9 - s, p - s);
				n++;
			}
		}
		return n;
	}
	for (p = s;;) {
		while (isspace((unsigned char)*p))
			p++;
		if (*p == '\0')
			return n;
		key = p;
		while (*p != '\0' && *p != '=' && !isspace((unsigned char)*p))
			p++;
		keylen = p - key;
		while (isspace((unsigned char)*p))
			p++;
		if (*p != '=')
			return n;	/* libpq will refuse it anyway */
		p++;
		while (isspace((unsigned char)*p))
			p++;
		q = p;
		if (*p == '\'') {
			for (p++; *p != '\0' && *p != '\''; p++)
				if (*p == '\\' && p[1] != '\0')
					p++;
			if (*p == '\'')
				p++;
		} else {
			while (*p != '\0' && !isspace((unsigned char)*p))
				p++;
		}
		if (keylen == 8 && strncmp(key, "password", 8) == 0) {
			if (found != NULL)
				found(arg, q - s, p - s);
			n++;
		}
	}
}

int
conf_conninfo_has_password(const char *conninfo)
{
	return conninfo_passwords(conninfo, NULL, NULL) > 0;
}

static int
listens_differ(const struct depotd_conf *a, const struct depotd_conf *b)
{
	const struct listen_conf	*la, *lb;

	lb = TAILQ_FIRST(&b->listens);
	TAILQ_FOREACH(la, &a->listens, entry) {
		if (lb == NULL || la->sslen != lb->sslen ||
		    memcmp(&la->ss, &lb->ss, la->sslen) != 0)
			return 1;
		lb = TAILQ_NEXT(lb, entry);
	}
	return lb != NULL;
}

static int
secret_differs(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a != b;
	return strcmp(a, b) != 0;
}

static int
store_differs(const struct depotd_conf *a, const struct depotd_conf *b)
{
	struct store_conf	 sa, sb;

	conf_store(a, &sa);
	conf_store(b, &sb);
	return strcmp(sa.url, sb.url) != 0 ||
	    strcmp(sa.endpoint, sb.endpoint) != 0 ||
	    strcmp(sa.region, sb.region) != 0 ||
	    secret_differs(sa.access_key, sb.access_key) ||
	    secret_differs(sa.secret_key, sb.secret_key) ||
	    secret_differs(sa.session_token, sb.session_token) ||
	    sa.path_style != sb.path_style || sa.part_size != sb.part_size ||
	    sa.max_transfers != sb.max_transfers ||
	    strcmp(sa.identity, sb.identity) != 0 ||
	    secret_differs(sa.passphrase, sb.passphrase) ||
	    strcmp(sa.known_hosts, sb.known_hosts) != 0 ||
	    sa.keepalive != sb.keepalive;
}

/* Does b connect to a port a does not?  The frontends' Landlock rules
 * name the ports they started with. */
static int
ports_added(const struct depotd_conf *a, const struct depotd_conf *b)
{
	uint16_t	 pa[CONF_PORTS_MAX], pb[CONF_PORTS_MAX];
	size_t		 na, nb, i, j;

	na = conf_upstream_ports(a, pa, CONF_PORTS_MAX);
	nb = conf_upstream_ports(b, pb, CONF_PORTS_MAX);
	for (i = 0; i < nb; i++) {
		for (j = 0; j < na; j++)
			if (pa[j] == pb[i])
				break;
		if (j == na)
			return 1;
	}
	return 0;
}

static void
note(char *buf, size_t len, int changed, const char *what)
{
	if (!changed)
		return;
	if (buf[0] != '\0')
		strlcat(buf, ", ", len);
	strlcat(buf, what, len);
}

/*
 * Lists, in buf, the settings that changed from a to b and take effect
 * only at restart (depotd.conf(5) names the same ones); "" when none
 * did.  Everything else a reload applies.
 */
void
conf_restart_changes(const struct depotd_conf *a, const struct depotd_conf *b,
    char *buf, size_t len)
{
	buf[0] = '\0';
	note(buf, len, listens_differ(a, b), "listen");
	note(buf, len, a->prefork != b->prefork, "prefork");
	note(buf, len, strcmp(a->user, b->user) != 0, "user");
	note(buf, len, strcmp(a->storage_user, b->storage_user) != 0,
	    "storage user");
	note(buf, len, strcmp(a->chroot, b->chroot) != 0, "chroot");
	note(buf, len, strcmp(a->control_socket, b->control_socket) != 0,
	    "control socket");
	note(buf, len, secret_differs(a->database, b->database) ||
	    a->db_pool != b->db_pool, "database");
	note(buf, len, store_differs(a, b), "storage");
	note(buf, len, a->sandbox != b->sandbox ||
	    strcmp(a->sandbox_dir, b->sandbox_dir) != 0 ||
	    (a->sandbox == SANDBOX_URL &&
	    strcmp(a->sandbox_url, b->sandbox_url) != 0), "sandbox");
	note(buf, len, ports_added(a, b), "new upstream ports");
}

void
conf_store(const struct depotd_conf *c, struct store_conf *sc)
{
	memset(sc, 0, sizeof(*sc));
	sc->url = c->storage_url;
	sc->endpoint = c->storage.endpoint;
	sc->region = c->storage.region;
	sc->access_key = c->storage.access_key;
	sc->secret_key = c->storage.secret_key;
	sc->session_token = c->storage.session_token;
	sc->path_style = c->storage.path_style;
	sc->part_size = c->storage.part_size;
	sc->max_transfers = c->storage.max_transfers;
	sc->identity = c->storage.identity;
	sc->passphrase = c->storage.passphrase;
	sc->known_hosts = c->storage.known_hosts;
	sc->keepalive = c->storage.keepalive;
}

