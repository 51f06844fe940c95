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
 * storage_files.c: the file operations the frontends ask for, apart
 * from uploads (storage_upload.c): metadata, reads, delete, listing and
 * health, and the request head (struct sreq) every operation shares.
 *
 * No message names an owner: each carries the handle storage_auth.c
 * issued on the same channel, and the owner every query is scoped to
 * is the one that handle stands for.
 */
#include <sys/types.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "util.h"
#include "storage.h"

#define FILE_VISIBLE							\
	"state = 'ready' and deleted_at is null and "			\
	"(expires_at is null or expires_at > now())"
#define FILE_OWNED							\
	"user_id = $2 and workspace_id = $3"

/* FILE_GET and FILE_DELETE. */
struct sfile_keyed {
	struct sreq		 req;
	struct file_rec		 rec;
	char			 ref[128];
};
SREQ_FIRST(sfile_keyed);

/* FILE_OPEN: the row, then the blob's size, then the descriptor. */
struct sfile_read {
	struct sreq		 req;
	struct file_rec		 rec;
	char			 ref[128];
	struct file_open	 open;
	int64_t			 size;
	int64_t			 off;		/* resolved range */
	int64_t			 len;
	int			 status;	/* 200 or 206 */
};
SREQ_FIRST(sfile_read);

/* FILE_LIST: the cursor's row, then the page. */
struct sfile_list {
	struct sreq		 req;
	struct file_list_req	 list;
	struct owner		 owner;
	char			 cursor_created[64];
};
SREQ_FIRST(sfile_list);

static TAILQ_HEAD(, sreq)	 sreqs = TAILQ_HEAD_INITIALIZER(sreqs);

void
sreq_begin(struct sreq *r, struct storage_peer *p, uint32_t peerid)
{
	r->peer = p;
	r->peerid = peerid;
	TAILQ_INSERT_TAIL(&sreqs, r, sreq_entry);
}

void
sreq_end(struct sreq *r)
{
	TAILQ_REMOVE(&sreqs, r, sreq_entry);
}

/* r is the first member of the request it heads. */
void
sreq_free(struct sreq *r)
{
	sreq_end(r);
	free(r);
}

void
sreq_reply(struct sreq *r, uint32_t type, int fd, const void *data,
    size_t len)
{
	if (r->peer == NULL) {
		if (fd != -1)
			close(fd);
		return;
	}
	storage_reply(r->peer, type, r->peerid, fd, data, len);
}

void
sreq_error(struct sreq *r, int status, const char *msg)
{
	if (r->peer != NULL)
		storage_error(r->peer, r->peerid, status, "%s", msg);
}

/* Answers a request whose query failed; the caller frees it. */
int
sreq_db_failed(struct sreq *r, const PGresult *res, ExecStatusType want)
{
	if (res == NULL) {
		sreq_error(r, STATUS_DB_DOWN, "the database is unavailable");
		return 1;
	}
	if (PQresultStatus(res) != want) {
		log_warnx("database: %s", PQresultErrorMessage(res));
		sreq_error(r, 500, "a database error occurred");
		return 1;
	}
	return 0;
}

/* -1: answered as unavailable, and the caller frees the request. */
int
sreq_query(struct sreq *r, const char *sql, int n, const char *const *params,
    db_cb cb)
{
	/* A frontend may ask before our own start message has arrived. */
	if (storage.db == NULL ||
	    db_query(storage.db, sql, n, params, cb, r) == -1) {
		sreq_error(r, STATUS_DB_DOWN, "the database is unavailable");
		return -1;
	}
	return 0;
}

void
sfiles_rec_from_row(struct file_rec *rec, const PGresult *res, int row)
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

/*
 * A request naming one file by id under a handle: the query's
 * parameters become $1 (id), $2 (user) and $3 (workspace), the last two
 * from the handle.  A bad handle or malformed id names no file anybody
 * can see: answered here, and 0 returned.
 */
static int
sfile_key_params(struct storage_peer *p, uint32_t peerid,
    const struct file_key *fk, struct owner *owner, char *id,
    const char **params)
{
	const struct principal_ref	*who;

	if ((who = sauth_handle(p, peerid, fk->handle)) == NULL)
		return 0;
	if (!id_valid(fk->id, "file-")) {
		storage_error(p, peerid, 404, "no such file");
		return 0;
	}
	*owner = who->owner;
	strlcpy(id, fk->id, IDLEN);
	params[0] = id;
	params[1] = owner->user_id;
	params[2] = owner->workspace_id;
	return 1;
}

static int
sfile_found(struct sreq *r, const PGresult *res, struct file_rec *rec,
    char *ref, size_t reflen)
{
	if (sreq_db_failed(r, res, PGRES_TUPLES_OK))
		return 0;
	if (PQntuples(res) == 0) {
		sreq_error(r, 404, "no such file");
		return 0;
	}
	sfiles_rec_from_row(rec, res, 0);
	strlcpy(ref, PQgetvalue(res, 0, COL_REF), reflen);
	return 1;
}

/* --- metadata --- */

static void
sfile_got(void *arg, const PGresult *res)
{
	struct sfile_keyed	*r = arg;

	if (sfile_found(&r->req, res, &r->rec, r->ref, sizeof(r->ref)))
		sreq_reply(&r->req, IMSG_FILE_INFO, -1, &r->rec,
		    sizeof(r->rec));
	sreq_free(&r->req);
}

/* A keyed request, or NULL when it was answered at once. */
static struct sfile_keyed *
sfile_keyed_new(struct storage_peer *p, struct imsg *imsg, const char **params,
    struct owner *owner)
{
	struct file_key		 fk;
	struct sfile_keyed	*r;

	IMSG_TAKE(imsg, fk);
	fk.handle[sizeof(fk.handle) - 1] = fk.id[sizeof(fk.id) - 1] = '\0';
	if ((r = calloc(1, sizeof(*r))) == NULL)
		fatal("calloc");
	if (!sfile_key_params(p, imsg->hdr.peerid, &fk, owner, r->rec.id,
	    params)) {
		free(r);
		return NULL;
	}
	sreq_begin(&r->req, p, imsg->hdr.peerid);
	return r;
}

static void
sfile_get(struct storage_peer *p, struct imsg *imsg)
{
	struct sfile_keyed	*r;
	struct owner		 owner;
	const char		*params[3];

	if ((r = sfile_keyed_new(p, imsg, params, &owner)) == NULL)
		return;
	if (sreq_query(&r->req, "select " FILE_COLS " from files where "
	    "id = $1 and " FILE_OWNED " and " FILE_VISIBLE, 3, params,
	    sfile_got) == -1)
		sreq_free(&r->req);
}

/* --- reads --- */

/* Resolves a Range against the blob's real size, as nginx does. */
static int
sfile_resolve_range(const struct file_open *fo, int64_t size, int64_t *off,
    int64_t *len)
{
	int64_t	 first = fo->range_first, last = fo->range_last;

	*off = 0;
	*len = size;
	if (fo->range_suffix) {
		if (last <= 0 || size == 0)
			return 416;
		*off = last >= size ? 0 : size - last;
		*len = size - *off;
		return 206;
	}
	if (first < 0)
		return 200;
	if (first >= size || (last >= 0 && last < first))
		return 416;
	if (last < 0 || last >= size)
		last = size - 1;
	*off = first;
	*len = last - first + 1;
	return 206;
}

static void
sfile_read_opened(void *arg, int error, int fd, int seekable)
{
	struct sfile_read	*r = arg;
	struct file_opened	 fo;

	if (error != 0) {
		log_warnx("storage: cannot read %s: %s", r->ref,
		    strerror(error));
		sreq_error(&r->req, 500, "the file's bytes cannot be read");
		sreq_free(&r->req);
		return;
	}
	memset(&fo, 0, sizeof(fo));
	fo.rec = r->rec;
	fo.size = r->size;
	fo.status = r->status;
	fo.offset = r->off;
	fo.length = r->len;
	fo.seekable = seekable;
	sreq_reply(&r->req, IMSG_FILE_OPENED, fd, &fo, sizeof(fo));
	sreq_free(&r->req);
}

static void
sfile_read_stated(void *arg, int error, off_t size)
{
	struct sfile_read	*r = arg;
	struct file_opened	 fo;

	if (error != 0) {
		log_warnx("storage: blob %s of %s: %s", r->ref, r->rec.id,
		    strerror(error));
		sreq_error(&r->req, 500, "the file's bytes are missing");
		sreq_free(&r->req);
		return;
	}
	r->size = size;
	r->status = sfile_resolve_range(&r->open, size, &r->off, &r->len);
	if (r->status == 416 || r->req.peer == NULL) {
		memset(&fo, 0, sizeof(fo));
		fo.rec = r->rec;
		fo.size = size;
		fo.status = 416;
		sreq_reply(&r->req, IMSG_FILE_OPENED, -1, &fo, sizeof(fo));
		sreq_free(&r->req);
		return;
	}
	storage.store->ops->get(storage.store, r->ref, r->off, r->len,
	    sfile_read_opened, r);
}

static void
sfile_read_found(void *arg, const PGresult *res)
{
	struct sfile_read	*r = arg;

	if (!sfile_found(&r->req, res, &r->rec, r->ref, sizeof(r->ref))) {
		sreq_free(&r->req);
		return;
	}
	storage.store->ops->stat(storage.store, r->ref, sfile_read_stated, r);
}

static void
sfile_open(struct storage_peer *p, struct imsg *imsg)
{
	struct sfile_read	*r;
	struct owner		 owner;
	const char		*params[3];

	if ((r = calloc(1, sizeof(*r))) == NULL)
		fatal("calloc");
	IMSG_TAKE(imsg, r->open);
	r->open.key.handle[sizeof(r->open.key.handle) - 1] = '\0';
	r->open.key.id[sizeof(r->open.key.id) - 1] = '\0';
	if (!sfile_key_params(p, imsg->hdr.peerid, &r->open.key, &owner,
	    r->rec.id, params)) {
		free(r);
		return;
	}
	sreq_begin(&r->req, p, imsg->hdr.peerid);
	if (sreq_query(&r->req, "select " FILE_COLS " from files where "
	    "id = $1 and " FILE_OWNED " and " FILE_VISIBLE, 3, params,
	    sfile_read_found) == -1)
		sreq_free(&r->req);
}

/* --- delete --- */

static void
sfile_row_deleted(void *arg, const PGresult *res)
{
	if (res != NULL && PQresultStatus(res) != PGRES_COMMAND_OK)
		log_warnx("database: %s", PQresultErrorMessage(res));
}

static void
sfile_bytes_removed(void *arg, int error)
{
	char		*id = arg;
	const char	*params[1] = { id };

	if (error == 0 || error == ENOENT) {
		if (db_query(storage.db, "delete from files where id = $1 "
		    "and deleted_at is not null", 1, params,
		    sfile_row_deleted, NULL) == -1)
			log_debug("storage: %s left for the sweep", id);
	} else
		log_warnx("storage: removing %s failed (%s); the sweep will "
		    "retry", id, strerror(error));
	free(id);
}

static void
sfile_deleted(void *arg, const PGresult *res)
{
	struct sfile_keyed	*r = arg;
	struct file_key		 fk;
	char			*id;

	if (sreq_db_failed(&r->req, res, PGRES_TUPLES_OK)) {
		sreq_free(&r->req);
		return;
	}
	if (PQntuples(res) == 0) {
		sreq_error(&r->req, 404, "no such file");
		sreq_free(&r->req);
		return;
	}
	memset(&fk, 0, sizeof(fk));
	strlcpy(fk.id, r->rec.id, sizeof(fk.id));
	sreq_reply(&r->req, IMSG_FILE_DELETED, -1, &fk, sizeof(fk));
	/* Best effort now; the sweep finishes what this cannot. */
	if ((id = strdup(r->rec.id)) != NULL)
		storage.store->ops->remove(storage.store,
		    PQgetvalue(res, 0, 0), sfile_bytes_removed, id);
	sreq_free(&r->req);
}

static void
sfile_delete(struct storage_peer *p, struct imsg *imsg)
{
	struct sfile_keyed	*r;
	struct owner		 owner;
	const char		*params[3];

	if ((r = sfile_keyed_new(p, imsg, params, &owner)) == NULL)
		return;
	if (sreq_query(&r->req, "update files set deleted_at = now(), "
	    "updated_at = clock_timestamp() where id = $1 and " FILE_OWNED
	    " and " FILE_VISIBLE " returning storage_ref", 3, params,
	    sfile_deleted) == -1)
		sreq_free(&r->req);
}

/* --- list --- */

static void
sfile_listed(void *arg, const PGresult *res)
{
	struct sfile_list	*r = arg;
	struct file_list_end	 end;
	struct file_rec		 rec;
	int			 i, n, limit = r->list.limit, reverse;

	if (sreq_db_failed(&r->req, res, PGRES_TUPLES_OK)) {
		sreq_free(&r->req);
		return;
	}
	n = PQntuples(res);
	memset(&end, 0, sizeof(end));
	end.has_more = n > limit;
	if (n > limit)
		n = limit;
	/* before_id walks backwards; the page keeps the natural order. */
	reverse = r->list.before_id[0] != '\0';
	for (i = 0; i < n; i++) {
		sfiles_rec_from_row(&rec, res, reverse ? n - 1 - i : i);
		sreq_reply(&r->req, IMSG_FILE_LIST_ITEM, -1, &rec,
		    sizeof(rec));
	}
	end.count = n;
	sreq_reply(&r->req, IMSG_FILE_LIST_END, -1, &end, sizeof(end));
	sreq_free(&r->req);
}

static void
sfile_ids_array(const struct file_list_req *l, char *buf, size_t len)
{
	int	 i;

	strlcpy(buf, "{", len);
	for (i = 0; i < l->nids && i < 100; i++) {
		if (i > 0)
			strlcat(buf, ",", len);
		/* Only well-formed ids reach the array literal. */
		strlcat(buf, id_valid(l->ids[i], "file-") ? l->ids[i] : "x",
		    len);
	}
	strlcat(buf, "}", len);
}

static const char *
sfile_list_cursor(const struct file_list_req *l)
{
	return l->before_id[0] ? l->before_id : l->after_id;
}

/*
 * A keyset page: the cursor's (created_at, id) bounds a range scan of
 * the files_list index, whatever the page number.
 */
static void
sfile_list_page(struct sfile_list *r)
{
	const struct file_list_req *l = &r->list;
	const char	*params[7], *dir;
	char		 sql[1536], limit[16], ids[100 * IDLEN + 8];
	int		 desc;

	desc = l->order == ORDER_DESC;
	/* Walking before the cursor is walking the other way. */
	if (l->before_id[0])
		desc = !desc;
	dir = desc ? "desc" : "asc";
	snprintf(limit, sizeof(limit), "%d", l->limit + 1);
	sfile_ids_array(l, ids, sizeof(ids));
	params[0] = sfile_list_cursor(l);
	params[1] = r->owner.user_id;
	params[2] = r->owner.workspace_id;
	params[3] = l->purpose;
	params[4] = limit;
	params[5] = l->nids > 0 ? ids : NULL;
	params[6] = r->cursor_created[0] ? r->cursor_created : NULL;
	/*
	 * The cursor's created_at travels as a parameter: a row
	 * comparison against constants is an index condition, against a
	 * subquery it would be a filter over every earlier page.
	 */
	snprintf(sql, sizeof(sql), "select " FILE_COLS " from files where "
	    FILE_OWNED " and " FILE_VISIBLE " and ($4 = '' or purpose = $4) "
	    "and ($6::text[] is null or id = any($6::text[])) %s "
	    "order by created_at %s, id %s limit $5::int",
	    params[6] == NULL ? "and $1 = '' and $7::timestamptz is null" :
	    desc ? "and (created_at, id) < ($7::timestamptz, $1)" :
	    "and (created_at, id) > ($7::timestamptz, $1)", dir, dir);
	if (sreq_query(&r->req, sql, 7, params, sfile_listed) == -1)
		sreq_free(&r->req);
}

static void
sfile_list_cursor_checked(void *arg, const PGresult *res)
{
	struct sfile_list	*r = arg;

	if (sreq_db_failed(&r->req, res, PGRES_TUPLES_OK)) {
		sreq_free(&r->req);
		return;
	}
	if (PQntuples(res) == 0) {
		sreq_error(&r->req, 404, "the cursor names no file you can "
		    "see");
		sreq_free(&r->req);
		return;
	}
	strlcpy(r->cursor_created, PQgetvalue(res, 0, 0),
	    sizeof(r->cursor_created));
	sfile_list_page(r);
}

/* A cursor is only good if the caller could read that file itself. */
static void
sfile_list(struct storage_peer *p, struct imsg *imsg)
{
	const struct principal_ref	*who;
	struct sfile_list		*r;
	const char			*params[3];

	if ((r = calloc(1, sizeof(*r))) == NULL)
		fatal("calloc");
	IMSG_TAKE(imsg, r->list);
	r->list.handle[HANDLE_LEN - 1] = '\0';
	r->list.after_id[IDLEN - 1] = r->list.before_id[IDLEN - 1] = '\0';
	r->list.purpose[PURPOSE_MAX - 1] = '\0';
	/* A frontend's nonsense costs its request, not this process. */
	if (r->list.limit < 1 || r->list.limit > 1000 || r->list.nids < 0 ||
	    r->list.nids > 100) {
		storage_error(p, imsg->hdr.peerid, 400, "bad list request");
		free(r);
		return;
	}
	if ((who = sauth_handle(p, imsg->hdr.peerid, r->list.handle)) ==
	    NULL) {
		free(r);
		return;
	}
	r->owner = who->owner;
	sreq_begin(&r->req, p, imsg->hdr.peerid);
	if (sfile_list_cursor(&r->list)[0] == '\0') {
		sfile_list_page(r);
		return;
	}
	params[0] = sfile_list_cursor(&r->list);
	params[1] = r->owner.user_id;
	params[2] = r->owner.workspace_id;
	/* Text output of timestamptz keeps every microsecond. */
	if (sreq_query(&r->req, "select created_at::text from files where "
	    "id = $1 and " FILE_OWNED " and " FILE_VISIBLE, 3, params,
	    sfile_list_cursor_checked) == -1)
		sreq_free(&r->req);
}

/* --- health --- */

static void
sfile_health(struct storage_peer *p, struct imsg *imsg)
{
	struct health_msg	 hm;

	memset(&hm, 0, sizeof(hm));
	hm.db_up = storage.db != NULL && db_up(storage.db);
	hm.store_up = storage.store_up;
	storage_reply(p, IMSG_HEALTH, imsg->hdr.peerid, -1, &hm, sizeof(hm));
}

/*
 * proto.c let through only what a frontend may send, at its size; the
 * broker's channel carries nothing yet (see there).
 */
void
sfiles_dispatch(struct storage_peer *p, struct imsg *imsg)
{
	switch (imsg->hdr.type) {
	case IMSG_AUTH_LOOKUP:
		sauth_lookup(p, imsg);
		break;
	case IMSG_AUTH_RELEASE:
		sauth_release(p, imsg);
		break;
	case IMSG_AUTH_DELEGATE:
		sauth_delegate(p, imsg);
		break;
	case IMSG_FILE_CREATE:
		supload_create(p, imsg);
		break;
	case IMSG_FILE_PROGRESS:
		supload_progress(p, imsg);
		break;
	case IMSG_FILE_COMMIT:
		supload_commit(p, imsg);
		break;
	case IMSG_FILE_ABORT:
		supload_abort(p, imsg);
		break;
	case IMSG_FILE_GET:
		sfile_get(p, imsg);
		break;
	case IMSG_FILE_OPEN:
		sfile_open(p, imsg);
		break;
	case IMSG_FILE_LIST:
		sfile_list(p, imsg);
		break;
	case IMSG_FILE_DELETE:
		sfile_delete(p, imsg);
		break;
	case IMSG_HEALTH_REQ:
		sfile_health(p, imsg);
		break;
	default:
		fatalx("storage: unexpected message %u", imsg->hdr.type);
	}
}

/* A closed channel takes its handles and half-written uploads along. */
void
sfiles_peer_lost(struct storage_peer *p)
{
	struct sreq	*r;

	TAILQ_FOREACH(r, &sreqs, sreq_entry)
		if (r->peer == p)
			r->peer = NULL;
	supload_peer_lost(p);
	sauth_peer_lost(p);
}
