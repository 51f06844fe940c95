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
 * health, each called from storage.c's dispatch.
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
/* One file by id ($1), as its owner ($2, $3) may see it. */
#define FILE_SELECT_OWNED						\
	"select " FILE_COLS " from files where "			\
	"id = $1 and " FILE_OWNED " and " FILE_VISIBLE

/*
 * The same for many requests at once (storage_db.h): element i of $1,
 * $2 and $3 is the id, user and workspace of request i, and k_n says
 * whose row each is.  The owner check is made for each request on its
 * own, in the lateral select that is FILE_SELECT_OWNED with the
 * request's values: another owner's id finds no row for the request
 * that named it, whoever else is in the batch.  Lateral and limited,
 * the plan stays one primary-key lookup per request whatever the
 * planner thinks of the table's size.
 */
static const struct db_batch files_by_id = {
	FILE_SELECT_OWNED,
	"select " FILE_COLS ", k_n from unnest($1::text[], $2::text[], "
	"$3::text[]) with ordinality as k(k_id, k_user, k_ws, k_n) "
	"cross join lateral (select * from files where id = k_id and "
	"user_id = k_user and workspace_id = k_ws and " FILE_VISIBLE
	" limit 1) files",
	3,
	64,
};

/* FILE_GET and FILE_DELETE. */
struct files_keyed {
	struct storage_request	 req;
	struct file_rec		 rec;
	char			 ref[128];
};
STORAGE_REQUEST_FIRST(files_keyed);

/* FILE_OPEN: the row, then the blob's size, then the descriptor. */
struct files_read {
	struct storage_request	 req;
	struct file_rec		 rec;
	char			 ref[128];
	struct file_open	 open;
	int64_t			 size;
	int64_t			 off;		/* resolved range */
	int64_t			 len;
	int			 status;	/* 200 or 206 */
};
STORAGE_REQUEST_FIRST(files_read);

/* FILE_LIST: the cursor's row, then the page. */
struct files_list {
	struct storage_request	 req;
	struct file_list_req	 list;
	struct owner		 owner;
	char			 cursor_created[64];
};
STORAGE_REQUEST_FIRST(files_list);

/*
 * A request naming one file by id under a handle: the query's
 * parameters become $1 (id), $2 (user) and $3 (workspace), the last two
 * from the handle.  A bad handle or malformed id names no file anybody
 * can see: answered here, and 0 returned.
 */
static int
files_key_params(struct storage_peer *p, uint32_t peerid,
    const struct file_key *fk, struct owner *owner, char *id,
    const char **params)
{
	const struct principal_ref	*who;

	if ((who = storage_auth_handle(p, peerid, fk->handle)) == NULL)
		return 0;
	if (!id_valid(fk->id, "file-")) {
		storage_peer_error(p, peerid, 404, "no such file");
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
files_found(struct storage_request *r, const PGresult *res, int row,
    struct file_rec *rec, char *ref, size_t reflen)
{
	if (storage_request_db_failed(r, res, PGRES_TUPLES_OK))
		return 0;
	if (row < 0) {
		storage_request_error(r, 404, "no such file");
		return 0;
	}
	storage_request_file_from_row(rec, res, row);
	strlcpy(ref, PQgetvalue(res, row, COL_REF), reflen);
	return 1;
}

/* --- metadata --- */

static void
files_got(void *arg, const PGresult *res, int row)
{
	struct files_keyed	*r = arg;

	if (files_found(&r->req, res, row, &r->rec, r->ref, sizeof(r->ref)))
		storage_request_reply(&r->req, IMSG_FILE_INFO, -1, &r->rec,
		    sizeof(r->rec));
	storage_request_free(&r->req);
}

/* A keyed request, or NULL when it was answered at once. */
static struct files_keyed *
files_keyed_new(struct storage_peer *p, struct imsg *imsg, const char **params,
    struct owner *owner)
{
	struct file_key		 fk;
	struct files_keyed	*r;

	IMSG_TAKE(imsg, fk);
	fk.handle[sizeof(fk.handle) - 1] = fk.id[sizeof(fk.id) - 1] = '\0';
	if ((r = calloc(1, sizeof(*r))) == NULL)
		fatal("calloc");
	if (!files_key_params(p, imsg->hdr.peerid, &fk, owner, r->rec.id,
	    params)) {
		free(r);
		return NULL;
	}
	storage_request_begin(&r->req, p, imsg->hdr.peerid);
	return r;
}

void
storage_files_get(struct storage_peer *p, struct imsg *imsg)
{
	struct files_keyed	*r;
	struct owner		 owner;
	const char		*params[3];

	if ((r = files_keyed_new(p, imsg, params, &owner)) == NULL)
		return;
	if (storage_request_query_batched(&r->req, &files_by_id, params,
	    files_got) == -1)
		storage_request_free(&r->req);
}

/* --- reads --- */

/* Resolves a Range against the blob's real size, as nginx does. */
static int
files_resolve_range(const struct file_open *fo, int64_t size, int64_t *off,
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
files_read_opened(void *arg, int error, int fd, int seekable)
{
	struct files_read	*r = arg;
	struct file_opened	 fo;

	if (error != 0) {
		log_warnx("storage: cannot read %s: %s", r->ref,
		    strerror(error));
		storage_request_error(&r->req, 500,
		    "the file's bytes cannot be read");
		storage_request_free(&r->req);
		return;
	}
	memset(&fo, 0, sizeof(fo));
	fo.rec = r->rec;
	fo.size = r->size;
	fo.status = r->status;
	fo.offset = r->off;
	fo.length = r->len;
	fo.seekable = seekable;
	storage_request_reply(&r->req, IMSG_FILE_OPENED, fd, &fo, sizeof(fo));
	storage_request_free(&r->req);
}

static void
files_read_stated(void *arg, int error, off_t size)
{
	struct files_read	*r = arg;
	struct file_opened	 fo;

	if (error != 0) {
		log_warnx("storage: blob %s of %s: %s", r->ref, r->rec.id,
		    strerror(error));
		storage_request_error(&r->req, 500,
		    "the file's bytes are missing");
		storage_request_free(&r->req);
		return;
	}
	r->size = size;
	r->status = files_resolve_range(&r->open, size, &r->off, &r->len);
	if (r->status == 416 || r->req.peer == NULL) {
		memset(&fo, 0, sizeof(fo));
		fo.rec = r->rec;
		fo.size = size;
		fo.status = 416;
		storage_request_reply(&r->req, IMSG_FILE_OPENED, -1, &fo,
		    sizeof(fo));
		storage_request_free(&r->req);
		return;
	}
	storage.store->ops->get(storage.store, r->ref, r->off, r->len,
	    files_read_opened, r);
}

static void
files_read_found(void *arg, const PGresult *res, int row)
{
	struct files_read	*r = arg;

	if (!files_found(&r->req, res, row, &r->rec, r->ref,
	    sizeof(r->ref))) {
		storage_request_free(&r->req);
		return;
	}
	storage.store->ops->stat(storage.store, r->ref, files_read_stated, r);
}

void
storage_files_open(struct storage_peer *p, struct imsg *imsg)
{
	struct files_read	*r;
	struct owner		 owner;
	const char		*params[3];

	if ((r = calloc(1, sizeof(*r))) == NULL)
		fatal("calloc");
	IMSG_TAKE(imsg, r->open);
	r->open.key.handle[sizeof(r->open.key.handle) - 1] = '\0';
	r->open.key.id[sizeof(r->open.key.id) - 1] = '\0';
	if (!files_key_params(p, imsg->hdr.peerid, &r->open.key, &owner,
	    r->rec.id, params)) {
		free(r);
		return;
	}
	storage_request_begin(&r->req, p, imsg->hdr.peerid);
	if (storage_request_query_batched(&r->req, &files_by_id, params,
	    files_read_found) == -1)
		storage_request_free(&r->req);
}

/* --- delete --- */

static void
files_row_deleted(void *arg, const PGresult *res)
{
	if (res != NULL && PQresultStatus(res) != PGRES_COMMAND_OK)
		log_warnx("database: %s", PQresultErrorMessage(res));
}

static void
files_bytes_removed(void *arg, int error)
{
	char		*id = arg;
	const char	*params[1] = { id };

	if (error == 0 || error == ENOENT) {
		if (db_query(storage.db, "delete from files where id = $1 "
		    "and deleted_at is not null", 1, params,
		    files_row_deleted, NULL) == -1)
			log_debug("storage: %s left for the sweep", id);
	} else
		log_warnx("storage: removing %s failed (%s); the sweep will "
		    "retry", id, strerror(error));
	free(id);
}

static void
files_deleted(void *arg, const PGresult *res)
{
	struct files_keyed	*r = arg;
	struct file_key		 fk;
	char			*id;

	if (storage_request_db_failed(&r->req, res, PGRES_TUPLES_OK)) {
		storage_request_free(&r->req);
		return;
	}
	if (PQntuples(res) == 0) {
		storage_request_error(&r->req, 404, "no such file");
		storage_request_free(&r->req);
		return;
	}
	memset(&fk, 0, sizeof(fk));
	strlcpy(fk.id, r->rec.id, sizeof(fk.id));
	storage_request_reply(&r->req, IMSG_FILE_DELETED, -1, &fk, sizeof(fk));
	/* Best effort now; the sweep finishes what this cannot. */
	if ((id = strdup(r->rec.id)) != NULL)
		storage.store->ops->remove(storage.store,
		    PQgetvalue(res, 0, 0), files_bytes_removed, id);
	storage_request_free(&r->req);
}

void
storage_files_delete(struct storage_peer *p, struct imsg *imsg)
{
	struct files_keyed	*r;
	struct owner		 owner;
	const char		*params[3];

	if ((r = files_keyed_new(p, imsg, params, &owner)) == NULL)
		return;
	if (storage_request_query(&r->req,
	    "update files set deleted_at = now(), "
	    "updated_at = clock_timestamp() where id = $1 and " FILE_OWNED
	    " and " FILE_VISIBLE " returning storage_ref", 3, params,
	    files_deleted) == -1)
		storage_request_free(&r->req);
}

/* --- list --- */

static void
files_listed(void *arg, const PGresult *res)
{
	struct files_list	*r = arg;
	struct file_list_end	 end;
	struct file_rec		 rec;
	int			 i, n, limit = r->list.limit, reverse;

	if (storage_request_db_failed(&r->req, res, PGRES_TUPLES_OK)) {
		storage_request_free(&r->req);
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
		storage_request_file_from_row(&rec, res,
		    reverse ? n - 1 - i : i);
		storage_request_reply(&r->req, IMSG_FILE_LIST_ITEM, -1, &rec,
		    sizeof(rec));
	}
	end.count = n;
	storage_request_reply(&r->req, IMSG_FILE_LIST_END, -1, &end,
	    sizeof(end));
	storage_request_free(&r->req);
}

static void
files_ids_array(const struct file_list_req *l, char *buf, size_t len)
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
files_list_cursor(const struct file_list_req *l)
{
	return l->before_id[0] ? l->before_id : l->after_id;
}

/*
 * A keyset page: the cursor's (created_at, id) bounds a range scan of
 * the files_list index, whatever the page number.
 */
static void
files_list_page(struct files_list *r)
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
	files_ids_array(l, ids, sizeof(ids));
	params[0] = files_list_cursor(l);
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
	if (storage_request_query(&r->req, sql, 7, params, files_listed) == -1)
		storage_request_free(&r->req);
}

static void
files_list_cursor_checked(void *arg, const PGresult *res)
{
	struct files_list	*r = arg;

	if (storage_request_db_failed(&r->req, res, PGRES_TUPLES_OK)) {
		storage_request_free(&r->req);
		return;
	}
	if (PQntuples(res) == 0) {
		storage_request_error(&r->req, 404,
		    "the cursor names no file you can "
		    "see");
		storage_request_free(&r->req);
		return;
	}
	strlcpy(r->cursor_created, PQgetvalue(res, 0, 0),
	    sizeof(r->cursor_created));
	files_list_page(r);
}

/* A cursor is only good if the caller could read that file itself. */
void
storage_files_list(struct storage_peer *p, struct imsg *imsg)
{
	const struct principal_ref	*who;
	struct files_list		*r;
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
		storage_peer_error(p, imsg->hdr.peerid, 400,
		    "bad list request");
		free(r);
		return;
	}
	if ((who = storage_auth_handle(p, imsg->hdr.peerid, r->list.handle)) ==
	    NULL) {
		free(r);
		return;
	}
	r->owner = who->owner;
	storage_request_begin(&r->req, p, imsg->hdr.peerid);
	if (files_list_cursor(&r->list)[0] == '\0') {
		files_list_page(r);
		return;
	}
	params[0] = files_list_cursor(&r->list);
	params[1] = r->owner.user_id;
	params[2] = r->owner.workspace_id;
	/* Text output of timestamptz keeps every microsecond. */
	if (storage_request_query(&r->req,
	    "select created_at::text from files where "
	    "id = $1 and " FILE_OWNED " and " FILE_VISIBLE, 3, params,
	    files_list_cursor_checked) == -1)
		storage_request_free(&r->req);
}

/* --- health --- */

void
storage_files_health(struct storage_peer *p, struct imsg *imsg)
{
	struct health_msg	 hm;

	memset(&hm, 0, sizeof(hm));
	hm.db_up = storage.db != NULL && db_up(storage.db);
	hm.store_up = storage.store_up;
	storage_peer_reply(p, IMSG_HEALTH, imsg->hdr.peerid, -1, &hm,
	    sizeof(hm));
}
