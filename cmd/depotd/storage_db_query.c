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
 * storage_db_query.c: the queries storage_db.c queues: made, batched,
 * answered and freed here, sent and received there.
 *
 * A batch runs the queries of several requests as one statement: each
 * parameter becomes a PostgreSQL array literal of that parameter of
 * every request, in order, and each row of the answer names the
 * request it belongs to by its 1-based position in its last column.
 * Nothing here touches a connection or the event loop.
 */
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "log.h"
#include "storage_db.h"
#include "storage_db_int.h"

/* Quoted, with " and \ escaped: an element may hold anything. */
static size_t
db_batch_element(char *out, const char *s)
{
	size_t	 n = 0;

	if (s == NULL) {
		if (out != NULL)
			memcpy(out, "NULL", 4);
		return 4;
	}
	if (out != NULL)
		out[n] = '"';
	n++;
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\') {
			if (out != NULL)
				out[n] = '\\';
			n++;
		}
		if (out != NULL)
			out[n] = *s;
		n++;
	}
	if (out != NULL)
		out[n] = '"';
	return n + 1;
}

/*
 * The array literal {"a","b",NULL} of vals[0..n-1], malloc'd, or NULL
 * when out of memory.  Measured first, then written: one allocation.
 */
char *
db_batch_array(const char *const *vals, int n)
{
	char	*buf;
	size_t	 len = 2, off;
	int	 i;

	for (i = 0; i < n; i++)
		len += db_batch_element(NULL, vals[i]) + (i > 0);
	if ((buf = malloc(len + 1)) == NULL)
		return NULL;
	buf[0] = '{';
	off = 1;
	for (i = 0; i < n; i++) {
		if (i > 0)
			buf[off++] = ',';
		off += db_batch_element(buf + off, vals[i]);
	}
	buf[off++] = '}';
	buf[off] = '\0';
	return buf;
}

/*
 * Fills rows[0..n-1] with the row of res that answers each request, -1
 * for none.  A position out of range or given twice is the statement's
 * mistake: the later row is ignored rather than trusted.
 */
void
db_batch_rows(const PGresult *res, int n, int *rows)
{
	const char	*v;
	char		*end;
	long		 pos;
	int		 i, last;

	for (i = 0; i < n; i++)
		rows[i] = -1;
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK ||
	    PQnfields(res) < 1)
		return;
	last = PQnfields(res) - 1;
	for (i = 0; i < PQntuples(res); i++) {
		v = PQgetvalue(res, i, last);
		pos = strtol(v, &end, 10);
		if (end == v || *end != '\0' || pos < 1 || pos > n ||
		    rows[pos - 1] != -1)
			continue;
		rows[pos - 1] = i;
	}
}

struct db_query *
db_query_new(const char *sql, int nparams, const char *const *params,
    db_cb cb, void *arg)
{
	struct db_query	*q;
	int		 i;

	if ((q = calloc(1, sizeof(*q))) == NULL)
		return NULL;
	TAILQ_INIT(&q->members);
	q->cb = cb;
	q->arg = arg;
	if ((q->sql = strdup(sql)) == NULL)
		goto fail;
	if (nparams > 0 &&
	    (q->params = calloc(nparams, sizeof(*q->params))) == NULL)
		goto fail;
	for (i = 0; i < nparams; i++) {
		q->nparams = i + 1;
		if (params[i] != NULL &&
		    (q->params[i] = strdup(params[i])) == NULL)
			goto fail;
	}
	return q;
 fail:
	db_query_free(q);
	return NULL;
}

void
db_query_free_many(struct db_query *q)
{
	int	i;

	for (i = 0; q->many != NULL && i < q->nparams; i++)
		free(q->many[i]);
	free(q->many);
	q->many = NULL;
}

void
db_query_free(struct db_query *q)
{
	struct db_query	*m;
	int		 i;

	if (q == NULL)
		return;
	while ((m = TAILQ_FIRST(&q->members)) != NULL) {
		TAILQ_REMOVE(&q->members, m, entry);
		db_query_free(m);
	}
	db_query_free_many(q);
	free(q->sql);
	for (i = 0; i < q->nparams; i++)
		free(q->params[i]);
	free(q->params);
	free(q);
}

/*
 * A query that cannot run: the callback hears of it with res NULL, and
 * so does every request batched with it.
 */
void
db_query_fail(struct db_query *q)
{
	struct db_query	*m;

	if (q->batch == NULL)
		q->cb(q->arg, NULL);
	else {
		q->rcb(q->arg, NULL, -1);
		TAILQ_FOREACH(m, &q->members, entry)
			m->rcb(m->arg, NULL, -1);
	}
	db_query_free(q);
}

/* Each request of q's batch is given its own row of res. */
void
db_query_deliver(struct db_query *q, const PGresult *res)
{
	struct db_query	*m;
	int		 rows[BATCH_MAX], i = 0;

	if (q->batch == NULL) {
		q->cb(q->arg, res);
		return;
	}
	if (q->many == NULL) {
		q->rcb(q->arg, res, res != NULL &&
		    PQresultStatus(res) == PGRES_TUPLES_OK &&
		    PQntuples(res) > 0 ? 0 : -1);
		return;
	}
	db_batch_rows(res, q->nmembers + 1, rows);
	q->rcb(q->arg, res, rows[0]);
	TAILQ_FOREACH(m, &q->members, entry)
		m->rcb(m->arg, res, rows[++i]);
}

/* Back at the head of the queue, members after it, as they came. */
void
db_query_requeue(struct db_queue *queue, struct db_query *q)
{
	struct db_query	*m, *prev = q;

	TAILQ_INSERT_HEAD(queue, q, entry);
	while ((m = TAILQ_FIRST(&q->members)) != NULL) {
		TAILQ_REMOVE(&q->members, m, entry);
		TAILQ_INSERT_AFTER(queue, prev, m, entry);
		prev = m;
	}
	q->nmembers = 0;
	db_query_free_many(q);
}

/*
 * Takes the queries of q's batch that wait behind it, and writes their
 * parameters as arrays.  Only queries that wait are taken: one alone
 * runs as itself, at once, and latency under light load is unchanged.
 */
void
db_query_gather(struct db_queue *queue, struct db_query *q)
{
	struct db_query	*m, *next, *all[BATCH_MAX];
	const char	*vals[BATCH_MAX];
	int		 i, j, n, max;

	max = q->batch->max < BATCH_MAX ? q->batch->max : BATCH_MAX;
	all[0] = q;
	n = 1;
	for (m = TAILQ_FIRST(queue); m != NULL && n < max; m = next) {
		next = TAILQ_NEXT(m, entry);
		if (m->batch != q->batch)
			continue;
		TAILQ_REMOVE(queue, m, entry);
		TAILQ_INSERT_TAIL(&q->members, m, entry);
		all[n++] = m;
	}
	q->nmembers = n - 1;
	if (n == 1)
		return;
	if ((q->many = calloc(q->nparams, sizeof(*q->many))) == NULL)
		goto alone;
	for (j = 0; j < q->nparams; j++) {
		for (i = 0; i < n; i++)
			vals[i] = all[i]->params[j];
		if ((q->many[j] = db_batch_array(vals, n)) == NULL)
			goto alone;
	}
	return;
 alone:
	/* Out of memory: each runs by itself, which needs none. */
	q->nmembers = 0;
	while ((m = TAILQ_LAST(&q->members, db_queue)) != NULL) {
		TAILQ_REMOVE(&q->members, m, entry);
		TAILQ_INSERT_HEAD(queue, m, entry);
	}
	db_query_free_many(q);
}

