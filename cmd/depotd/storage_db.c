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
 * storage_db.c: a pool of non-blocking libpq connections on libevent.
 *
 * Each connection has one event on its socket whose interest follows
 * what libpq needs next: the connect poll's direction, EV_WRITE while
 * an outgoing query has not been flushed, EV_READ otherwise (an idle
 * connection keeps reading so that a server going away is noticed
 * before the next query is handed to it).
 *
 * Migrations run on the first connection to come up, as an ordinary
 * asynchronous exchange: the advisory lock may be held for a while by
 * another host migrating, and the storage helper's loop must not stall
 * meanwhile.  Queries wait until the schema is current.
 */
#include <sys/queue.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <libpq-fe.h>

#include "log.h"
#include "storage_db.h"
#include "storage_db_int.h"

#define BACKOFF_MIN_MS	500
#define BACKOFF_MAX_MS	30000

enum conn_state {
	CONN_WAITING,		/* backoff timer before the next attempt */
	CONN_CONNECTING,
	CONN_MIGRATING,
	CONN_IDLE,
	CONN_BUSY,
};

enum db_migrate_step {
	MIG_BEGIN,
	MIG_VERSION,
	MIG_APPLY,
	MIG_COMMIT,
	MIG_ROLLBACK,
};

struct db_conn {
	struct db		*db;
	PGconn			*pg;
	enum conn_state		 state;
	struct event		*ev;
	int			 ev_fd;
	short			 ev_what;
	struct event		*timer;
	int			 backoff_ms;
	int			 failures;	/* attempts since last up */
	int			 flushing;
	uint32_t		 prepared;	/* statements it holds */
	int			 preparing;	/* the one being, or -1 */
	unsigned int		 prepare_gen;	/* renames them anew */
	struct db_query		*query;		/* in flight */
	PGresult		*res;		/* last result of it */
	int			 res_failed;	/* any result an error */
	enum db_migrate_step	 migrate_step;
	int			 migrate_version;	/* step being applied */
};

struct db {
	struct event_base	*base;
	char			*conninfo;
	char			*password;	/* to keep out of logs */
	int			 npool;
	struct db_conn		*conns;
	struct db_queue		 queue;
	struct event		*fail_ev;	/* fails the queue when down */
	int			 migrated;
	int			 migrating;
	int			 up;
	const struct db_batch	*batches[DB_BATCHES];	/* seen so far */
	int			 nbatches;
	void			(*updown)(void *, int);
	void			*updown_arg;
};

static void	db_fail_queue(evutil_socket_t, short, void *);
static void	db_connection_connect(struct db_conn *);
static void	db_connection_broken(struct db_conn *, const char *);
static void	db_connection_io(evutil_socket_t, short, void *);
static void	db_connection_send(struct db_conn *);
static void	db_send_queued(struct db *);
static void	db_update_up(struct db *);
static void	db_migrate_begin(struct db_conn *);

/*
 * libpq does not put the password in its messages, but the message is
 * checked anyway before it reaches a log: a conninfo can end up quoted
 * by future libpq versions or by the server.
 */
static void
db_log_error(struct db *db, int quiet, const char *what, const char *msg)
{
	char	 line[512];
	char	*nl;

	if (msg == NULL || *msg == '\0')
		msg = "unknown error";
	strlcpy(line, msg, sizeof(line));
	while ((nl = strchr(line, '\n')) != NULL)
		*nl = (nl[1] == '\0') ? '\0' : ' ';
	if (strstr(line, "password=") != NULL ||
	    strstr(line, db->conninfo) != NULL ||
	    (db->password != NULL && strstr(line, db->password) != NULL))
		strlcpy(line, "(message withheld: it quotes the connection "
		    "string)", sizeof(line));
	if (quiet)
		log_debug("database: %s: %s", what, line);
	else
		log_warnx("database: %s: %s", what, line);
	explicit_bzero(line, sizeof(line));
}

static void
db_notice(void *arg, const char *msg)
{
	log_debug("database: %s", msg);
}

static char *
conninfo_password(const char *conninfo)
{
	PQconninfoOption	*opts, *o;
	char			*pw = NULL;

	if ((opts = PQconninfoParse(conninfo, NULL)) == NULL)
		return NULL;
	for (o = opts; o->keyword != NULL; o++)
		if (strcmp(o->keyword, "password") == 0 && o->val != NULL &&
		    *o->val != '\0')
			pw = strdup(o->val);
	PQconninfoFree(opts);
	return pw;
}

struct db *
db_new(struct event_base *base, const char *conninfo, int poolsize)
{
	struct db	*db;
	int		 i;

	if (poolsize < 1)
		poolsize = 1;
	if ((db = calloc(1, sizeof(*db))) == NULL)
		return NULL;
	db->base = base;
	db->npool = poolsize;
	TAILQ_INIT(&db->queue);
	if ((db->conninfo = strdup(conninfo)) == NULL ||
	    (db->conns = calloc(poolsize, sizeof(*db->conns))) == NULL)
		goto fail;
	db->password = conninfo_password(conninfo);
	if ((db->fail_ev = event_new(base, -1, 0, db_fail_queue, db)) == NULL)
		goto fail;
	for (i = 0; i < poolsize; i++) {
		db->conns[i].db = db;
		db->conns[i].ev_fd = -1;
		db->conns[i].preparing = -1;
		db->conns[i].backoff_ms = BACKOFF_MIN_MS;
	}
	return db;
 fail:
	db_free(db);
	return NULL;
}

static void
db_fail_queue(evutil_socket_t fd, short what, void *arg)
{
	struct db	*db = arg;
	struct db_query	*q;

	while (!db->up && (q = TAILQ_FIRST(&db->queue)) != NULL) {
		TAILQ_REMOVE(&db->queue, q, entry);
		db_query_fail(q);
	}
}

void
db_start(struct db *db, void (*updown)(void *, int), void *arg)
{
	int	i;

	db->updown = updown;
	db->updown_arg = arg;
	for (i = 0; i < db->npool; i++)
		db_connection_connect(&db->conns[i]);
}

int
db_up(const struct db *db)
{
	return db->up;
}

/* Point the connection's event at libpq's current socket and needs. */
static void
db_connection_watch(struct db_conn *c, short what)
{
	int	fd = PQsocket(c->pg);

	if (c->ev != NULL && c->ev_fd == fd && c->ev_what == what)
		return;
	if (c->ev != NULL) {
		event_free(c->ev);
		c->ev = NULL;
	}
	c->ev_fd = fd;
	c->ev_what = what;
	if (fd == -1)
		return;
	c->ev = event_new(c->db->base, fd, what | EV_PERSIST,
	    db_connection_io, c);
	if (c->ev == NULL || event_add(c->ev, NULL) == -1)
		fatal("%s: event", __func__);
}

static void
db_connection_close(struct db_conn *c)
{
	if (c->ev != NULL) {
		event_free(c->ev);
		c->ev = NULL;
	}
	c->ev_fd = -1;
	c->prepared = 0;
	c->preparing = -1;
	if (c->pg != NULL) {
		PQfinish(c->pg);
		c->pg = NULL;
	}
	PQclear(c->res);
	c->res = NULL;
	c->flushing = 0;
}

static void
db_connection_retry(evutil_socket_t fd, short what, void *arg)
{
	db_connection_connect(arg);
}

/* Next attempt after the backoff, give or take a quarter, then double. */
static void
db_connection_schedule(struct db_conn *c)
{
	struct timeval	 tv;
	int		 ms;

	ms = c->backoff_ms * 3 / 4 + arc4random_uniform(c->backoff_ms / 2 + 1);
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	c->backoff_ms = c->backoff_ms * 2 > BACKOFF_MAX_MS ?
	    BACKOFF_MAX_MS : c->backoff_ms * 2;
	c->state = CONN_WAITING;
	if (c->timer == NULL &&
	    (c->timer = evtimer_new(c->db->base,
	    db_connection_retry, c)) == NULL)
		fatal("%s: evtimer_new", __func__);
	evtimer_add(c->timer, &tv);
}

static void
db_connection_connect(struct db_conn *c)
{
	if ((c->pg = PQconnectStart(c->db->conninfo)) == NULL) {
		log_warnx("database: out of memory connecting");
		db_connection_schedule(c);
		return;
	}
	if (PQstatus(c->pg) == CONNECTION_BAD) {
		db_connection_broken(c, PQerrorMessage(c->pg));
		return;
	}
	c->state = CONN_CONNECTING;
	db_connection_watch(c, EV_WRITE);
}

/*
 * The connection is gone: the query in flight, if any, learns it with
 * res NULL; the rest of the queue waits for another connection, or
 * fails once none is left.  Only the first failed attempt of an outage
 * is a warning; the retries that follow it are debug noise.
 */
static void
db_connection_broken(struct db_conn *c, const char *why)
{
	struct db	*db = c->db;
	struct db_query	*q = c->query;
	int		 was_up = c->state >= CONN_MIGRATING;

	db_log_error(db, !was_up && c->failures > 0,
	    was_up ? "connection lost" : "cannot connect", why);
	if (!was_up)
		c->failures++;
	if (c->state == CONN_MIGRATING)
		db->migrating = 0;
	c->query = NULL;
	db_connection_close(c);
	db_connection_schedule(c);
	db_update_up(db);
	if (q != NULL)
		db_query_fail(q);
	/* Another connection may have to take over the migration. */
	db_send_queued(db);
}

static void
db_connection_ready(struct db_conn *c)
{
	struct db	*db = c->db;

	if (PQsetnonblocking(c->pg, 1) == -1) {
		db_connection_broken(c, PQerrorMessage(c->pg));
		return;
	}
	PQsetNoticeProcessor(c->pg, db_notice, NULL);
	/*
	 * A connection that cannot migrate (schema too new) keeps its
	 * backoff growing: the reset waits for a usable schema.
	 */
	if (db->migrated)
		c->backoff_ms = BACKOFF_MIN_MS;
	c->failures = 0;
	c->state = CONN_IDLE;
	db_connection_watch(c, EV_READ);
	log_debug("database: connection up");
	db_send_queued(db);
}

/*
 * libpq may close its socket and open another during the connect
 * sequence, possibly under the same number: the event is made anew
 * each time so that epoll never keeps watching a closed descriptor.
 */
static void
db_connection_poll_connect(struct db_conn *c)
{
	if (c->ev != NULL) {
		event_free(c->ev);
		c->ev = NULL;
	}
	switch (PQconnectPoll(c->pg)) {
	case PGRES_POLLING_READING:
		db_connection_watch(c, EV_READ);
		break;
	case PGRES_POLLING_WRITING:
		db_connection_watch(c, EV_WRITE);
		break;
	case PGRES_POLLING_OK:
		db_connection_ready(c);
		break;
	default:
		db_connection_broken(c, PQerrorMessage(c->pg));
		break;
	}
}

/* Sends what libpq still holds; EV_WRITE only while it holds some. */
static int
db_connection_flush(struct db_conn *c)
{
	switch (PQflush(c->pg)) {
	case 0:
		c->flushing = 0;
		db_connection_watch(c, EV_READ);
		return 0;
	case 1:
		c->flushing = 1;
		db_connection_watch(c, EV_READ | EV_WRITE);
		return 0;
	default:
		return -1;
	}
}

static void
db_connection_result_done(struct db_conn *c)
{
	struct db_query	*q = c->query;
	PGresult	*res = c->res;

	c->res = NULL;
	c->query = NULL;
	c->state = CONN_IDLE;
	db_query_deliver(q, res);
	PQclear(res);
	db_query_free(q);
}

static void db_migrate_result(struct db_conn *);

/* Collects results until the exchange ends (PQgetResult gives NULL). */
static void
db_connection_read(struct db_conn *c)
{
	PGresult	*res;

	if (PQconsumeInput(c->pg) == 0) {
		db_connection_broken(c, PQerrorMessage(c->pg));
		return;
	}
	if (c->flushing && db_connection_flush(c) == -1) {
		db_connection_broken(c, PQerrorMessage(c->pg));
		return;
	}
	if (c->state == CONN_IDLE) {
		/* Nothing asked: drain what came (notices, a FATAL). */
		while (!PQisBusy(c->pg) && (res = PQgetResult(c->pg)) != NULL)
			PQclear(res);
		if (PQstatus(c->pg) == CONNECTION_BAD)
			db_connection_broken(c, PQerrorMessage(c->pg));
		return;
	}
	while (!PQisBusy(c->pg)) {
		if ((res = PQgetResult(c->pg)) == NULL)
			break;
		if (PQresultStatus(res) == PGRES_FATAL_ERROR ||
		    PQresultStatus(res) == PGRES_BAD_RESPONSE)
			c->res_failed = 1;
		PQclear(c->res);
		c->res = res;
	}
	if (PQisBusy(c->pg))
		return;
	/*
	 * A backend terminated mid-query answers with a FATAL error and
	 * hangs up: that is a lost connection, not a query error.
	 */
	if (PQstatus(c->pg) == CONNECTION_BAD) {
		db_connection_broken(c, PQerrorMessage(c->pg));
		return;
	}
	if (c->state == CONN_MIGRATING)
		db_migrate_result(c);
	else if (c->preparing != -1 && !c->res_failed) {
		/* Prepared: now the query itself. */
		c->prepared |= 1U << c->preparing;
		c->preparing = -1;
		PQclear(c->res);
		c->res = NULL;
		db_connection_send(c);
	} else {
		/*
		 * An error may be a statement gone stale (a migration by
		 * another host changed its result): prepared anew, under
		 * new names, next time.
		 */
		if (c->res_failed && c->query->batch != NULL) {
			c->prepared = 0;
			c->prepare_gen++;
		}
		c->preparing = -1;
		db_connection_result_done(c);
		db_send_queued(c->db);
	}
}

static void
db_connection_io(evutil_socket_t fd, short what, void *arg)
{
	struct db_conn	*c = arg;

	if (c->state == CONN_CONNECTING) {
		db_connection_poll_connect(c);
		return;
	}
	if ((what & EV_WRITE) && c->flushing && db_connection_flush(c) == -1) {
		db_connection_broken(c, PQerrorMessage(c->pg));
		return;
	}
	if (what & EV_READ)
		db_connection_read(c);
}

/*
 * The number of q's statement among those of batches (2i for one, 2i +
 * 1 for many), or -1 when there are too many kinds to prepare them all.
 */
static int
db_batch_statement(struct db *db, const struct db_query *q)
{
	int	i;

	for (i = 0; i < db->nbatches && db->batches[i] != q->batch; i++)
		;
	if (i == db->nbatches) {
		if (i == DB_BATCHES)
			return -1;
		db->batches[db->nbatches++] = q->batch;
	}
	return 2 * i + (q->many != NULL);
}

/*
 * A batched query's statements are prepared once per connection: the
 * plan is most of the server's work for a lookup by key.  The prepare
 * goes first, and its answer sends the query (db_connection_read).
 */
static int
db_connection_send_batch(struct db_conn *c, const char *sql,
    char **params)
{
	struct db_query	*q = c->query;
	char		 name[32];
	int		 st;

	if ((st = db_batch_statement(c->db, q)) == -1)
		return PQsendQueryParams(c->pg, sql, q->nparams, NULL,
		    (const char *const *)params, NULL, NULL, 0);
	snprintf(name, sizeof(name), "depot_%u_%d", c->prepare_gen, st);
	if ((c->prepared & (1U << st)) == 0) {
		c->preparing = st;
		return PQsendPrepare(c->pg, name, sql, q->nparams, NULL);
	}
	return PQsendQueryPrepared(c->pg, name, q->nparams,
	    (const char *const *)params, NULL, NULL, 0);
}

/* Sends c->query, or puts it back at the head when libpq refuses it. */
static void
db_connection_send(struct db_conn *c)
{
	struct db_query	*q = c->query;
	const char	*sql = q->sql;
	char		**params = q->params;
	int		 sent;

	if (q->many != NULL) {
		sql = q->batch->many;
		params = q->many;
	}
	c->state = CONN_BUSY;
	c->res_failed = 0;
	if (q->batch != NULL)
		sent = db_connection_send_batch(c, sql, params);
	else
		sent = PQsendQueryParams(c->pg, sql, q->nparams, NULL,
		    (const char *const *)params, NULL, NULL, 0);
	if (sent == 0 || db_connection_flush(c) == -1) {
		c->query = NULL;
		db_query_requeue(&c->db->queue, q);
		db_connection_broken(c, PQerrorMessage(c->pg));
	}
}

/* Sends one step of the migration exchange (simple query protocol). */
static void
db_migrate_send(struct db_conn *c, enum db_migrate_step step, const char *sql)
{
	c->migrate_step = step;
	c->res_failed = 0;
	PQclear(c->res);
	c->res = NULL;
	if (PQsendQuery(c->pg, sql) == 0 || db_connection_flush(c) == -1)
		db_connection_broken(c, PQerrorMessage(c->pg));
}

static void
db_migrate_begin(struct db_conn *c)
{
	c->state = CONN_MIGRATING;
	c->db->migrating = 1;
	db_migrate_send(c, MIG_BEGIN, SCHEMA_BEGIN_SQL);
}

static void
db_migrate_failed(struct db_conn *c, const char *why)
{
	db_log_error(c->db, 0, "migration failed", why);
	db_migrate_send(c, MIG_ROLLBACK, "rollback");
}

/* Now at version current: commit, give up, or apply the next step. */
static void
db_migrate_decide(struct db_conn *c, int current)
{
	char	*sql;

	if (current > db_schema_version()) {
		log_warnx("database: schema version %d is newer than this "
		    "depotd knows (%d)", current, db_schema_version());
		db_migrate_send(c, MIG_ROLLBACK, "rollback");
		return;
	}
	if (current == db_schema_version()) {
		db_migrate_send(c, MIG_COMMIT, "commit");
		return;
	}
	c->migrate_version = current + 1;
	if ((sql = schema_step_sql(c->migrate_version)) == NULL) {
		db_migrate_failed(c, "out of memory");
		return;
	}
	log_info("database: applying migration %d", c->migrate_version);
	db_migrate_send(c, MIG_APPLY, sql);
	free(sql);
}

static void
db_migrate_result(struct db_conn *c)
{
	struct db	*db = c->db;
	PGresult	*res = c->res;
	const char	*err;

	err = res != NULL ? PQresultErrorMessage(res) : "no result";
	if (c->res_failed && c->migrate_step != MIG_ROLLBACK) {
		db_migrate_failed(c, err);
		return;
	}
	switch (c->migrate_step) {
	case MIG_BEGIN:
		if (res == NULL || PQntuples(res) != 1) {
			db_migrate_failed(c, "unexpected answer");
		} else if (strcmp(PQgetvalue(res, 0, 0), "t") == 0)
			db_migrate_send(c, MIG_VERSION, SCHEMA_VERSION_SQL);
		else
			db_migrate_decide(c, 0);
		break;
	case MIG_VERSION:
		if (res == NULL || PQntuples(res) != 1)
			db_migrate_failed(c, "unexpected answer");
		else
			db_migrate_decide(c, atoi(PQgetvalue(res, 0, 0)));
		break;
	case MIG_APPLY:
		/* Committed; the next step starts a new transaction. */
		db_migrate_send(c, MIG_BEGIN, SCHEMA_BEGIN_SQL);
		break;
	case MIG_COMMIT:
		db->migrating = 0;
		db->migrated = 1;
		c->backoff_ms = BACKOFF_MIN_MS;
		c->state = CONN_IDLE;
		PQclear(c->res);
		c->res = NULL;
		log_debug("database: schema at version %d",
		    db_schema_version());
		db_update_up(db);
		db_send_queued(db);
		break;
	case MIG_ROLLBACK:
		/* Retried after the backoff, in case someone fixes it. */
		db_connection_broken(c, "schema not applied");
		break;
	}
}

static void
db_update_up(struct db *db)
{
	int	i, up = 0;

	for (i = 0; i < db->npool && db->migrated; i++)
		if (db->conns[i].state == CONN_IDLE ||
		    db->conns[i].state == CONN_BUSY)
			up = 1;
	if (up == db->up)
		return;
	db->up = up;
	/* The owner's callback reports it; this is for debugging. */
	log_debug("database: %s", up ? "up" : "down");
	if (!up && !TAILQ_EMPTY(&db->queue))
		event_active(db->fail_ev, 0, 0);
	if (db->updown != NULL)
		db->updown(db->updown_arg, up);
}

/* Hands queued queries to idle connections, or starts the migration. */
static void
db_send_queued(struct db *db)
{
	struct db_conn	*c;
	struct db_query	*q;
	int		 i;

	for (i = 0; i < db->npool; i++) {
		c = &db->conns[i];
		if (c->state != CONN_IDLE)
			continue;
		if (!db->migrated) {
			if (!db->migrating)
				db_migrate_begin(c);
			continue;
		}
		if ((q = TAILQ_FIRST(&db->queue)) == NULL)
			break;
		TAILQ_REMOVE(&db->queue, q, entry);
		if (q->batch != NULL)
			db_query_gather(&db->queue, q);
		c->query = q;
		db_connection_send(c);
	}
	db_update_up(db);
}

int
db_query(struct db *db, const char *sql, int nparams,
    const char *const *params, db_cb cb, void *arg)
{
	struct db_query	*q;

	if (!db->up)
		return -1;
	if ((q = db_query_new(sql, nparams, params, cb, arg)) == NULL) {
		log_warn("%s", __func__);
		return -1;
	}
	TAILQ_INSERT_TAIL(&db->queue, q, entry);
	db_send_queued(db);
	return 0;
}

int
db_query_batched(struct db *db, const struct db_batch *b,
    const char *const *params, db_row_cb cb, void *arg)
{
	struct db_query	*q;

	if (!db->up)
		return -1;
	if ((q = db_query_new(b->one, b->nparams, params, NULL, arg)) ==
	    NULL) {
		log_warn("%s", __func__);
		return -1;
	}
	q->batch = b;
	q->rcb = cb;
	TAILQ_INSERT_TAIL(&db->queue, q, entry);
	db_send_queued(db);
	return 0;
}

void
db_free(struct db *db)
{
	struct db_query	*q;
	int		 i;

	if (db == NULL)
		return;
	for (i = 0; db->conns != NULL && i < db->npool; i++) {
		db_connection_close(&db->conns[i]);
		db_query_free(db->conns[i].query);
		if (db->conns[i].timer != NULL)
			event_free(db->conns[i].timer);
	}
	while ((q = TAILQ_FIRST(&db->queue)) != NULL) {
		TAILQ_REMOVE(&db->queue, q, entry);
		db_query_free(q);
	}
	if (db->fail_ev != NULL)
		event_free(db->fail_ev);
	free(db->conns);
	if (db->conninfo != NULL)
		freezero(db->conninfo, strlen(db->conninfo));
	if (db->password != NULL)
		freezero(db->password, strlen(db->password));
	free(db);
}
