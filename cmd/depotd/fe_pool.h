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
 * fe_pool.h: an upstream's replicas (its url lines) as this frontend
 * sees them: which to call, and what a call's end says of its health.
 */
#ifndef DEPOTD_FE_POOL_H
#define DEPOTD_FE_POOL_H

#include <stdint.h>

struct upstream_conf;

#define POOL_BACKOFF_MIN	1	/* seconds out after one failure */
#define POOL_BACKOFF_MAX	30	/* doubling up to this */

struct pool_replica {
	char		 upstream[64];
	char		 url[1024];
	int		 weight;
	int		 inflight;	/* this frontend's calls */
	int		 down;		/* out until until_us */
	int64_t		 until_us;	/* monotonic: next trial */
	int		 backoff;	/* seconds */
	uint64_t	 calls;
	uint64_t	 failures;
	char		 last_error[160];
	int		 gone;		/* not in the configuration */
};

/*
 * The replica of u to call next: of those not in tried (bit i:
 * replica i), the least busy for its weight (in-flight / weight), ties
 * at random; a replica that is out only once its backoff has run out
 * (one trial call; the others wait).  When all that are left are out,
 * the one due soonest.  NULL when none is left (every one tried).
 * *index is its position among u's url lines.
 */
struct pool_replica	*pool_choose(const struct upstream_conf *u,
			    uint32_t tried, size_t *index);
/* A call to r starts; it ends with pool_end (failed: why, else NULL). */
void			 pool_begin(struct pool_replica *r);
void			 pool_end(struct pool_replica *r, const char *why);
/* A call cut short by its caller: it says nothing of r's health. */
void			 pool_cancel(struct pool_replica *r);
/* Visits every replica (depotctl show upstreams). */
void			 pool_walk(void (*)(const struct pool_replica *, void *),
			    void *);
/* After a reload: forgets the replicas no url line names now. */
struct depotd_conf;
void			 pool_sync(const struct depotd_conf *);
/* For tests: forgets every replica. */
void			 pool_clear(void);

#endif
