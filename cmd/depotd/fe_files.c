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
 * fe_files.c: the Files API's routes: retrieve, delete and download
 * (with Range) here, uploads in fe_upload.c, listings in fe_list.c, the
 * file object they answer with in fe_file_object.c.
 */
#include <sys/types.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "log.h"
#include "util.h"
#include "names.h"
#include "frontend.h"

enum fe_file_op {
	FE_OP_UPLOAD,
	FE_OP_LIST,
	FE_OP_RETRIEVE,
	FE_OP_CONTENT,
	FE_OP_DELETE,
};

/* The state of a route that names one file. */
struct fe_file_target {
	enum fe_file_op		 op;
	char			 id[IDLEN];
};

static struct fe_file_target *
fe_files_target_of(struct api_req *ar)
{
	return ar->route;
}

/* --- retrieve and delete --- */

static void
fe_files_retrieved(void *arg, struct imsg *imsg)
{
	struct api_req	*ar = arg;
	struct file_rec	 rec;

	ar->pending = 0;
	if (!fe_reply_storage_ok(ar, imsg, IMSG_FILE_INFO, sizeof(rec)))
		return;
	memcpy(&rec, imsg->data, sizeof(rec));
	fe_reply_json(ar, 200, fe_file_object(&rec, ar->dialect));
}

static void
fe_files_deleted(void *arg, struct imsg *imsg)
{
	struct api_req		*ar = arg;
	struct file_key		 fk;
	struct json_object	*o;

	ar->pending = 0;
	if (!fe_reply_storage_ok(ar, imsg, IMSG_FILE_DELETED, sizeof(fk)))
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
	fe_reply_json(ar, 200, o);
}

static void
fe_files_key_of(struct api_req *ar, struct file_key *fk)
{
	memset(fk, 0, sizeof(*fk));
	strlcpy(fk->handle, ar->who.handle, sizeof(fk->handle));
	strlcpy(fk->id, fe_files_target_of(ar)->id, sizeof(fk->id));
}

static void
fe_files_retrieve(struct api_req *ar)
{
	struct file_key	 fk;

	fe_files_key_of(ar, &fk);
	ar->pending = fe_storage_request(IMSG_FILE_GET, -1, &fk, sizeof(fk),
	    fe_files_retrieved, ar);
}

static void
fe_files_delete(struct api_req *ar)
{
	struct file_key	 fk;

	fe_files_key_of(ar, &fk);
	ar->pending = fe_storage_request(IMSG_FILE_DELETE, -1, &fk, sizeof(fk),
	    fe_files_deleted, ar);
}

/* --- download --- */

static void
fe_files_content_range(struct api_req *ar, const struct file_opened *fo)
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

/*
 * Always an attachment: when the UTF-8 form does not fit, the ASCII
 * fallback alone, cut to fit.
 */
static void
fe_files_disposition(const char *filename, char *out, size_t len)
{
	static const char	 head[] = "attachment; filename=\"";
	char			 seg[FILENAME_MAX_BYTES];

	if (content_disposition(filename, out, len) == 0)
		return;
	name_last_segment(filename, seg, sizeof(seg));
	strlcpy(out, head, len);
	name_ascii_fallback(seg, out + strlen(out), len - strlen(out) - 1);
	strlcat(out, "\"", len);
}

static void
fe_files_content_opened(void *arg, struct imsg *imsg)
{
	struct api_req		*ar = arg;
	struct file_opened	 fo;
	char			 disp[2048];
	int			 fd;

	ar->pending = 0;
	if (!fe_reply_storage_ok(ar, imsg, IMSG_FILE_OPENED, sizeof(fo)))
		return;
	memcpy(&fo, imsg->data, sizeof(fo));
	fo.rec.filename[sizeof(fo.rec.filename) - 1] = '\0';
	fo.rec.mime_type[sizeof(fo.rec.mime_type) - 1] = '\0';
	if (fo.status == 416) {
		fe_files_content_range(ar, &fo);
		fe_reply_error(ar, 416, NULL, "the range is not satisfiable for "
		    "a file of %" PRId64 " bytes", fo.size);
		return;
	}
	if ((fd = imsg_get_fd(imsg)) == -1)
		fatalx("file opened without a descriptor");
	http_reply_header(ar->req, "Accept-Ranges", "bytes");
	fe_files_disposition(fo.rec.filename, disp, sizeof(disp));
	http_reply_header(ar->req, "Content-Disposition", disp);
	/* The stored type is the uploader's word: never render it. */
	http_reply_header(ar->req, "X-Content-Type-Options", "nosniff");
	if (fo.status == 206)
		fe_files_content_range(ar, &fo);
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
fe_files_parse_range(const char *h, struct file_open *fo)
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
fe_files_content(struct api_req *ar)
{
	struct file_open	 fo;

	memset(&fo, 0, sizeof(fo));
	fe_files_key_of(ar, &fo.key);
	fe_files_parse_range(http_header_get(ar->req, "range"), &fo);
	ar->pending = fe_storage_request(IMSG_FILE_OPEN, -1, &fo, sizeof(fo),
	    fe_files_content_opened, ar);
}

/* --- routing --- */

static void
fe_files_target_free(struct api_req *ar)
{
	free(ar->route);
	ar->route = NULL;
}

static int
fe_files_parse_path(struct api_req *ar, struct fe_file_target *ft)
{
	const char	*p = ar->req->path + strlen("/v1/files");
	const char	*slash;
	enum http_method m = ar->req->method;
	size_t		 n;

	if (*p == '\0' || strcmp(p, "/") == 0) {
		ft->op = m == HTTP_M_POST ? FE_OP_UPLOAD : FE_OP_LIST;
		ar->req->route = m == HTTP_M_POST ? "files.upload" :
		    "files.list";
		return m == HTTP_M_POST || m == HTTP_M_GET ? 0 : 405;
	}
	p++;
	slash = strchr(p, '/');
	n = slash ? (size_t)(slash - p) : strlen(p);
	if (n == 0 || n >= sizeof(ft->id))
		return 404;
	memcpy(ft->id, p, n);
	ft->id[n] = '\0';
	if (slash != NULL) {
		if (strcmp(slash, "/content") != 0)
			return 404;
		ft->op = FE_OP_CONTENT;
		ar->req->route = "files.content";
		return m == HTTP_M_GET || m == HTTP_M_HEAD ? 0 : 405;
	}
	ft->op = m == HTTP_M_DELETE ? FE_OP_DELETE : FE_OP_RETRIEVE;
	ar->req->route = m == HTTP_M_DELETE ? "files.delete" :
	    "files.retrieve";
	return m == HTTP_M_GET || m == HTTP_M_DELETE ? 0 : 405;
}

static void
fe_files_authenticated(struct api_req *ar)
{
	switch (fe_files_target_of(ar)->op) {
	case FE_OP_RETRIEVE:
		fe_files_retrieve(ar);
		break;
	case FE_OP_CONTENT:
		fe_files_content(ar);
		break;
	case FE_OP_DELETE:
		fe_files_delete(ar);
		break;
	default:
		fatalx("%s: not a file's route", __func__);
	}
}

/* /v1/files and /v1/files/...: each operation owns its state. */
void
fe_files_route(struct api_req *ar)
{
	struct fe_file_target	*ft;
	int			 status;

	if ((ft = calloc(1, sizeof(*ft))) == NULL) {
		fe_reply_error(ar, 503, NULL, "out of memory");
		return;
	}
	if ((status = fe_files_parse_path(ar, ft)) != 0) {
		free(ft);
		fe_reply_error(ar, status, NULL, status == 405 ?
		    "method %s not allowed here" : "no route for %s",
		    status == 405 ? ar->req->method_str : ar->req->path);
		return;
	}
	if (ft->op == FE_OP_UPLOAD || ft->op == FE_OP_LIST) {
		if (ft->op == FE_OP_UPLOAD)
			fe_upload_route(ar);
		else
			fe_list_route(ar);
		free(ft);
		return;
	}
	ar->route = ft;
	ar->free_route = fe_files_target_free;
	fe_authenticate(ar, fe_files_authenticated);
}
