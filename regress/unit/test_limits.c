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
 * test_limits: the frontend's decision per request (fe_limits_decide.c)
 * from a share: admitted while the share lasts, then an ask; a share
 * that ended or was never granted is an ask; a refusal held; the
 * concurrency slots; a key without limits.  With LIMITS_BENCH set it
 * prints the cost of a decision (regress/bench/limits.sh).
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "util.h"
#include "fe_limits.h"

static void
share(struct fe_limit_share *s, int64_t now, int64_t req, int64_t tok)
{
	memset(s, 0, sizeof(*s));
	s->known = 1;
	s->g.status = LIMIT_OK;
	s->until = now + 1000000;
	s->req_left = req;
	s->tok_left = tok;
	s->req_free = req < 0;
	s->tok_free = tok < 0;
	s->fresh = 1;
}

static void
requests(void)
{
	struct fe_limit_share	 s;
	int64_t			 now = 1000000;
	int			 i, admitted = 0;

	share(&s, now, 3, -1);
	for (i = 0; i < 5; i++)
		if (fe_limit_decide(&s, 10, now) == D_ADMIT)
			admitted++;
	T_EQ_INT(admitted, 3, "a share of 3 requests admits 3");
	T_EQ_INT(fe_limit_decide(&s, 10, now), D_ASK, "then asks");
	T_EQ_INT(s.spent_req, 3, "and says 3 were spent");
	share(&s, now, 3, -1);
	T_EQ_INT(fe_limit_decide(&s, 10, now + 1000000), D_ASK,
	    "a share that ended is an ask");
	s.known = 0;
	T_EQ_INT(fe_limit_decide(&s, 10, now), D_ASK,
	    "no grant yet is an ask");
}

static void
tokens(void)
{
	struct fe_limit_share	 s;
	int64_t			 now = 1000000;

	share(&s, now, -1, 25);
	T_EQ_INT(fe_limit_decide(&s, 10, now), D_ADMIT, "10 of 25 tokens");
	T_EQ_INT(fe_limit_decide(&s, 10, now), D_ADMIT, "20 of 25 tokens");
	T_EQ_INT(fe_limit_decide(&s, 10, now), D_ASK, "5 left do not cover "
	    "an estimate of 10: ask");
	share(&s, now, -1, 5);
	T_EQ_INT(fe_limit_decide(&s, 10, now), D_ADMIT, "a fresh share of "
	    "all that was left takes one request");
	T_EQ_INT(fe_limit_decide(&s, 10, now), D_ASK, "and no second");
	T_EQ_INT(s.spent_tok, 10, "the estimate is what was spent");
}

static void
refusals(void)
{
	struct fe_limit_share	 s;
	int64_t			 now = 1000000;

	share(&s, now, 5, -1);
	s.retry_at = now + 10;
	s.g.status = LIMIT_RATE;
	T_EQ_INT(fe_limit_decide(&s, 1, now), D_RATE, "a refusal is held");
	s.g.status = LIMIT_BUDGET;
	T_EQ_INT(fe_limit_decide(&s, 1, now), D_BUDGET, "a budget's too");
	T_EQ_INT(fe_limit_decide(&s, 1, now + 10), D_ADMIT, "until it ends");
	share(&s, now, 5, -1);
	s.g.concurrency = 2;
	s.inflight = 2;
	T_EQ_INT(fe_limit_decide(&s, 1, now), D_BUSY, "2 of 2 slots held: "
	    "busy");
	T_EQ_INT((int)s.spent_req, 0, "and nothing spent");
	share(&s, now, 0, 0);
	s.g.status = LIMIT_NONE;
	T_EQ_INT(fe_limit_decide(&s, 1000, now), D_ADMIT,
	    "a key without limits is admitted");
}

static void
bench(void)
{
	struct fe_limit_share	 s;
	int64_t			 t0, now = mono_usec();
	int			 i, n = 10000000, admitted = 0;

	share(&s, now + 60000000, n, (int64_t)n * 20);
	s.until = INT64_MAX;
	t0 = mono_usec();
	for (i = 0; i < n; i++)
		admitted += fe_limit_decide(&s, 17, now) == D_ADMIT;
	printf("# limits decision: %.4f us per request (requests and tokens "
	    "limited; %d rounds, %d admitted)\n",
	    (double)(mono_usec() - t0) / n, n, admitted);
}

int
main(void)
{
	requests();
	tokens();
	refusals();
	if (getenv("LIMITS_BENCH") != NULL)
		bench();
	return t_done();
}
