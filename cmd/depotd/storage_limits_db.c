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
 * storage_limits_db.c: the keys, their windows, and the windows in
 * limit_windows for several hosts on one database (storage_limits.c says how they are used).
 * One statement adds what this host lent and settled for every key in
 * use, or for one key that needs a fresh view, and reads back what
 * every host added.  A flush is numbered, so that one key's flush and
 * the timer's can be out at once without taking each other's rows.
 */
#include <sys/types.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "util.h"
#include "storage_limits_int.h"

/* libbsd's tree.h marks its functions __unused, which glibc lacks. */
#ifndef __unused
#define __unused	__attribute__((__unused__))
#define LIMITS_DB_UNUSED_DEFINED
#endif
RB_GENERATE(lkeys, lkey, node, lkey_cmp)
#ifdef LIMITS_DB_UNUSED_DEFINED
#undef __unused
#endif

const char *const period_names[P_MAX] = { "minute", "day", "month" };
struct lkeys		 keys = RB_INITIALIZER(&keys);
int			 nkeys;
static uint32_t		 flushing;	/* the timer's flush out, or 0 */
static uint32_t		 flush_gen;
static void		(*on_fresh)(struct lkey *, int);

void
flush_on_fresh(void (*fn)(struct lkey *, int))
{
	on_fresh = fn;
}

int
lkey_cmp(struct lkey *a, struct lkey *b)
{
	return strcmp(a->key_id, b->key_id);
}

/* --- windows --- */

static int64_t
period_start(enum period p, time_t now)
{
	struct tm	 tm;

	if (p == P_MINUTE)
		return now - now % 60;
	gmtime_r(&now, &tm);
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	if (p == P_MONTH)
		tm.tm_mday = 1;
	return timegm(&tm);
}

int64_t
period_end(enum period p, int64_t start)
{
	struct tm	 tm;
	time_t		 t = start;

	if (p == P_MINUTE)
		return start + 60;
	if (p == P_DAY)
		return start + 86400;
	gmtime_r(&t, &tm);
	tm.tm_mon++;
	return timegm(&tm);
}

/* The key's windows, moved on to now's: a past window's use is gone. */
void
lkey_roll(struct lkey *k, time_t now)
{
	int64_t	 s;
	int	 p;

	for (p = 0; p < P_MAX; p++) {
		if ((s = period_start(p, now)) == k->w[p].start)
			continue;
		memset(&k->w[p], 0, sizeof(k->w[p]));
		k->w[p].start = s;
	}
}

int64_t
lwindow_req(const struct lwindow *w)
{
	return w->seen_req + w->pend_req + w->flush_req;
}

int64_t
lwindow_tok(const struct lwindow *w)
{
	return w->seen_tok + w->pend_tok + w->flush_tok;
}


static const char FLUSH_SQL[] =
    "insert into limit_windows as l "
    "(key_id, period, window_start, requests, tokens) "
    "select k, p, to_timestamp(w), r, t from unnest($1::text[], "
    "$2::text[], $3::bigint[], $4::bigint[], $5::bigint[]) as u(k, p, w, "
    "r, t) on conflict (key_id, period, window_start) do update set "
    "requests = l.requests + excluded.requests, "
    "tokens = l.tokens + excluded.tokens "
    "returning key_id, period, extract(epoch from window_start)::bigint, "
    "requests, tokens";

static void
flush_done(void *arg, const PGresult *res)
{
	struct lkey	 find, *k;
	uint32_t	 gen = (uint32_t)(uintptr_t)arg;
	int64_t		 start;
	int		 i, p, ok;

	if (gen == flushing)
		flushing = 0;
	ok = res != NULL && PQresultStatus(res) == PGRES_TUPLES_OK;
	if (!ok)
		log_warnx("limit windows: %s", res == NULL ?
		    "database unavailable" : PQresultErrorMessage(res));
	for (i = 0; ok && i < PQntuples(res); i++) {
		strlcpy(find.key_id, PQgetvalue(res, i, 0),
		    sizeof(find.key_id));
		if ((k = RB_FIND(lkeys, &keys, &find)) == NULL)
			continue;
		start = strtoll(PQgetvalue(res, i, 2), NULL, 10);
		for (p = 0; p < P_MAX; p++)
			if (strcmp(PQgetvalue(res, i, 1),
			    period_names[p]) == 0 && k->w[p].start == start) {
				k->w[p].seen_req = strtoll(PQgetvalue(res,
				    i, 3), NULL, 10);
				k->w[p].seen_tok = strtoll(PQgetvalue(res,
				    i, 4), NULL, 10);
			}
	}
	/* What did not reach the database goes with the next flush. */
	RB_FOREACH(k, lkeys, &keys) {
		if (k->in_flush != gen)
			continue;
		k->in_flush = 0;
		for (p = 0; p < P_MAX; p++) {
			if (!ok) {
				k->w[p].pend_req += k->w[p].flush_req;
				k->w[p].pend_tok += k->w[p].flush_tok;
			}
			k->w[p].flush_req = k->w[p].flush_tok = 0;
		}
		if (k->syncing && !k->loading) {
			k->syncing = 0;
			on_fresh(k, 1);
		}
	}
}

struct flush_cols {
	char	**v[5];
	char	 *num;		/* the numbers' text, 3 x 24 per row */
	int	  n, max;
};

static void
flush_row(struct flush_cols *c, struct lkey *k, int p, uint32_t gen)
{
	char	*n = c->num + c->n * 72;

	c->v[0][c->n] = k->key_id;
	c->v[1][c->n] = (char *)period_names[p];
	snprintf(n, 24, "%" PRId64, k->w[p].start);
	snprintf(n + 24, 24, "%" PRId64, k->w[p].pend_req);
	snprintf(n + 48, 24, "%" PRId64, k->w[p].pend_tok);
	c->v[2][c->n] = n;
	c->v[3][c->n] = n + 24;
	c->v[4][c->n] = n + 48;
	k->w[p].flush_req = k->w[p].pend_req;
	k->w[p].flush_tok = k->w[p].pend_tok;
	k->w[p].pend_req = k->w[p].pend_tok = 0;
	k->in_flush = gen;
	c->n++;
}

/* A key in use, or with use to flush; one idle for long is forgotten. */
static int
flush_wanted(struct lkey *k, int64_t now)
{
	int	 p, pend = 0;

	for (p = 0; p < P_MAX; p++)
		pend |= k->w[p].pend_req != 0 || k->w[p].pend_tok != 0;
	if (k->active_until >= now || pend)
		return 1;
	if (!k->loading && k->nshares == 0 && k->in_flush == 0 &&
	    TAILQ_EMPTY(&k->waiting) && k->own_until < mono_seconds()) {
		RB_REMOVE(lkeys, &keys, k);
		nkeys--;
		free(k);
	}
	return 0;
}

/*
 * What each key lent and settled goes in, the sums come back (a zero
 * row reads the other hosts' use): every key in use, or only one that
 * needs a fresh view.
 */
void
flush_run(struct lkey *only)
{
	struct flush_cols	 c;
	struct lkey		*k, *tmp;
	char			*arr[5];
	const char		*params[5];
	int64_t			 now = mono_usec();
	uint32_t		 gen;
	int			 i, p;

	memset(&c, 0, sizeof(c));
	c.max = only != NULL ? P_MAX : nkeys * P_MAX;
	if (c.max == 0 || (only == NULL && flushing) ||
	    (only != NULL && only->in_flush != 0) || !db_up(storage.db))
		return;
	if ((gen = ++flush_gen) == 0)
		gen = ++flush_gen;
	for (i = 0; i < 5; i++)
		if ((c.v[i] = calloc(c.max, sizeof(char *))) == NULL)
			fatal("calloc");
	if ((c.num = calloc(c.max, 72)) == NULL)
		fatal("calloc");
	if (only != NULL) {
		lkey_roll(only, time(NULL));
		for (p = 0; p < P_MAX; p++)
			flush_row(&c, only, p, gen);
	} else
		RB_FOREACH_SAFE(k, lkeys, &keys, tmp) {
			if (k->in_flush != 0)
				continue;
			lkey_roll(k, time(NULL));
			if (flush_wanted(k, now))
				for (p = 0; p < P_MAX; p++)
					flush_row(&c, k, p, gen);
		}
	memset(arr, 0, sizeof(arr));
	for (i = 0; c.n > 0 && i < 5; i++)
		if ((arr[i] = db_batch_array((const char *const *)c.v[i],
		    c.n)) == NULL)
			fatal("db_batch_array");
	for (i = 0; i < 5; i++)
		params[i] = arr[i];
	if (c.n > 0 && db_query(storage.db, FLUSH_SQL, 5, params, flush_done,
	    (void *)(uintptr_t)gen) == 0) {
		if (only == NULL)
			flushing = gen;
	} else if (c.n > 0)
		flush_done((void *)(uintptr_t)gen, NULL);
	for (i = 0; i < 5; i++) {
		free(arr[i]);
		free(c.v[i]);
	}
	free(c.num);
}

