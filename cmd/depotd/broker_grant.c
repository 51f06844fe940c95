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
 * broker_grant.c: the storage helper's grants of containers' sessions.
 *
 * A frontend never names a session: the storage helper, having checked
 * that the caller owns the container, grants it here under a one-time
 * nonce for one frontend, and the frontend's lease presents the nonce.
 * A nonce is good once, for that frontend alone, for GRANT_TTL
 * seconds; what a frontend presents that was never granted, or was
 * granted to another, opens nothing.
 *
 * The grant is written to our channel before the frontend hears of
 * it, but the two channels are read in no set order: a lease whose
 * nonce is not here yet waits for it (broker_lease.c), briefly; broker.c
 * tells the leases when a grant comes.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "util.h"
#include "broker.h"

#define GRANT_TTL	30		/* seconds */
#define GRANTS_MAX	4096

struct broker_grant {
	TAILQ_ENTRY(broker_grant) entry;
	struct cntr_grant	 g;
	int64_t			 made;	/* mono_seconds */
};

static TAILQ_HEAD(, broker_grant) grants = TAILQ_HEAD_INITIALIZER(grants);
static int ngrants;

static void
broker_grant_free(struct broker_grant *bg)
{
	TAILQ_REMOVE(&grants, bg, entry);
	ngrants--;
	explicit_bzero(bg, sizeof(*bg));
	free(bg);
}

/* Grants never presented go after GRANT_TTL, or the oldest past max. */
static void
broker_grant_prune(void)
{
	struct broker_grant	*bg;
	int64_t			 now = mono_seconds();

	while ((bg = TAILQ_FIRST(&grants)) != NULL &&
	    (now - bg->made > GRANT_TTL || ngrants >= GRANTS_MAX))
		broker_grant_free(bg);
}

void
broker_grant_add(struct imsg *imsg)
{
	struct broker_grant	*bg;

	broker_grant_prune();
	if ((bg = calloc(1, sizeof(*bg))) == NULL)
		fatal("calloc");
	memcpy(&bg->g, imsg->data, sizeof(bg->g));
	bg->g.grant[sizeof(bg->g.grant) - 1] = '\0';
	bg->g.id[sizeof(bg->g.id) - 1] = '\0';
	bg->g.session[sizeof(bg->g.session) - 1] = '\0';
	bg->made = mono_seconds();
	TAILQ_INSERT_TAIL(&grants, bg, entry);
	ngrants++;
}

/*
 * The grant of nonce to frontend into out, taken: 1, else 0.  The
 * compare takes the same time whatever the nonce shares with one.
 */
int
broker_grant_take(const char *nonce, int frontend, struct cntr_grant *out)
{
	struct broker_grant	*bg;

	broker_grant_prune();
	if (!id_valid(nonce, "grt_"))
		return 0;
	TAILQ_FOREACH(bg, &grants, entry) {
		if (!timingsafe_streq(bg->g.grant, nonce))
			continue;
		if (bg->g.frontend != frontend) {
			log_warnx("frontend %d presented a grant made for "
			    "frontend %d: refused", frontend, bg->g.frontend);
			return 0;
		}
		*out = bg->g;
		broker_grant_free(bg);
		return 1;
	}
	return 0;
}
