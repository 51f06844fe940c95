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
 * fe_upload.c: a frontend's upload pipeline (POST /v1/files).
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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "log.h"
#include "util.h"
#include "names.h"
#include "multipart.h"
#include "frontend.h"

#define FIELD_MAX		1024
#define MULTIPART_ALLOWANCE	(64 * 1024)

/*
 * An upload.  It outlives its HTTP request while a create request is in
 * flight, so that a descriptor arriving for a vanished request is
 * still closed and its intent row aborted.
 */
struct fe_upload {
	struct api_req		*ar;		/* NULL once the request is gone */
	struct multipart	*multipart;
	int			 in_file;	/* inside the file part */
	int			 file_seen;
	int			 file_done;
	int			 body_done;
	int			 creating;	/* create request in flight */
	int			 fd;		/* -1 until created */
	int			 regular;	/* fd is a regular file */
	struct event		*write_event;
	struct evbuffer		*pending;	/* bytes awaiting the fd */
	struct sha256_ctx	 digest;
	int64_t			 size;
	struct file_rec		 rec;		/* the intent, then the row */
	char			 handle[HANDLE_LEN];	/* it was created under */
	int64_t			 progress_at;	/* last told to storage */
	char			 field[32];	/* the form field being read */
	char			 value[FIELD_MAX];
	size_t			 value_len;
	char			 purpose[PURPOSE_MAX];
	int64_t			 expires_after;
	int			 failed;
	int			 user_pending;	/* admin: user lookup runs */
	struct multipart_part	*waiting;	/* file part awaiting it */
};


static void	upload_flush(struct fe_upload *);
static void	upload_finish(struct fe_upload *);

static void
upload_release(struct fe_upload *up)
{
	if (up->write_event != NULL)
		event_free(up->write_event);
	if (up->fd != -1)
		close(up->fd);
	if (up->pending != NULL)
		evbuffer_free(up->pending);
	if (up->multipart != NULL)
		multipart_free(up->multipart);
	sha256_abort(&up->digest);
	free(up->waiting);
	free(up);
}

static void
upload_abort_intent(struct fe_upload *up)
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
upload_fail(struct fe_upload *up, int status, const char *param,
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
		fe_reply_error(up->ar, status, param, "%s", msg);
}

/* The body waits while the store's socket is full. */
static void
upload_wait(struct fe_upload *up)
{
	event_add(up->write_event, NULL);
	if (up->ar != NULL)
		http_body_pause(up->ar->req);
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
upload_flush(struct fe_upload *up)
{
	ssize_t	 n;

	while (up->fd != -1 && evbuffer_get_length(up->pending) > 0) {
		n = evbuffer_write(up->pending, up->fd);
		if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
			upload_wait(up);
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
upload_created(void *arg, struct imsg *imsg)
{
	struct fe_upload	*up = arg;
	int			 fd;
	struct stat		 sb;

	up->creating = 0;
	if (up->ar != NULL)
		up->ar->pending = 0;
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
	if (!fe_reply_storage_ok(up->ar, imsg, IMSG_FILE_CREATED, sizeof(up->rec))) {
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
	up->write_event = event_new(fe.base, fd, EV_WRITE, upload_writable, up);
	upload_flush(up);
}

static void
upload_create(struct fe_upload *up, const struct multipart_part *part)
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
	ar->pending = fe_storage_request(IMSG_FILE_CREATE, -1, &fc, sizeof(fc),
	    upload_created, up);
}

static int
upload_part_begin(void *arg, const struct multipart_part *part)
{
	struct fe_upload	*up = arg;

	if (strcmp(part->name, "file") != 0) {
		strlcpy(up->field, part->name, sizeof(up->field));
		up->value_len = 0;
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

/*
 * File bytes go to the store's descriptor straight from the span the
 * parser found, when the descriptor is there and nothing waits before
 * them; only what it does not take (no descriptor yet, a full socket)
 * is copied to the pending queue.  Copying every byte through that
 * queue cost an allocation and a free per read, and a page fault per
 * page.
 */
static int
upload_file_data(struct fe_upload *up, const void *data, size_t len)
{
	const char	*p = data;
	ssize_t		 n;

	up->size += len;
	if (up->size > fe.conf->max_size) {
		upload_fail(up, 413, "file", "the file is larger than the "
		    "configured maximum");
		return -1;
	}
	if (sha256_update(&up->digest, data, len) == -1) {
		upload_fail(up, 503, NULL, "out of memory");
		return -1;
	}
	while (len > 0 && up->fd != -1 &&
	    evbuffer_get_length(up->pending) == 0) {
		n = write(up->fd, p, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN) {
			upload_wait(up);
			break;
		}
		if (n <= 0) {
			log_warn("upload %s: write", up->rec.id);
			upload_fail(up, 500, NULL,
			    "the store stopped taking the file");
			return -1;
		}
		p += n;
		len -= n;
		fe_storage_progress(&up->progress_at, up->handle, up->rec.id);
	}
	if (len > 0 && evbuffer_add(up->pending, p, len) == -1) {
		upload_fail(up, 503, NULL, "out of memory");
		return -1;
	}
	return 0;
}

static int
upload_part_data(void *arg, const void *data, size_t len)
{
	struct fe_upload	*up = arg;

	if (up->in_file)
		return upload_file_data(up, data, len);
	if (up->value_len + len >= sizeof(up->value)) {
		upload_fail(up, 400, up->field, "a form field is too long");
		return -1;
	}
	memcpy(up->value + up->value_len, data, len);
	up->value_len += len;
	up->value[up->value_len] = '\0';
	return 0;
}

/* The admin key's user, named in the form: resolved before the file. */
static void
upload_admin_resolved(struct api_req *ar)
{
	struct fe_upload	*up = ar->route;

	up->user_pending = 0;
	if (up->waiting != NULL) {
		upload_create(up, up->waiting);
		free(up->waiting);
		up->waiting = NULL;
	} else
		http_body_resume(ar->req);
}

static int
upload_admin_field(struct fe_upload *up)
{
	up->user_pending = 1;
	http_body_pause(up->ar->req);
	fe_auth_admin_user(up->ar, up->value, NULL, upload_admin_resolved);
	return 0;
}

static int
upload_field_end(struct fe_upload *up)
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
			return upload_admin_field(up);
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
upload_part_end(void *arg)
{
	struct fe_upload	*up = arg;

	if (up->in_file) {
		up->in_file = 0;
		up->file_done = 1;
		return 0;
	}
	return upload_field_end(up);
}

static const struct multipart_cb upload_cb = {
	.part_begin = upload_part_begin,
	.part_data = upload_part_data,
	.part_end = upload_part_end,
};

static void
upload_committed(void *arg, struct imsg *imsg)
{
	struct api_req		*ar = arg;
	struct fe_upload	*up = ar->route;
	struct file_rec		 rec;

	ar->pending = 0;
	up->rec.id[0] = '\0';	/* storage owns the outcome now */
	if (!fe_reply_storage_ok(ar, imsg, IMSG_FILE_INFO, sizeof(rec)))
		return;
	memcpy(&rec, imsg->data, sizeof(rec));
	fe_reply_json(ar, 200, fe_file_object(&rec, ar->dialect));
}

/* The body is in and every byte is in the store's descriptor. */
static void
upload_finish(struct fe_upload *up)
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
	sha256_final_hex(&up->digest, fc.sha256);
	strlcpy(fc.purpose, up->purpose, sizeof(fc.purpose));
	fc.expires_after = up->expires_after;
	ar->pending = fe_storage_request(IMSG_FILE_COMMIT, -1, &fc, sizeof(fc),
	    upload_committed, ar);
}

static void
upload_body(struct api_req *ar, const void *data, size_t len)
{
	struct fe_upload	*up = ar->route;

	if (up == NULL || up->failed)
		return;
	if (multipart_feed(up->multipart, data, len) == -1 && !up->failed) {
		upload_fail(up, 400, NULL, multipart_error(up->multipart));
		return;
	}
	if (up->failed)
		return;
	if (!up->creating && up->waiting == NULL)
		upload_flush(up);
}

static void
upload_body_end(struct api_req *ar)
{
	struct fe_upload	*up = ar->route;

	if (up == NULL || up->failed)
		return;
	if (multipart_finish(up->multipart) == -1) {
		upload_fail(up, 400, NULL, multipart_error(up->multipart));
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

/*
 * The request is gone.  An upload whose create is still in flight
 * takes the storage request over: upload_created() aborts what the storage
 * helper made for it, then frees it.
 */
static void
upload_free_route(struct api_req *ar)
{
	struct fe_upload	*up = ar->route;

	if (up == NULL)
		return;
	if (!up->failed && up->rec.id[0] != '\0' && !up->creating)
		upload_abort_intent(up);
	if (up->creating) {
		up->ar = NULL;
		ar->pending = 0;
	} else
		upload_release(up);
	ar->route = NULL;
}

static void
upload_start(struct api_req *ar)
{
	struct fe_upload	*up;
	const char		*why = "not multipart/form-data";

	if ((up = calloc(1, sizeof(*up))) == NULL) {
		fe_reply_error(ar, 503, NULL, "out of memory");
		return;
	}
	up->ar = ar;
	up->fd = -1;
	ar->route = up;
	ar->free_route = upload_free_route;
	ar->on_body = upload_body;
	ar->on_body_end = upload_body_end;
	if ((up->pending = evbuffer_new()) == NULL ||
	    sha256_init(&up->digest) == -1 ||
	    (up->multipart = multipart_new(http_header_get(ar->req,
	    "content-type"), &upload_cb, up, &why)) == NULL) {
		upload_fail(up, 400, NULL, why);
		return;
	}
	http_body_accept(ar->req);
}

/* POST /v1/files.  Too large a body is refused before a byte is read. */
void
fe_upload_route(struct api_req *ar)
{
	int64_t	 cl = ar->req->content_length;

	if (cl >= 0 && cl > fe.conf->max_size + MULTIPART_ALLOWANCE) {
		fe_reply_error(ar, 413, "file", "the request body of %" PRId64
		    " bytes is larger than the configured maximum file size",
		    cl);
		return;
	}
	fe_authenticate(ar, upload_start);
}
