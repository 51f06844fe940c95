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
 * test_pool.c: fe_pool.c's choice and passive health: least busy for
 * its weight, ties at random, a failed replica out until its backoff
 * ends, then one trial.  With POOL_BENCH set it prints the cost of a
 * choice (regress/bench/pools.sh).
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "util.h"
#include "config.h"
#include "fe_pool.h"

static void
make(struct upstream_conf *u, int n, const int *weights)
{
	char	 url[64];
	int	 i;

	memset(u, 0, sizeof(*u));
	conf_upstream_init(u);
	strlcpy(u->name, "gpus", sizeof(u->name));
	for (i = 0; i < n; i++) {
		snprintf(url, sizeof(url), "http://10.0.0.%d:8000/v1", i + 1);
		if (conf_replica_add(u, url, weights[i]) == -1)
			abort();
	}
}

static void
weighted(void)
{
	struct upstream_conf	 u;
	struct pool_replica	*r, *seen[3] = { NULL, NULL, NULL };
	int			 w[3] = { 1, 3, 2 }, i, chosen = 0;
	size_t			 idx;

	make(&u, 3, w);
	/* 60 calls that never end: in-flight follows the weights. */
	for (i = 0; i < 60; i++) {
		if ((r = pool_choose(&u, 0, &idx)) == NULL || idx >= 3)
			break;
		pool_begin(r);
		seen[idx] = r;
		chosen++;
	}
	T_EQ_INT(chosen, 60, "a replica for each of 60 calls");
	if (chosen != 60 || seen[0] == NULL || seen[1] == NULL ||
	    seen[2] == NULL)
		return;
	T_EQ_INT(seen[0]->inflight, 10, "weight 1 of 6: 10 of 60");
	T_EQ_INT(seen[1]->inflight, 30, "weight 3 of 6: 30 of 60");
	T_EQ_INT(seen[2]->inflight, 20, "weight 2 of 6: 20 of 60");
	T_OK(pool_choose(&u, 7, &idx) == NULL, "none left when all tried");
	pool_clear();
	free(u.more);
}

static void
ties(void)
{
	struct upstream_conf	 u;
	struct pool_replica	*r;
	int			 w[4] = { 1, 1, 1, 1 }, n[4] = { 0 }, i;
	size_t			 idx;

	make(&u, 4, w);
	for (i = 0; i < 4000; i++) {
		r = pool_choose(&u, 0, &idx);
		pool_begin(r);
		pool_end(r, NULL);
		n[idx]++;
	}
	for (i = 0; i < 4; i++)
		T_OK(n[i] > 800 && n[i] < 1200, "ties at random: replica %d "
		    "got %d of 4000", i, n[i]);
	pool_clear();
	free(u.more);
}

static void
health(void)
{
	struct upstream_conf	 u;
	struct pool_replica	*r, *bad;
	int			 w[2] = { 1, 1 }, i, other = 1;
	size_t			 idx, badidx;

	make(&u, 2, w);
	bad = pool_choose(&u, 0, &badidx);
	pool_begin(bad);
	pool_end(bad, "HTTP 503");
	T_OK(bad->down && bad->backoff == POOL_BACKOFF_MIN, "out after a 5xx");
	T_EQ_STR(bad->last_error, "HTTP 503", "its last error");
	for (i = 0; i < 100; i++) {
		r = pool_choose(&u, 0, &idx);
		if (r == bad)
			other = 0;
	}
	T_OK(other, "an out replica gets no call while its backoff runs");
	r = pool_choose(&u, 1U << (1 - badidx), &idx);
	T_OK(r == bad, "but it is tried when nothing else is left");
	/* Its backoff ran out: one trial, the next waits for it. */
	bad->until_us = mono_usec() - 1;
	r = pool_choose(&u, 1U << (1 - badidx), &idx);
	T_OK(r == bad && bad->until_us > mono_usec(), "a trial once the "
	    "backoff ran out; the next call waits for its verdict");
	pool_begin(bad);
	pool_end(bad, "connect refused");
	T_EQ_INT(bad->backoff, 2 * POOL_BACKOFF_MIN, "a failed trial doubles "
	    "the backoff");
	pool_begin(bad);
	pool_end(bad, NULL);
	T_OK(!bad->down && bad->backoff == 0, "a success puts it back");
	pool_clear();
	free(u.more);
}

static void
bench(void)
{
	struct upstream_conf	 u;
	struct pool_replica	*r;
	int			 w[8] = { 1, 2, 1, 3, 1, 1, 2, 1 }, i, n = 1000000;
	size_t			 idx;
	int64_t			 t0;

	make(&u, 8, w);
	t0 = mono_usec();
	for (i = 0; i < n; i++) {
		r = pool_choose(&u, 0, &idx);
		pool_begin(r);
		pool_end(r, NULL);
	}
	printf("# pool choice: %.3f us per request (8 replicas, choose, "
	    "begin and end; %d rounds)\n", (double)(mono_usec() - t0) / n, n);
	pool_clear();
	free(u.more);
}

int
main(void)
{
	weighted();
	ties();
	health();
	if (getenv("POOL_BENCH") != NULL)
		bench();
	return t_done();
}
