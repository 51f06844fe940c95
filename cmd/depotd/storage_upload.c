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
 * storage_upload.c: uploads, from intent to commit or abort.
 *
 * Upload follows an intent protocol so that no failure leaves bytes
 * nobody can reclaim: the row is inserted in state 'writing' first,
 * the bytes are streamed, then one statement makes the row 'ready'.
 * Any failure removes the bytes, then the row; whatever a crash
 * interrupts, the sweep finds by its 'writing' row.
 *
 * An upload belongs to the handle it was created under and goes when
 * that handle does (the request ended, the channel closed).  While it
 * lives, a heartbeat keeps its row's updated_at fresh so that no sweep,
 * on this host or another, takes its bytes; one whose bytes stopped
 * flowing for writing-grace is abandoned here and its row left to the
 * sweep.
 */
#include <sys/types.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mediatype.h"
#include "util.h"
#include "storage.h"

#define UPLOAD_HEARTBEAT	10	/* seconds between row refreshes, */
#define UPLOAD_IDLE_MIN		15	/* and the least idle time allowed: */
					/* frontends report every 5 s */

/* FILE_CREATE: the intent row is being inserted. */
struct upload_create_request {
	struct storage_request	 req;
	char			 handle[HANDLE_LEN];
	struct principal_ref	 who;
	struct file_rec		 rec;
	char			 ref[128];
};
STORAGE_REQUEST_FIRST(upload_create_request);

/* FILE_COMMIT: the store makes the bytes durable, then the row ready. */
struct upload_commit_request {
	struct storage_request	 req;
	char			 id[IDLEN];
	char			 ref[128];
	int64_t			 size;
	char			 sha256[65];
	char			 purpose[PURPOSE_MAX];
	char			 expires[32];
};
STORAGE_REQUEST_FIRST(upload_commit_request);

/* An upload between FILE_CREATED and commit or abort. */
struct upload {
	TAILQ_ENTRY(upload)	 entry;
	struct storage_peer	*peer;
	char			 handle[HANDLE_LEN];
	char			 id[IDLEN];
	char			 key_id[IDLEN];
	char			 ref[128];
	struct store_xfer	*xfer;
	int64_t			 last_progress;	/* mono_seconds() */
};

static TAILQ_HEAD(, upload)	 uploads = TAILQ_HEAD_INITIALIZER(uploads);
static struct event		*ev_heartbeat;

static void	upload_heartbeat_arm(void);

static struct upload *
upload_find(struct storage_peer *p, const struct file_key *fk)
{
	struct upload	*u;

	TAILQ_FOREACH(u, &uploads, entry)
		if (u->peer == p && strcmp(u->id, fk->id) == 0 &&
		    strcmp(u->handle, fk->handle) == 0)
			return u;
	return NULL;
}

static void
upload_row_done(void *arg, const PGresult *res)
{
	if (res != NULL && PQresultStatus(res) != PGRES_COMMAND_OK)
		log_warnx("database: %s", PQresultErrorMessage(res));
}

/* A row whose upload never reached the store goes at once. */
static void
upload_forget_row(const char *id)
{
	const char	*params[1] = { id };

	if (db_query(storage.db, "delete from files where id = $1 and "
	    "state = 'writing'", 1, params, upload_row_done, NULL) == -1)
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
upload_abandon_row(const char *id)
{
	const char	*params[1] = { id };

	if (db_query(storage.db, "update files set updated_at = "
	    "'epoch'::timestamptz where id = $1 and state = 'writing'", 1,
	    params, upload_row_done, NULL) == -1)
		log_warnx("storage: %s stays in 'writing' for the sweep", id);
}

static void
upload_free(struct upload *u)
{
	TAILQ_REMOVE(&uploads, u, entry);
	free(u);
}

static void
upload_drop(struct upload *u)
{
	if (u->xfer != NULL)
		storage.store->ops->put_abort(u->xfer);
	u->xfer = NULL;
	upload_abandon_row(u->id);
	upload_free(u);
}

static void
upload_created(void *arg, const PGresult *res)
{
	struct upload_create_request	*r = arg;
	struct upload			*u;
	const char			*errstr;
	int				 fd, error;

	if (storage_request_db_failed(&r->req, res, PGRES_TUPLES_OK)) {
		storage_request_free(&r->req);
		return;
	}
	r->rec.created_us = strtonum(PQgetvalue(res, 0, 0), 0, INT64_MAX,
	    &errstr);
	r->rec.expires_us = strtonum(PQgetvalue(res, 0, 1), 0, INT64_MAX,
	    &errstr);
	/* The request ended while the row was inserted: no upload. */
	if (r->req.peer == NULL ||
	    !storage_auth_handle_live(r->req.peer, r->handle)) {
		upload_forget_row(r->rec.id);
		storage_request_error(&r->req, 401, "the request ended");
		storage_request_free(&r->req);
		return;
	}
	if ((u = calloc(1, sizeof(*u))) == NULL)
		fatal("calloc");
	u->peer = r->req.peer;
	strlcpy(u->handle, r->handle, sizeof(u->handle));
	strlcpy(u->id, r->rec.id, sizeof(u->id));
	strlcpy(u->key_id, r->who.key_id, sizeof(u->key_id));
	strlcpy(u->ref, r->ref, sizeof(u->ref));
	u->last_progress = mono_seconds();
	error = storage.store->ops->put_begin(storage.store, u->ref, &fd,
	    &u->xfer);
	if (error != 0) {
		log_warnx("storage: cannot begin %s: %s", u->ref,
		    strerror(error));
		free(u);
		upload_forget_row(r->rec.id);
		storage_request_error(&r->req, error == ENOSPC ? 507 : 500,
		    "the store cannot take the file now");
		storage_request_free(&r->req);
		return;
	}
	TAILQ_INSERT_TAIL(&uploads, u, entry);
	upload_heartbeat_arm();
	storage_request_reply(&r->req, IMSG_FILE_CREATED, fd, &r->rec,
	    sizeof(r->rec));
	storage_request_free(&r->req);
}

static int64_t
upload_expiry_seconds(int64_t asked)
{
	int64_t	 retention = storage.conf->retention;

	if (asked > 0 && (retention == 0 || asked < retention))
		return asked;
	return retention;
}

/* Uploads under way for a key, across every frontend of this host. */
static int
upload_count_of_key(const char *key_id)
{
	struct upload	*u;
	int		 n = 0;

	TAILQ_FOREACH(u, &uploads, entry)
		if (strcmp(u->key_id, key_id) == 0)
			n++;
	return n;
}

static void
upload_insert(struct upload_create_request *r)
{
	const char	*params[9];
	char		 expires[32];

	snprintf(expires, sizeof(expires), "%" PRId64,
	    upload_expiry_seconds(r->rec.expires_after));
	params[0] = r->rec.id;
	params[1] = r->who.owner.user_id;
	params[2] = r->who.owner.workspace_id;
	/* A file sent without a name is known by its id. */
	params[3] = r->rec.filename[0] ? r->rec.filename : r->rec.id;
	params[4] = r->rec.mime_type;
	params[5] = r->rec.purpose[0] ? r->rec.purpose : "user_data";
	params[6] = r->rec.source == SOURCE_UPLOAD ? "upload" :
	    "code_execution_output";
	params[7] = r->ref;
	params[8] = expires;
	if (storage_request_query(&r->req, "insert into files (id, user_id, "
	    "workspace_id, filename, mime_type, purpose, source, "
	    "storage_ref, state, expires_at) values ($1, $2, $3, $4, $5, "
	    "$6, $7, $8, 'writing', case when $9::bigint > 0 then "
	    "clock_timestamp() + make_interval(secs => $9::bigint) end) "
	    "returning (extract(epoch from created_at) * 1000000)::bigint, "
	    "coalesce((extract(epoch from expires_at) * 1000000)::bigint, 0)",
	    9, params, upload_created) == -1)
		storage_request_free(&r->req);
}

void
storage_upload_create(struct storage_peer *p, struct imsg *imsg)
{
	struct file_create		 fc;
	const struct principal_ref	*who;
	struct upload_create_request	*r;

	IMSG_TAKE(imsg, fc);
	fc.handle[sizeof(fc.handle) - 1] = '\0';
	if ((who = storage_auth_handle(p, imsg->hdr.peerid, fc.handle)) == NULL)
		return;
	if (storage.conf->max_uploads_per_key > 0 &&
	    upload_count_of_key(who->key_id) >=
	    storage.conf->max_uploads_per_key) {
		storage_peer_error(p, imsg->hdr.peerid, 429,
		    "too many uploads at "
		    "once for this key; retry shortly");
		return;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL)
		fatal("calloc");
	storage_request_begin(&r->req, p, imsg->hdr.peerid);
	strlcpy(r->handle, fc.handle, sizeof(r->handle));
	r->who = *who;
	r->rec = fc.rec;
	r->rec.filename[sizeof(r->rec.filename) - 1] = '\0';
	r->rec.mime_type[sizeof(r->rec.mime_type) - 1] = '\0';
	r->rec.purpose[sizeof(r->rec.purpose) - 1] = '\0';
	/*
	 * The type becomes a Content-Type at every download: nothing a
	 * frontend or a sandbox (through the broker) sends unchecked.
	 */
	if (!media_type_ok(r->rec.mime_type)) {
		if (r->rec.mime_type[0] != '\0')
			log_info("storage: a malformed media type is stored "
			    "as %s", MEDIA_TYPE_DEFAULT);
		strlcpy(r->rec.mime_type, MEDIA_TYPE_DEFAULT,
		    sizeof(r->rec.mime_type));
	}
	/* All the broker stores is what code produced, whatever it says. */
	if (storage_peer_is_broker(p)) {
		r->rec.source = SOURCE_CODE_EXECUTION;
		strlcpy(r->rec.purpose, "code_execution_output",
		    sizeof(r->rec.purpose));
	}
	id_new(r->rec.id, sizeof(r->rec.id), "file-");
	store_ref_for_id(r->ref, sizeof(r->ref), r->rec.id);
	upload_insert(r);
	explicit_bzero(&fc, sizeof(fc));
}

/* The upload a message's file_key names on this channel, if any. */
static struct upload *
upload_of_msg(struct storage_peer *p, struct imsg *imsg)
{
	struct file_key	 fk;

	IMSG_TAKE(imsg, fk);
	fk.handle[sizeof(fk.handle) - 1] = fk.id[sizeof(fk.id) - 1] = '\0';
	return upload_find(p, &fk);
}

/* The frontend saw bytes flow into the upload's descriptor. */
void
storage_upload_progress(struct storage_peer *p, struct imsg *imsg)
{
	struct upload	*u;

	if ((u = upload_of_msg(p, imsg)) == NULL)
		return;
	u->last_progress = mono_seconds();
	storage_auth_handle_touch(p, u->handle);
}

static void
upload_blob_undone(void *arg, int error)
{
	if (error != 0 && error != ENOENT)
		log_warnx("storage: an uncommitted blob stays for the "
		    "sweep: %s", strerror(error));
}

static void
upload_committed_row(void *arg, const PGresult *res)
{
	struct upload_commit_request	*r = arg;
	struct file_rec			 rec;

	if (storage_request_db_failed(&r->req, res, PGRES_TUPLES_OK) ||
	    PQntuples(res) != 1) {
		if (res != NULL && PQresultStatus(res) == PGRES_TUPLES_OK)
			storage_request_error(&r->req, 500,
			    "the upload was lost");
		/* The blob is in place but its row is not ready: undo. */
		storage.store->ops->remove(storage.store, r->ref,
		    upload_blob_undone, NULL);
		upload_abandon_row(r->id);
		storage_request_free(&r->req);
		return;
	}
	storage_request_file_from_row(&rec, res, 0);
	storage_request_reply(&r->req, IMSG_FILE_INFO, -1, &rec, sizeof(rec));
	storage_request_free(&r->req);
}

/* The store made the bytes durable (or failed to). */
static void
upload_committed_bytes(void *arg, int error)
{
	struct upload_commit_request	*r = arg;
	const char			*params[5];
	char				 bytes[32];

	if (error != 0) {
		log_warnx("storage: commit of %s failed: %s", r->ref,
		    strerror(error));
		upload_abandon_row(r->id);
		storage_request_error(&r->req, 500,
		    "the store failed to keep the file");
		storage_request_free(&r->req);
		return;
	}
	snprintf(bytes, sizeof(bytes), "%" PRId64, r->size);
	params[0] = r->id;
	params[1] = bytes;
	params[2] = r->sha256;
	params[3] = r->purpose;
	params[4] = r->expires;
	if (db_query(storage.db, "update files set state = 'ready', "
	    "bytes = $2, sha256 = $3, purpose = $4, expires_at = case when "
	    "$5::bigint > 0 then created_at + make_interval(secs => "
	    "$5::bigint) end, updated_at = clock_timestamp() "
	    "where id = $1 and state = 'writing' returning " FILE_COLS,
	    5, params, upload_committed_row, r) == -1)
		upload_committed_row(r, NULL);
}

void
storage_upload_commit(struct storage_peer *p, struct imsg *imsg)
{
	struct file_commit		 fc;
	struct store_xfer		*xfer;
	struct upload			*u;
	struct upload_commit_request	*r;

	IMSG_TAKE(imsg, fc);
	fc.key.handle[sizeof(fc.key.handle) - 1] = '\0';
	fc.key.id[sizeof(fc.key.id) - 1] = '\0';
	fc.sha256[sizeof(fc.sha256) - 1] = '\0';
	fc.purpose[sizeof(fc.purpose) - 1] = '\0';
	if (storage_auth_handle(p, imsg->hdr.peerid, fc.key.handle) == NULL)
		return;
	if ((u = upload_find(p, &fc.key)) == NULL) {
		storage_peer_error(p, imsg->hdr.peerid, 500, "unknown upload");
		return;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL)
		fatal("calloc");
	storage_request_begin(&r->req, p, imsg->hdr.peerid);
	strlcpy(r->id, u->id, sizeof(r->id));
	strlcpy(r->sha256, fc.sha256, sizeof(r->sha256));
	strlcpy(r->purpose, fc.purpose[0] ? fc.purpose : "user_data",
	    sizeof(r->purpose));
	if (storage_peer_is_broker(p))
		strlcpy(r->purpose, "code_execution_output",
		    sizeof(r->purpose));
	snprintf(r->expires, sizeof(r->expires), "%" PRId64,
	    upload_expiry_seconds(fc.expires_after));
	strlcpy(r->ref, u->ref, sizeof(r->ref));
	r->size = fc.bytes;
	xfer = u->xfer;
	upload_free(u);
	/* put_commit frees the transfer whatever the outcome. */
	storage.store->ops->put_commit(xfer, fc.bytes,
	    upload_committed_bytes, r);
}

void
storage_upload_abort(struct storage_peer *p, struct imsg *imsg)
{
	struct upload	*u;

	if ((u = upload_of_msg(p, imsg)) != NULL)
		upload_drop(u);
}

/* The handle was released or expired: its uploads go with it. */
void
storage_upload_handle_gone(struct storage_peer *p, const char *handle)
{
	struct upload	*u, *tmp;

	TAILQ_FOREACH_SAFE(u, &uploads, entry, tmp)
		if (u->peer == p && strcmp(u->handle, handle) == 0)
			upload_drop(u);
}

void
storage_upload_peer_lost(struct storage_peer *p)
{
	struct upload	*u, *tmp;

	TAILQ_FOREACH_SAFE(u, &uploads, entry, tmp)
		if (u->peer == p)
			upload_drop(u);
}

/*
 * Live uploads keep their rows young; idle ones are dropped.  The
 * refresh names every live id in one statement, so its cost does not
 * grow with the number of uploads beyond the array.
 */
static void
upload_heartbeat(evutil_socket_t fd, short what, void *arg)
{
	struct upload	*u, *tmp;
	const char	*params[1];
	char		*ids;
	size_t		 len = 3, n = 0;
	int64_t		 now = mono_seconds();

	TAILQ_FOREACH_SAFE(u, &uploads, entry, tmp) {
		if (now - u->last_progress > storage.conf->writing_grace &&
		    now - u->last_progress > UPLOAD_IDLE_MIN) {
			log_warnx("storage: upload %s idle past writing-grace; "
			    "abandoned", u->id);
			upload_drop(u);
			continue;
		}
		len += strlen(u->id) + 1;
	}
	if ((ids = malloc(len)) == NULL)
		fatal("malloc");
	strlcpy(ids, "{", len);
	TAILQ_FOREACH(u, &uploads, entry) {
		if (n++ > 0)
			strlcat(ids, ",", len);
		strlcat(ids, u->id, len);
	}
	strlcat(ids, "}", len);
	params[0] = ids;
	if (n > 0 && storage.db != NULL && db_query(storage.db, "update files "
	    "set updated_at = clock_timestamp() where id = any($1::text[]) "
	    "and state = 'writing'", 1, params, upload_row_done, NULL) == -1)
		log_warnx("storage: live uploads not refreshed: the database "
		    "is unavailable");
	free(ids);
	upload_heartbeat_arm();
}

/* Several refreshes fit in writing-grace, however short. */
static void
upload_heartbeat_arm(void)
{
	struct timeval	 tv = { UPLOAD_HEARTBEAT, 0 };

	/* A third of it, and at least a second: it may be 1 or 2. */
	if (storage.conf->writing_grace / 3 < tv.tv_sec)
		tv.tv_sec = storage.conf->writing_grace / 3;
	if (tv.tv_sec < 1)
		tv.tv_sec = 1;

	if (ev_heartbeat == NULL)
		ev_heartbeat = evtimer_new(storage.base, upload_heartbeat,
		    NULL);
	if (TAILQ_EMPTY(&uploads))
		evtimer_del(ev_heartbeat);
	else if (!evtimer_pending(ev_heartbeat, NULL))
		evtimer_add(ev_heartbeat, &tv);
}
