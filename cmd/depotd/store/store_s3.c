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
 * store_s3.c: blobs in an S3 bucket, moved by curl inside the storage
 * helper's event loop: the store's configuration, and its operations
 * other than reads and writes (stat, remove, the bucket check).
 * Requests are made and retried by s3_req.c, objects written by
 * s3_put.c and read by s3_get.c.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "curlev.h"
#include "log.h"
#include "store_s3.h"
#include "store_url.h"

#define S3_PART_MAX		(5LL * 1024 * S3_MIB)
#define S3_LIST_MAX		50	/* uploads per page: fits a response */

/* stat, remove and check share this: a HEAD, and for remove more. */
struct s3_op {
	struct s3		*s3;
	char			*key;
	store_done_cb		 done_cb;
	store_stat_cb		 stat_cb;
	void			*arg;
	char			**uploads;	/* remove: ids left to abort */
	int			 nuploads;
	int			 aborted;
	char			*key_marker;	/* remove: listing's next page */
	char			*id_marker;
};

/*
 * HEAD, DELETE and the bucket check.
 */

static void
s3_op_free(struct s3_op *op)
{
	int	i;

	for (i = 0; i < op->nuploads; i++)
		free(op->uploads[i]);
	free(op->uploads);
	free(op->key_marker);
	free(op->id_marker);
	free(op->key);
	free(op);
}

static void
s3_stat_done(struct s3_req *req)
{
	struct s3_op	*op = req->arg;
	curl_off_t	 len = -1;
	int		 error = s3_req_error(req);

	if (error == 0)
		curl_easy_getinfo(req->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T,
		    &len);
	if (error == 0 && len < 0)
		error = EIO;
	if (error != 0 && error != ENOENT)
		s3_req_log(req, "stat");
	s3_req_free(req);
	op->stat_cb(op->arg, error, error ? 0 : (off_t)len);
	s3_op_free(op);
}

static struct s3_op *
s3_op_new(struct s3 *s3, const char *ref, void *arg)
{
	struct s3_op	*op;

	if ((op = calloc(1, sizeof(*op))) == NULL)
		return NULL;
	op->s3 = s3;
	op->arg = arg;
	if (ref != NULL && (op->key = s3_req_key(s3, ref)) == NULL) {
		free(op);
		return NULL;
	}
	return op;
}

static int
s3_op_send(struct s3_op *op, const char *method, const char *query,
    s3_req_cb done)
{
	struct s3_req	*req;

	req = s3_req_new(op->s3, method, op->key, query, done, op);
	if (req == NULL)
		return -1;
	s3_req_start(req);
	return 0;
}

/* A HEAD; why downloads ask it first is in store.h. */
static void
s3_stat(struct store *st, const char *ref, store_stat_cb cb, void *arg)
{
	struct s3_op	*op;

	if ((op = s3_op_new(st->priv, ref, arg)) == NULL) {
		cb(arg, store_ref_valid(ref) ? ENOMEM : EINVAL, 0);
		return;
	}
	op->stat_cb = cb;
	if (s3_op_send(op, "HEAD", NULL, s3_stat_done) == -1) {
		s3_op_free(op);
		cb(arg, ENOMEM, 0);
	}
}

static void
s3_remove_finish(struct s3_op *op, int error)
{
	op->done_cb(op->arg, error);
	s3_op_free(op);
}

static void
s3_remove_deleted(struct s3_req *req)
{
	struct s3_op	*op = req->arg;
	int		 error = s3_req_error(req);

	if (error != 0)
		s3_req_log(req, "remove");
	s3_req_free(req);
	s3_remove_finish(op, error ? EIO : 0);
}

/*
 * DELETE answers 204 whether the key existed or not; a HEAD first tells
 * the caller ENOENT.  A race with another remover is harmless.
 */
static void
s3_remove_headed(struct s3_req *req)
{
	struct s3_op	*op = req->arg;
	int		 error = s3_req_error(req);

	if (error != 0 && error != ENOENT)
		s3_req_log(req, "remove, head");
	s3_req_free(req);
	if (error == ENOENT)
		s3_remove_finish(op, op->nuploads > 0 ? 0 : ENOENT);
	else if (error != 0)
		s3_remove_finish(op, EIO);
	else if (s3_op_send(op, "DELETE", NULL, s3_remove_deleted) == -1)
		s3_remove_finish(op, ENOMEM);
}

static void	s3_remove_next(struct s3_op *);

static void
s3_remove_aborted(struct s3_req *req)
{
	struct s3_op	*op = req->arg;
	int		 error = s3_req_error(req);

	/* NoSuchUpload: someone else finished it off. */
	if (error != 0 && error != ENOENT) {
		s3_req_log(req, "remove, abort multipart upload");
		s3_req_free(req);
		s3_remove_finish(op, EIO);
		return;
	}
	s3_req_free(req);
	op->aborted++;
	s3_remove_next(op);
}

/* Abort the uploads found, one at a time, then the object. */
static void
s3_remove_next(struct s3_op *op)
{
	char	*q;
	int	 rv;

	if (op->aborted == op->nuploads) {
		if (s3_op_send(op, "HEAD", NULL, s3_remove_headed) == -1)
			s3_remove_finish(op, ENOMEM);
		return;
	}
	if (asprintf(&q, "uploadId=%s", op->uploads[op->aborted]) == -1) {
		s3_remove_finish(op, ENOMEM);
		return;
	}
	rv = s3_op_send(op, "DELETE", q, s3_remove_aborted);
	free(q);
	if (rv == -1)
		s3_remove_finish(op, ENOMEM);
}

/* &amp; and friends back to characters, in place. */
static void
s3_xml_unescape(char *s)
{
	static const struct {
		const char	*ent;
		char		 c;
	} ents[] = { { "&amp;", '&' }, { "&lt;", '<' }, { "&gt;", '>' },
	    { "&quot;", '"' }, { "&apos;", '\'' } };
	char	*r, *w;
	size_t	 i, n;

	for (r = w = s; *r; ) {
		for (i = 0; *r == '&' && i < sizeof(ents) / sizeof(ents[0]);
		    i++) {
			n = strlen(ents[i].ent);
			if (strncmp(r, ents[i].ent, n) == 0)
				break;
		}
		if (*r == '&' && i < sizeof(ents) / sizeof(ents[0])) {
			*w++ = ents[i].c;
			r += strlen(ents[i].ent);
		} else
			*w++ = *r++;
	}
	*w = '\0';
}

/* The text of <tag> in xml, unescaped; malloc'd. */
static char *
s3_xml_value(const char *xml, const char *tag)
{
	char	*v;

	if ((v = s3_req_xml_text(xml, tag)) != NULL)
		s3_xml_unescape(v);
	return v;
}

/* Keeps the UploadId of every <Upload> whose Key is exactly ours. */
static int
s3_remove_collect(struct s3_op *op, const char *xml)
{
	const char	*a, *b;
	char		*upload, *key, *id, **ids;
	int		 rv = 0;

	for (a = xml; rv == 0 && (a = strstr(a, "<Upload>")) != NULL; a = b) {
		if ((b = strstr(a, "</Upload>")) == NULL)
			return -1;
		if ((upload = strndup(a, b - a)) == NULL)
			return -1;
		key = s3_xml_value(upload, "Key");
		id = s3_xml_value(upload, "UploadId");
		free(upload);
		if (key == NULL || id == NULL || id[0] == '\0')
			rv = -1;
		else if (strcmp(key, op->key) == 0 && (ids = reallocarray(
		    op->uploads, op->nuploads + 1, sizeof(*ids))) != NULL) {
			op->uploads = ids;
			op->uploads[op->nuploads++] = id;
			id = NULL;
		} else if (strcmp(key, op->key) == 0)
			rv = -1;
		free(key);
		free(id);
	}
	return rv;
}

static int	s3_remove_list(struct s3_op *);

/* Another page when the listing is truncated; -1 if it cannot advance. */
static int
s3_remove_list_more(struct s3_op *op, const char *xml)
{
	char	*km, *im;

	km = s3_xml_value(xml, "NextKeyMarker");
	im = s3_xml_value(xml, "NextUploadIdMarker");
	if (km == NULL || km[0] == '\0' || (op->key_marker != NULL &&
	    strcmp(km, op->key_marker) == 0 && im != NULL &&
	    op->id_marker != NULL && strcmp(im, op->id_marker) == 0)) {
		free(km);
		free(im);
		return -1;
	}
	free(op->key_marker);
	free(op->id_marker);
	op->key_marker = km;
	op->id_marker = im;
	return s3_remove_list(op);
}

static void
s3_remove_listed(struct s3_req *req)
{
	struct s3_op	*op = req->arg;
	char		*trunc = NULL;
	int		 error = s3_req_error(req), more;

	/* A cut answer lacks the closing tag: never trust half a list. */
	if (error != 0 || req->resp == NULL ||
	    strstr(req->resp, "</ListMultipartUploadsResult>") == NULL ||
	    s3_remove_collect(op, req->resp) == -1) {
		s3_req_log(req, "remove, list multipart uploads");
		s3_req_free(req);
		s3_remove_finish(op, EIO);
		return;
	}
	trunc = s3_xml_value(req->resp, "IsTruncated");
	more = trunc != NULL && strcmp(trunc, "true") == 0;
	free(trunc);
	if (more && s3_remove_list_more(op, req->resp) == -1) {
		s3_req_log(req, "remove, list multipart uploads, next page");
		s3_req_free(req);
		s3_remove_finish(op, EIO);
		return;
	}
	s3_req_free(req);
	if (!more)
		s3_remove_next(op);
}

static int
s3_remove_list(struct s3_op *op)
{
	struct s3_req	*req;
	char		*q;
	int		 n;

	if (op->key_marker != NULL)
		n = asprintf(&q, "uploads&prefix=%s&max-uploads=%d"
		    "&key-marker=%s&upload-id-marker=%s", op->key,
		    S3_LIST_MAX, op->key_marker,
		    op->id_marker ? op->id_marker : "");
	else
		n = asprintf(&q, "uploads&prefix=%s&max-uploads=%d", op->key,
		    S3_LIST_MAX);
	if (n == -1)
		return -1;
	req = s3_req_new(op->s3, "GET", NULL, q, s3_remove_listed, op);
	free(q);
	if (req == NULL)
		return -1;
	s3_req_start(req);
	return 0;
}

/*
 * Everything the store may hold for ref goes: multipart uploads that a
 * failed write could not abort (the sweep retries them through here),
 * then the object.
 */
static void
s3_remove(struct store *st, const char *ref, store_done_cb cb, void *arg)
{
	struct s3_op	*op;

	if ((op = s3_op_new(st->priv, ref, arg)) == NULL) {
		cb(arg, store_ref_valid(ref) ? ENOMEM : EINVAL);
		return;
	}
	op->done_cb = cb;
	if (s3_remove_list(op) == -1) {
		s3_op_free(op);
		cb(arg, ENOMEM);
	}
}

static void
s3_check_done(struct s3_req *req)
{
	struct s3_op	*op = req->arg;
	int		 error = s3_req_error(req);

	if (error != 0) {
		s3_req_log(req, "check bucket");
		if (error != EACCES && error != ENOENT)
			error = EIO;
	}
	s3_req_free(req);
	op->done_cb(op->arg, error);
	s3_op_free(op);
}

static void
s3_check(struct store *st, store_done_cb cb, void *arg)
{
	struct s3_op	*op;

	if ((op = s3_op_new(st->priv, NULL, arg)) == NULL) {
		cb(arg, ENOMEM);
		return;
	}
	op->done_cb = cb;
	if (s3_op_send(op, "HEAD", NULL, s3_check_done) == -1) {
		s3_op_free(op);
		cb(arg, ENOMEM);
	}
}

/*
 * Configuration.
 */

/* Origin, Host and path prefix for path-style or virtual-host access. */
static int
s3_parse_endpoint(struct s3 *s3, const char *endpoint, int path_style)
{
	const char	*hp, *end;
	char		*scheme = NULL, *hostport = NULL;
	int		 rv = -1;

	if (endpoint == NULL || *endpoint == '\0') {
		if (asprintf(&hostport, "s3.%s.amazonaws.com", s3->region)
		    == -1)
			return -1;
		scheme = strdup("https");
	} else {
		if ((hp = strstr(endpoint, "://")) == NULL)
			return -1;
		scheme = strndup(endpoint, hp - endpoint);
		hp += 3;
		end = hp + strcspn(hp, "/");
		hostport = strndup(hp, end - hp);
	}
	if (scheme == NULL || hostport == NULL || hostport[0] == '\0')
		goto done;
	if (path_style) {
		s3->host = hostport;
		hostport = NULL;
		if (asprintf(&s3->base_path, "/%s", s3->bucket) == -1)
			s3->base_path = NULL;
	} else {
		if (asprintf(&s3->host, "%s.%s", s3->bucket, hostport) == -1)
			s3->host = NULL;
		s3->base_path = strdup("");
	}
	if (s3->host == NULL || s3->base_path == NULL ||
	    asprintf(&s3->origin, "%s://%s", scheme, s3->host) == -1) {
		s3->origin = NULL;
		goto done;
	}
	rv = 0;
 done:
	free(scheme);
	free(hostport);
	return rv;
}

/* Only the network: curl's CA files are the helper's common ground. */
static void
s3_paths(struct store *st, const char **ro, const char **rw)
{
	ro[0] = NULL;
	rw[0] = NULL;
}

static void
s3_free(struct store *st)
{
	struct s3	*s3 = st->priv;

	if (s3 == NULL)
		return;
	curlev_free(s3->curl);
	free(s3->bucket);
	free(s3->prefix);
	free(s3->origin);
	free(s3->host);
	free(s3->base_path);
	free(s3->region);
	free(s3->access_key);
	if (s3->secret_key != NULL)
		freezero(s3->secret_key, strlen(s3->secret_key));
	if (s3->session_token != NULL)
		freezero(s3->session_token, strlen(s3->session_token));
	free(s3);
	st->priv = NULL;
}

static int
s3_init(struct store *st, const struct store_conf *conf)
{
	struct s3	*s3;

	if ((s3 = calloc(1, sizeof(*s3))) == NULL)
		return -1;
	st->priv = s3;
	s3->st = st;
	TAILQ_INIT(&s3->queue);
	/* The defaults live in conf_new() alone; here they are checked. */
	s3->part_size = conf->part_size;
	s3->max_transfers = conf->max_transfers;
	if (conf->part_size < S3_PART_MIN || conf->part_size > S3_PART_MAX) {
		log_warnx("s3: part size must be between 5M and 5G");
		goto fail;
	}
	if (conf->max_transfers < 1) {
		log_warnx("s3: max-transfers must be at least 1");
		goto fail;
	}
	if (s3_url_parse(conf->url, &s3->bucket, &s3->prefix) == -1) {
		log_warnx("s3: bad storage URL, want s3://bucket/prefix");
		goto fail;
	}
	if (conf->access_key == NULL || conf->secret_key == NULL) {
		log_warnx("s3: %s: access key and secret key needed",
		    s3->bucket);
		goto fail;
	}
	if ((s3->region = strdup(conf->region && conf->region[0] ?
	    conf->region : "us-east-1")) == NULL ||
	    (s3->access_key = strdup(conf->access_key)) == NULL ||
	    (s3->secret_key = strdup(conf->secret_key)) == NULL ||
	    (conf->session_token != NULL && conf->session_token[0] &&
	    (s3->session_token = strdup(conf->session_token)) == NULL))
		goto fail;
	if (s3_parse_endpoint(s3, conf->endpoint, conf->path_style) == -1) {
		log_warnx("s3: %s: bad endpoint, want scheme://host[:port]",
		    s3->bucket);
		goto fail;
	}
	if ((s3->curl = curlev_new(st->base)) == NULL)
		goto fail;
	return 0;
 fail:
	s3_free(st);
	return -1;
}

const struct store_ops store_s3_ops = {
	.scheme = "s3",
	.init = s3_init,
	.paths = s3_paths,
	.check = s3_check,
	.put_begin = s3_put_begin,
	.put_commit = s3_put_commit,
	.put_abort = s3_put_abort,
	.stat = s3_stat,
	.get = s3_get,
	.remove = s3_remove,
	.free = s3_free,
};