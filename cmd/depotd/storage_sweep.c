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
 * storage_sweep.c: the retention sweep.
 *
 * Deleted files, expired files and uploads stuck in 'writing' past a
 * grace period lose their bytes, then their rows.  Several hosts may
 * sweep one database at once: each batch is claimed in one statement
 * with FOR UPDATE SKIP LOCKED, so no two sweepers ever hold the same
 * row, and a claim left by a crashed sweeper lapses after a while.
 * Each pass also expires the containers idle past their policy
 * (storage_container.c).
 */
#include <sys/types.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "storage.h"

#define SWEEP_BATCH		200
#define SWEEP_MAX_BATCHES	50	/* bounded work per pass */
#define SWEEP_CLAIM_LAPSE	"15 minutes"

struct sweep_pass {
	void		(*done)(void *, const char *);
	void		*arg;
	int		 batches;
	int		 removed;
	int		 failed;
	int		 pending;	/* store removals under way */
	int		 batch_rows;
	char		*ok_ids;	/* "{id,id,...}" */
	char		*bad_ids;
	size_t		 idlen;
};

static struct event	*ev_sweep;
static struct sweep_pass *current;

static void	sweep_batch(struct sweep_pass *);

static void
sweep_timer_arm(void)
{
	struct timeval	 tv;

	if (storage.conf->sweep_interval <= 0) {
		evtimer_del(ev_sweep);
		return;
	}
	tv.tv_sec = storage.conf->sweep_interval;
	tv.tv_usec = 0;
	evtimer_add(ev_sweep, &tv);
}

static void
sweep_logged(void *arg, const char *result)
{
	log_info("sweep: %s", result);
}

static void
sweep_timer(evutil_socket_t fd, short what, void *arg)
{
	storage_sweep_run(sweep_logged, NULL);
	sweep_timer_arm();
}

void
storage_sweep_init(void)
{
	ev_sweep = evtimer_new(storage.base, sweep_timer, NULL);
	sweep_timer_arm();
}

void
storage_sweep_reschedule(void)
{
	if (ev_sweep != NULL)
		sweep_timer_arm();
}

static void
sweep_ignore_result(void *arg, const PGresult *res)
{
	if (res != NULL && PQresultStatus(res) != PGRES_COMMAND_OK &&
	    PQresultStatus(res) != PGRES_TUPLES_OK)
		log_warnx("sweep: %s", PQresultErrorMessage(res));
}

static void
sweep_pass_finish(struct sweep_pass *sp, const char *why)
{
	char		 result[256], removed[16], failed[16];
	const char	*params[3];

	if (why != NULL)
		snprintf(result, sizeof(result), "%s after removing %d "
		    "files", why, sp->removed);
	else {
		snprintf(result, sizeof(result), "removed %d files, %d "
		    "failed and kept for the next pass", sp->removed,
		    sp->failed);
		snprintf(removed, sizeof(removed), "%d", sp->removed);
		snprintf(failed, sizeof(failed), "%d", sp->failed);
		params[0] = storage.host;
		params[1] = removed;
		params[2] = failed;
		db_query(storage.db, "insert into sweep_runs (host, removed, "
		    "failed, finished_at) values ($1, $2, $3, now())", 3,
		    params, sweep_ignore_result, NULL);
	}
	sp->done(sp->arg, result);
	free(sp->ok_ids);
	free(sp->bad_ids);
	free(sp);
	current = NULL;
}

static void
sweep_ids_append(char **list, const char *id)
{
	size_t	 len = strlen(*list), need = len + strlen(id) + 2;
	char	*n;

	if ((n = realloc(*list, need)) == NULL)
		fatal("realloc");
	/* "{}" becomes "{id}", "{a}" becomes "{a,id}"; ids need no quotes. */
	n[len - 1] = '\0';
	if (len > 2)
		strlcat(n, ",", need);
	strlcat(n, id, need);
	strlcat(n, "}", need);
	*list = n;
}

static void
sweep_batch_settled(void *arg, const PGresult *res)
{
	struct sweep_pass	*sp = arg;

	sweep_ignore_result(NULL, res);
	if (sp->batch_rows == SWEEP_BATCH && sp->batches < SWEEP_MAX_BATCHES)
		sweep_batch(sp);
	else
		sweep_pass_finish(sp, NULL);
}

/* Every store removal of the batch has answered. */
static void
sweep_batch_removed(struct sweep_pass *sp)
{
	const char	*params[2];

	params[0] = sp->ok_ids;
	params[1] = storage.host;
	db_query(storage.db, "delete from files where id = any($1::text[]) "
	    "and sweep_claim = $2", 2, params, sweep_ignore_result, NULL);
	params[0] = sp->bad_ids;
	if (db_query(storage.db, "update files set sweep_claim = null, "
	    "sweep_claimed_at = null where id = any($1::text[]) and "
	    "sweep_claim = $2", 2, params, sweep_batch_settled, sp) == -1)
		sweep_pass_finish(sp, "the database went away");
}

struct sweep_item {
	struct sweep_pass	*sp;
	char			 id[IDLEN];
};

static void
sweep_item_removed(void *arg, int error)
{
	struct sweep_item	*it = arg;
	struct sweep_pass	*sp = it->sp;

	/* A blob the store no longer has is as good as removed. */
	if (error == 0 || error == ENOENT) {
		sweep_ids_append(&sp->ok_ids, it->id);
		sp->removed++;
	} else {
		log_warnx("sweep: %s: %s", it->id, strerror(error));
		sweep_ids_append(&sp->bad_ids, it->id);
		sp->failed++;
	}
	free(it);
	if (--sp->pending == 0)
		sweep_batch_removed(sp);
}

static void
sweep_batch_claimed(void *arg, const PGresult *res)
{
	struct sweep_pass	*sp = arg;
	struct sweep_item	*it;
	int			 i, n;

	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
		sweep_ignore_result(NULL, res);
		sweep_pass_finish(sp, "the database failed");
		return;
	}
	n = sp->batch_rows = PQntuples(res);
	if (n == 0) {
		sweep_pass_finish(sp, NULL);
		return;
	}
	free(sp->ok_ids);
	free(sp->bad_ids);
	sp->ok_ids = strdup("{}");
	sp->bad_ids = strdup("{}");
	if (sp->ok_ids == NULL || sp->bad_ids == NULL)
		fatal("strdup");
	sp->pending = n;
	for (i = 0; i < n; i++) {
		if ((it = calloc(1, sizeof(*it))) == NULL)
			fatal("calloc");
		it->sp = sp;
		strlcpy(it->id, PQgetvalue(res, i, 0), sizeof(it->id));
		storage.store->ops->remove(storage.store,
		    PQgetvalue(res, i, 1), sweep_item_removed, it);
	}
}

static void
sweep_batch(struct sweep_pass *sp)
{
	const char	*params[3];
	char		 grace[32], batch[16];

	sp->batches++;
	snprintf(grace, sizeof(grace), "%" PRId64,
	    storage.conf->writing_grace);
	snprintf(batch, sizeof(batch), "%d", SWEEP_BATCH);
	params[0] = storage.host;
	params[1] = grace;
	params[2] = batch;
	if (db_query(storage.db, "update files set sweep_claim = $1, "
	    "sweep_claimed_at = now() where id in (select id from files "
	    "where (deleted_at is not null or (state = 'ready' and "
	    "expires_at <= now()) or (state = 'writing' and updated_at < "
	    "now() - make_interval(secs => $2::bigint))) and "
	    "(sweep_claimed_at is null or sweep_claimed_at < now() - "
	    "interval '" SWEEP_CLAIM_LAPSE "') limit $3::int "
	    "for update skip locked) returning id, storage_ref", 3, params,
	    sweep_batch_claimed, sp) == -1)
		sweep_pass_finish(sp, "the database is unavailable");
}

void
storage_sweep_run(void (*done)(void *, const char *), void *arg)
{
	struct sweep_pass	*sp;

	if (current != NULL) {
		done(arg, "a sweep is already running");
		return;
	}
	if ((sp = calloc(1, sizeof(*sp))) == NULL)
		fatal("calloc");
	sp->done = done;
	sp->arg = arg;
	current = sp;
	/* Lapsed containers go first: their sessions hold a backend. */
	storage_container_sweep();
	sweep_batch(sp);
}
