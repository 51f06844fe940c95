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
 * broker_output.c: what a run produced becomes files of the caller.
 *
 * One file at a time (an upload counts against the caller's key's
 * max-uploads-per-key): the storage helper is asked to create it under
 * the handle the frontend delegated for the lease, GetFile streams the
 * bytes into the descriptor it hands back while they are hashed, and
 * the file is committed, or aborted when the fetch failed or passed
 * the call's byte budget.  A file that fails is logged and skipped; it
 * never fails the run.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "calltab.h"
#include "log.h"
#include "mediatype.h"
#include "names.h"
#include "util.h"
#include "depotd.h"
#include "broker.h"

#define OUTPUT_PROGRESS	5	/* seconds between heartbeats */

struct broker_output {
	struct call_entry	 ce;		/* storage call; id 0: none */
	struct broker_lease	*lease;		/* NULL once the lease went */
	char			 handle[HANDLE_LEN];
	struct json_object	*queue;		/* produced files, in turn */
	size_t			 next;
	int64_t			 budget;	/* bytes left for this call */
	struct json_object	*stored;	/* [{filename, file_id, ...}] */
	struct json_object	*skipped;	/* [{path, reason}] */
	struct file_rec		 rec;		/* the one being stored */
	const char		*path;
	struct sbx_request	*get;
	struct sha256_ctx	 sha;
	time_t			 last_progress;
	broker_output_done_cb	 done;
};

/* The outputs waiting on the storage helper, by the id of their call. */
static struct calltab		 calls = CALLTAB_INITIALIZER(calls);
static struct imsgev		*storage_iev;

static void	broker_output_next(struct broker_output *);

void
broker_output_storage_attach(struct imsgev *iev)
{
	storage_iev = iev;
}

/* A call the storage helper answers; -1 when it could not be sent. */
static int
broker_output_call(struct broker_output *o, uint32_t type, const void *data,
    size_t len)
{
	if (storage_iev == NULL)
		return -1;
	calltab_add(&calls, &o->ce);
	if (imsgev_compose(storage_iev, type, o->ce.id, 0, -1, data,
	    len) == -1) {
		calltab_remove(&calls, &o->ce);
		o->ce.id = 0;
		return -1;
	}
	return 0;
}

/* A message no answer comes for (abort, progress, a session bound). */
void
broker_output_tell(uint32_t type, const void *data, size_t len)
{
	if (storage_iev != NULL)
		imsgev_compose(storage_iev, type, 0, 0, -1, data, len);
}

static void
broker_output_skip(struct broker_output *o, const char *reason)
{
	struct json_object	*s = json_object_new_object();

	log_warnx("session %s: output %s not stored: %s",
	    o->lease != NULL ? o->lease->session : "-", o->path, reason);
	json_object_object_add(s, "path", json_object_new_string(o->path));
	json_object_object_add(s, "reason", json_object_new_string(reason));
	json_object_array_add(o->skipped, s);
}

static void
broker_output_free(struct broker_output *o)
{
	sbx_cancel(o->get);
	sha256_abort(&o->sha);
	json_object_put(o->queue);
	json_object_put(o->stored);
	json_object_put(o->skipped);
	free(o);
}

static void
broker_output_finish(struct broker_output *o)
{
	struct json_object	*res = json_object_new_object();

	json_object_object_add(res, "stored", json_object_get(o->stored));
	json_object_object_add(res, "skipped", json_object_get(o->skipped));
	if (o->lease != NULL) {
		o->lease->output = NULL;
		o->done(o->lease, res);
	}
	json_object_put(res);
	broker_output_free(o);
}

/* The file being stored is given up: the storage helper drops it. */
static void
broker_output_abort(struct broker_output *o)
{
	struct file_key	 fk;

	memset(&fk, 0, sizeof(fk));
	strlcpy(fk.handle, o->handle,
	    sizeof(fk.handle));
	strlcpy(fk.id, o->rec.id, sizeof(fk.id));
	broker_output_tell(IMSG_FILE_ABORT, &fk, sizeof(fk));
	sha256_abort(&o->sha);
}

static void
broker_output_tap(void *arg, const void *p, size_t len)
{
	struct broker_output	*o = arg;
	struct file_key		 fk;
	time_t			 now = time(NULL);

	sha256_update(&o->sha, p, len);
	/* A long fetch must not look abandoned to the storage helper. */
	if (now - o->last_progress >= OUTPUT_PROGRESS && o->lease != NULL) {
		o->last_progress = now;
		memset(&fk, 0, sizeof(fk));
		strlcpy(fk.handle, o->handle, sizeof(fk.handle));
		strlcpy(fk.id, o->rec.id, sizeof(fk.id));
		broker_output_tell(IMSG_FILE_PROGRESS, &fk, sizeof(fk));
	}
}

static void
broker_output_fetched(void *arg, long status, struct json_object *body,
    int64_t bytes, const char *err)
{
	struct broker_output	*o = arg;
	struct file_commit	 fc;

	o->get = NULL;
	if (status != 200 || err != NULL || o->lease == NULL) {
		broker_output_skip(o, err != NULL ? err : "GetFile refused");
		broker_output_abort(o);
		broker_output_next(o);
		return;
	}
	o->budget -= bytes;
	memset(&fc, 0, sizeof(fc));
	strlcpy(fc.key.handle, o->handle, sizeof(fc.key.handle));
	strlcpy(fc.key.id, o->rec.id, sizeof(fc.key.id));
	fc.bytes = bytes;
	sha256_final_hex(&o->sha, fc.sha256);
	strlcpy(fc.purpose, "code_execution_output", sizeof(fc.purpose));
	o->rec.bytes = bytes;
	if (broker_output_call(o, IMSG_FILE_COMMIT, &fc, sizeof(fc)) == -1) {
		broker_output_skip(o, "storage unreachable");
		broker_output_next(o);
	}
}

/* The storage helper made the file: fetch its bytes into it. */
static void
broker_output_created(struct broker_output *o, struct imsg *imsg)
{
	int	 fd = imsg_get_fd(imsg);

	memcpy(&o->rec, imsg->data, sizeof(o->rec));
	o->rec.id[sizeof(o->rec.id) - 1] = '\0';
	if (o->lease == NULL || sha256_init(&o->sha) == -1) {
		close(fd);
		broker_output_abort(o);
		broker_output_next(o);
		return;
	}
	o->last_progress = time(NULL);
	o->get = sbx_get(&broker.backend, o->lease->session, o->path, fd,
	    o->budget, broker_output_tap, broker_output_fetched, o);
	if (o->get == NULL) {
		broker_output_skip(o, "GetFile could not start");
		broker_output_abort(o);
		broker_output_next(o);
	}
}

static void
broker_output_committed(struct broker_output *o)
{
	struct json_object	*f = json_object_new_object();

	json_object_object_add(f, "path", json_object_new_string(o->path));
	json_object_object_add(f, "filename",
	    json_object_new_string(o->rec.filename));
	json_object_object_add(f, "file_id", json_object_new_string(o->rec.id));
	json_object_object_add(f, "size_bytes",
	    json_object_new_int64(o->rec.bytes));
	json_object_object_add(f, "mime_type",
	    json_object_new_string(o->rec.mime_type));
	json_object_array_add(o->stored, f);
	broker_output_next(o);
}

/* The storage helper's answer to one of our calls. */
void
broker_dispatch_storage(struct imsg *imsg)
{
	struct broker_output	*o;
	struct error_msg	 em;
	o = CALL_OF(calltab_find(&calls, imsg->hdr.peerid),
	    struct broker_output, ce);
	if (o == NULL) {	/* too late */
		if (imsg->hdr.type == IMSG_FILE_CREATED)
			close(imsg_get_fd(imsg));
		return;
	}
	calltab_remove(&calls, &o->ce);
	o->ce.id = 0;
	switch (imsg->hdr.type) {
	case IMSG_FILE_CREATED:
		broker_output_created(o, imsg);
		break;
	case IMSG_FILE_INFO:
		broker_output_committed(o);
		break;
	case IMSG_ERROR:
		memcpy(&em, imsg->data, sizeof(em));
		em.message[sizeof(em.message) - 1] = '\0';
		broker_output_skip(o, em.message);
		broker_output_next(o);
		break;
	}
}

static const char *
broker_output_str(struct json_object *f, const char *key)
{
	struct json_object	*v;

	if (!json_object_object_get_ex(f, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* name_unique's taken: a name a file stored for this call has. */
static int
broker_output_taken(const char *name, void *arg)
{
	struct broker_output	*o = arg;
	const char		*have;
	size_t			 i, n;

	n = json_object_array_length(o->stored);
	for (i = 0; i < n; i++) {
		have = broker_output_str(
		    json_object_array_get_idx(o->stored, i), "filename");
		if (have != NULL && strcmp(have, name) == 0)
			return 1;
	}
	return 0;
}

/*
 * Paths of one call that share a last segment ("a/plot.png",
 * "b/plot.png") are stored as plot.png, plot-2.png ...: the stored
 * files before with that segment took the first names of its turn.
 * Names stay within a sandbox name's room (SBX_NAME_MAX, the 255 bytes
 * of a file system's NAME_MAX), so that they go back into a sandbox as
 * they are, and a suffix never pushes one past max-filename's default.
 */
static void
broker_output_name(struct broker_output *o, char *out, size_t len)
{
	char		 base[SBX_NAME_MAX], seg[SBX_NAME_MAX];
	const char	*path;
	size_t		 i, n, room;
	int		 same = 0;

	room = len < sizeof(base) ? len : sizeof(base);
	name_last_segment(o->path, base, room);
	n = json_object_array_length(o->stored);
	for (i = 0; i < n; i++) {
		path = broker_output_str(
		    json_object_array_get_idx(o->stored, i), "path");
		if (path == NULL)
			continue;
		name_last_segment(path, seg, room);
		same += strcmp(seg, base) == 0;
	}
	if (name_unique(base, same + 1, n, broker_output_taken, o, out,
	    room) == -1)
		log_warnx("output %s: no name of its own", o->path);
}

/* The next produced file that fits, or the end. */
static void
broker_output_next(struct broker_output *o)
{
	struct file_create	 fc;
	struct json_object	*f, *v;
	const char		*mime;

	sha256_abort(&o->sha);
	while (o->lease != NULL &&
	    o->next < json_object_array_length(o->queue)) {
		f = json_object_array_get_idx(o->queue, o->next++);
		if ((o->path = broker_output_str(f, "path")) == NULL)
			continue;
		if (json_object_object_get_ex(f, "size_bytes", &v) &&
		    json_object_get_int64(v) > o->budget) {
			broker_output_skip(o, "over the per-call output size");
			continue;
		}
		memset(&fc, 0, sizeof(fc));
		strlcpy(fc.handle, o->handle, sizeof(fc.handle));
		broker_output_name(o, fc.rec.filename, sizeof(fc.rec.filename));
		/* The backend's word becomes a header: only a media type. */
		mime = broker_output_str(f, "mime_type");
		if (mime != NULL && !media_type_ok(mime))
			log_warnx("session %s: output %s: malformed media "
			    "type, stored as %s", o->lease->session, o->path,
			    MEDIA_TYPE_DEFAULT);
		strlcpy(fc.rec.mime_type, media_type_or_default(mime),
		    sizeof(fc.rec.mime_type));
		fc.rec.source = SOURCE_CODE_EXECUTION;
		strlcpy(fc.rec.purpose, "code_execution_output",
		    sizeof(fc.rec.purpose));
		if (broker_output_call(o, IMSG_FILE_CREATE, &fc,
		    sizeof(fc)) == 0)
			return;
		broker_output_skip(o, "storage unreachable");
	}
	broker_output_finish(o);
}

/*
 * Stores the produced files of a run, then calls done with
 * {stored: [...], skipped: [...]}.  Without a delegated handle nothing
 * is stored.
 */
void
broker_output_store(struct broker_lease *l, struct json_object *produced,
    broker_output_done_cb done)
{
	struct broker_output	*o;

	if ((o = calloc(1, sizeof(*o))) == NULL)
		fatal("calloc");
	o->lease = l;
	strlcpy(o->handle, l->handle, sizeof(o->handle));
	o->queue = json_object_get(produced);
	o->budget = broker.conf->max_output_size;
	o->stored = json_object_new_array();
	o->skipped = json_object_new_array();
	o->done = done;
	l->output = o;
	if (l->handle[0] == '\0')
		o->next = json_object_array_length(produced);
	broker_output_next(o);
}

/* The lease is over: its delegated handle goes, and any upload under it. */
void
broker_output_release(const char *handle)
{
	struct auth_release	 rel;

	if (handle[0] == '\0' || storage_iev == NULL)
		return;
	memset(&rel, 0, sizeof(rel));
	strlcpy(rel.handle, handle, sizeof(rel.handle));
	imsgev_compose(storage_iev, IMSG_AUTH_RELEASE, 0, 0, -1, &rel,
	    sizeof(rel));
}

/*
 * The lease goes before its outputs are stored: the file in progress
 * is aborted; a create still in flight is aborted when it answers.
 */
void
broker_output_cancel(struct broker_lease *l)
{
	struct broker_output	*o = l->output;

	if (o == NULL)
		return;
	l->output = NULL;
	if (o->get != NULL) {
		sbx_cancel(o->get);
		o->get = NULL;
		broker_output_abort(o);
	}
	o->lease = NULL;
	if (o->ce.id == 0)
		broker_output_free(o);
}
