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
 * test_db.c: the database layer against a real PostgreSQL.
 *
 *	test_db			migrations, the pool, errors, a killed
 *				backend, the keyset plan
 *	test_db restart FILE	connects, creates FILE, then expects the
 *				server to go away and come back (suite.sh
 *				restarts it) within 20 s each
 *
 * DEPOT_PG_CONNINFO names a database this test may use to create and
 * drop its scratch database, depot_test_db.
 */
#include <sys/time.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <libpq-fe.h>

#include "log.h"
#include "storage_db.h"
#include "t.h"

#define SCRATCH		"depot_test_db"
#define NQUERIES	200

static struct event_base	*base;
static int			 up_state = -1, up_changes, down_seen, up_seen;

static void
wake(evutil_socket_t fd, short what, void *arg)
{
}

/* Runs the loop until *flag is set or secs pass; returns *flag. */
static int
run_until(const int *flag, double secs)
{
	struct event	*timer;
	struct timeval	 tv;
	int		 expired = 0;

	tv.tv_sec = (time_t)secs;
	tv.tv_usec = (suseconds_t)((secs - tv.tv_sec) * 1e6);
	timer = evtimer_new(base, wake, NULL);
	evtimer_add(timer, &tv);
	while (!*flag && !expired) {
		event_base_loop(base, EVLOOP_ONCE);
		expired = !evtimer_pending(timer, NULL);
	}
	event_free(timer);
	return *flag;
}

static void
updown(void *arg, int up)
{
	up_state = up;
	up_changes++;
	if (up)
		up_seen = 1;
	else
		down_seen = 1;
}

/* conninfo of the admin connection with another dbname, quoted. */
static char *
conninfo_for(PGconn *admin, const char *dbname)
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
		v = strcmp(o->keyword, "dbname") == 0 ? dbname : o->val;
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

/* For statements that must fail: says nothing when they do. */
static int
exec_fails(PGconn *pg, const char *sql)
{
	PGresult	*res = PQexec(pg, sql);
	int		 failed;

	failed = PQresultStatus(res) == PGRES_FATAL_ERROR;
	PQclear(res);
	return failed;
}

static long
exec_long(PGconn *pg, const char *sql)
{
	PGresult	*res = PQexec(pg, sql);
	long		 v = -1;

	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 &&
	    !PQgetisnull(res, 0, 0))
		v = atol(PQgetvalue(res, 0, 0));
	else
		printf("# %s: %s", sql, PQerrorMessage(pg));
	PQclear(res);
	return v;
}

static void
quiet_notice(void *arg, const char *msg)
{
}

static int
recreate_scratch(PGconn *admin)
{
	return exec_ok(admin, "drop database if exists " SCRATCH
	    " with (force)") &&
	    exec_ok(admin, "create database " SCRATCH);
}

static void
count_up(void *arg, int up)
{
	if (up)
		(*(int *)arg)++;
}

/* The pool never comes up on a schema newer than it knows. */
static void
test_pool_refuses_newer(const char *scratch)
{
	struct db	*db;
	int		 ups = 0;

	db = db_new(base, scratch, 2);
	db_start(db, count_up, &ups);
	run_until(&ups, 1.5);
	T_OK(ups == 0 && !db_up(db), "pool stays down on a newer schema");
	db_free(db);
}

/* Two pools (two hosts) migrating one fresh database at once. */
static void
test_concurrent_migration(PGconn *admin, const char *scratch)
{
	struct db	*a, *b;
	PGconn		*pg;
	int		 ups_a = 0, ups_b = 0, never = 0, i;

	T_OK(recreate_scratch(admin), "scratch database recreated");
	a = db_new(base, scratch, 3);
	b = db_new(base, scratch, 3);
	db_start(a, count_up, &ups_a);
	db_start(b, count_up, &ups_b);
	for (i = 0; i < 100 && !(ups_a && ups_b); i++)
		run_until(&never, 0.1);
	T_OK(db_up(a) && db_up(b), "both pools up after migrating together");
	pg = PQconnectdb(scratch);
	T_EQ_INT(exec_long(pg, "select count(*) from schema_migrations"),
	    db_schema_version(), "each migration applied once");
	PQfinish(pg);
	db_free(a);
	db_free(b);
}

static void
test_migrate_sync(PGconn *admin, const char *scratch)
{
	PGconn	*pg;
	char	 err[256];
	long	 applied;
	int	 n = db_schema_version();

	T_OK(recreate_scratch(admin), "scratch database created");
	pg = PQconnectdb(scratch);
	T_EQ_INT(PQstatus(pg), CONNECTION_OK, "blocking connection");
	T_OK(n >= 1, "at least one migration compiled in");
	err[0] = '\0';
	T_EQ_INT(db_migrate_sync(pg, err, sizeof(err)), 0, "migrations apply");
	T_EQ_STR(err, "", "no error message");
	T_EQ_INT(exec_long(pg, "select max(version) from schema_migrations"),
	    n, "version recorded");
	applied = exec_long(pg, "select extract(epoch from max(applied_at))"
	    "::bigint * 1000000 + extract(microseconds from max(applied_at))"
	    "::bigint % 1000000 from schema_migrations");
	T_EQ_INT(db_migrate_sync(pg, err, sizeof(err)), 0,
	    "second run succeeds");
	T_EQ_INT(exec_long(pg, "select count(*) from schema_migrations"), n,
	    "second run adds no version");
	T_EQ_INT(exec_long(pg, "select extract(epoch from max(applied_at))"
	    "::bigint * 1000000 + extract(microseconds from max(applied_at))"
	    "::bigint % 1000000 from schema_migrations"), applied,
	    "second run rewrites nothing");
	T_EQ_INT(exec_long(pg, "select count(*) from pg_class where relname in"
	    " ('workspaces', 'users', 'api_keys', 'files', 'sweep_runs',"
	    " 'files_list') and relnamespace = 'public'::regnamespace"), 6,
	    "tables and the list index exist");
	T_EQ_INT(PQtransactionStatus(pg), PQTRANS_IDLE,
	    "no transaction left open");

	T_OK(exec_ok(pg, "insert into schema_migrations (version) values"
	    " (100000)"), "a future version recorded");
	T_EQ_INT(db_migrate_sync(pg, err, sizeof(err)), -1,
	    "a newer schema is refused");
	T_OK(strstr(err, "newer") != NULL, "error says why: %s", err);
	T_EQ_INT(PQtransactionStatus(pg), PQTRANS_IDLE,
	    "refusal rolls back");
	test_pool_refuses_newer(scratch);
	T_OK(exec_ok(pg, "delete from schema_migrations where version ="
	    " 100000"), "future version removed");
	T_OK(exec_fails(pg, "insert into files (id, user_id, workspace_id,"
	    " filename, mime_type, purpose, source, storage_ref, state) values"
	    " ('f', 'u', 'w', 'n', 'm', 'p', 'elsewhere', 'r', 'ready')"),
	    "files.source is checked");
	T_OK(exec_fails(pg, "insert into users (id, name) values ('bob', 'b')"),
	    "user ids are checked");
	PQfinish(pg);
}

struct seq_state {
	int	 done;
	int	 all;
	int	 ok;
	int	 order_ok;
	int	 values_ok;
	int	 pids[8];
	int	 last_seq[8];
	int	 npids;
};

struct seq_query {
	struct seq_state	*st;
	int			 seq;
};

static void
seq_cb(void *arg, const PGresult *res)
{
	struct seq_query	*q = arg;
	struct seq_state	*st = q->st;
	int			 pid, i;

	if (++st->done == NQUERIES)
		st->all = 1;
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
		st->ok = 0;
		return;
	}
	if (atoi(PQgetvalue(res, 0, 0)) != q->seq * 7)
		st->values_ok = 0;
	pid = atoi(PQgetvalue(res, 0, 1));
	for (i = 0; i < st->npids && st->pids[i] != pid; i++)
		;
	if (i == st->npids) {
		if (st->npids == 8) {
			st->ok = 0;
			return;
		}
		st->pids[st->npids] = pid;
		st->last_seq[st->npids++] = -1;
	}
	if (q->seq <= st->last_seq[i])
		st->order_ok = 0;
	st->last_seq[i] = q->seq;
}

static void
test_concurrent(struct db *db)
{
	static struct seq_query	 qs[NQUERIES];
	struct seq_state	 st = { .ok = 1, .order_ok = 1, .values_ok = 1 };
	char			 num[16];
	const char		*params[1] = { num };
	int			 i, queued = 0;

	for (i = 0; i < NQUERIES; i++) {
		qs[i].st = &st;
		qs[i].seq = i;
		snprintf(num, sizeof(num), "%d", i);
		if (db_query(db, "select $1::int * 7, pg_backend_pid(),"
		    " pg_sleep(0.001)", 1, params, seq_cb, &qs[i]) == 0)
			queued++;
	}
	T_EQ_INT(queued, NQUERIES, "200 queries queued");
	/* Nothing may answer from inside db_query(). */
	T_EQ_INT(st.done, 0, "no callback before the loop runs");
	run_until(&st.all, 20);
	T_EQ_INT(st.done, NQUERIES, "all 200 callbacks delivered");
	T_OK(st.ok, "all succeeded");
	T_OK(st.values_ok, "each got its own parameter back");
	T_OK(st.order_ok, "in queue order on each connection");
	T_OK(st.npids > 1, "spread over %d connections", st.npids);
}

struct one {
	int		 done;
	int		 got_null;
	ExecStatusType	 status;
	char		 sqlstate[8];
	char		*values[8];
	int		 isnull[8];
	int		 ncols;
	char		*plan;
};

static void
one_cb(void *arg, const PGresult *res)
{
	struct one	*o = arg;
	const char	*s;
	size_t		 len = 0;
	int		 i;
	FILE		*f;

	o->done = 1;
	if (res == NULL) {
		o->got_null = 1;
		return;
	}
	o->status = PQresultStatus(res);
	if ((s = PQresultErrorField(res, PG_DIAG_SQLSTATE)) != NULL)
		strlcpy(o->sqlstate, s, sizeof(o->sqlstate));
	if (o->status != PGRES_TUPLES_OK || PQntuples(res) < 1)
		return;
	o->ncols = PQnfields(res) < 8 ? PQnfields(res) : 8;
	for (i = 0; i < o->ncols; i++) {
		o->isnull[i] = PQgetisnull(res, 0, i);
		o->values[i] = strdup(PQgetvalue(res, 0, i));
	}
	if ((f = open_memstream(&o->plan, &len)) == NULL)
		return;
	for (i = 0; i < PQntuples(res); i++)
		fprintf(f, "%s\n", PQgetvalue(res, i, 0));
	fclose(f);
}

static void
one_clear(struct one *o)
{
	int	i;

	for (i = 0; i < 8; i++)
		free(o->values[i]);
	free(o->plan);
	memset(o, 0, sizeof(*o));
}

static void
test_params(struct db *db)
{
	struct one	 o = { 0 };
	const char	*params[4] = {
		"it's a \"quote\"; drop table files; --",
		NULL,
		"back\\slash \xc3\xa9t\xc3\xa9 $1",
		"",
	};

	T_EQ_INT(db_query(db, "select $1::text, $2::text, $3::text, $4::text,"
	    " $2 is null", 4, params, one_cb, &o), 0, "query queued");
	run_until(&o.done, 5);
	T_EQ_INT(o.status, PGRES_TUPLES_OK, "parameter query ran");
	T_EQ_STR(o.values[0], params[0], "quotes round trip");
	T_OK(o.isnull[1], "NULL round trips as NULL");
	T_EQ_STR(o.values[2], params[2], "backslash and UTF-8 round trip");
	T_OK(o.values[3] != NULL && !o.isnull[3] && *o.values[3] == '\0',
	    "empty string stays empty, not NULL");
	T_EQ_STR(o.values[4], "t", "server saw the NULL");
	one_clear(&o);
}

static void
test_error(struct db *db)
{
	struct one	o = { 0 };

	T_EQ_INT(db_query(db, "select 1 / 0", 0, NULL, one_cb, &o), 0,
	    "failing query queued");
	run_until(&o.done, 5);
	T_OK(o.done && !o.got_null, "error delivered as a result");
	T_EQ_INT(o.status, PGRES_FATAL_ERROR, "status PGRES_FATAL_ERROR");
	T_EQ_STR(o.sqlstate, "22012", "division by zero sqlstate");
	one_clear(&o);
	T_OK(db_up(db), "database still up after a query error");
	T_EQ_INT(db_query(db, "select 42", 0, NULL, one_cb, &o), 0,
	    "next query queued");
	run_until(&o.done, 5);
	T_EQ_STR(o.values[0], "42", "connection usable after the error");
	one_clear(&o);
}

static void
test_kill(struct db *db, PGconn *admin, PGconn *bystander)
{
	struct one	 o = { 0 }, after = { 0 }, more[4];
	char		 sql[256];
	int		 never = 0, up_again, i, nulls = 0;
	long		 killed;

	memset(more, 0, sizeof(more));
	T_EQ_INT(db_query(db, "select pg_sleep(30)", 0, NULL, one_cb, &o), 0,
	    "long query queued");
	/* Three more busy the pool; the last one waits in the queue. */
	for (i = 0; i < 4; i++)
		db_query(db, "select pg_sleep(30)", 0, NULL, one_cb, &more[i]);
	run_until(&never, 0.5);
	down_seen = 0;
	snprintf(sql, sizeof(sql), "select count(pg_terminate_backend(pid))"
	    " from pg_stat_activity where datname = '" SCRATCH "'"
	    " and pid <> pg_backend_pid() and pid <> %d",
	    PQbackendPID(bystander));
	killed = exec_long(admin, sql);
	T_EQ_INT(killed, 4, "every pool backend terminated");
	run_until(&o.done, 5);
	T_OK(o.done && o.got_null, "in-flight query gets res NULL");
	run_until(&down_seen, 5);
	T_OK(down_seen, "database reported down");
	run_until(&more[3].done, 2);
	for (i = 0; i < 4; i++)
		if (more[i].done && more[i].got_null)
			nulls++;
	T_EQ_INT(nulls, 4, "other in-flight and queued queries get NULL");
	for (i = 0; i < 4; i++)
		one_clear(&more[i]);
	T_EQ_INT(db_query(db, "select 1", 0, NULL, one_cb, &after), -1,
	    "queries refused while down");
	up_seen = 0;
	run_until(&up_seen, 10);
	up_again = up_state == 1;
	T_OK(up_again && db_up(db), "database back up by itself");
	T_EQ_INT(db_query(db, "select 'again'", 0, NULL, one_cb, &after), 0,
	    "query after reconnect queued");
	run_until(&after.done, 5);
	T_EQ_STR(after.values[0], "again", "query after reconnect answered");
	one_clear(&o);
	one_clear(&after);
}

/* The sweep's claim query finds its rows through the partial indexes. */
static void
check_sweep_plan(PGconn *pg)
{
	PGresult	*res;
	char		*plan;
	size_t		 len;
	FILE		*f;
	int		 i;

	res = PQexec(pg, "explain select id from files where"
	    " (deleted_at is not null or (state = 'ready' and"
	    " expires_at <= now()) or (state = 'writing' and updated_at <"
	    " now() - interval '1 hour')) for update skip locked");
	T_EQ_INT(PQresultStatus(res), PGRES_TUPLES_OK, "sweep explain ran");
	if ((f = open_memstream(&plan, &len)) == NULL)
		return;
	for (i = 0; i < PQntuples(res); i++)
		fprintf(f, "%s\n", PQgetvalue(res, i, 0));
	fclose(f);
	PQclear(res);
	T_OK(strstr(plan, "Seq Scan") == NULL &&
	    strstr(plan, "files_sweep_deleted") != NULL &&
	    strstr(plan, "files_sweep_expired") != NULL &&
	    strstr(plan, "files_sweep_writing") != NULL,
	    "sweep candidates come from the three sweep indexes");
	printf("# %s", plan);
	free(plan);
}

static void
check_plan(struct db *db, const char *sql, const char *what)
{
	struct one	 o = { 0 };
	const char	*params[4] = {
		"usr-3", "wrk-1", "2026-01-01 00:00:00+00", "file-010000",
	};

	T_EQ_INT(db_query(db, sql, 4, params, one_cb, &o), 0, "explain queued");
	run_until(&o.done, 10);
	T_EQ_INT(o.status, PGRES_TUPLES_OK, "explain ran");
	T_OK(o.plan != NULL && strstr(o.plan, "Index Scan") != NULL &&
	    strstr(o.plan, "using files_list") != NULL, "%s uses files_list",
	    what);
	T_OK(o.plan != NULL && strstr(o.plan, "Seq Scan") == NULL &&
	    strstr(o.plan, "Sort") == NULL && strstr(o.plan, "Filter") == NULL,
	    "%s: one range scan, no sort, no filter", what);
	if (o.plan != NULL)
		printf("# %s", o.plan);
	one_clear(&o);
}

static void
test_keyset_plan(struct db *db, PGconn *pg)
{
	T_OK(exec_ok(pg, "insert into files (id, user_id, workspace_id,"
	    " filename, mime_type, bytes, purpose, source, storage_ref, state,"
	    " created_at, deleted_at) select"
	    " 'file-' || lpad(i::text, 6, '0'), 'usr-' || (i % 10),"
	    " 'wrk-' || (i % 2), 'f.txt', 'text/plain', 1, 'user_data',"
	    " 'upload', 'ref', case when i % 50 = 0 then 'writing' else 'ready'"
	    " end, timestamptz '2026-01-01' + (i % 5000) * interval '1 minute'"
	    " - interval '2 days', case when i % 70 = 0 then now() end"
	    " from generate_series(1, 20000) i"), "20000 rows inserted");
	T_OK(exec_ok(pg, "analyze files"), "analyzed");
	check_plan(db, "explain select * from files where user_id = $1"
	    " and workspace_id = $2 and state = 'ready' and deleted_at is null"
	    " and (created_at, id) < ($3::timestamptz, $4)"
	    " order by created_at desc, id desc limit 20", "descending page");
	check_plan(db, "explain select * from files where user_id = $1"
	    " and workspace_id = $2 and state = 'ready' and deleted_at is null"
	    " and (created_at, id) > ($3::timestamptz, $4)"
	    " order by created_at, id limit 20", "ascending page");
	check_sweep_plan(pg);
}

static int
count_substr(const char *hay, const char *needle)
{
	int	n = 0;

	while ((hay = strstr(hay, needle)) != NULL) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

/*
 * Failed attempts are logged, never with the password, and retried
 * after 0.5 s, 1 s, 2 s (each give or take a quarter): 3 or 4 attempts
 * fit in 3.2 s, where a fixed or missing backoff would make more.
 */
static void
test_backoff_and_log(void)
{
	struct db	*db;
	char		 path[] = "/tmp/test_db.XXXXXX", buf[16384];
	ssize_t		 n;
	int		 fd, saved, never = 0, attempts;

	if ((fd = mkstemp(path)) == -1)
		return;
	unlink(path);
	fflush(stderr);
	saved = dup(2);
	dup2(fd, 2);
	log_setverbose(2);
	db = db_new(base, "host=/nonexistent/dir port=1 user=nobody"
	    " password=Sekr1tPassw0rd dbname=none", 1);
	db_start(db, updown, NULL);
	run_until(&never, 3.2);
	T_OK(!db_up(db), "no database behind a bogus conninfo");
	db_free(db);
	log_setverbose(0);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	attempts = count_substr(buf, "cannot connect");
	T_OK(attempts >= 3 && attempts <= 4,
	    "exponential backoff: %d attempts in 3.2 s", attempts);
	T_OK(strstr(buf, "Sekr1tPassw0rd") == NULL,
	    "the password never reaches the log");
}

static struct db *
start_pool(const char *conninfo, int size)
{
	struct db	*db;

	up_state = -1;
	up_changes = up_seen = 0;
	if ((db = db_new(base, conninfo, size)) == NULL)
		return NULL;
	db_start(db, updown, NULL);
	run_until(&up_seen, 10);
	return db;
}

static int
test_main(PGconn *admin, const char *scratch)
{
	struct db	*db;
	PGconn		*pg;
	struct one	 o = { 0 };

	test_migrate_sync(admin, scratch);
	test_backoff_and_log();
	test_concurrent_migration(admin, scratch);

	T_OK(recreate_scratch(admin), "scratch database recreated");
	db = start_pool(scratch, 4);
	T_OK(db != NULL, "pool created");
	T_EQ_INT(up_state, 1, "up callback fired with 1");
	T_OK(db_up(db), "db_up after the asynchronous migration");
	T_EQ_INT(db_query(db, "select 1", 0, NULL, one_cb, &o), 0,
	    "queries accepted when up");
	run_until(&o.done, 5);
	T_EQ_STR(o.values[0], "1", "first query answered");
	one_clear(&o);
	pg = PQconnectdb(scratch);
	T_EQ_INT(exec_long(pg, "select max(version) from schema_migrations"),
	    db_schema_version(), "pool recorded the version");

	test_concurrent(db);
	test_params(db);
	test_error(db);
	test_keyset_plan(db, pg);
	test_kill(db, admin, pg);
	T_EQ_INT(exec_long(pg, "select 5"), 5, "other clients unaffected");
	PQfinish(pg);
	db_free(db);
	return t_done();
}

/* Waits for the server to leave and return, as suite.sh arranges. */
static int
test_restart(const char *scratch, const char *ready)
{
	struct db	*db;
	struct one	 o = { 0 };
	FILE		*f;
	int		 before;

	db = start_pool(scratch, 2);
	T_OK(db != NULL && db_up(db), "pool up before the restart");
	if ((f = fopen(ready, "w")) != NULL)
		fclose(f);
	down_seen = 0;
	run_until(&down_seen, 20);
	T_OK(down_seen, "server stop noticed");
	T_EQ_INT(db_query(db, "select 1", 0, NULL, one_cb, &o), -1,
	    "queries refused while the server is away");
	before = up_changes;
	up_seen = 0;
	run_until(&up_seen, 20);
	T_OK(up_state == 1 && db_up(db), "reconnected after the restart");
	T_OK(up_changes > before, "up callback fired again");
	T_EQ_INT(db_query(db, "select 'back'", 0, NULL, one_cb, &o), 0,
	    "query queued after the restart");
	run_until(&o.done, 5);
	T_EQ_STR(o.values[0], "back", "query answered after the restart");
	one_clear(&o);
	db_free(db);
	return t_done();
}

int
main(int argc, char *argv[])
{
	const char	*conninfo = getenv("DEPOT_PG_CONNINFO");
	PGconn		*admin;
	char		*scratch;
	int		 rv;

	if (conninfo == NULL || *conninfo == '\0') {
		printf("not ok - DEPOT_PG_CONNINFO not set\n");
		return 1;
	}
	log_init("test_db", 1, 0);
	if ((base = event_base_new()) == NULL)
		return 1;
	admin = PQconnectdb(conninfo);
	if (PQstatus(admin) != CONNECTION_OK) {
		printf("not ok - cannot connect: %s", PQerrorMessage(admin));
		return 1;
	}
	PQsetNoticeProcessor(admin, quiet_notice, NULL);
	if ((scratch = conninfo_for(admin, SCRATCH)) == NULL)
		return 1;
	if (argc == 3 && strcmp(argv[1], "restart") == 0) {
		PQfinish(admin);
		rv = test_restart(scratch, argv[2]);
	} else {
		rv = test_main(admin, scratch);
		PQfinish(admin);
	}
	free(scratch);
	event_base_free(base);
	return rv;
}
