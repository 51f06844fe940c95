/*
 * api_files.c: the Files API, in OpenAI's and Anthropic's shapes.
 *
 * Uploads stream: the multipart parser hands the file part's bytes
 * straight to the descriptor the storage helper opened for them, and
 * the body is paused whenever that descriptor cannot keep up, so that
 * memory is bounded by the connection's read watermark.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "log.h"
#include "util.h"
#include "names.h"
#include "multipart.h"
#include "frontend.h"

#define FIELD_MAX		1024
#define MULTIPART_ALLOWANCE	(64 * 1024)

enum files_op {
	OP_UPLOAD,
	OP_LIST,
	OP_RETRIEVE,
	OP_CONTENT,
	OP_DELETE,
};

/*
 * An upload.  It outlives its HTTP request while a create call is in
 * flight, so that a descriptor arriving for a vanished request is
 * still closed and its intent row aborted.
 */
struct upload {
	struct api_req		*ar;		/* NULL once the request is gone */
	struct multipart	*mp;
	int			 in_file;	/* inside the file part */
	int			 file_seen;
	int			 file_done;
	int			 body_done;
	int			 creating;	/* create call in flight */
	int			 fd;		/* -1 until created */
	int			 regular;	/* fd is a regular file */
	struct event		*ev_write;
	struct evbuffer		*pending;	/* bytes awaiting the fd */
	struct sha256_ctx	 sha;
	int64_t			 size;
	struct file_rec		 rec;		/* the intent, then the row */
	char			 handle[HANDLE_LEN];	/* it was created under */
	int64_t			 progress_at;	/* last told to storage */
	char			 field[32];	/* the form field being read */
	char			 value[FIELD_MAX];
	size_t			 valuelen;
	char			 purpose[PURPOSE_MAX];
	int64_t			 expires_after;
	int			 failed;
	int			 user_pending;	/* admin: user lookup runs */
	struct multipart_part	*waiting;	/* file part awaiting it */
};

struct files_route {
	enum files_op		 op;
	char			 id[IDLEN];
	struct upload		*up;
	struct file_list_req	*list;
	struct json_object	*items;
};


/* --- shapes --- */

static struct json_object *
time_or_null(int64_t usec, int anthropic)
{
	char	 buf[RFC3339_LEN];

	if (usec == 0)
		return NULL;
	if (!anthropic)
		return json_object_new_int64(usec / 1000000);
	time_rfc3339_usec(usec, buf, sizeof(buf));
	return json_object_new_string(buf);
}

static struct json_object *
file_object(const struct file_rec *rec, enum dialect d)
{
	struct json_object	*o = json_object_new_object();
	int			 a = d == DIALECT_ANTHROPIC;

	json_object_object_add(o, "id", json_object_new_string(rec->id));
	if (a) {
		json_object_object_add(o, "type",
		    json_object_new_string("file"));
		json_object_object_add(o, "filename",
		    json_object_new_string(rec->filename));
		json_object_object_add(o, "mime_type",
		    json_object_new_string(rec->mime_type));
		json_object_object_add(o, "size_bytes",
		    json_object_new_int64(rec->bytes));
		json_object_object_add(o, "created_at",
		    time_or_null(rec->created_us, 1));
		json_object_object_add(o, "expires_at",
		    time_or_null(rec->expires_us, 1));
		json_object_object_add(o, "downloadable",
		    json_object_new_boolean(1));
		return o;
	}
	json_object_object_add(o, "object", json_object_new_string("file"));
	json_object_object_add(o, "bytes", json_object_new_int64(rec->bytes));
	json_object_object_add(o, "created_at",
	    time_or_null(rec->created_us, 0));
	json_object_object_add(o, "expires_at",
	    time_or_null(rec->expires_us, 0));
	json_object_object_add(o, "filename",
	    json_object_new_string(rec->filename));
	json_object_object_add(o, "purpose",
	    json_object_new_string(rec->purpose));
	json_object_object_add(o, "status",
	    json_object_new_string("processed"));
	json_object_object_add(o, "status_details", NULL);
	return o;
}

static struct files_route *
route_of(struct api_req *ar)
{
	return ar->route;
}

/* Every reply from storage is either the expected type or an error. */
static int
storage_ok(struct api_req *ar, struct imsg *imsg, uint32_t want,
    size_t size)
{
	if (imsg->hdr.type == IMSG_ERROR) {
		api_error_from_storage(ar, imsg);
		return 0;
	}
	if (imsg->hdr.type != want || imsg->datalen != size)
		fatalx("unexpected storage reply %u", imsg->hdr.type);
	return 1;
}

/* --- upload --- */

static void	upload_flush(struct upload *);
static void	upload_finish(struct upload *);

static void
upload_release(struct upload *up)
{
	if (up->ev_write != NULL)
		event_free(up->ev_write);
	if (up->fd != -1)
		close(up->fd);
	if (up->pending != NULL)
		evbuffer_free(up->pending);
	if (up->mp != NULL)
		multipart_free(up->mp);
	sha256_abort(&up->sha);
	free(up->waiting);
	free(up);
}

static void
upload_abort_intent(struct upload *up)
{
	struct file_key	 fk;

	if (up->rec.id[0] == '\0')
		return;
	memset(&fk, 0, sizeof(fk));
	strlcpy(fk.handle, up->handle, sizeof(fk.handle));
	strlcpy(fk.id, up->rec.id, sizeof(fk.id));
	fe_storage_send(IMSG_FILE_ABORT, &fk, sizeof(fk));
	up->rec.id[0] = '\0';
}

/* Fails the upload once: the intent is dropped and the caller told. */
static void
upload_fail(struct upload *up, int status, const char *param,
    const char *msg)
{
	if (up->failed)
		return;
	up->failed = 1;
	if (up->fd != -1) {
		close(up->fd);
		up->fd = -1;
	}
	upload_abort_intent(up);
	if (up->ar != NULL)
		api_error(up->ar, status, param, "%s", msg);
}

static void
upload_writable(evutil_socket_t fd, short what, void *arg)
{
	upload_flush(arg);
}

/*
 * Moves pending bytes into the store's descriptor.  A regular file
 * takes everything; a socket takes what it can, and the body waits.
 */
static void
upload_flush(struct upload *up)
{
	ssize_t	 n;

	while (up->fd != -1 && evbuffer_get_length(up->pending) > 0) {
		n = evbuffer_write(up->pending, up->fd);
		if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
			event_add(up->ev_write, NULL);
			if (up->ar != NULL)
				http_body_pause(up->ar->req);
			return;
		}
		if (n <= 0) {
			log_warn("upload %s: write", up->rec.id);
			upload_fail(up, 500, NULL,
			    "the store stopped taking the file");
			return;
		}
		fe_storage_progress(&up->progress_at, up->handle, up->rec.id);
	}
	if (up->fd == -1 || up->failed || up->ar == NULL)
		return;
	http_body_resume(up->ar->req);
	if (up->body_done)
		upload_finish(up);
}

static void
created(void *arg, struct imsg *imsg)
{
	struct upload	*up = arg;
	int		 fd;
	struct stat	 sb;

	up->creating = 0;
	if (up->ar == NULL || up->failed) {
		/* The caller left or failed meanwhile: undo the intent. */
		if (imsg->hdr.type == IMSG_FILE_CREATED &&
		    imsg->datalen == sizeof(up->rec)) {
			memcpy(&up->rec, imsg->data, sizeof(up->rec));
			upload_abort_intent(up);
		}
		if (up->ar == NULL)
			upload_release(up);
		return;
	}
	up->ar->call = 0;
	if (!storage_ok(up->ar, imsg, IMSG_FILE_CREATED, sizeof(up->rec))) {
		up->failed = 1;
		return;
	}
	memcpy(&up->rec, imsg->data, sizeof(up->rec));
	if ((fd = imsg_get_fd(imsg)) == -1)
		fatalx("file created without a descriptor");
	up->fd = fd;
	up->regular = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode);
	if (!up->regular)
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	up->ev_write = event_new(fe.base, fd, EV_WRITE, upload_writable, up);
	upload_flush(up);
}

static void
upload_create(struct upload *up, const struct multipart_part *part)
{
	struct api_req		*ar = up->ar;
	struct file_create	 fc;

	memset(&up->rec, 0, sizeof(up->rec));
	strlcpy(up->rec.filename, part->filename, sizeof(up->rec.filename));
	strlcpy(up->rec.mime_type, mime_for_upload(part->content_type,
	    part->filename), sizeof(up->rec.mime_type));
	strlcpy(up->rec.purpose, up->purpose, sizeof(up->rec.purpose));
	up->rec.source = SOURCE_UPLOAD;
	strlcpy(up->handle, ar->who.handle, sizeof(up->handle));
	up->creating = 1;
	/* Bytes that arrive before the descriptor wait in memory. */
	http_body_pause(ar->req);
	memset(&fc, 0, sizeof(fc));
	strlcpy(fc.handle, up->handle, sizeof(fc.handle));
	fc.rec = up->rec;
	ar->call = fe_storage_call(IMSG_FILE_CREATE, -1, &fc, sizeof(fc),
	    created, up);
}

static int
part_begin(void *arg, const struct multipart_part *part)
{
	struct upload	*up = arg;

	if (strcmp(part->name, "file") != 0) {
		strlcpy(up->field, part->name, sizeof(up->field));
		up->valuelen = 0;
		up->value[0] = '\0';
		return 0;
	}
	if (up->file_seen) {
		upload_fail(up, 400, "file", "the form has a second file part");
		return -1;
	}
	if ((int)strlen(part->filename) > fe.conf->max_filename) {
		upload_fail(up, 400, "file", "the filename is longer than "
		    "the configured maximum");
		return -1;
	}
	up->file_seen = up->in_file = 1;
	if (up->ar->who.handle[0] == '\0') {
		/* The admin key: the user field must have come first. */
		if (!up->user_pending) {
			upload_fail(up, 400, "user", "the admin key must name "
			    "a user: send the user field before the file");
			return -1;
		}
		if ((up->waiting = malloc(sizeof(*part))) == NULL) {
			upload_fail(up, 503, NULL, "out of memory");
			return -1;
		}
		memcpy(up->waiting, part, sizeof(*part));
		http_body_pause(up->ar->req);
		return 0;
	}
	upload_create(up, part);
	return 0;
}

static int
file_data(struct upload *up, const void *data, size_t len)
{
	up->size += len;
	if (up->size > fe.conf->max_size) {
		upload_fail(up, 413, "file", "the file is larger than the "
		    "configured maximum");
		return -1;
	}
	/*
	 * Hashed and flushed once per body piece (files_body), not per
	 * part piece: the parser cuts binary data at every CR.
	 */
	if (evbuffer_add(up->pending, data, len) == -1) {
		upload_fail(up, 503, NULL, "out of memory");
		return -1;
	}
	return 0;
}

static int
part_data(void *arg, const void *data, size_t len)
{
	struct upload	*up = arg;

	if (up->in_file)
		return file_data(up, data, len);
	if (up->valuelen + len >= sizeof(up->value)) {
		upload_fail(up, 400, up->field, "a form field is too long");
		return -1;
	}
	memcpy(up->value + up->valuelen, data, len);
	up->valuelen += len;
	up->value[up->valuelen] = '\0';
	return 0;
}

/* The admin key's user, named in the form: resolved before the file. */
static void
admin_user_resolved(struct api_req *ar)
{
	struct upload	*up = route_of(ar)->up;

	up->user_pending = 0;
	if (up->waiting != NULL) {
		upload_create(up, up->waiting);
		free(up->waiting);
		up->waiting = NULL;
	} else
		http_body_resume(ar->req);
}

static int
admin_user_field(struct upload *up)
{
	up->user_pending = 1;
	http_body_pause(up->ar->req);
	fe_auth_admin_user(up->ar, up->value, NULL, admin_user_resolved);
	return 0;
}

static int
field_end(struct upload *up)
{
	const char	*errstr;
	struct api_req	*ar = up->ar;

	if (strcmp(up->field, "purpose") == 0)
		strlcpy(up->purpose, up->value, sizeof(up->purpose));
	else if (strcmp(up->field, "expires_after[seconds]") == 0) {
		up->expires_after = strtonum(up->value, 1, INT64_MAX, &errstr);
		if (errstr != NULL) {
			upload_fail(up, 400, "expires_after[seconds]",
			    "expires_after[seconds] must be a positive number");
			return -1;
		}
	} else if (strcmp(up->field, "user") == 0 && ar != NULL) {
		if (ar->who.admin && ar->who.handle[0] == '\0' &&
		    !up->user_pending)
			return admin_user_field(up);
		if (!ar->who.admin && strcmp(up->value,
		    ar->who.user_name) != 0) {
			upload_fail(up, 403, "user", "this key cannot act for "
			    "another user");
			return -1;
		}
	}
	return 0;
}

static int
part_end(void *arg)
{
	struct upload	*up = arg;

	if (up->in_file) {
		up->in_file = 0;
		up->file_done = 1;
		return 0;
	}
	return field_end(up);
}

static const struct multipart_cb upload_cb = {
	.part_begin = part_begin,
	.part_data = part_data,
	.part_end = part_end,
};

static void
committed(void *arg, struct imsg *imsg)
{
	struct api_req	*ar = arg;
	struct upload	*up = route_of(ar)->up;
	struct file_rec	 rec;

	ar->call = 0;
	up->rec.id[0] = '\0';	/* storage owns the outcome now */
	if (!storage_ok(ar, imsg, IMSG_FILE_INFO, sizeof(rec)))
		return;
	memcpy(&rec, imsg->data, sizeof(rec));
	api_reply_json(ar, 200, file_object(&rec, ar->dialect));
}

/* The body is in and every byte is in the store's descriptor. */
static void
upload_finish(struct upload *up)
{
	struct api_req		*ar = up->ar;
	struct file_commit	 fc;

	if (up->failed || up->fd == -1 || evbuffer_get_length(up->pending))
		return;
	close(up->fd);
	up->fd = -1;
	memset(&fc, 0, sizeof(fc));
	strlcpy(fc.key.handle, up->handle, sizeof(fc.key.handle));
	strlcpy(fc.key.id, up->rec.id, sizeof(fc.key.id));
	fc.bytes = up->size;
	sha256_final_hex(&up->sha, fc.sha256);
	strlcpy(fc.purpose, up->purpose, sizeof(fc.purpose));
	fc.expires_after = up->expires_after;
	ar->call = fe_storage_call(IMSG_FILE_COMMIT, -1, &fc, sizeof(fc),
	    committed, ar);
}

/* Hashes what the last body piece added to the pending bytes. */
static void
hash_new_bytes(struct upload *up, size_t from)
{
	struct evbuffer_ptr	 pos;
	struct evbuffer_iovec	 v[16];
	size_t			 left;
	int			 i, n;

	left = evbuffer_get_length(up->pending) - from;
	while (left > 0) {
		if (evbuffer_ptr_set(up->pending, &pos, from,
		    EVBUFFER_PTR_SET) == -1)
			fatalx("upload: pending buffer out of step");
		n = evbuffer_peek(up->pending, left, &pos, v, 16);
		if (n > 16)
			n = 16;
		for (i = 0; i < n && left > 0; i++) {
			if (v[i].iov_len > left)
				v[i].iov_len = left;
			sha256_update(&up->sha, v[i].iov_base, v[i].iov_len);
			from += v[i].iov_len;
			left -= v[i].iov_len;
		}
	}
}

void
files_body(struct api_req *ar, const void *data, size_t len)
{
	struct files_route	*fr = route_of(ar);
	struct upload		*up;
	size_t			 before;

	if (fr == NULL || (up = fr->up) == NULL || up->failed)
		return;
	before = evbuffer_get_length(up->pending);
	if (multipart_feed(up->mp, data, len) == -1 && !up->failed) {
		upload_fail(up, 400, NULL, multipart_error(up->mp));
		return;
	}
	if (up->failed)
		return;
	hash_new_bytes(up, before);
	if (!up->creating && up->waiting == NULL)
		upload_flush(up);
}

void
files_body_end(struct api_req *ar)
{
	struct files_route	*fr = route_of(ar);
	struct upload		*up;

	if (fr == NULL || (up = fr->up) == NULL || up->failed)
		return;
	if (multipart_finish(up->mp) == -1) {
		upload_fail(up, 400, NULL, multipart_error(up->mp));
		return;
	}
	if (!up->file_done) {
		upload_fail(up, 400, "file", "the form has no file part");
		return;
	}
	if (up->size == 0) {
		upload_fail(up, 400, "file", "the file is empty");
		return;
	}
	up->body_done = 1;
	if (!up->creating && up->waiting == NULL && !up->user_pending)
		upload_flush(up);
}

static void
upload_start(struct api_req *ar)
{
	struct files_route	*fr = route_of(ar);
	struct upload		*up;
	const char		*why = "not multipart/form-data";

	if ((up = calloc(1, sizeof(*up))) == NULL) {
		api_error(ar, 503, NULL, "out of memory");
		return;
	}
	up->ar = ar;
	up->fd = -1;
	fr->up = up;
	if ((up->pending = evbuffer_new()) == NULL ||
	    sha256_init(&up->sha) == -1 ||
	    (up->mp = multipart_new(http_header_get(ar->req, "content-type"),
	    &upload_cb, up, &why)) == NULL) {
		upload_fail(up, 400, NULL, why);
		return;
	}
	http_body_accept(ar->req);
}

/* Refused before a byte of the body is read. */
static int
upload_too_large(struct api_req *ar)
{
	int64_t	 cl = ar->req->content_length;

	if (cl < 0 || cl <= fe.conf->max_size + MULTIPART_ALLOWANCE)
		return 0;
	api_error(ar, 413, "file", "the request body of %" PRId64 " bytes "
	    "is larger than the configured maximum file size", cl);
	return 1;
}

/* --- retrieve and delete --- */

static void
retrieved(void *arg, struct imsg *imsg)
{
	struct api_req	*ar = arg;
	struct file_rec	 rec;

	ar->call = 0;
	if (!storage_ok(ar, imsg, IMSG_FILE_INFO, sizeof(rec)))
		return;
	memcpy(&rec, imsg->data, sizeof(rec));
	api_reply_json(ar, 200, file_object(&rec, ar->dialect));
}

static void
deleted(void *arg, struct imsg *imsg)
{
	struct api_req		*ar = arg;
	struct file_key		 fk;
	struct json_object	*o;

	ar->call = 0;
	if (!storage_ok(ar, imsg, IMSG_FILE_DELETED, sizeof(fk)))
		return;
	memcpy(&fk, imsg->data, sizeof(fk));
	o = json_object_new_object();
	json_object_object_add(o, "id", json_object_new_string(fk.id));
	if (ar->dialect == DIALECT_ANTHROPIC)
		json_object_object_add(o, "type",
		    json_object_new_string("file_deleted"));
	else {
		json_object_object_add(o, "object",
		    json_object_new_string("file"));
		json_object_object_add(o, "deleted",
		    json_object_new_boolean(1));
	}
	api_reply_json(ar, 200, o);
}

static void
file_key_of(struct api_req *ar, struct file_key *fk)
{
	memset(fk, 0, sizeof(*fk));
	strlcpy(fk->handle, ar->who.handle, sizeof(fk->handle));
	strlcpy(fk->id, route_of(ar)->id, sizeof(fk->id));
}

static void
retrieve_start(struct api_req *ar)
{
	struct file_key	 fk;

	file_key_of(ar, &fk);
	ar->call = fe_storage_call(IMSG_FILE_GET, -1, &fk, sizeof(fk),
	    retrieved, ar);
}

static void
delete_start(struct api_req *ar)
{
	struct file_key	 fk;

	file_key_of(ar, &fk);
	ar->call = fe_storage_call(IMSG_FILE_DELETE, -1, &fk, sizeof(fk),
	    deleted, ar);
}

/* --- download --- */

static void
content_range(struct api_req *ar, const struct file_opened *fo)
{
	char	 v[96];

	if (fo->status == 416)
		snprintf(v, sizeof(v), "bytes */%" PRId64, fo->size);
	else
		snprintf(v, sizeof(v), "bytes %" PRId64 "-%" PRId64 "/%"
		    PRId64, fo->offset, fo->offset + fo->length - 1,
		    fo->size);
	http_reply_header(ar->req, "Content-Range", v);
}

static void
opened(void *arg, struct imsg *imsg)
{
	struct api_req		*ar = arg;
	struct file_opened	 fo;
	char			 disp[2048];
	int			 fd;

	ar->call = 0;
	if (!storage_ok(ar, imsg, IMSG_FILE_OPENED, sizeof(fo)))
		return;
	memcpy(&fo, imsg->data, sizeof(fo));
	fo.rec.filename[sizeof(fo.rec.filename) - 1] = '\0';
	fo.rec.mime_type[sizeof(fo.rec.mime_type) - 1] = '\0';
	if (fo.status == 416) {
		content_range(ar, &fo);
		api_error(ar, 416, NULL, "the range is not satisfiable for "
		    "a file of %" PRId64 " bytes", fo.size);
		return;
	}
	if ((fd = imsg_get_fd(imsg)) == -1)
		fatalx("file opened without a descriptor");
	http_reply_header(ar->req, "Accept-Ranges", "bytes");
	if (content_disposition(fo.rec.filename, disp, sizeof(disp)) == 0)
		http_reply_header(ar->req, "Content-Disposition", disp);
	if (fo.status == 206)
		content_range(ar, &fo);
	if (fo.seekable)
		http_reply_file(ar->req, fo.status, fo.rec.mime_type, fd,
		    fo.offset, fo.length);
	else
		http_reply_stream_fd(ar->req, fo.status, fo.rec.mime_type, fd,
		    fo.length);
}

/*
 * A single bytes= range.  Anything else (several ranges, other units,
 * junk) is ignored and the whole file is sent, as RFC 9110 allows.
 */
static void
parse_range(const char *h, struct file_open *fo)
{
	const char	*dash, *errstr;
	char		 a[32], b[32];

	fo->range_first = fo->range_last = -1;
	fo->range_suffix = 0;
	if (h == NULL || strncmp(h, "bytes=", 6) != 0 || strchr(h, ',') ||
	    (dash = strchr(h + 6, '-')) == NULL)
		return;
	if ((size_t)(dash - (h + 6)) >= sizeof(a) || strlen(dash + 1) >=
	    sizeof(b))
		return;
	strlcpy(a, h + 6, dash - (h + 6) + 1);
	strlcpy(b, dash + 1, sizeof(b));
	if (a[0] == '\0') {
		fo->range_last = strtonum(b, 0, INT64_MAX, &errstr);
		if (errstr == NULL)
			fo->range_suffix = 1;
		else
			fo->range_last = -1;
		return;
	}
	fo->range_first = strtonum(a, 0, INT64_MAX, &errstr);
	if (errstr != NULL) {
		fo->range_first = -1;
		return;
	}
	if (b[0] != '\0') {
		fo->range_last = strtonum(b, 0, INT64_MAX, &errstr);
		if (errstr != NULL)
			fo->range_first = fo->range_last = -1;
	}
}

static void
content_start(struct api_req *ar)
{
	struct file_open	 fo;

	memset(&fo, 0, sizeof(fo));
	file_key_of(ar, &fo.key);
	parse_range(http_header_get(ar->req, "range"), &fo);
	ar->call = fe_storage_call(IMSG_FILE_OPEN, -1, &fo, sizeof(fo),
	    opened, ar);
}

/* --- list --- */

static int
list_param(struct api_req *ar, const char *name, char *buf, size_t len)
{
	ssize_t	 n = http_query_param(ar->req->query, name, buf, len, NULL);

	if (n == -2) {
		api_error(ar, 400, name, "%s is malformed", name);
		return -1;
	}
	return n >= 0;
}

/* next_page tokens: "page_" + hex of "a:<id>" or "b:<id>". */
static void
page_token(char *buf, size_t len, char dir, const char *id)
{
	char	 raw[IDLEN + 4];

	snprintf(raw, sizeof(raw), "%c:%s", dir, id);
	if (len < 6 + 2 * strlen(raw) + 1)
		return;
	memcpy(buf, "page_", 5);
	hex_encode(raw, strlen(raw), buf + 5);
}

static int
page_decode(const char *tok, char *dir, char *id, size_t idlen)
{
	char	 raw[IDLEN + 4];
	size_t	 i, n;
	unsigned int v;

	if (strncmp(tok, "page_", 5) != 0)
		return -1;
	tok += 5;
	n = strlen(tok);
	if (n % 2 != 0 || n / 2 >= sizeof(raw))
		return -1;
	for (i = 0; i < n / 2; i++) {
		if (sscanf(tok + 2 * i, "%2x", &v) != 1)
			return -1;
		raw[i] = v;
	}
	raw[n / 2] = '\0';
	if ((raw[0] != 'a' && raw[0] != 'b') || raw[1] != ':' ||
	    !id_valid(raw + 2, "file-"))
		return -1;
	*dir = raw[0];
	strlcpy(id, raw + 2, idlen);
	return 0;
}

/*
 * "ids" repeated or comma-separated, and "ids[]": the Anthropic SDK 1.x
 * encodes arrays in brackets (ids%5B%5D=a&ids%5B%5D=b).
 */
static int
list_ids(struct api_req *ar, struct file_list_req *l)
{
	static const char *const names[] = { "ids", "ids[]" };
	char		 buf[IDLEN * 100 + 100], *p, *tok;
	const char	*from;
	ssize_t		 n;
	size_t		 i;
	int		 asked = 0;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		from = NULL;
		while ((n = http_query_param(ar->req->query, names[i], buf,
		    sizeof(buf), &from)) >= 0) {
			for (p = buf; (tok = strsep(&p, ",")) != NULL; ) {
				if (*tok == '\0')
					continue;
				if (l->nids == 100) {
					api_error(ar, 400, "ids",
					    "at most 100 ids");
					return -1;
				}
				strlcpy(l->ids[l->nids++], tok, IDLEN);
			}
		}
		if (n == -2) {
			api_error(ar, 400, "ids", "ids is malformed");
			return -1;
		}
		if (from != NULL)
			asked = 1;
	}
	if (asked && l->nids == 0)
		l->nids = -1;	/* asked for none: an empty page */
	return 0;
}

static int
list_parse(struct api_req *ar, struct file_list_req *l)
{
	char		 buf[256], cursor[IDLEN], dir;
	const char	*errstr;
	int		 a = ar->dialect == DIALECT_ANTHROPIC, r;

	strlcpy(l->handle, ar->who.handle, sizeof(l->handle));
	l->limit = a ? 20 : 100;
	if ((r = list_param(ar, "limit", buf, sizeof(buf))) == -1)
		return -1;
	if (r) {
		l->limit = strtonum(buf, 1, a ? 1000 : 10000, &errstr);
		if (errstr != NULL) {
			api_error(ar, 400, "limit", "limit must be from 1 to "
			    "%d", a ? 1000 : 10000);
			return -1;
		}
		if (l->limit > 1000)
			l->limit = 1000;
	}
	if ((r = list_param(ar, "order", buf, sizeof(buf))) == -1)
		return -1;
	if (r && strcmp(buf, "asc") != 0 && strcmp(buf, "desc") != 0) {
		api_error(ar, 400, "order", "order must be asc or desc");
		return -1;
	}
	l->order = r && strcmp(buf, "asc") == 0 ? ORDER_ASC : ORDER_DESC;
	if (list_param(ar, "after", l->after_id, sizeof(l->after_id)) == -1 ||
	    (l->after_id[0] == '\0' && list_param(ar, "after_id",
	    l->after_id, sizeof(l->after_id)) == -1) ||
	    list_param(ar, "before_id", l->before_id,
	    sizeof(l->before_id)) == -1 ||
	    list_param(ar, "purpose", l->purpose, sizeof(l->purpose)) == -1)
		return -1;
	if ((r = list_param(ar, "page", buf, sizeof(buf))) == -1)
		return -1;
	if (r) {
		/* page wins over after_id and before_id. */
		l->after_id[0] = l->before_id[0] = '\0';
		if (page_decode(buf, &dir, cursor, sizeof(cursor)) == -1) {
			api_error(ar, 400, "page", "the page token does not "
			    "decode");
			return -1;
		}
		strlcpy(dir == 'b' ? l->before_id : l->after_id, cursor,
		    IDLEN);
	}
	if (l->after_id[0] && l->before_id[0]) {
		api_error(ar, 400, "before_id", "use either after_id or "
		    "before_id, not both");
		return -1;
	}
	if ((l->after_id[0] && !id_valid(l->after_id, "file-")) ||
	    (l->before_id[0] && !id_valid(l->before_id, "file-"))) {
		api_error(ar, 404, l->after_id[0] ? "after_id" : "before_id",
		    "the cursor names no file you can see");
		return -1;
	}
	return list_ids(ar, l);
}

static void
list_reply(struct api_req *ar, int has_more)
{
	struct files_route	*fr = route_of(ar);
	struct json_object	*o = json_object_new_object(), *first, *last;
	size_t			 n = json_object_array_length(fr->items);
	char			 tok[128];
	int			 a = ar->dialect == DIALECT_ANTHROPIC;

	first = n ? json_object_object_get(json_object_array_get_idx(
	    fr->items, 0), "id") : NULL;
	last = n ? json_object_object_get(json_object_array_get_idx(
	    fr->items, n - 1), "id") : NULL;
	if (!a)
		json_object_object_add(o, "object",
		    json_object_new_string("list"));
	json_object_object_add(o, "data", fr->items);
	fr->items = NULL;
	json_object_object_add(o, "first_id", json_object_get(first));
	json_object_object_add(o, "last_id", json_object_get(last));
	json_object_object_add(o, "has_more",
	    json_object_new_boolean(has_more));
	if (a) {
		tok[0] = '\0';
		if (has_more && n > 0) {
			/* Continue the way this page was walked. */
			if (fr->list->before_id[0])
				page_token(tok, sizeof(tok), 'b',
				    json_object_get_string(first));
			else
				page_token(tok, sizeof(tok), 'a',
				    json_object_get_string(last));
		}
		json_object_object_add(o, "next_page", tok[0] ?
		    json_object_new_string(tok) : NULL);
	}
	api_reply_json(ar, 200, o);
}

static void
listed(void *arg, struct imsg *imsg)
{
	struct api_req		*ar = arg;
	struct files_route	*fr = route_of(ar);
	struct file_rec		 rec;
	struct file_list_end	 end;

	if (imsg->hdr.type == IMSG_FILE_LIST_ITEM) {
		if (imsg->datalen != sizeof(rec))
			fatalx("bad list item");
		memcpy(&rec, imsg->data, sizeof(rec));
		json_object_array_add(fr->items, file_object(&rec,
		    ar->dialect));
		return;
	}
	ar->call = 0;
	if (!storage_ok(ar, imsg, IMSG_FILE_LIST_END, sizeof(end)))
		return;
	memcpy(&end, imsg->data, sizeof(end));
	list_reply(ar, end.has_more);
}

static void
list_start(struct api_req *ar)
{
	struct files_route	*fr = route_of(ar);

	if ((fr->list = calloc(1, sizeof(*fr->list))) == NULL) {
		api_error(ar, 503, NULL, "out of memory");
		return;
	}
	if (list_parse(ar, fr->list) == -1)
		return;
	fr->items = json_object_new_array();
	if (fr->list->nids == -1) {
		list_reply(ar, 0);
		return;
	}
	ar->call = fe_storage_call(IMSG_FILE_LIST, -1, fr->list,
	    sizeof(*fr->list), listed, ar);
}

/* --- routing --- */

static void
route_free(struct api_req *ar)
{
	struct files_route	*fr = route_of(ar);
	struct upload		*up;

	if (fr == NULL)
		return;
	if ((up = fr->up) != NULL) {
		if (!up->failed && up->rec.id[0] != '\0' && !up->creating)
			upload_abort_intent(up);
		if (up->creating) {
			/* created() finishes the job when the fd arrives. */
			up->ar = NULL;
			ar->call = 0;
		} else
			upload_release(up);
	}
	if (fr->items != NULL)
		json_object_put(fr->items);
	free(fr->list);
	free(fr);
	ar->route = NULL;
}

static int
parse_files_path(struct api_req *ar, struct files_route *fr)
{
	const char	*p = ar->req->path + strlen("/v1/files");
	const char	*slash;
	enum http_method m = ar->req->method;
	size_t		 n;

	if (*p == '\0' || strcmp(p, "/") == 0) {
		fr->op = m == HTTP_M_POST ? OP_UPLOAD : OP_LIST;
		ar->req->route = m == HTTP_M_POST ? "files.upload" :
		    "files.list";
		return m == HTTP_M_POST || m == HTTP_M_GET ? 0 : 405;
	}
	p++;
	slash = strchr(p, '/');
	n = slash ? (size_t)(slash - p) : strlen(p);
	if (n == 0 || n >= sizeof(fr->id))
		return 404;
	memcpy(fr->id, p, n);
	fr->id[n] = '\0';
	if (slash != NULL) {
		if (strcmp(slash, "/content") != 0)
			return 404;
		fr->op = OP_CONTENT;
		ar->req->route = "files.content";
		return m == HTTP_M_GET || m == HTTP_M_HEAD ? 0 : 405;
	}
	fr->op = m == HTTP_M_DELETE ? OP_DELETE : OP_RETRIEVE;
	ar->req->route = m == HTTP_M_DELETE ? "files.delete" :
	    "files.retrieve";
	return m == HTTP_M_GET || m == HTTP_M_DELETE ? 0 : 405;
}

static void
files_authenticated(struct api_req *ar)
{
	struct files_route	*fr;

	fr = route_of(ar);
	switch (fr->op) {
	case OP_UPLOAD:
		upload_start(ar);
		break;
	case OP_LIST:
		list_start(ar);
		break;
	case OP_RETRIEVE:
		retrieve_start(ar);
		break;
	case OP_CONTENT:
		content_start(ar);
		break;
	case OP_DELETE:
		delete_start(ar);
		break;
	}
}

void
files_route(struct api_req *ar)
{
	struct files_route	*fr;
	int			 status;

	if ((fr = calloc(1, sizeof(*fr))) == NULL) {
		api_error(ar, 503, NULL, "out of memory");
		return;
	}
	status = parse_files_path(ar, fr);
	if (status != 0) {
		free(fr);
		api_error(ar, status, NULL, status == 405 ?
		    "method %s not allowed here" : "no route for %s",
		    status == 405 ? ar->req->method_str : ar->req->path);
		return;
	}
	if (fr->op == OP_UPLOAD && upload_too_large(ar)) {
		free(fr);
		return;
	}
	ar->route = fr;
	ar->free_route = route_free;
	fe_authenticate(ar, files_authenticated);
}
