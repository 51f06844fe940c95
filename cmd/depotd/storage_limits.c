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
 * storage_limits.c: the keys' limits, and shares of them lent to the
 * frontends.
 *
 * A frontend decides each request alone, from a share of the key's
 * window it asked for here (so many requests and tokens, for at most
 * SHARE_MS); it asks again when the share is spent or ends, and says
 * then what the share went on.  A share is counted as used while it
 * is out, so that what every frontend holds never passes the limit;
 * what it did not spend comes back when it is settled.  A share is
 * sized to a part of what is left (SHARE_PARTS per frontend), so that
 * one frontend cannot starve the others and asks stay rare.
 *
 * Windows are the UTC minute (rates), day and month (budgets).  For
 * several hosts on one database, what each host lent and settled is
 * added to limit_windows every FLUSH_MS, one statement for every key,
 * and the sums come back: a host's grants see the others' shares and
 * use as of its last flush.  The overshoot across hosts is what the
 * other hosts lent in the last FLUSH_MS (one batch) and what their
 * requests took beyond their estimates; on one host, what requests
 * under way take beyond theirs.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/tree.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "util.h"
#include "storage_limits_int.h"

#define SHARE_MS	1000	/* longest a share is out */
#define SHARE_GRACE_MS	2000	/* then it counts as spent whole */
#define SHARE_PARTS	2	/* a share: what is left / (parts * prefork) */
#define NONE_MS		5000	/* a key without limits asks again */
#define OVERRIDE_TTL	5	/* seconds a key's own limits are kept */
#define FLUSH_MS	100	/* settled use into limit_windows */
#define LIMIT_KEYS_MAX	65536	/* keys held at once */
#define LIMIT_WAIT_MAX	256	/* asks queued on one key's lookup */

/* A frontend's share of one key. */
struct lshare {
	RB_ENTRY(lshare)	 node;
	struct storage_peer	*peer;
	struct lkey		*key;
	int64_t			 start[P_MAX];	/* the windows it is of */
	int64_t			 req, tok;
	int64_t			 until;		/* mono_usec() */
};
RB_HEAD(lshares, lshare);

static int	lshare_cmp(struct lshare *, struct lshare *);
/* libbsd's tree.h marks its functions __unused, which glibc lacks. */
#ifndef __unused
#define __unused	__attribute__((__unused__))
#define LIMITS_UNUSED_DEFINED
#endif
RB_GENERATE_STATIC(lshares, lshare, node, lshare_cmp)
#ifdef LIMITS_UNUSED_DEFINED
#undef __unused
#endif

static struct lshares	 shares = RB_INITIALIZER(&shares);
static struct event	*ev_flush;

static int
lshare_cmp(struct lshare *a, struct lshare *b)
{
	if (a->peer != b->peer)
		return a->peer < b->peer ? -1 : 1;
	return strcmp(a->key->key_id, b->key->key_id);
}

/* --- what a key may do --- */

static struct lkey *
lkey_get(const char *key_id)
{
	struct lkey	 find, *k;

	strlcpy(find.key_id, key_id, sizeof(find.key_id));
	if ((k = RB_FIND(lkeys, &keys, &find)) != NULL)
		return k;
	if (nkeys >= LIMIT_KEYS_MAX)
		return NULL;
	if ((k = calloc(1, sizeof(*k))) == NULL)
		fatal("calloc");
	strlcpy(k->key_id, key_id, sizeof(k->key_id));
	TAILQ_INIT(&k->waiting);
	RB_INSERT(lkeys, &keys, k);
	nkeys++;
	return k;
}

static int64_t
pick(int64_t own, int64_t dflt)
{
	return own >= 0 ? own : dflt;
}

static void
lkey_limits(const struct lkey *k, struct limits_conf *l)
{
	const struct limits_conf *d = &storage.conf->limits;

	l->requests_per_minute = pick(k->own.requests_per_minute,
	    d->requests_per_minute);
	l->tokens_per_minute = pick(k->own.tokens_per_minute,
	    d->tokens_per_minute);
	l->concurrency = pick(k->own.concurrency, d->concurrency);
	l->tokens_per_day = pick(k->own.tokens_per_day, d->tokens_per_day);
	l->tokens_per_month = pick(k->own.tokens_per_month,
	    d->tokens_per_month);
}

static int
limits_any(const struct limits_conf *l)
{
	return l->requests_per_minute > 0 || l->tokens_per_minute > 0 ||
	    l->concurrency > 0 || l->tokens_per_day > 0 ||
	    l->tokens_per_month > 0;
}

/*
 * What the share that ends went on, into the windows it was of: the
 * share was counted whole when lent, so the difference.
 */
static void
lkey_settle(struct lkey *k, const struct lshare *s, int64_t req,
    int64_t tok)
{
	int	 p;

	for (p = 0; p < P_MAX; p++) {
		if (s != NULL && s->start[p] == k->w[p].start) {
			k->w[p].pend_req -= s->req;
			k->w[p].pend_tok -= s->tok;
		}
		/* A correction after its share's window is of the next. */
		k->w[p].pend_req += req;
		k->w[p].pend_tok += tok;
	}
}

static struct lshare *
lshare_find(struct storage_peer *peer, struct lkey *k)
{
	struct lshare	 find;

	find.peer = peer;
	find.key = k;
	return RB_FIND(lshares, &shares, &find);
}

static void
lshare_end(struct lshare *s, int64_t req, int64_t tok)
{
	lkey_settle(s->key, s, req, tok);
	s->key->nshares--;
	RB_REMOVE(lshares, &shares, s);
	free(s);
}

/*
 * Bounded inputs: a frontend's word is taken only so far.  Tokens may
 * be negative: an estimate above what the answer took comes back.
 */
static int64_t
clamp_spent(int64_t v)
{
	if (v < 0)
		return 0;
	return v > 1000000000LL ? 1000000000LL : v;
}

static int64_t
clamp_tokens(int64_t v)
{
	if (v < -1000000000LL)
		return -1000000000LL;
	return v > 1000000000LL ? 1000000000LL : v;
}

static int64_t
share_of(int64_t left, int64_t want)
{
	int64_t	 part = left / (SHARE_PARTS * (storage.conf->prefork > 0 ?
	    storage.conf->prefork : 1));

	if (part < want)
		part = want;
	if (part < 1)
		part = 1;
	return part > left ? left : part;
}

static void
grant_refuse(struct limit_grant *g, int status, int64_t end, time_t now,
    const char *message)
{
	g->status = status;
	g->retry_after = end - now > 0 ? end - now : 1;
	strlcpy(g->message, message, sizeof(g->message));
}

/*
 * The budgets first (a spent budget outlasts a rate), then the rates;
 * g says the minute's figures in any case, for the headers.
 */
static int
grant_check(struct lkey *k, const struct limits_conf *l, time_t now,
    int64_t *left_req, int64_t *left_tok, struct limit_grant *g)
{
	struct lwindow	*m = &k->w[P_MINUTE];
	int64_t		 b;

	*left_req = *left_tok = INT64_MAX;
	if (l->tokens_per_month > 0 && (b = l->tokens_per_month -
	    lwindow_tok(&k->w[P_MONTH])) < *left_tok) {
		*left_tok = b;
		if (b <= 0) {
			grant_refuse(g, LIMIT_BUDGET, period_end(P_MONTH,
			    k->w[P_MONTH].start), now, "the key's monthly token budget is spent");
			return -1;
		}
	}
	if (l->tokens_per_day > 0 && (b = l->tokens_per_day -
	    lwindow_tok(&k->w[P_DAY])) < *left_tok) {
		*left_tok = b;
		if (b <= 0) {
			grant_refuse(g, LIMIT_BUDGET, period_end(P_DAY,
			    k->w[P_DAY].start), now, "the key's daily token budget is spent");
			return -1;
		}
	}
	g->limit_requests = l->requests_per_minute;
	g->limit_tokens = l->tokens_per_minute;
	g->reset_ms = (period_end(P_MINUTE, m->start) - now) * 1000;
	if (l->requests_per_minute > 0)
		*left_req = l->requests_per_minute - lwindow_req(m);
	if (l->tokens_per_minute > 0 &&
	    (b = l->tokens_per_minute - lwindow_tok(m)) < *left_tok)
		*left_tok = b;
	g->left_requests = *left_req < 0 ? 0 : *left_req;
	g->left_tokens = l->tokens_per_minute > 0 && *left_tok > 0 ?
	    *left_tok : 0;
	if (*left_req <= 0) {
		grant_refuse(g, LIMIT_RATE, period_end(P_MINUTE, m->start),
		    now, "rate limit reached for requests per minute");
		/* Shares out elsewhere come back within a second or so. */
		if (k->nshares > 0 && g->retry_after > 2)
			g->retry_after = 2;
		return -1;
	}
	if (*left_tok <= 0) {
		grant_refuse(g, LIMIT_RATE, period_end(P_MINUTE, m->start),
		    now, "rate limit reached for tokens per minute");
		return -1;
	}
	return 0;
}

/* A share of what is left, counted out at once. */
static void
grant_share(struct storage_peer *peer, struct lkey *k,
    const struct limits_conf *l, const struct limit_ask *a,
    struct limit_grant *g)
{
	struct lshare	*s;
	int64_t		 left_req, left_tok, end_ms;
	int64_t		 prefork = storage.conf->prefork > 0 ?
			    storage.conf->prefork : 1;
	time_t		 now = time(NULL);
	int		 p;

	if (grant_check(k, l, now, &left_req, &left_tok, g) == -1)
		return;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		fatal("calloc");
	s->peer = peer;
	s->key = k;
	s->req = left_req == INT64_MAX ? 0 : share_of(left_req, 1);
	s->tok = left_tok == INT64_MAX ? 0 :
	    share_of(left_tok, clamp_spent(a->want_tokens));
	for (p = 0; p < P_MAX; p++) {
		s->start[p] = k->w[p].start;
		/*
		 * Counted as spent now, and so in the next flush: the
		 * other hosts see what this one lent (storage_limits.c).
		 */
		k->w[p].pend_req += s->req;
		k->w[p].pend_tok += s->tok;
	}
	end_ms = g->reset_ms;
	g->status = LIMIT_OK;
	g->requests = left_req == INT64_MAX ? -1 : s->req;
	g->tokens = left_tok == INT64_MAX ? -1 : s->tok;
	g->lease_ms = end_ms > 0 && end_ms < SHARE_MS ? end_ms : SHARE_MS;
	s->until = mono_usec() + (g->lease_ms + SHARE_GRACE_MS) * 1000;
	if (g->left_requests > s->req)
		g->left_requests -= s->req;
	else
		g->left_requests = 0;
	if (g->left_tokens > s->tok)
		g->left_tokens -= s->tok;
	else
		g->left_tokens = 0;
	if (l->concurrency > 0)
		g->concurrency = (l->concurrency + prefork - 1) / prefork;
	RB_INSERT(lshares, &shares, s);
	k->nshares++;
	k->active_until = mono_usec() + 2 * SHARE_MS * 1000;
}

/*
 * Near a limit, the view of the other hosts must be fresh: a grant
 * then waits for one flush (this host's use in, every host's back),
 * and the share it makes is flushed at once.  Far from it, the flush
 * every FLUSH_MS is enough.
 */
static int
near_limit(const struct lkey *k, const struct limits_conf *l)
{
	const int64_t	 lim[3] = { l->tokens_per_minute, l->tokens_per_day,
			    l->tokens_per_month };
	int		 p;

	if (l->requests_per_minute > 0 && 2 * lwindow_req(&k->w[P_MINUTE]) >=
	    l->requests_per_minute)
		return 1;
	for (p = 0; p < P_MAX; p++)
		if (lim[p] > 0 && 2 * lwindow_tok(&k->w[p]) >= lim[p])
			return 1;
	return 0;
}

static void
lkey_queue(struct lkey *k, struct storage_peer *peer, uint32_t peerid,
    const struct limit_ask *a)
{
	struct lask	*q;

	if ((q = calloc(1, sizeof(*q))) == NULL)
		fatal("calloc");
	q->peer = peer;
	q->peerid = peerid;
	q->ask = *a;
	TAILQ_INSERT_TAIL(&k->waiting, q, entry);
	k->nwait++;
}

/* What the share that ends went on (once: the ask's figures go). */
static void
lkey_take_spent(struct lkey *k, struct storage_peer *peer,
    struct limit_ask *a)
{
	struct lshare	*s;

	lkey_roll(k, time(NULL));
	if ((s = lshare_find(peer, k)) != NULL)
		lshare_end(s, clamp_spent(a->spent_requests),
		    clamp_tokens(a->spent_tokens));
	else
		lkey_settle(k, NULL, clamp_spent(a->spent_requests),
		    clamp_tokens(a->spent_tokens));
	a->spent_requests = a->spent_tokens = 0;
}

static void
lkey_answer(struct lkey *k, struct storage_peer *peer, uint32_t peerid,
    const struct limit_ask *a, int fresh)
{
	struct limit_grant	 g;
	struct limits_conf	 l;
	int			 near;

	memset(&g, 0, sizeof(g));
	lkey_roll(k, time(NULL));
	lkey_limits(k, &l);
	if (!limits_any(&l)) {
		g.status = LIMIT_NONE;
		g.lease_ms = NONE_MS;
		g.requests = g.tokens = -1;
		storage_peer_reply(peer, IMSG_LIMIT_GRANT, peerid, -1, &g,
		    sizeof(g));
		return;
	}
	near = near_limit(k, &l) && db_up(storage.db);
	if (near && (!fresh || k->syncing) && k->nwait < LIMIT_WAIT_MAX) {
		lkey_queue(k, peer, peerid, a);
		if (!k->syncing) {
			k->syncing = 1;
			flush_run(k);
		}
		return;
	}
	grant_share(peer, k, &l, a, &g);
	storage_peer_reply(peer, IMSG_LIMIT_GRANT, peerid, -1, &g, sizeof(g));
	if (near && k->in_flush == 0)
		flush_run(k);
}

/* The asks that waited, answered (or waiting again, for a flush). */
static void
lkey_drain(struct lkey *k, int fresh)
{
	struct lask_queue	 q = TAILQ_HEAD_INITIALIZER(q);
	struct lask		*a;

	TAILQ_CONCAT(&q, &k->waiting, entry);
	k->nwait = 0;
	while ((a = TAILQ_FIRST(&q)) != NULL) {
		TAILQ_REMOVE(&q, a, entry);
		if (a->peer != NULL)
			lkey_answer(k, a->peer, a->peerid, &a->ask, fresh);
		free(a);
	}
}

/* --- a key's own limits, from key_limits --- */

static const char OWN_SQL[] =
    "select coalesce(requests_per_minute, -1), "
    "coalesce(tokens_per_minute, -1), coalesce(concurrency, -1), "
    "coalesce(tokens_per_day, -1), coalesce(tokens_per_month, -1) "
    "from key_limits where key_id = $1";

static void
lkey_own_none(struct lkey *k)
{
	k->own.requests_per_minute = k->own.tokens_per_minute = -1;
	k->own.concurrency = k->own.tokens_per_day = -1;
	k->own.tokens_per_month = -1;
}

static void
lkey_loaded(void *arg, const PGresult *res)
{
	struct lkey	*k = arg;

	k->loading = 0;
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
		/* The default, until the database answers again. */
		log_warnx("limits of %s: %s", k->key_id, res == NULL ?
		    "database unavailable" : PQresultErrorMessage(res));
		lkey_own_none(k);
		k->own_until = mono_seconds() + 1;
	} else {
		lkey_own_none(k);
		if (PQntuples(res) == 1) {
			k->own.requests_per_minute =
			    strtoll(PQgetvalue(res, 0, 0), NULL, 10);
			k->own.tokens_per_minute =
			    strtoll(PQgetvalue(res, 0, 1), NULL, 10);
			k->own.concurrency = strtoll(PQgetvalue(res, 0, 2),
			    NULL, 10);
			k->own.tokens_per_day = strtoll(PQgetvalue(res, 0, 3),
			    NULL, 10);
			k->own.tokens_per_month =
			    strtoll(PQgetvalue(res, 0, 4), NULL, 10);
		}
		k->own_until = mono_seconds() + OVERRIDE_TTL;
	}
	lkey_drain(k, 0);
}

static int
lkey_load(struct lkey *k)
{
	const char	*params[1] = { k->key_id };

	if (k->loading)
		return 0;
	if (db_query(storage.db, OWN_SQL, 1, params, lkey_loaded, k) == -1)
		return -1;
	k->loading = 1;
	return 0;
}

void
storage_limits_ask(struct storage_peer *p, struct imsg *imsg)
{
	const struct principal_ref	*who;
	struct limit_ask		 a;
	struct lkey			*k;

	IMSG_TAKE(imsg, a);
	a.handle[sizeof(a.handle) - 1] = '\0';
	if ((who = storage_auth_handle(p, imsg->hdr.peerid, a.handle)) ==
	    NULL)
		return;
	if ((k = lkey_get(who->key_id)) == NULL) {
		storage_peer_error(p, imsg->hdr.peerid, 503,
		    "too many keys are being limited at once");
		return;
	}
	lkey_take_spent(k, p, &a);
	if (k->loading || k->syncing) {
		if (k->nwait < LIMIT_WAIT_MAX) {
			lkey_queue(k, p, imsg->hdr.peerid, &a);
			return;
		}
	} else if (k->own_until <= mono_seconds() &&
	    k->nwait < LIMIT_WAIT_MAX && lkey_load(k) == 0) {
		lkey_queue(k, p, imsg->hdr.peerid, &a);
		return;
	}
	/* No word from the database yet: the default limits. */
	if (k->own_until == 0)
		lkey_own_none(k);
	lkey_answer(k, p, imsg->hdr.peerid, &a, 0);
}

/* A share given back before it ended (the frontend is done with it). */
void
storage_limits_return(struct storage_peer *p, struct imsg *imsg)
{
	const struct principal_ref	*who;
	struct limit_ask		 a;
	struct lkey			 find, *k;
	struct lshare			*s;

	IMSG_TAKE(imsg, a);
	a.handle[sizeof(a.handle) - 1] = '\0';
	if ((who = storage_auth_handle_ref(p, a.handle)) == NULL)
		return;
	strlcpy(find.key_id, who->key_id, sizeof(find.key_id));
	if ((k = RB_FIND(lkeys, &keys, &find)) == NULL)
		return;
	lkey_roll(k, time(NULL));
	if ((s = lshare_find(p, k)) != NULL)
		lshare_end(s, clamp_spent(a.spent_requests),
		    clamp_tokens(a.spent_tokens));
	else
		lkey_settle(k, NULL, clamp_spent(a.spent_requests),
		    clamp_tokens(a.spent_tokens));
}

/* Its shares count as spent whole; its queued asks go unanswered. */
void
storage_limits_peer_lost(struct storage_peer *p)
{
	struct lshare	*s, *tmp;
	struct lkey	*k;
	struct lask	*q;

	RB_FOREACH_SAFE(s, lshares, &shares, tmp)
		if (s->peer == p)
			lshare_end(s, s->req, s->tok);
	RB_FOREACH(k, lkeys, &keys)
		TAILQ_FOREACH(q, &k->waiting, entry)
			if (q->peer == p)
				q->peer = NULL;
}

/* A key's own limits changed (depotctl): read again at the next ask. */
void
storage_limits_changed(const char *key_id)
{
	struct lkey	 find, *k;

	strlcpy(find.key_id, key_id, sizeof(find.key_id));
	if ((k = RB_FIND(lkeys, &keys, &find)) != NULL)
		k->own_until = 0;
}

/* Shares whose frontend never settled them count as spent whole. */
static void
shares_lapse(void)
{
	struct lshare	*s, *tmp;
	int64_t		 now = mono_usec();

	RB_FOREACH_SAFE(s, lshares, &shares, tmp)
		if (s->until < now) {
			lkey_roll(s->key, time(NULL));
			lshare_end(s, s->req, s->tok);
		}
}

static void
limits_timer(evutil_socket_t fd, short what, void *arg)
{
	struct timeval	 tv = { 0, FLUSH_MS * 1000 };

	shares_lapse();
	flush_run(NULL);
	evtimer_add(ev_flush, &tv);
}

void
storage_limits_init(void)
{
	flush_on_fresh(lkey_drain);
	struct timeval	 tv = { 0, FLUSH_MS * 1000 };

	if ((ev_flush = evtimer_new(storage.base, limits_timer, NULL)) ==
	    NULL)
		fatal("evtimer_new");
	evtimer_add(ev_flush, &tv);
}
