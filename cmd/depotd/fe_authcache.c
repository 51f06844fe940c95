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
 * fe_authcache.c: the storage helper's answers a frontend keeps, so
 * that a request with a key in use sends no message at all.
 *
 * An entry is found by the SHA-256 of the token (and, for the admin
 * key, the user and workspace it named); the key itself never reaches
 * a frontend.  It lives no longer than the storage helper said its own
 * cached answer would (auth_result.ttl_ms, at most AUTH_CACHE_TTL:
 * revocation on another host), nor past the key's expiry, and the
 * table holds at most max entries, the least recently used going
 * first.  The storage helper pushes IMSG_AUTH_DROP for a handle it
 * revoked, and an empty one to drop everything (a reload): the entry
 * leaves the table at once, and the requests still using it find
 * their handle refused.  Only accepted lookups that carry a handle
 * are kept; failures are always asked again.  Entries are wiped when
 * freed.
 *
 * Pure: the caller gives the clocks and ends the handles.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/tree.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "fe_authcache.h"

RB_HEAD(fe_authcache_tree, fe_authcache_entry);
TAILQ_HEAD(fe_authcache_lru, fe_authcache_entry);
LIST_HEAD(fe_authcache_all, fe_authcache_entry);

static int	fe_authcache_cmp(struct fe_authcache_entry *,
		    struct fe_authcache_entry *);
/* libbsd's tree.h marks its functions __unused, which glibc lacks. */
#ifndef __unused
#define __unused	__attribute__((__unused__))
#define FE_AUTHCACHE_UNUSED_DEFINED
#endif
RB_GENERATE_STATIC(fe_authcache_tree, fe_authcache_entry, node,
    fe_authcache_cmp)
#ifdef FE_AUTHCACHE_UNUSED_DEFINED
#undef __unused
#endif

static struct fe_authcache_tree	 tree = RB_INITIALIZER(&tree);
static struct fe_authcache_lru	 lru = TAILQ_HEAD_INITIALIZER(lru);
/* Cached or not: a pushed drop must find those still in use too. */
static struct fe_authcache_all	 all = LIST_HEAD_INITIALIZER(all);
static int			 len;
static int			 max_len = FE_AUTHCACHE_MAX;
static fe_authcache_release_cb	 release;

static int
fe_authcache_cmp(struct fe_authcache_entry *a, struct fe_authcache_entry *b)
{
	return strcmp(a->name, b->name);
}

void
fe_authcache_init(int max, fe_authcache_release_cb cb)
{
	max_len = max;
	release = cb;
}

/*
 * The user's length keeps "a\nb"+"c" apart from "a"+"b\nc"; a name
 * with a user is longer than a hash alone, so the two never meet.
 */
void
fe_authcache_name(char *buf, size_t size, const char *token_sha256,
    const char *user, const char *workspace)
{
	if (user == NULL || user[0] == '\0')
		strlcpy(buf, token_sha256, size);
	else
		snprintf(buf, size, "%s\n%zu:%s\n%s", token_sha256,
		    strlen(user), user, workspace ? workspace : "");
}

static void
fe_authcache_free(struct fe_authcache_entry *e)
{
	LIST_REMOVE(e, all);
	if (!e->dead && e->res.handle[0] != '\0' && release != NULL)
		release(e->res.handle);
	explicit_bzero(e, sizeof(*e));
	free(e);
}

/* Out of the table; freed now if no request uses it. */
static void
fe_authcache_detach(struct fe_authcache_entry *e)
{
	if (e->cached) {
		RB_REMOVE(fe_authcache_tree, &tree, e);
		TAILQ_REMOVE(&lru, e, lru);
		e->cached = 0;
		len--;
	}
	if (e->refs == 0)
		fe_authcache_free(e);
}

/* A hit takes a reference; fe_authcache_unref gives it back. */
struct fe_authcache_entry *
fe_authcache_get(const char *name, int64_t now, time_t wall)
{
	struct fe_authcache_entry	 key, *e;

	if (len == 0 || strlcpy(key.name, name, sizeof(key.name)) >=
	    sizeof(key.name))
		return NULL;
	e = RB_FIND(fe_authcache_tree, &tree, &key);
	explicit_bzero(key.name, sizeof(key.name));
	if (e == NULL)
		return NULL;
	if (e->until <= now || (e->res.key_expires != 0 &&
	    e->res.key_expires <= wall)) {
		fe_authcache_detach(e);
		return NULL;
	}
	TAILQ_REMOVE(&lru, e, lru);
	TAILQ_INSERT_HEAD(&lru, e, lru);
	e->refs++;
	return e;
}

/*
 * The answer to a lookup, held for the request that asked (one
 * reference), and cached if the storage helper said for how long.
 * NULL when out of memory: the caller releases the handle itself.
 */
struct fe_authcache_entry *
fe_authcache_put(const char *name, const struct auth_result *res,
    int64_t now)
{
	struct fe_authcache_entry	*e, *old;

	if ((e = calloc(1, sizeof(*e))) == NULL)
		return NULL;
	strlcpy(e->name, name, sizeof(e->name));
	e->res = *res;
	e->refs = 1;
	LIST_INSERT_HEAD(&all, e, all);
	if (res->ttl_ms <= 0 || res->handle[0] == '\0' || max_len <= 0)
		return e;
	e->until = now + (int64_t)res->ttl_ms * 1000;
	if ((old = RB_FIND(fe_authcache_tree, &tree, e)) != NULL)
		fe_authcache_detach(old);
	if (len >= max_len)
		fe_authcache_detach(TAILQ_LAST(&lru, fe_authcache_lru));
	RB_INSERT(fe_authcache_tree, &tree, e);
	TAILQ_INSERT_HEAD(&lru, e, lru);
	e->cached = 1;
	len++;
	return e;
}

void
fe_authcache_unref(struct fe_authcache_entry *e)
{
	if (--e->refs == 0 && !e->cached)
		fe_authcache_free(e);
}

/*
 * The storage helper ended handle (revoked), or every handle ("", a
 * reload): what holds it leaves the table, and is not released again.
 * Returns how many entries it touched.
 */
int
fe_authcache_drop(const char *handle)
{
	struct fe_authcache_entry	*e, *tmp;
	int				 n = 0;

	LIST_FOREACH_SAFE(e, &all, all, tmp) {
		if (handle[0] != '\0' &&
		    strcmp(e->res.handle, handle) != 0)
			continue;
		if (handle[0] != '\0')
			e->dead = 1;
		n++;
		fe_authcache_detach(e);
	}
	return n;
}

int
fe_authcache_len(void)
{
	return len;
}
