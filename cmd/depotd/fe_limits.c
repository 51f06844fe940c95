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
 * fe_limits.c: a key's limits, decided here, per request, with no
 * message: from a share of the key's window the storage helper lent
 * (storage_limits.c).  A key is asked for on its first request, when
 * its share is spent and when it ended; requests that come while an
 * ask is out wait for its answer, in order.  A share ends on a timer,
 * which gives back what it did not spend and says what it did.
 *
 * A key without limits is told so for a few seconds at a time: its
 * requests cost a lookup here and nothing else.  Concurrency is this
 * frontend's part of the host's limit (the limit over prefork, at
 * least one), held by the request until it ends.  Tokens are charged
 * the estimate when a request starts and the difference from the
 * upstream's usage when it ends.
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
#include "frontend.h"
#include "fe_limits.h"

#define LIMIT_KEYS_MAX		4096	/* keys held at once */
#define REFUSED_HOLD_US		1000000	/* a refusal is kept this long */
#define ESTIMATE_MAX		1000000000LL

struct fe_limit_key {
	RB_ENTRY(fe_limit_key)	 node;
	char			 token_sha256[65];
	char			 handle[HANDLE_LEN];
	struct fe_limit_share	 sh;
	uint32_t		 asking;	/* the ask out, or 0 */
	TAILQ_HEAD(, fe_limit_ticket) waiting;
	struct event		*ev_end;
};
RB_HEAD(fe_limit_keys, fe_limit_key);

static int	limit_key_cmp(struct fe_limit_key *, struct fe_limit_key *);
/* libbsd's tree.h marks its functions __unused, which glibc lacks. */
#ifndef __unused
#define __unused	__attribute__((__unused__))
#define FE_LIMITS_UNUSED_DEFINED
#endif
RB_GENERATE_STATIC(fe_limit_keys, fe_limit_key, node, limit_key_cmp)
#ifdef FE_LIMITS_UNUSED_DEFINED
#undef __unused
#endif

static struct fe_limit_keys	 keys = RB_INITIALIZER(&keys);
static int			 nkeys;

static int
limit_key_cmp(struct fe_limit_key *a, struct fe_limit_key *b)
{
	return strcmp(a->token_sha256, b->token_sha256);
}

static void	limit_key_end(evutil_socket_t, short, void *);
static void	limit_ask(struct fe_limit_key *, int64_t want);

static struct fe_limit_key *
limit_key_get(const struct principal *who)
{
	struct fe_limit_key	 find, *k;

	strlcpy(find.token_sha256, who->token_sha256,
	    sizeof(find.token_sha256));
	if ((k = RB_FIND(fe_limit_keys, &keys, &find)) == NULL) {
		if (nkeys >= LIMIT_KEYS_MAX ||
		    (k = calloc(1, sizeof(*k))) == NULL)
			return NULL;
		if ((k->ev_end = evtimer_new(fe.base, limit_key_end,
		    k)) == NULL) {
			free(k);
			return NULL;
		}
		strlcpy(k->token_sha256, who->token_sha256,
		    sizeof(k->token_sha256));
		TAILQ_INIT(&k->waiting);
		RB_INSERT(fe_limit_keys, &keys, k);
		nkeys++;
	}
	/* The latest: an older one may have lapsed. */
	strlcpy(k->handle, who->handle, sizeof(k->handle));
	return k;
}

static void
limit_key_free(struct fe_limit_key *k)
{
	RB_REMOVE(fe_limit_keys, &keys, k);
	nkeys--;
	event_free(k->ev_end);
	explicit_bzero(k->token_sha256, sizeof(k->token_sha256));
	free(k);
}

static int
limit_key_idle(const struct fe_limit_key *k)
{
	return k->sh.inflight == 0 && k->asking == 0 &&
	    TAILQ_EMPTY(&k->waiting);
}

/* What the share went on, back to the storage helper: it ends. */
static void
limit_settle(struct fe_limit_key *k, uint32_t type)
{
	struct limit_ask	 a;

	memset(&a, 0, sizeof(a));
	strlcpy(a.handle, k->handle, sizeof(a.handle));
	a.spent_requests = k->sh.spent_req;
	a.spent_tokens = k->sh.spent_tok;
	k->sh.spent_req = k->sh.spent_tok = 0;
	k->sh.req_left = k->sh.tok_left = 0;
	k->sh.until = 0;
	evtimer_del(k->ev_end);
	if (type == IMSG_LIMIT_RETURN)
		fe_storage_send(type, &a, sizeof(a));
}

static void
limit_key_end(evutil_socket_t fd, short what, void *arg)
{
	struct fe_limit_key	*k = arg;

	if (k->sh.known && k->sh.g.status == LIMIT_OK)
		limit_settle(k, IMSG_LIMIT_RETURN);
	k->sh.known = 0;
	if (limit_key_idle(k))
		limit_key_free(k);
}

/* "1s", "6m0s": the providers' reset, whole seconds. */
static void
reset_duration(char *buf, size_t len, int64_t us)
{
	int64_t	 s = (us + 999999) / 1000000;

	if (s < 0)
		s = 0;
	if (s < 60)
		snprintf(buf, len, "%" PRId64 "s", s);
	else
		snprintf(buf, len, "%" PRId64 "m%" PRId64 "s", s / 60, s % 60);
}

static void
reset_rfc3339(char *buf, size_t len, int64_t us)
{
	struct tm	 tm;
	time_t		 t = time(NULL) + (us + 999999) / 1000000;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void
limit_header(struct api_req *ar, const char *what, int64_t limit,
    int64_t left, int64_t reset_us)
{
	char	 name[64], v[32], reset[32];

	if (limit <= 0)
		return;
	if (left < 0)
		left = 0;
	if (ar->dialect == DIALECT_ANTHROPIC) {
		reset_rfc3339(reset, sizeof(reset), reset_us);
		snprintf(name, sizeof(name), "anthropic-ratelimit-%s-limit",
		    what);
		snprintf(v, sizeof(v), "%" PRId64, limit);
		http_reply_header(ar->req, name, v);
		snprintf(name, sizeof(name),
		    "anthropic-ratelimit-%s-remaining", what);
		snprintf(v, sizeof(v), "%" PRId64, left);
		http_reply_header(ar->req, name, v);
		snprintf(name, sizeof(name), "anthropic-ratelimit-%s-reset",
		    what);
		http_reply_header(ar->req, name, reset);
		return;
	}
	reset_duration(reset, sizeof(reset), reset_us);
	snprintf(name, sizeof(name), "x-ratelimit-limit-%s", what);
	snprintf(v, sizeof(v), "%" PRId64, limit);
	http_reply_header(ar->req, name, v);
	snprintf(name, sizeof(name), "x-ratelimit-remaining-%s", what);
	snprintf(v, sizeof(v), "%" PRId64, left);
	http_reply_header(ar->req, name, v);
	snprintf(name, sizeof(name), "x-ratelimit-reset-%s", what);
	http_reply_header(ar->req, name, reset);
}

/* The minute's figures, on every answer of a key with limits. */
static void
limit_headers(struct api_req *ar, const struct fe_limit_key *k,
    int64_t now)
{
	int64_t	 reset = k->sh.reset_at - now;

	if (!k->sh.known || k->sh.g.status == LIMIT_NONE)
		return;
	limit_header(ar, "requests", k->sh.g.limit_requests,
	    k->sh.g.left_requests + (!k->sh.req_free && k->sh.req_left > 0 ?
	    k->sh.req_left : 0), reset);
	limit_header(ar, "tokens", k->sh.g.limit_tokens,
	    k->sh.g.left_tokens + (!k->sh.tok_free && k->sh.tok_left > 0 ?
	    k->sh.tok_left : 0), reset);
}

static void
limit_refuse(struct fe_limit_ticket *t, enum fe_limit_decision d, int64_t now)
{
	struct fe_limit_key	*k = t->key;
	struct api_req		*ar = t->ar;
	char			 v[24];
	int64_t			 s;

	t->key = NULL;
	if (d == D_BUSY) {
		http_reply_header(ar->req, "retry-after", "1");
		fe_reply_error_typed(ar, 429, "requests", "rate_limit_exceeded",
		    "rate_limit_error", "too many concurrent requests for "
		    "this key");
		return;
	}
	s = k->sh.g.retry_after - (now - k->sh.granted_at) / 1000000;
	snprintf(v, sizeof(v), "%" PRId64, s > 0 ? s : 1);
	http_reply_header(ar->req, "retry-after", v);
	limit_headers(ar, k, now);
	if (d == D_BUDGET) {
		/* The providers' exhausted quota. */
		fe_reply_error_typed(ar, ar->dialect == DIALECT_ANTHROPIC ?
		    400 : 429, "insufficient_quota", "insufficient_quota",
		    "invalid_request_error", k->sh.g.message);
		return;
	}
	fe_reply_error_typed(ar, 429, strstr(k->sh.g.message, "tokens") ?
	    "tokens" : "requests", "rate_limit_exceeded", "rate_limit_error",
	    k->sh.g.message);
}

/* 1 when the ticket was settled (admitted or refused), 0 to wait. */
static int
limit_try(struct fe_limit_ticket *t)
{
	struct fe_limit_key	*k = t->key;
	int64_t			 now = mono_usec();
	enum fe_limit_decision		 d;

	switch ((d = fe_limit_decide(&k->sh, t->charged, now))) {
	case D_ASK:
		return 0;
	case D_ADMIT:
		if (k->sh.g.status == LIMIT_NONE) {
			t->key = NULL;	/* nothing to settle */
			break;
		}
		t->slot = 1;
		k->sh.inflight++;
		limit_headers(t->ar, k, now);
		break;
	default:
		limit_refuse(t, d, now);
		return 1;
	}
	t->next(t->arg);
	return 1;
}

/* The waiting, in order, until one must wait for a new share. */
static void
limit_run_waiting(struct fe_limit_key *k)
{
	struct fe_limit_ticket	*t;

	/* Off the queue first: next() may end the request at once. */
	while ((t = TAILQ_FIRST(&k->waiting)) != NULL) {
		TAILQ_REMOVE(&k->waiting, t, wait);
		t->waiting = 0;
		if (!limit_try(t)) {
			TAILQ_INSERT_HEAD(&k->waiting, t, wait);
			t->waiting = 1;
			limit_ask(k, t->charged);
			return;
		}
	}
	if (limit_key_idle(k) && !k->sh.known)
		limit_key_free(k);
}

static void
limit_granted(void *arg, struct imsg *imsg)
{
	struct fe_limit_key	*k = arg;
	struct fe_limit_ticket	*t;
	int64_t			 now = mono_usec();
	struct timeval		 tv;

	k->asking = 0;
	if (imsg->hdr.type != IMSG_LIMIT_GRANT) {
		/* The storage helper's error: the waiting get it. */
		while ((t = TAILQ_FIRST(&k->waiting)) != NULL) {
			TAILQ_REMOVE(&k->waiting, t, wait);
			t->waiting = 0;
			t->key = NULL;
			fe_reply_storage_ok(t->ar, imsg, IMSG_LIMIT_GRANT,
			    sizeof(struct limit_grant));
		}
		if (limit_key_idle(k))
			limit_key_free(k);
		return;
	}
	memcpy(&k->sh.g, imsg->data, sizeof(k->sh.g));
	k->sh.g.message[sizeof(k->sh.g.message) - 1] = '\0';
	k->sh.known = 1;
	k->sh.granted_at = now;
	k->sh.reset_at = now + k->sh.g.reset_ms * 1000;
	k->sh.req_left = k->sh.g.requests;
	k->sh.tok_left = k->sh.g.tokens;
	k->sh.fresh = 1;
	k->sh.req_free = k->sh.g.requests < 0;
	k->sh.tok_free = k->sh.g.tokens < 0;
	k->sh.retry_at = 0;
	if (k->sh.g.status == LIMIT_OK || k->sh.g.status == LIMIT_NONE) {
		k->sh.until = now + k->sh.g.lease_ms * 1000;
		tv.tv_sec = k->sh.g.lease_ms / 1000;
		tv.tv_usec = (k->sh.g.lease_ms % 1000) * 1000;
	} else {
		/* Refused: so for a while, without asking again each time. */
		k->sh.until = 0;
		k->sh.retry_at = now + (k->sh.g.retry_after * 1000000LL <
		    REFUSED_HOLD_US ? k->sh.g.retry_after * 1000000LL :
		    REFUSED_HOLD_US);
		tv.tv_sec = 0;
		tv.tv_usec = REFUSED_HOLD_US;
		k->sh.g.status = k->sh.g.status == LIMIT_BUDGET ? LIMIT_BUDGET :
		    LIMIT_RATE;
	}
	evtimer_add(k->ev_end, &tv);
	limit_run_waiting(k);
}

/* Settles the share that ends in the same message. */
static void
limit_ask(struct fe_limit_key *k, int64_t want)
{
	struct limit_ask	 a;

	if (k->asking)
		return;
	memset(&a, 0, sizeof(a));
	strlcpy(a.handle, k->handle, sizeof(a.handle));
	a.want_tokens = want;
	if (k->sh.known && k->sh.g.status == LIMIT_OK) {
		a.spent_requests = k->sh.spent_req;
		a.spent_tokens = k->sh.spent_tok;
	}
	limit_settle(k, 0);
	k->sh.known = 0;
	k->asking = fe_storage_request(IMSG_LIMIT_ASK, -1, &a, sizeof(a),
	    limit_granted, k);
}

void
fe_limits_check(struct api_req *ar, struct fe_limit_ticket *t, int64_t est,
    void (*next)(void *), void *arg)
{
	memset(t, 0, sizeof(*t));
	t->ar = ar;
	t->next = next;
	t->arg = arg;
	t->charged = est < 0 ? 0 : est > ESTIMATE_MAX ? ESTIMATE_MAX : est;
	/* The operator's key, and a caller not known, are not limited. */
	if (ar->who.admin || ar->who.handle[0] == '\0' || !fe_storage_up()) {
		next(arg);
		return;
	}
	if ((t->key = limit_key_get(&ar->who)) == NULL) {
		fe_reply_error(ar, 503, NULL, "too many keys are being "
		    "limited at once");
		return;
	}
	if (TAILQ_EMPTY(&t->key->waiting) && limit_try(t))
		return;
	TAILQ_INSERT_TAIL(&t->key->waiting, t, wait);
	t->waiting = 1;
	limit_ask(t->key, t->charged);
}

void
fe_limits_done(struct fe_limit_ticket *t, int64_t tokens)
{
	struct fe_limit_key	*k = t->key;
	struct limit_ask	 a;
	int64_t			 diff;

	if (k == NULL)
		return;
	t->key = NULL;
	if (t->waiting) {
		TAILQ_REMOVE(&k->waiting, t, wait);
		t->waiting = 0;
		if (limit_key_idle(k) && !k->sh.known)
			limit_key_free(k);
		return;
	}
	if (!t->slot)
		return;
	k->sh.inflight--;
	diff = tokens >= 0 ? tokens - t->charged : 0;
	if (k->sh.known && k->sh.g.status == LIMIT_OK && k->sh.until > mono_usec()) {
		k->sh.spent_tok += diff;
		k->sh.tok_left -= diff;
	} else if (diff != 0) {
		/* Its share ended: the correction goes on its own. */
		memset(&a, 0, sizeof(a));
		strlcpy(a.handle, k->handle, sizeof(a.handle));
		a.spent_tokens = diff;
		fe_storage_send(IMSG_LIMIT_RETURN, &a, sizeof(a));
	}
	if (limit_key_idle(k) && !k->sh.known)
		limit_key_free(k);
}
