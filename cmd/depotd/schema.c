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
 * schema.c: depotd's database schema as numbered migrations.
 *
 * Migration N is applied in one transaction that holds a transaction
 * scoped advisory lock, so that several depotd hosts starting at once
 * against one database apply each step exactly once.  A migration is
 * never edited once released: changes are new, higher numbers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage_db.h"

#define STR(x)		#x
#define XSTR(x)		STR(x)

const char SCHEMA_BEGIN_SQL[] =
    "begin; "
    "select pg_advisory_xact_lock(" XSTR(SCHEMA_LOCK_KEY) "); "
    "select to_regclass('schema_migrations') is not null";

const char SCHEMA_VERSION_SQL[] =
    "select coalesce(max(version), 0) from schema_migrations";

/*
 * Ids are a type prefix and 128 random bits in hex; the checks keep
 * hand-made rows (depotctl, psql) honest.  files.user_id and
 * files.workspace_id carry no foreign keys: a file outlives the removal
 * of its owner until the sweep reclaims its bytes.
 *
 * files_list serves the keyset listing: equality on user and workspace,
 * then (created_at, id) ordered both ways, one index range scan for any
 * page.  The partial sweep indexes stay small because the rows they
 * cover are few, and their predicates are implied by the branches of
 * the sweep's claim query (deleted; ready and expired; writing and
 * stale) so that it runs as a BitmapOr of three range scans.
 * sweep_claim and sweep_claimed_at let one host claim a batch while it
 * removes the bytes; a claim older than a lapse is taken over.  A
 * sweep_runs row is written when a pass ends, hence finished_at's
 * default.
 */
static const char migration_1[] =
"create table schema_migrations (\n"
"	version		int primary key,\n"
"	applied_at	timestamptz not null default now()\n"
");\n"
"create table workspaces (\n"
"	id		text primary key check (id ~ '^wrk-[0-9a-f]{32}$'),\n"
"	name		text unique not null,\n"
"	created_at	timestamptz not null default now()\n"
");\n"
"create table users (\n"
"	id		text primary key check (id ~ '^usr-[0-9a-f]{32}$'),\n"
"	name		text unique not null,\n"
"	created_at	timestamptz not null default now()\n"
");\n"
"create table api_keys (\n"
"	id		text primary key check (id ~ '^key-[0-9a-f]{32}$'),\n"
"	prefix		text not null check (length(prefix) <= 12),\n"
"	token_sha256	text unique not null\n"
"			    check (token_sha256 ~ '^[0-9a-f]{64}$'),\n"
"	user_id		text not null references users,\n"
"	workspace_id	text not null references workspaces,\n"
"	label		text,\n"
"	created_at	timestamptz not null default now(),\n"
"	expires_at	timestamptz,\n"
"	revoked_at	timestamptz\n"
");\n"
"create index api_keys_user on api_keys (user_id);\n"
"create index api_keys_workspace on api_keys (workspace_id);\n"
"create table files (\n"
"	id		text primary key,\n"
"	user_id		text not null,\n"
"	workspace_id	text not null,\n"
"	filename	text not null,\n"
"	mime_type	text not null,\n"
"	bytes		bigint check (bytes >= 0),\n"
"	sha256		text,\n"
"	purpose		text not null,\n"
"	source		text not null\n"
"			    check (source in ('upload', 'code_execution_output')),\n"
"	storage_ref	text not null,\n"
"	state		text not null check (state in ('writing', 'ready')),\n"
"	created_at	timestamptz not null default clock_timestamp(),\n"
"	expires_at	timestamptz,\n"
"	deleted_at	timestamptz,\n"
"	updated_at	timestamptz not null default clock_timestamp(),\n"
"	sweep_claim	text,\n"
"	sweep_claimed_at timestamptz\n"
");\n"
"create index files_list on files (user_id, workspace_id, created_at, id)\n"
"    where state = 'ready' and deleted_at is null;\n"
"create index files_sweep_deleted on files (deleted_at)\n"
"    where deleted_at is not null;\n"
"create index files_sweep_expired on files (expires_at)\n"
"    where state = 'ready' and expires_at is not null;\n"
"create index files_sweep_writing on files (updated_at)\n"
"    where state = 'writing';\n"
"create table sweep_runs (\n"
"	id		bigint generated always as identity primary key,\n"
"	host		text not null,\n"
"	started_at	timestamptz not null default now(),\n"
"	finished_at	timestamptz not null default now(),\n"
"	removed		int not null default 0,\n"
"	failed		int not null default 0\n"
");\n"
"create index sweep_runs_finished on sweep_runs (finished_at);\n";

/*
 * Containers (issue 20): a sandbox session kept across requests,
 * owned like a file.  session_id is the backend's, null until the
 * first run made one.  Live means state 'running' and neither idle
 * past expires_minutes since last_active_at nor past expires_at (the
 * maximum lifetime): the queries test that, so that expiry holds at
 * request time whatever the sweep has done yet.  containers_live
 * serves the caps and the listing; containers_sweep the sweep.
 */
static const char migration_2[] =
"create table containers (\n"
"	id		text primary key check (id ~ '^cntr_[0-9a-f]{32}$'),\n"
"	user_id		text not null,\n"
"	workspace_id	text not null,\n"
"	key_id		text not null,\n"
"	name		text not null,\n"
"	backend		text not null,\n"
"	session_id	text,\n"
"	memory_limit	text not null,\n"
"	expires_minutes	int not null check (expires_minutes > 0),\n"
"	state		text not null\n"
"			    check (state in ('running', 'expired', 'deleted')),\n"
"	created_at	timestamptz not null default clock_timestamp(),\n"
"	last_active_at	timestamptz not null default clock_timestamp(),\n"
"	expires_at	timestamptz not null,\n"
"	ended_at	timestamptz\n"
");\n"
"create index containers_list on containers\n"
"    (user_id, workspace_id, created_at, id) where state <> 'deleted';\n"
"create index containers_key on containers (key_id)\n"
"    where state = 'running';\n"
"create index containers_sweep on containers (last_active_at)\n"
"    where state = 'running';\n";


/*
 * Limits and usage (issue 21).  key_limits holds a key's own limits
 * over limits { } (null: the default; 0: none).  limit_windows is the
 * usage of a key's windows that every host sharing the database sees:
 * each storage helper adds what it settled, in batches, and reads the
 * sum back (storage_limits.c); period is 'minute', 'day' or 'month',
 * window_start the window's UTC start.  usage holds one row per model
 * request, written in batches; usage_time serves depotctl usage and
 * the pruning of old windows.
 */
static const char migration_3[] =
"create table key_limits (\n"
"	key_id		text primary key references api_keys on delete cascade,\n"
"	requests_per_minute bigint check (requests_per_minute >= 0),\n"
"	tokens_per_minute bigint check (tokens_per_minute >= 0),\n"
"	concurrency	bigint check (concurrency >= 0),\n"
"	tokens_per_day	bigint check (tokens_per_day >= 0),\n"
"	tokens_per_month bigint check (tokens_per_month >= 0),\n"
"	updated_at	timestamptz not null default now()\n"
");\n"
"create table limit_windows (\n"
"	key_id		text not null,\n"
"	period		text not null check (period in ('minute', 'day', 'month')),\n"
"	window_start	timestamptz not null,\n"
"	requests	bigint not null default 0,\n"
"	tokens		bigint not null default 0,\n"
"	primary key (key_id, period, window_start)\n"
");\n"
"create table usage (\n"
"	id		bigint generated always as identity primary key,\n"
"	key_id		text not null,\n"
"	user_id		text not null,\n"
"	workspace_id	text not null,\n"
"	model		text not null,\n"
"	replica		text not null,\n"
"	tokens_in	bigint,\n"
"	tokens_out	bigint,\n"
"	status		int not null,\n"
"	ttfb_us		bigint,\n"
"	duration_us	bigint not null,\n"
"	host		text not null,\n"
"	at		timestamptz not null\n"
");\n"
"create index usage_time on usage (at);\n"
"create index usage_key on usage (key_id, at);\n";

static const char *const migrations[] = {
	migration_1,
	migration_2,
	migration_3,
};

int
db_schema_version(void)
{
	return sizeof(migrations) / sizeof(migrations[0]);
}

/*
 * The step records its own version and commits, so that the schema
 * change and its record land together or not at all.
 */
char *
schema_step_sql(int version)
{
	char	*sql;

	if (version < 1 || version > db_schema_version())
		return NULL;
	if (asprintf(&sql, "%s\n"
	    "insert into schema_migrations (version) values (%d);\n"
	    "commit", migrations[version - 1], version) == -1)
		return NULL;
	return sql;
}

/*
 * The same migrations, applied on one blocking connection (tests and
 * tools): the pool in storage_db.c applies them asynchronously.
 */
static PGresult *
db_exec_ok(PGconn *pg, const char *sql, char *err, size_t errlen)
{
	PGresult	*res;

	res = PQexec(pg, sql);
	if (PQresultStatus(res) == PGRES_COMMAND_OK ||
	    PQresultStatus(res) == PGRES_TUPLES_OK)
		return res;
	snprintf(err, errlen, "%s", res != NULL ?
	    PQresultErrorMessage(res) : PQerrorMessage(pg));
	PQclear(res);
	PQclear(PQexec(pg, "rollback"));
	return NULL;
}

/* The schema version inside the locked transaction, or -1. */
static int
db_sync_version(PGconn *pg, char *err, size_t errlen)
{
	PGresult	*res;
	int		 exists, version;

	if ((res = db_exec_ok(pg, SCHEMA_BEGIN_SQL, err, errlen)) == NULL)
		return -1;
	exists = PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	if (!exists)
		return 0;
	if ((res = db_exec_ok(pg, SCHEMA_VERSION_SQL, err, errlen)) == NULL)
		return -1;
	version = atoi(PQgetvalue(res, 0, 0));
	PQclear(res);
	return version;
}

int
db_migrate_sync(PGconn *pg, char *err, size_t errlen)
{
	PGresult	*res;
	char		*sql;
	int		 current;

	for (;;) {
		if ((current = db_sync_version(pg, err, errlen)) == -1)
			return -1;
		if (current > db_schema_version()) {
			snprintf(err, errlen, "schema version %d is newer than "
			    "this depotd knows (%d)", current,
			    db_schema_version());
			PQclear(PQexec(pg, "rollback"));
			return -1;
		}
		if (current == db_schema_version()) {
			if ((res = db_exec_ok(pg, "commit", err, errlen)) ==
			    NULL)
				return -1;
			PQclear(res);
			return 0;
		}
		if ((sql = schema_step_sql(current + 1)) == NULL) {
			snprintf(err, errlen, "out of memory");
			PQclear(PQexec(pg, "rollback"));
			return -1;
		}
		res = db_exec_ok(pg, sql, err, errlen);
		free(sql);
		if (res == NULL)
			return -1;
		PQclear(res);
	}
}
