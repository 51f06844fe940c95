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
 * storage_limits_int.h: what storage_limits.c (keys, shares, asks) and
 * storage_limits_db.c (the windows in limit_windows) share.
 */
#ifndef DEPOTD_STORAGE_LIMITS_INT_H
#define DEPOTD_STORAGE_LIMITS_INT_H

#include <sys/queue.h>
#include <sys/tree.h>

#include <time.h>

#include "storage.h"

enum period { P_MINUTE, P_DAY, P_MONTH, P_MAX };
extern const char *const period_names[P_MAX];

/* One window of one key: use seen in the database, settled, lent. */
struct lwindow {
	int64_t		 start;		/* UTC seconds */
	int64_t		 seen_req, seen_tok;	/* in limit_windows */
	int64_t		 pend_req, pend_tok;	/* settled, not flushed */
	int64_t		 flush_req, flush_tok;	/* being flushed */
};

struct lask {
	TAILQ_ENTRY(lask)	 entry;
	struct storage_peer	*peer;
	uint32_t		 peerid;
	struct limit_ask	 ask;
};
TAILQ_HEAD(lask_queue, lask);

struct lkey {
	RB_ENTRY(lkey)		 node;
	char			 key_id[IDLEN];
	struct limits_conf	 own;		/* -1: the default */
	int64_t			 own_until;	/* mono_seconds() */
	int			 loading;
	int			 nwait;
	struct lask_queue	 waiting;
	struct lwindow		 w[P_MAX];
	int			 nshares;	/* out: the key stays */
	uint32_t		 in_flush;	/* the flush it is in, 0 none */
	int			 syncing;	/* asks wait for a fresh view */
	int64_t			 active_until;	/* mono_usec(): flush it */
};
RB_HEAD(lkeys, lkey);
RB_PROTOTYPE(lkeys, lkey, node, lkey_cmp)

extern struct lkeys	 keys;
extern int		 nkeys;

/* storage_limits_db.c */
int	 lkey_cmp(struct lkey *, struct lkey *);
void	 lkey_roll(struct lkey *, time_t now);
int64_t	 period_end(enum period, int64_t start);
int64_t	 lwindow_req(const struct lwindow *);
int64_t	 lwindow_tok(const struct lwindow *);
/* One key (a fresh view), or all in use. */
void	 flush_run(struct lkey *only);
/* Called with a key whose fresh view its waiting asks wanted. */
void	 flush_on_fresh(void (*)(struct lkey *, int fresh));

#endif
