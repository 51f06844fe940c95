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
 * storage_db.h: PostgreSQL for the storage helper, asynchronous on libevent.
 *
 * A small pool of non-blocking libpq connections.  Queries are queued
 * and handed to the next idle connection; each runs as one
 * PQsendQueryParams with text parameters and results.  When the server
 * goes away the pool reconnects with exponential backoff (0.5 s to
 * 30 s); meanwhile db_up() is false and new queries fail at once.
 * At the first successful connection the compiled-in migrations are
 * applied under an advisory lock, asynchronously like any query, so a
 * slow lock holder (another host migrating) never stalls the loop;
 * queries are dispatched only once they are applied.
 *
 * Callbacks run from the event loop, never from inside db_query().
 * db_free() must not be called from a callback; it drops queued
 * queries without calling them.
 */
#ifndef DEPOTD_STORAGE_DB_H
#define DEPOTD_STORAGE_DB_H

#include <libpq-fe.h>
#include <event2/event.h>

struct db;

/*
 * res is NULL when the query could not run (database down, connection
 * lost); otherwise the caller inspects PQresultStatus.  The result is
 * freed when the callback returns.
 */
typedef void	(*db_cb)(void *arg, const PGresult *res);

struct db	*db_new(struct event_base *, const char *conninfo, int poolsize);
/* Starts connecting; up/down changes are reported to the callback. */
void		 db_start(struct db *, void (*)(void *, int up), void *);
int		 db_up(const struct db *);
/*
 * Queues sql with nparams text parameters (NULL for SQL NULL).  The
 * strings are copied.  Returns 0, or -1 when the database is down (the
 * callback is then not called).
 */
int		 db_query(struct db *, const char *sql, int nparams,
		    const char *const *params, db_cb, void *arg);

/*
 * A query many requests may share.  When several of the same batch
 * wait in the queue together, the connection that takes the first
 * takes the others too (up to max) and runs them as one statement,
 * many; a query that waits alone runs as one, unchanged.  one has
 * nparams text parameters; many has nparams text arrays, element i of
 * each being that parameter of the i-th request, and must give in its
 * last column the 1-based position of the request each row answers
 * (unnest ... with ordinality), at most one row per request.  Every
 * check a request's own parameters make in one must stay in many, per
 * row: batching changes how many statements run, not what each
 * request may see.
 */
struct db_batch {
	const char	*one;
	const char	*many;
	int		 nparams;
	int		 max;
};
/*
 * row is the request's row of res, -1 when it has none; res is NULL
 * when the query could not run, as for db_cb.
 */
typedef void	(*db_row_cb)(void *arg, const PGresult *res, int row);
int		 db_query_batched(struct db *, const struct db_batch *,
		    const char *const *params, db_row_cb, void *arg);
void		 db_free(struct db *);

/* storage_db_query.c: for storage_db.c */
char		*db_batch_array(const char *const *vals, int n);
void		 db_batch_rows(const PGresult *, int n, int *rows);

/* Applies the migrations over a blocking connection (depotctl, tests). */
int		 db_migrate_sync(PGconn *, char *err, size_t errlen);
int		 db_schema_version(void);

/*
 * schema.c: the numbered migrations and the statements that apply them,
 * shared by the asynchronous pool and db_migrate_sync().  Applying one
 * step is: SCHEMA_BEGIN_SQL (its last result says whether
 * schema_migrations exists), SCHEMA_VERSION_SQL when it does, then
 * either "commit" (up to date), "rollback" (newer than this binary) or
 * schema_step_sql(current + 1), which ends with its own commit.
 */
#define SCHEMA_LOCK_KEY		7234312000436973617	/* "depotd01" in ASCII */
extern const char	 SCHEMA_BEGIN_SQL[];
extern const char	 SCHEMA_VERSION_SQL[];
/* The malloc'd text of migration version, or NULL. */
char		*schema_step_sql(int version);

#endif
