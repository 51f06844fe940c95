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
 * test_db_batch.c: queries that several requests share (storage_db.h's
 * struct db_batch).
 *
 *	test_db_batch		the array literals and the routing of
 *				rows, without a server
 *	test_db_batch pg	batches against a real PostgreSQL: each
 *				request gets its own row, another owner's
 *				and a missing row get none, a backend
 *				killed mid-batch fails every request
 *
 * The pg mode needs DEPOT_PG_CONNINFO, as test_db does; its scratch
 * database is depot_test_db_batch.
 */
#include <sys/time.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <libpq-fe.h>

#include "log.h"
#include "storage_db.h"
#include "t.h"

#define SCRATCH		"depot_test_db_batch"
#define NREQ		12

static struct event_base	*base;
static int			 up_seen, down_seen;

/* --- without a server --- */

static void
test_array(void)
{
	const char	*plain[] = { "file-1", "file-2" };
	const char	*odd[] = { "a\"b", "c\\d", "{x,y}", "", NULL };
	char		*s;

	s = db_batch_array(plain, 2);
	T_EQ_STR(s, "{\"file-1\",\"file-2\"}", "two elements, quoted");
	free(s);
	s = db_batch_array(plain, 0);
	T_EQ_STR(s, "{}", "no element");
	free(s);
	s = db_batch_array(odd, 5);
	T_EQ_STR(s, "{\"a\\\"b\",\"c\\\\d\",\"{x,y}\",\"\",NULL}",
	    "quote and backslash escaped, braces kept, empty and NULL");
	free(s);
}

static PGresult *
positions(const char *const *pos, int n)
{
	PGresAttDesc	 att[2];
	PGresult	*res;
	int		 i;

	memset(att, 0, sizeof(att));
	att[0].name = (char *)"v";
	att[1].name = (char *)"k_n";
	att[0].format = att[1].format = 0;
	res = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);
	PQsetResultAttrs(res, 2, att);
	for (i = 0; i < n; i++) {
		PQsetvalue(res, i, 0, (char *)"x", 1);
		PQsetvalue(res, i, 1, (char *)pos[i], strlen(pos[i]));
	}
	return res;
}

static void
test_rows(void)
{
	const char	*pos[] = { "3", "1", "9", "0", "x", "3", "-2", "2z" };
	PGresult	*res;
	int		 rows[4];

	res = positions(pos, 8);
	db_batch_rows(res, 4, rows);
	T_EQ_INT(rows[0], 1, "position 1 is the second row");
	T_EQ_INT(rows[1], -1, "position 2: no row (2z is not a number)");
	T_EQ_INT(rows[2], 0, "position 3 is the first row, not the repeat");
	T_EQ_INT(rows[3], -1, "position 4: no row");
	PQclear(res);
	rows[0] = 7;
	db_batch_rows(NULL, 1, rows);
	T_EQ_INT(rows[0], -1, "no result: no row for anybody");
	res = PQmakeEmptyPGresult(NULL, PGRES_FATAL_ERROR);
	rows[0] = 7;
	db_batch_rows(res, 1, rows);
	T_EQ_INT(rows[0], -1, "an error: no row for anybody");
	PQclear(res);
}

/* --- against a server --- */

static void
wake(evutil_socket_t fd, short what, void *arg)
{
}

static int
run_until(const int *flag, double secs)
{
	struct event	*timer;
	struct timeval	 tv;

	tv.tv_sec = (time_t)secs;
	tv.tv_usec = (suseconds_t)((secs - tv.tv_sec) * 1e6);
	timer = evtimer_new(base, wake, NULL);
	evtimer_add(timer, &tv);
	while (!*flag && evtimer_pending(timer, NULL))
		event_base_loop(base, EVLOOP_ONCE);
	event_free(timer);
	return *flag;
}

static void
updown(void *arg, int up)
{
	if (up)
		up_seen = 1;
	else
		down_seen = 1;
}

struct req {
	struct batch_run	*run;
	int			 done;
	int			 got_null;
	int			 row;
	char			 val[64];
	int			 ntuples;
	ExecStatusType		 status;
};

struct batch_run {
	int	 done;
	int	 all;
	int	 n;
};

static void
req_cb(void *arg, const PGresult *res, int row)
{
	struct req	*r = arg;

	r->done++;
	r->row = row;
	if (res == NULL)
		r->got_null = 1;
	else {
		r->status = PQresultStatus(res);
		r->ntuples = PQntuples(res);
		if (row >= 0)
			strlcpy(r->val, PQgetvalue(res, row, 0),
			    sizeof(r->val));
	}
	if (++r->run->done == r->run->n)
		r->run->all = 1;
}

static void
blocker_cb(void *arg, const PGresult *res)
{
	*(int *)arg = 1;
}

static const struct db_batch by_id = {
	"select v from batch_t where id = $1 and owner = $2",
	"select v, k_n from unnest($1::text[], $2::text[]) with ordinality "
	"as k(k_id, k_owner, k_n) join batch_t on id = k_id and "
	"owner = k_owner",
	2,
	64,
};

/* The same, held for 30 s by the server: killed in the meantime. */
static const struct db_batch by_id_slow = {
	"select v from batch_t where id = $1 and owner = $2",
	"select v, k_n from unnest($1::text[], $2::text[]) with ordinality "
	"as k(k_id, k_owner, k_n) join batch_t on id = k_id and "
	"owner = k_owner cross join (select pg_sleep(30)) s",
	2,
	64,
};

static struct db *
start_pool(const char *conninfo)
{
	struct db	*db;

	up_seen = down_seen = 0;
	if ((db = db_new(base, conninfo, 1)) == NULL)
		return NULL;
	db_start(db, updown, NULL);
	run_until(&up_seen, 10);
	return db;
}

/*
 * One connection, busy for a moment: the requests queued behind it
 * wait together, and the connection takes them all at once.
 */
static void
queue_behind_blocker(struct db *db, const struct db_batch *b,
    struct batch_run *run, struct req *rq, char ids[][32],
    char owners[][32], int *blocked)
{
	const char	*params[2];
	int		 i;

	db_query(db, "select pg_sleep(0.3)", 0, NULL, blocker_cb, blocked);
	for (i = 0; i < run->n; i++) {
		rq[i].run = run;
		rq[i].row = -2;
		params[0] = ids[i];
		params[1] = owners[i];
		T_OK(db_query_batched(db, b, params, req_cb, &rq[i]) == 0,
		    "request %d queued", i);
	}
}

static void
test_batch(struct db *db)
{
	static struct req	 rq[NREQ];
	struct batch_run	 run = { 0, 0, NREQ };
	char			 ids[NREQ][32], owners[NREQ][32];
	int			 i, blocked = 0, shared = 1, own = 1, once = 1;

	for (i = 0; i < NREQ; i++) {
		snprintf(ids[i], sizeof(ids[i]), "id%d", i);
		snprintf(owners[i], sizeof(owners[i]), "user%d", i % 3);
	}
	/* Another owner's id, a missing id, an id that needs quoting. */
	strlcpy(owners[3], "user1", sizeof(owners[3]));
	strlcpy(ids[5], "nosuch", sizeof(ids[5]));
	strlcpy(ids[7], "a\"b\\c,{d}", sizeof(ids[7]));
	queue_behind_blocker(db, &by_id, &run, rq, ids, owners, &blocked);
	T_EQ_INT(run.done, 0, "no answer from inside db_query_batched()");
	run_until(&run.all, 10);
	T_OK(blocked, "the blocker answered first");
	T_EQ_INT(run.done, NREQ, "every request answered once");
	for (i = 0; i < NREQ; i++) {
		if (rq[i].done != 1)
			once = 0;
		/* Every row but the two that match nothing, each time. */
		if (rq[i].ntuples != NREQ - 2)
			shared = 0;
		if (i == 3 || i == 5 || rq[0].status != PGRES_TUPLES_OK)
			continue;
		if (rq[i].row < 0 || strcmp(rq[i].val, ids[i]) != 0)
			own = 0;
	}
	T_OK(once, "no request answered twice");
	T_OK(shared, "the requests behind the blocker ran as one statement");
	T_OK(own, "each request got its own row");
	T_EQ_INT(rq[3].row, -1, "another owner's id: no row, inside a batch");
	T_EQ_INT(rq[5].row, -1, "a missing id: no row, the others unharmed");
	T_EQ_STR(rq[7].val, ids[7], "an id with quotes, backslash and braces");
}

static void
test_batch_killed(struct db *db, PGconn *admin)
{
	static struct req	 rq[NREQ];
	struct batch_run	 run = { 0, 0, NREQ };
	char			 ids[NREQ][32], owners[NREQ][32];
	int			 i, blocked = 0, never = 0, nulls = 0;
	long			 killed = -1;
	PGresult		*res;

	for (i = 0; i < NREQ; i++) {
		snprintf(ids[i], sizeof(ids[i]), "id%d", i);
		snprintf(owners[i], sizeof(owners[i]), "user%d", i % 3);
	}
	queue_behind_blocker(db, &by_id_slow, &run, rq, ids, owners,
	    &blocked);
	run_until(&blocked, 5);
	run_until(&never, 0.5);
	T_EQ_INT(run.done, 0, "the batch is running");
	res = PQexec(admin, "select count(pg_terminate_backend(pid)) from "
	    "pg_stat_activity where datname = '" SCRATCH "' and "
	    "pid <> pg_backend_pid()");
	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1)
		killed = atol(PQgetvalue(res, 0, 0));
	PQclear(res);
	T_EQ_INT(killed, 1, "the pool's backend terminated mid-batch");
	run_until(&run.all, 5);
	for (i = 0; i < NREQ; i++)
		if (rq[i].done == 1 && rq[i].got_null)
			nulls++;
	T_EQ_INT(nulls, NREQ, "every request of the batch told, none hangs");
}

static char *
scratch_conninfo(PGconn *admin)
{
	PQconninfoOption	*opts, *o;
	char			*buf;
	size_t			 len;
	FILE			*f;
	const char		*v, *p;

	if ((f = open_memstream(&buf, &len)) == NULL)
		return NULL;
	opts = PQconninfo(admin);
	for (o = opts; o != NULL && o->keyword != NULL; o++) {
		v = strcmp(o->keyword, "dbname") == 0 ? SCRATCH : o->val;
		if (v == NULL || *v == '\0')
			continue;
		fprintf(f, "%s='", o->keyword);
		for (p = v; *p != '\0'; p++) {
			if (*p == '\'' || *p == '\\')
				fputc('\\', f);
			fputc(*p, f);
		}
		fprintf(f, "' ");
	}
	PQconninfoFree(opts);
	fclose(f);
	return buf;
}

static int
exec_ok(PGconn *pg, const char *sql)
{
	PGresult	*res = PQexec(pg, sql);
	int		 ok;

	ok = PQresultStatus(res) == PGRES_COMMAND_OK ||
	    PQresultStatus(res) == PGRES_TUPLES_OK;
	if (!ok)
		printf("# %s: %s", sql, PQerrorMessage(pg));
	PQclear(res);
	return ok;
}

static void
quiet_notice(void *arg, const char *msg)
{
}

static int
test_pg(void)
{
	const char	*conninfo = getenv("DEPOT_PG_CONNINFO");
	PGconn		*admin, *pg;
	struct db	*db;
	char		*scratch;

	if (conninfo == NULL || *conninfo == '\0') {
		printf("not ok - DEPOT_PG_CONNINFO not set\n");
		return 1;
	}
	admin = PQconnectdb(conninfo);
	PQsetNoticeProcessor(admin, quiet_notice, NULL);
	T_OK(exec_ok(admin, "drop database if exists " SCRATCH
	    " with (force)") && exec_ok(admin, "create database " SCRATCH),
	    "scratch database created");
	scratch = scratch_conninfo(admin);
	pg = PQconnectdb(scratch);
	T_OK(exec_ok(pg, "create table batch_t (id text primary key, "
	    "owner text not null, v text not null); insert into batch_t "
	    "select 'id' || g, 'user' || (g % 3), 'id' || g from "
	    "generate_series(0, 20) g; insert into batch_t values "
	    "('a\"b\\c,{d}', 'user1', 'a\"b\\c,{d}')"), "table filled");
	PQfinish(pg);
	db = start_pool(scratch);
	T_OK(db != NULL && db_up(db), "pool of one connection up");
	test_batch(db);
	test_batch_killed(db, admin);
	db_free(db);
	exec_ok(admin, "drop database if exists " SCRATCH " with (force)");
	PQfinish(admin);
	free(scratch);
	return t_done();
}

int
main(int argc, char *argv[])
{
	int	rv;

	log_init("test_db_batch", 1, 0);
	if (argc == 2 && strcmp(argv[1], "pg") == 0) {
		if ((base = event_base_new()) == NULL)
			return 1;
		rv = test_pg();
		event_base_free(base);
		return rv;
	}
	test_array();
	test_rows();
	return t_done();
}
