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
 * storage_request.c: the head every request of the storage helper
 * shares (struct storage_request), its replies and queries, and the
 * file record read from a row of files.
 *
 * Below the route files (storage_auth.c, storage_files.c,
 * storage_upload.c), above the channels (storage_peer.c): a request
 * outlives its message while a query or a store operation runs, and
 * its channel may close meanwhile; its replies then go nowhere.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "util.h"
#include "storage.h"

static TAILQ_HEAD(, storage_request)	 requests =
    TAILQ_HEAD_INITIALIZER(requests);

void
storage_request_begin(struct storage_request *r, struct storage_peer *p,
    uint32_t peerid)
{
	r->peer = p;
	r->peerid = peerid;
	TAILQ_INSERT_TAIL(&requests, r, entry);
}

void
storage_request_end(struct storage_request *r)
{
	TAILQ_REMOVE(&requests, r, entry);
}

/* r is the first member of the request it heads. */
void
storage_request_free(struct storage_request *r)
{
	storage_request_end(r);
	free(r);
}

void
storage_request_reply(struct storage_request *r, uint32_t type, int fd,
    const void *data, size_t len)
{
	if (r->peer == NULL) {
		if (fd != -1)
			close(fd);
		return;
	}
	storage_peer_reply(r->peer, type, r->peerid, fd, data, len);
}

void
storage_request_error(struct storage_request *r, int status, const char *msg)
{
	if (r->peer != NULL)
		storage_peer_error(r->peer, r->peerid, status, "%s", msg);
}

/* Answers a request whose query failed; the caller frees it. */
int
storage_request_db_failed(struct storage_request *r, const PGresult *res,
    ExecStatusType want)
{
	if (res == NULL) {
		storage_request_error(r, STATUS_DB_DOWN,
		    "the database is unavailable");
		return 1;
	}
	if (PQresultStatus(res) != want) {
		log_warnx("database: %s", PQresultErrorMessage(res));
		storage_request_error(r, 500, "a database error occurred");
		return 1;
	}
	return 0;
}

/* -1: answered as unavailable, and the caller frees the request. */
int
storage_request_query(struct storage_request *r, const char *sql, int n,
    const char *const *params, db_cb cb)
{
	/* A frontend may ask before our own start message has arrived. */
	if (storage.db == NULL ||
	    db_query(storage.db, sql, n, params, cb, r) == -1) {
		storage_request_error(r, STATUS_DB_DOWN,
		    "the database is unavailable");
		return -1;
	}
	return 0;
}

/* The same, for a query that may run batched with others. */
int
storage_request_query_batched(struct storage_request *r,
    const struct db_batch *b, const char *const *params, db_row_cb cb)
{
	if (storage.db == NULL ||
	    db_query_batched(storage.db, b, params, cb, r) == -1) {
		storage_request_error(r, STATUS_DB_DOWN,
		    "the database is unavailable");
		return -1;
	}
	return 0;
}

/* The channel closed: what its requests still answer goes nowhere. */
void
storage_request_peer_lost(struct storage_peer *p)
{
	struct storage_request	*r;

	TAILQ_FOREACH(r, &requests, entry)
		if (r->peer == p)
			r->peer = NULL;
}

/* A row of FILE_COLS, as a record. */
void
storage_request_file_from_row(struct file_rec *rec, const PGresult *res,
    int row)
{
	const char	*errstr;

	memset(rec, 0, sizeof(*rec));
	strlcpy(rec->id, PQgetvalue(res, row, COL_ID), sizeof(rec->id));
	strlcpy(rec->filename, PQgetvalue(res, row, COL_NAME),
	    sizeof(rec->filename));
	strlcpy(rec->mime_type, PQgetvalue(res, row, COL_MIME),
	    sizeof(rec->mime_type));
	strlcpy(rec->purpose, PQgetvalue(res, row, COL_PURPOSE),
	    sizeof(rec->purpose));
	rec->source = strcmp(PQgetvalue(res, row, COL_SOURCE), "upload") == 0 ?
	    SOURCE_UPLOAD : SOURCE_CODE_EXECUTION;
	rec->bytes = strtonum(PQgetvalue(res, row, COL_BYTES), 0, INT64_MAX,
	    &errstr);
	rec->created_us = strtonum(PQgetvalue(res, row, COL_CREATED), 0,
	    INT64_MAX, &errstr);
	rec->expires_us = strtonum(PQgetvalue(res, row, COL_EXPIRES), 0,
	    INT64_MAX, &errstr);
}
