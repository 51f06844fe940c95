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
 * fe_limits_decide.c: a model request's limits, decided from the share
 * the frontend holds (fe_limits.c asks for it).  This is the whole
 * cost per request of a key with limits: no message, no allocation.
 */
#include <sys/types.h>

#include <stdint.h>

#include "fe_limits.h"

enum fe_limit_decision
fe_limit_decide(struct fe_limit_share *k, int64_t est, int64_t now)
{
	if (k->retry_at > now)
		return k->g.status == LIMIT_BUDGET ? D_BUDGET : D_RATE;
	if (!k->known || now >= k->until)
		return D_ASK;
	if (k->g.status == LIMIT_NONE)
		return D_ADMIT;
	if (k->g.concurrency > 0 && k->inflight >= k->g.concurrency)
		return D_BUSY;
	/*
	 * Not past the share on an estimate: ask first.  A share smaller
	 * than the estimate (all that was left) takes one request.
	 */
	if ((!k->req_free && k->req_left <= 0) ||
	    (!k->tok_free && (k->tok_left <= 0 ||
	    (k->tok_left < est && !k->fresh))))
		return D_ASK;
	k->fresh = 0;
	k->req_left--;
	k->tok_left -= est;
	k->spent_req++;
	k->spent_tok += est;
	return D_ADMIT;
}

