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
 * fe_pool.c: the replicas of each upstream, as this frontend counts
 * them.  In-flight counts are this frontend's only: with N frontends
 * each sees about 1/N of a replica's load, and the choice is as good
 * as that sample (the accept spread of SO_REUSEPORT keeps the samples
 * alike).  Health is passive: a call that could not connect, timed out
 * before the first byte or got a 5xx takes its replica out; after a
 * backoff (1 s, doubling to 30 s) one call tries it again, and one that
 * succeeds puts it back.  A replica is found by its upstream's name
 * and url, so its state outlives a reload that keeps it; one a reload
 * dropped is freed when its last call ends.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "randpool.h"
#include "util.h"
#include "fe_pool.h"

struct pool_entry {
	TAILQ_ENTRY(pool_entry)	 entry;
	struct pool_replica	 r;
};

static TAILQ_HEAD(, pool_entry)	 pool_all = TAILQ_HEAD_INITIALIZER(pool_all);

static struct pool_entry *
pool_find(const char *upstream, const char *url)
{
	struct pool_entry	*e;

	TAILQ_FOREACH(e, &pool_all, entry)
		if (strcmp(e->r.url, url) == 0 &&
		    strcmp(e->r.upstream, upstream) == 0)
			return e;
	return NULL;
}

static struct pool_replica *
pool_get(const struct upstream_conf *u, size_t i)
{
	struct pool_entry	*e;
	const char		*url = conf_replica_url(u, i);

	if ((e = pool_find(u->name, url)) == NULL) {
		if ((e = calloc(1, sizeof(*e))) == NULL)
			return NULL;
		strlcpy(e->r.upstream, u->name, sizeof(e->r.upstream));
		strlcpy(e->r.url, url, sizeof(e->r.url));
		TAILQ_INSERT_TAIL(&pool_all, e, entry);
	}
	e->r.weight = conf_replica_weight(u, i);
	if (e->r.weight < 1)
		e->r.weight = 1;
	return &e->r;
}

/* Is a busier for its weight than b?  -1 less, 0 as busy, 1 more. */
static int
pool_cmp(const struct pool_replica *a, const struct pool_replica *b)
{
	int64_t	 x = (int64_t)a->inflight * b->weight;
	int64_t	 y = (int64_t)b->inflight * a->weight;

	return x < y ? -1 : x > y;
}

static uint32_t
pool_random(void)
{
	uint32_t	 v;

	randpool_bytes(&v, sizeof(v));
	return v;
}

struct pool_replica *
pool_choose(const struct upstream_conf *u, uint32_t tried, size_t *index)
{
	struct pool_replica	*r, *best = NULL, *soonest = NULL;
	size_t			 i, n = conf_replicas(u), ties = 0, si = 0;
	int64_t			 now = mono_usec();
	int			 c;

	*index = 0;
	for (i = 0; i < n && i < 32; i++) {
		if ((tried & (1U << i)) || (r = pool_get(u, i)) == NULL)
			continue;
		if (r->down && now < r->until_us) {
			if (soonest == NULL || r->until_us < soonest->until_us) {
				soonest = r;
				si = i;
			}
			continue;
		}
		c = best == NULL ? -1 : pool_cmp(r, best);
		/* Reservoir sampling: each of k ties kept with 1/k. */
		if (c < 0 || (c == 0 && pool_random() % ++ties == 0)) {
			if (c < 0)
				ties = 1;
			best = r;
			*index = i;
		}
	}
	if (best == NULL && soonest != NULL) {
		best = soonest;
		*index = si;
	}
	/* A trial: the next call waits for its verdict. */
	if (best != NULL && best->down)
		best->until_us = now + (int64_t)best->backoff * 1000000;
	return best;
}

void
pool_begin(struct pool_replica *r)
{
	r->inflight++;
	r->calls++;
}

static void
pool_free_gone(struct pool_replica *r)
{
	struct pool_entry	*e;

	if (!r->gone || r->inflight > 0)
		return;
	e = (struct pool_entry *)((char *)r - offsetof(struct pool_entry, r));
	TAILQ_REMOVE(&pool_all, e, entry);
	free(e);
}

void
pool_end(struct pool_replica *r, const char *why)
{
	if (r->inflight > 0)
		r->inflight--;
	if (why == NULL) {
		if (r->down)
			log_info("upstream \"%s\": %s is back", r->upstream,
			    r->url);
		r->down = 0;
		r->backoff = 0;
	} else {
		r->failures++;
		strlcpy(r->last_error, why, sizeof(r->last_error));
		r->backoff = r->backoff == 0 ? POOL_BACKOFF_MIN :
		    r->backoff * 2;
		if (r->backoff > POOL_BACKOFF_MAX)
			r->backoff = POOL_BACKOFF_MAX;
		if (!r->down)
			log_warnx("upstream \"%s\": %s taken out: %s",
			    r->upstream, r->url, why);
		r->down = 1;
		r->until_us = mono_usec() + (int64_t)r->backoff * 1000000;
	}
	pool_free_gone(r);
}

void
pool_cancel(struct pool_replica *r)
{
	if (r->inflight > 0)
		r->inflight--;
	pool_free_gone(r);
}

void
pool_walk(void (*cb)(const struct pool_replica *, void *), void *arg)
{
	struct pool_entry	*e;

	TAILQ_FOREACH(e, &pool_all, entry)
		if (!e->r.gone)
			cb(&e->r, arg);
}

/* After a reload: replicas no url line names any more go. */
void
pool_sync(const struct depotd_conf *c)
{
	struct pool_entry	*e, *next;
	struct upstream_conf	*u;
	size_t			 i;

	TAILQ_FOREACH(e, &pool_all, entry)
		e->r.gone = 1;
	TAILQ_FOREACH(u, &c->upstreams, entry)
		for (i = 0; i < conf_replicas(u); i++)
			if ((e = pool_find(u->name, conf_replica_url(u, i))) !=
			    NULL)
				e->r.gone = 0;
	for (e = TAILQ_FIRST(&pool_all); e != NULL; e = next) {
		next = TAILQ_NEXT(e, entry);
		if (e->r.gone && e->r.inflight == 0) {
			TAILQ_REMOVE(&pool_all, e, entry);
			free(e);
		}
	}
}

void
pool_clear(void)
{
	struct pool_entry	*e;

	while ((e = TAILQ_FIRST(&pool_all)) != NULL) {
		TAILQ_REMOVE(&pool_all, e, entry);
		free(e);
	}
}
