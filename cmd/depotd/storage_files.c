/*
 * storage_files.c: the file operations the frontends ask for.
 *
 * Upload follows an intent protocol so that no failure leaves bytes
 * nobody can reclaim: the row is inserted in state 'writing' first,
 * the bytes are streamed, then one statement makes the row 'ready'.
 * Any failure removes the bytes, then the row; whatever a crash
 * interrupts, the sweep finds by its 'writing' row.
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

#define FILE_COLS							\
	"id, user_id, workspace_id, filename, mime_type, purpose, "	\
	"source, coalesce(bytes, 0), "					\
	"(extract(epoch from created_at) * 1000000)::bigint, "		\
	"coalesce((extract(epoch from expires_at) * 1000000)::bigint, 0), " \
	"storage_ref"
#define FILE_VISIBLE							\
	"state = 'ready' and deleted_at is null and "			\
	"(expires_at is null or expires_at > now())"
#define FILE_OWNED							\
	"user_id = $2 and workspace_id = $3"

enum { COL_ID, COL_USER, COL_WS, COL_NAME, COL_MIME, COL_PURPOSE,
    COL_SOURCE, COL_BYTES, COL_CREATED, COL_EXPIRES, COL_REF };

/* One request of a frontend, alive while the database or store works. */
struct freq {
	TAILQ_ENTRY(freq)	 entry;
	struct storage_peer		*peer;		/* NULL once the peer is gone */
	uint32_t		 peerid;
	struct file_rec		 rec;
	char			 ref[128];
	struct file_open	 open;
	struct file_list_req	*list;
	int64_t			 size;
	int64_t			 off;		/* resolved range */
	int64_t			 len;
	int			 status;	/* 200 or 206 */
	char			 sha256[65];
	char			 expires[32];
	char			 cursor_created[64];	/* list: the cursor's */
};

/* An upload between FILE_CREATED and commit or abort. */
struct upload {
	TAILQ_ENTRY(upload)	 entry;
	struct storage_peer		*peer;
	char			 id[IDLEN];
	struct owner		 owner;
	char			 ref[128];
	char			 key_id[IDLEN];
	struct store_xfer	*xfer;
};

static TAILQ_HEAD(, freq)	 freqs = TAILQ_HEAD_INITIALIZER(freqs);
static TAILQ_HEAD(, upload)	 uploads = TAILQ_HEAD_INITIALIZER(uploads);

static struct freq *
freq_new(struct storage_peer *p, uint32_t peerid)
{
	struct freq	*r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		fatal("calloc");
	r->peer = p;
	r->peerid = peerid;
	TAILQ_INSERT_TAIL(&freqs, r, entry);
	return r;
}

static void
freq_free(struct freq *r)
{
	TAILQ_REMOVE(&freqs, r, entry);
	free(r->list);
	free(r);
}

static void
freq_reply(struct freq *r, uint32_t type, int fd, const void *data,
    size_t len)
{
	if (r->peer == NULL) {
		if (fd != -1)
			close(fd);
		return;
	}
	storage_reply(r->peer, type, r->peerid, fd, data, len);
}

static void
freq_error(struct freq *r, int status, const char *msg)
{
	if (r->peer != NULL)
		storage_error(r->peer, r->peerid, status, "%s", msg);
}

/* Answers and frees a request whose query failed for lack of a database. */
static int
freq_db_failed(struct freq *r, const PGresult *res, ExecStatusType want)
{
	if (res == NULL) {
		freq_error(r, STATUS_DB_DOWN, "the database is unavailable");
		return 1;
	}
	if (PQresultStatus(res) != want) {
		log_warnx("database: %s", PQresultErrorMessage(res));
		freq_error(r, 500, "a database error occurred");
		return 1;
	}
	return 0;
}

static int
freq_query(struct freq *r, const char *sql, int n, const char *const *params,
    db_cb cb)
{
	/* A frontend may ask before our own start message has arrived. */
	if (storage.db == NULL ||
	    db_query(storage.db, sql, n, params, cb, r) == -1) {
		freq_error(r, STATUS_DB_DOWN, "the database is unavailable");
		freq_free(r);
		return -1;
	}
	return 0;
}

static void
rec_from_row(struct file_rec *rec, const PGresult *res, int row)
{
	const char	*errstr;

	memset(rec, 0, sizeof(*rec));
	strlcpy(rec->id, PQgetvalue(res, row, COL_ID), sizeof(rec->id));
	strlcpy(rec->owner.user_id, PQgetvalue(res, row, COL_USER),
	    sizeof(rec->owner.user_id));
	strlcpy(rec->owner.workspace_id, PQgetvalue(res, row, COL_WS),
	    sizeof(rec->owner.workspace_id));
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

static int
owner_valid(const struct owner *o)
{
	return id_valid(o->user_id, "usr-") && id_valid(o->workspace_id,
	    "wrk-");
}

/* Copies a fixed-size message out of an imsg, refusing a wrong size. */
#define IMSG_TAKE(imsg, var) do {					\
	if ((imsg)->datalen != sizeof(var))				\
		fatalx("storage: message %u of %zu bytes",		\
		    (imsg)->hdr.type, (imsg)->datalen);			\
	memcpy(&(var), (imsg)->data, sizeof(var));			\
} while (0)

/* --- key lookups --- */

static void
auth_done(void *arg, const PGresult *res)
{
	struct freq		*r = arg;
	struct auth_result	 ar;
	const char		*state;

	memset(&ar, 0, sizeof(ar));
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
		if (res != NULL)
			log_warnx("database: %s", PQresultErrorMessage(res));
		ar.status = AUTH_UNAVAILABLE;
	} else if (PQntuples(res) == 0)
		ar.status = AUTH_UNKNOWN;
	else {
		strlcpy(ar.key_id, PQgetvalue(res, 0, 0), sizeof(ar.key_id));
		strlcpy(ar.user_id, PQgetvalue(res, 0, 1), sizeof(ar.user_id));
		strlcpy(ar.user_name, PQgetvalue(res, 0, 2),
		    sizeof(ar.user_name));
		strlcpy(ar.workspace_id, PQgetvalue(res, 0, 3),
		    sizeof(ar.workspace_id));
		state = PQgetvalue(res, 0, 4);
		if (strcmp(state, "revoked") == 0)
			ar.status = AUTH_REVOKED;
		else if (strcmp(state, "expired") == 0)
			ar.status = AUTH_EXPIRED;
		else if (strcmp(state, "noworkspace") == 0)
			ar.status = AUTH_UNKNOWN;
		else
			ar.status = AUTH_OK;
	}
	strlcpy(ar.token_sha256, r->rec.id, sizeof(ar.token_sha256));
	freq_reply(r, IMSG_AUTH_RESULT, -1, &ar, sizeof(ar));
	freq_free(r);
}

/*
 * The frontend waits for an auth result, never a generic error: with
 * no database it must hear "unavailable" (503), not an IMSG_ERROR.
 */
static void
auth_query(struct freq *r, const char *sql, int n, const char *const *params)
{
	if (storage.db == NULL ||
	    db_query(storage.db, sql, n, params, auth_done, r) == -1)
		auth_done(r, NULL);
}

static void
auth_lookup(struct storage_peer *p, struct imsg *imsg)
{
	struct auth_lookup	 al;
	struct freq		*r;
	const char		*params[2];

	IMSG_TAKE(imsg, al);
	al.token_sha256[sizeof(al.token_sha256) - 1] = '\0';
	al.user_name[sizeof(al.user_name) - 1] = '\0';
	al.workspace_name[sizeof(al.workspace_name) - 1] = '\0';
	r = freq_new(p, imsg->hdr.peerid);
	/* The reply names the token hash so the frontend can cache it. */
	strlcpy(r->rec.id, al.token_sha256, sizeof(r->rec.id));
	if (al.user_name[0] != '\0') {
		params[0] = al.user_name;
		params[1] = al.workspace_name[0] ? al.workspace_name :
		    "default";
		auth_query(r, "select '', u.id, u.name, coalesce(w.id, ''), "
		    "case when w.id is null then 'noworkspace' else 'ok' end "
		    "from users u left join workspaces w on w.name = $2 "
		    "where u.name = $1", 2, params);
		return;
	}
	params[0] = al.token_sha256;
	auth_query(r, "select k.id, k.user_id, u.name, k.workspace_id, "
	    "case when k.revoked_at is not null then 'revoked' "
	    "when k.expires_at is not null and k.expires_at <= now() "
	    "then 'expired' else 'ok' end "
	    "from api_keys k join users u on u.id = k.user_id "
	    "where k.token_sha256 = $1", 1, params);
}

/* --- upload --- */

static struct upload *
upload_find(const char *id, const struct owner *o)
{
	struct upload	*u;

	TAILQ_FOREACH(u, &uploads, entry)
		if (strcmp(u->id, id) == 0 &&
		    memcmp(&u->owner, o, sizeof(*o)) == 0)
			return u;
	return NULL;
}

static void
row_deleted(void *arg, const PGresult *res)
{
	if (res != NULL && PQresultStatus(res) != PGRES_COMMAND_OK)
		log_warnx("database: %s", PQresultErrorMessage(res));
}

/* A row whose upload never reached the store goes at once. */
static void
forget_row(const char *id)
{
	const char	*params[1] = { id };

	if (db_query(storage.db, "delete from files where id = $1 and "
	    "state = 'writing'", 1, params, row_deleted, NULL) == -1)
		log_warnx("storage: %s stays in 'writing' for the sweep", id);
}

/*
 * An upload that failed after bytes may have reached the store: the
 * store's own clean-up (an unlink, an AbortMultipartUpload) can fail
 * too, so the row stays, in 'writing' and aged past any grace, and the
 * next sweep removes whatever the store still holds for it, then the
 * row.  Until then the row is invisible like every 'writing' row.
 */
static void
abandon_row(const char *id)
{
	const char	*params[1] = { id };

	if (db_query(storage.db, "update files set updated_at = "
	    "'epoch'::timestamptz where id = $1 and state = 'writing'", 1,
	    params, row_deleted, NULL) == -1)
		log_warnx("storage: %s stays in 'writing' for the sweep", id);
}

static void
upload_free(struct upload *u)
{
	TAILQ_REMOVE(&uploads, u, entry);
	free(u);
}

static void
upload_abort(struct upload *u)
{
	if (u->xfer != NULL)
		storage.store->ops->put_abort(u->xfer);
	u->xfer = NULL;
	abandon_row(u->id);
	upload_free(u);
}

static void
created(void *arg, const PGresult *res)
{
	struct freq	*r = arg;
	struct upload	*u;
	const char	*errstr;
	int		 fd, error;

	if (freq_db_failed(r, res, PGRES_TUPLES_OK)) {
		freq_free(r);
		return;
	}
	r->rec.created_us = strtonum(PQgetvalue(res, 0, 0), 0, INT64_MAX,
	    &errstr);
	r->rec.expires_us = strtonum(PQgetvalue(res, 0, 1), 0, INT64_MAX,
	    &errstr);
	if (r->peer == NULL) {
		forget_row(r->rec.id);
		freq_free(r);
		return;
	}
	if ((u = calloc(1, sizeof(*u))) == NULL)
		fatal("calloc");
	u->peer = r->peer;
	strlcpy(u->id, r->rec.id, sizeof(u->id));
	u->owner = r->rec.owner;
	strlcpy(u->key_id, r->rec.key_id, sizeof(u->key_id));
	strlcpy(u->ref, r->ref, sizeof(u->ref));
	error = storage.store->ops->put_begin(storage.store, u->ref, &fd,
	    &u->xfer);
	if (error != 0) {
		log_warnx("storage: cannot begin %s: %s", u->ref,
		    strerror(error));
		free(u);
		forget_row(r->rec.id);
		freq_error(r, error == ENOSPC ? 507 : 500,
		    "the store cannot take the file now");
		freq_free(r);
		return;
	}
	TAILQ_INSERT_TAIL(&uploads, u, entry);
	freq_reply(r, IMSG_FILE_CREATED, fd, &r->rec, sizeof(r->rec));
	freq_free(r);
}

static int64_t
expiry_seconds(int64_t asked)
{
	int64_t	 retention = storage.conf->retention;

	if (asked > 0 && (retention == 0 || asked < retention))
		return asked;
	return retention;
}

/* Uploads under way for a key, across every frontend of this host. */
static int
uploads_of_key(const char *key_id)
{
	struct upload	*u;
	int		 n = 0;

	TAILQ_FOREACH(u, &uploads, entry)
		if (strcmp(u->key_id, key_id) == 0)
			n++;
	return n;
}

static void
file_create(struct storage_peer *p, struct imsg *imsg)
{
	struct freq	*r = freq_new(p, imsg->hdr.peerid);
	const char	*params[9];
	char		 expires[32];

	IMSG_TAKE(imsg, r->rec);
	r->rec.key_id[sizeof(r->rec.key_id) - 1] = '\0';
	if (storage.conf->max_uploads_per_key > 0 &&
	    uploads_of_key(r->rec.key_id) >=
	    storage.conf->max_uploads_per_key) {
		freq_error(r, 429, "too many uploads at once for this key; "
		    "retry shortly");
		freq_free(r);
		return;
	}
	r->rec.filename[sizeof(r->rec.filename) - 1] = '\0';
	r->rec.mime_type[sizeof(r->rec.mime_type) - 1] = '\0';
	r->rec.purpose[sizeof(r->rec.purpose) - 1] = '\0';
	if (!owner_valid(&r->rec.owner))
		fatalx("storage: create without a valid owner");
	id_new(r->rec.id, sizeof(r->rec.id), "file-");
	store_ref_for_id(r->ref, sizeof(r->ref), r->rec.id);
	snprintf(expires, sizeof(expires), "%" PRId64,
	    expiry_seconds(r->rec.expires_after));
	params[0] = r->rec.id;
	params[1] = r->rec.owner.user_id;
	params[2] = r->rec.owner.workspace_id;
	/* A file sent without a name is known by its id. */
	params[3] = r->rec.filename[0] ? r->rec.filename : r->rec.id;
	params[4] = r->rec.mime_type;
	params[5] = r->rec.purpose[0] ? r->rec.purpose : "user_data";
	params[6] = r->rec.source == SOURCE_UPLOAD ? "upload" :
	    "code_execution_output";
	params[7] = r->ref;
	params[8] = expires;
	freq_query(r, "insert into files (id, user_id, workspace_id, "
	    "filename, mime_type, purpose, source, storage_ref, state, "
	    "expires_at) values ($1, $2, $3, $4, $5, $6, $7, $8, 'writing', "
	    "case when $9::bigint > 0 then clock_timestamp() + "
	    "make_interval(secs => $9::bigint) end) returning "
	    "(extract(epoch from created_at) * 1000000)::bigint, "
	    "coalesce((extract(epoch from expires_at) * 1000000)::bigint, 0)",
	    9, params, created);
}

static void
blob_undone(void *arg, int error)
{
	if (error != 0 && error != ENOENT)
		log_warnx("storage: an uncommitted blob stays for the "
		    "sweep: %s", strerror(error));
}

static void
committed_row(void *arg, const PGresult *res)
{
	struct freq	*r = arg;

	if (freq_db_failed(r, res, PGRES_TUPLES_OK) || PQntuples(res) != 1) {
		if (res != NULL && PQresultStatus(res) == PGRES_TUPLES_OK)
			freq_error(r, 500, "the upload was lost");
		/* The blob is in place but its row is not ready: undo. */
		storage.store->ops->remove(storage.store, r->ref,
		    blob_undone, NULL);
		abandon_row(r->rec.id);
		freq_free(r);
		return;
	}
	rec_from_row(&r->rec, res, 0);
	freq_reply(r, IMSG_FILE_INFO, -1, &r->rec, sizeof(r->rec));
	freq_free(r);
}

/* The store made the bytes durable (or failed to). */
static void
committed_bytes(void *arg, int error)
{
	struct freq	*r = arg;
	const char	*params[5];
	char		 bytes[32];

	if (error != 0) {
		log_warnx("storage: commit of %s failed: %s", r->ref,
		    strerror(error));
		abandon_row(r->rec.id);
		freq_error(r, 500, "the store failed to keep the file");
		freq_free(r);
		return;
	}
	snprintf(bytes, sizeof(bytes), "%" PRId64, r->size);
	params[0] = r->rec.id;
	params[1] = bytes;
	params[2] = r->sha256;
	params[3] = r->rec.purpose;
	params[4] = r->expires;
	if (db_query(storage.db, "update files set state = 'ready', "
	    "bytes = $2, sha256 = $3, purpose = $4, expires_at = case when "
	    "$5::bigint > 0 then created_at + make_interval(secs => "
	    "$5::bigint) end, updated_at = clock_timestamp() "
	    "where id = $1 and state = 'writing' returning " FILE_COLS,
	    5, params, committed_row, r) == -1)
		committed_row(r, NULL);
}

static void
file_commit(struct storage_peer *p, struct imsg *imsg)
{
	struct file_commit	 fc;
	struct store_xfer	*xfer;
	struct upload		*u;
	struct freq		*r;

	IMSG_TAKE(imsg, fc);
	fc.key.id[sizeof(fc.key.id) - 1] = '\0';
	fc.sha256[sizeof(fc.sha256) - 1] = '\0';
	if ((u = upload_find(fc.key.id, &fc.key.owner)) == NULL ||
	    u->peer != p) {
		storage_error(p, imsg->hdr.peerid, 500, "unknown upload");
		return;
	}
	r = freq_new(p, imsg->hdr.peerid);
	strlcpy(r->rec.id, u->id, sizeof(r->rec.id));
	strlcpy(r->sha256, fc.sha256, sizeof(r->sha256));
	fc.purpose[sizeof(fc.purpose) - 1] = '\0';
	strlcpy(r->rec.purpose, fc.purpose[0] ? fc.purpose : "user_data",
	    sizeof(r->rec.purpose));
	snprintf(r->expires, sizeof(r->expires), "%" PRId64,
	    expiry_seconds(fc.expires_after));
	strlcpy(r->ref, u->ref, sizeof(r->ref));
	r->size = fc.bytes;
	xfer = u->xfer;
	upload_free(u);
	/* put_commit frees the transfer whatever the outcome. */
	storage.store->ops->put_commit(xfer, fc.bytes, committed_bytes, r);
}

static void
file_abort(struct storage_peer *p, struct imsg *imsg)
{
	struct file_key	 fk;
	struct upload	*u;

	IMSG_TAKE(imsg, fk);
	fk.id[sizeof(fk.id) - 1] = '\0';
	if ((u = upload_find(fk.id, &fk.owner)) != NULL && u->peer == p)
		upload_abort(u);
}

/* --- reads --- */

static int
key_params(struct freq *r, const struct file_key *fk, const char **params)
{
	r->rec.owner = fk->owner;
	strlcpy(r->rec.id, fk->id, sizeof(r->rec.id));
	params[0] = r->rec.id;
	params[1] = r->rec.owner.user_id;
	params[2] = r->rec.owner.workspace_id;
	return id_valid(fk->id, "file-") && owner_valid(&fk->owner);
}

static int
found_row(struct freq *r, const PGresult *res)
{
	if (freq_db_failed(r, res, PGRES_TUPLES_OK))
		return 0;
	if (PQntuples(res) == 0) {
		freq_error(r, 404, "no such file");
		return 0;
	}
	rec_from_row(&r->rec, res, 0);
	strlcpy(r->ref, PQgetvalue(res, 0, COL_REF), sizeof(r->ref));
	return 1;
}

static void
got_file(void *arg, const PGresult *res)
{
	struct freq	*r = arg;

	if (found_row(r, res))
		freq_reply(r, IMSG_FILE_INFO, -1, &r->rec, sizeof(r->rec));
	freq_free(r);
}

/*
 * A request naming one file: its key becomes the query's parameters
 * $1 (id), $2 (user) and $3 (workspace).  A malformed key names no
 * file anybody can see; it is answered here and NULL returned.
 */
static struct freq *
keyed_request(struct storage_peer *p, struct imsg *imsg, const char **params)
{
	struct file_key	 fk;
	struct freq	*r = freq_new(p, imsg->hdr.peerid);

	IMSG_TAKE(imsg, fk);
	fk.id[sizeof(fk.id) - 1] = '\0';
	if (!key_params(r, &fk, params)) {
		freq_error(r, 404, "no such file");
		freq_free(r);
		return NULL;
	}
	return r;
}

static void
file_get(struct storage_peer *p, struct imsg *imsg)
{
	struct freq	*r;
	const char	*params[3];

	if ((r = keyed_request(p, imsg, params)) == NULL)
		return;
	freq_query(r, "select " FILE_COLS " from files where id = $1 and "
	    FILE_OWNED " and " FILE_VISIBLE, 3, params, got_file);
}

/* Resolves a Range against the blob's real size, as nginx does. */
static int
resolve_range(const struct file_open *fo, int64_t size, int64_t *off,
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
opened(void *arg, int error, int fd, int seekable)
{
	struct freq		*r = arg;
	struct file_opened	 fo;

	if (error != 0) {
		log_warnx("storage: cannot read %s: %s", r->ref,
		    strerror(error));
		freq_error(r, 500, "the file's bytes cannot be read");
		freq_free(r);
		return;
	}
	memset(&fo, 0, sizeof(fo));
	fo.rec = r->rec;
	fo.size = r->size;
	fo.status = r->status;
	fo.offset = r->off;
	fo.length = r->len;
	fo.seekable = seekable;
	freq_reply(r, IMSG_FILE_OPENED, fd, &fo, sizeof(fo));
	freq_free(r);
}

static void
stated(void *arg, int error, off_t size)
{
	struct freq		*r = arg;
	struct file_opened	 fo;

	if (error != 0) {
		log_warnx("storage: blob %s of %s: %s", r->ref, r->rec.id,
		    strerror(error));
		freq_error(r, 500, "the file's bytes are missing");
		freq_free(r);
		return;
	}
	r->size = size;
	r->status = resolve_range(&r->open, size, &r->off, &r->len);
	if (r->status == 416 || r->peer == NULL) {
		memset(&fo, 0, sizeof(fo));
		fo.rec = r->rec;
		fo.size = size;
		fo.status = 416;
		freq_reply(r, IMSG_FILE_OPENED, -1, &fo, sizeof(fo));
		freq_free(r);
		return;
	}
	storage.store->ops->get(storage.store, r->ref, r->off, r->len,
	    opened, r);
}

static void
found_for_open(void *arg, const PGresult *res)
{
	struct freq	*r = arg;

	if (!found_row(r, res)) {
		freq_free(r);
		return;
	}
	storage.store->ops->stat(storage.store, r->ref, stated, r);
}

static void
file_open(struct storage_peer *p, struct imsg *imsg)
{
	struct freq	*r = freq_new(p, imsg->hdr.peerid);
	const char	*params[3];

	IMSG_TAKE(imsg, r->open);
	r->open.key.id[sizeof(r->open.key.id) - 1] = '\0';
	if (!key_params(r, &r->open.key, params)) {
		freq_error(r, 404, "no such file");
		freq_free(r);
		return;
	}
	freq_query(r, "select " FILE_COLS " from files where id = $1 and "
	    FILE_OWNED " and " FILE_VISIBLE, 3, params, found_for_open);
}

/* --- delete --- */

static void
bytes_removed(void *arg, int error)
{
	char	*id = arg;
	const char *params[1] = { id };

	if (error == 0 || error == ENOENT) {
		if (db_query(storage.db, "delete from files where id = $1 "
		    "and deleted_at is not null", 1, params, row_deleted,
		    NULL) == -1)
			log_debug("storage: %s left for the sweep", id);
	} else
		log_warnx("storage: removing %s failed (%s); the sweep will "
		    "retry", id, strerror(error));
	free(id);
}

static void
deleted(void *arg, const PGresult *res)
{
	struct freq	*r = arg;
	struct file_key	 fk;
	char		*id;

	if (freq_db_failed(r, res, PGRES_TUPLES_OK)) {
		freq_free(r);
		return;
	}
	if (PQntuples(res) == 0) {
		freq_error(r, 404, "no such file");
		freq_free(r);
		return;
	}
	memset(&fk, 0, sizeof(fk));
	strlcpy(fk.id, r->rec.id, sizeof(fk.id));
	fk.owner = r->rec.owner;
	freq_reply(r, IMSG_FILE_DELETED, -1, &fk, sizeof(fk));
	/* Best effort now; the sweep finishes what this cannot. */
	if ((id = strdup(r->rec.id)) != NULL)
		storage.store->ops->remove(storage.store,
		    PQgetvalue(res, 0, 0), bytes_removed, id);
	freq_free(r);
}

static void
file_delete(struct storage_peer *p, struct imsg *imsg)
{
	struct freq	*r;
	const char	*params[3];

	if ((r = keyed_request(p, imsg, params)) == NULL)
		return;
	freq_query(r, "update files set deleted_at = now(), updated_at = "
	    "clock_timestamp() where id = $1 and " FILE_OWNED " and "
	    FILE_VISIBLE " returning storage_ref", 3, params, deleted);
}

/* --- list --- */

static void
listed(void *arg, const PGresult *res)
{
	struct freq		*r = arg;
	struct file_list_end	 end;
	struct file_rec		 rec;
	int			 i, n, limit = r->list->limit, reverse;

	if (freq_db_failed(r, res, PGRES_TUPLES_OK)) {
		freq_free(r);
		return;
	}
	n = PQntuples(res);
	memset(&end, 0, sizeof(end));
	end.has_more = n > limit;
	if (n > limit)
		n = limit;
	/* before_id walks backwards; the page keeps the natural order. */
	reverse = r->list->before_id[0] != '\0';
	for (i = 0; i < n; i++) {
		rec_from_row(&rec, res, reverse ? n - 1 - i : i);
		freq_reply(r, IMSG_FILE_LIST_ITEM, -1, &rec, sizeof(rec));
	}
	end.count = n;
	freq_reply(r, IMSG_FILE_LIST_END, -1, &end, sizeof(end));
	freq_free(r);
}

static void
ids_array(const struct file_list_req *l, char *buf, size_t len)
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
list_cursor(const struct file_list_req *l)
{
	return l->before_id[0] ? l->before_id : l->after_id;
}

/*
 * A keyset page: the cursor's (created_at, id) bounds a range scan of
 * the files_list index, whatever the page number.
 */
static void
list_page(struct freq *r)
{
	const struct file_list_req *l = r->list;
	const char	*params[7], *dir;
	char		 sql[1536], limit[16], ids[100 * IDLEN + 8];
	int		 desc;

	desc = l->order == ORDER_DESC;
	/* Walking before the cursor is walking the other way. */
	if (l->before_id[0])
		desc = !desc;
	dir = desc ? "desc" : "asc";
	snprintf(limit, sizeof(limit), "%d", l->limit + 1);
	ids_array(l, ids, sizeof(ids));
	params[0] = list_cursor(l);
	params[1] = l->owner.user_id;
	params[2] = l->owner.workspace_id;
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
	freq_query(r, sql, 7, params, listed);
}

static void
list_cursor_checked(void *arg, const PGresult *res)
{
	struct freq	*r = arg;

	if (freq_db_failed(r, res, PGRES_TUPLES_OK)) {
		freq_free(r);
		return;
	}
	if (PQntuples(res) == 0) {
		freq_error(r, 404, "the cursor names no file you can see");
		freq_free(r);
		return;
	}
	strlcpy(r->cursor_created, PQgetvalue(res, 0, 0),
	    sizeof(r->cursor_created));
	list_page(r);
}

/* A cursor is only good if the caller could read that file itself. */
static void
file_list(struct storage_peer *p, struct imsg *imsg)
{
	struct freq	*r = freq_new(p, imsg->hdr.peerid);
	const char	*params[3];

	if ((r->list = malloc(sizeof(*r->list))) == NULL)
		fatal("malloc");
	IMSG_TAKE(imsg, *r->list);
	r->list->after_id[IDLEN - 1] = r->list->before_id[IDLEN - 1] = '\0';
	r->list->purpose[PURPOSE_MAX - 1] = '\0';
	if (!owner_valid(&r->list->owner) || r->list->limit < 1 ||
	    r->list->limit > 1000 || r->list->nids < 0 ||
	    r->list->nids > 100)
		fatalx("storage: bad list request");
	if (list_cursor(r->list)[0] == '\0') {
		list_page(r);
		return;
	}
	params[0] = list_cursor(r->list);
	params[1] = r->list->owner.user_id;
	params[2] = r->list->owner.workspace_id;
	/* Text output of timestamptz keeps every microsecond. */
	freq_query(r, "select created_at::text from files where id = $1 and "
	    FILE_OWNED " and " FILE_VISIBLE, 3, params, list_cursor_checked);
}

/* --- health --- */

static void
health(struct storage_peer *p, struct imsg *imsg)
{
	struct health_msg	 hm;

	memset(&hm, 0, sizeof(hm));
	hm.db_up = storage.db != NULL && db_up(storage.db);
	hm.store_up = storage.store_up;
	storage_reply(p, IMSG_HEALTH, imsg->hdr.peerid, -1, &hm, sizeof(hm));
}

void
files_dispatch(struct storage_peer *p, struct imsg *imsg)
{
	switch (imsg->hdr.type) {
	case IMSG_AUTH_LOOKUP:
		auth_lookup(p, imsg);
		break;
	case IMSG_FILE_CREATE:
		file_create(p, imsg);
		break;
	case IMSG_FILE_COMMIT:
		file_commit(p, imsg);
		break;
	case IMSG_FILE_ABORT:
		file_abort(p, imsg);
		break;
	case IMSG_FILE_GET:
		file_get(p, imsg);
		break;
	case IMSG_FILE_OPEN:
		file_open(p, imsg);
		break;
	case IMSG_FILE_LIST:
		file_list(p, imsg);
		break;
	case IMSG_FILE_DELETE:
		file_delete(p, imsg);
		break;
	case IMSG_HEALTH_REQ:
		health(p, imsg);
		break;
	default:
		fatalx("storage: unexpected message %u", imsg->hdr.type);
	}
}

void
files_peer_lost(struct storage_peer *p)
{
	struct freq	*r;
	struct upload	*u, *tmp;

	TAILQ_FOREACH(r, &freqs, entry)
		if (r->peer == p)
			r->peer = NULL;
	TAILQ_FOREACH_SAFE(u, &uploads, entry, tmp)
		if (u->peer == p)
			upload_abort(u);
}
