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
 * storage_db_int.h: the queries of storage_db.c's queue, shared with
 * storage_db_query.c, which makes, batches, answers and frees them.
 * Private to those two files.
 */
#ifndef DEPOTD_STORAGE_DB_INT_H
#define DEPOTD_STORAGE_DB_INT_H

#include <sys/queue.h>

#define BATCH_MAX	128	/* requests in one statement, at most */
#define DB_BATCHES	16	/* kinds of batch prepared, at most */

TAILQ_HEAD(db_queue, db_query);
struct db_query {
	TAILQ_ENTRY(db_query)	 entry;
	char			*sql;
	int			 nparams;
	char			**params;
	db_cb			 cb;
	void			*arg;
	const struct db_batch	*batch;		/* NULL: runs alone */
	db_row_cb		 rcb;		/* instead of cb, in a batch */
	struct db_queue		 members;	/* taken along with it */
	int			 nmembers;
	char			**many;		/* the batch's array params */
};


struct db_query	*db_query_new(const char *sql, int nparams,
		    const char *const *params, db_cb, void *arg);
void		 db_query_free(struct db_query *);
void		 db_query_free_many(struct db_query *);
void		 db_query_fail(struct db_query *);
void		 db_query_deliver(struct db_query *, const PGresult *);
void		 db_query_requeue(struct db_queue *, struct db_query *);
void		 db_query_gather(struct db_queue *, struct db_query *);

#endif
