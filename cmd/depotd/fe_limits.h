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
 * fe_limits.h: a model request's limits, decided in the frontend from
 * a share the storage helper lent (fe_limits.c), and its usage record,
 * sent in batches (fe_usage.c).
 */
#ifndef DEPOTD_FE_LIMITS_H
#define DEPOTD_FE_LIMITS_H

#include <sys/queue.h>
#include <stdint.h>

#include "proto.h"

struct api_req;
struct fe_limit_key;

/* What a frontend holds of one key's limits: the last grant, its share. */
struct fe_limit_share {
	int			 known;		/* a grant came */
	struct limit_grant	 g;		/* the last */
	int64_t			 until;		/* mono_usec(): share ends */
	int64_t			 reset_at;	/* mono_usec(): window ends */
	int64_t			 retry_at;	/* refused: until then */
	int64_t			 granted_at;	/* mono_usec() */
	int64_t			 req_left;	/* of the share */
	int64_t			 tok_left;	/* below 0 after corrections */
	int			 req_free;	/* no limit on requests */
	int			 tok_free;	/* nor on tokens */
	int			 fresh;		/* no request on the share yet */
	int64_t			 spent_req;	/* of the share, to settle */
	int64_t			 spent_tok;
	int			 inflight;	/* holding slots */
};

enum fe_limit_decision { D_ADMIT, D_ASK, D_RATE, D_BUDGET, D_BUSY };

/*
 * fe_limits_decide.c: one request's decision from what is held, with
 * no message and no allocation (regress/bench/limits.sh times it).
 * D_ADMIT charges the share; D_ASK wants a new one.
 */
enum fe_limit_decision fe_limit_decide(struct fe_limit_share *, int64_t est,
	    int64_t now);

/* One request's place under its key's limits; the route embeds it. */
struct fe_limit_ticket {
	struct api_req		*ar;
	struct fe_limit_key	*key;		/* NULL: not limited */
	TAILQ_ENTRY(fe_limit_ticket) wait;
	int			 waiting;	/* for the key's share */
	int			 slot;		/* holds a concurrency slot */
	int64_t			 charged;	/* tokens, the estimate */
	void			(*next)(void *);
	void			*arg;
};

/*
 * Admits the request or answers it (429, or the budget's error) in
 * its dialect; next runs once admitted, perhaps before this returns.
 * est: the request's tokens as far as can be told before the answer.
 */
void	 fe_limits_check(struct api_req *, struct fe_limit_ticket *,
	    int64_t est, void (*next)(void *), void *);
/* The request is over: tokens its answer took (-1 unknown). */
void	 fe_limits_done(struct fe_limit_ticket *, int64_t tokens);

/* fe_usage.c: one record per model request, flushed in batches. */
struct usage_rec;
void	 fe_usage_add(const struct usage_rec *, int flush_now);

#endif
