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
 * s3_put.c: the S3 store's writer.
 *
 * The frontend gets one end of a socketpair.  The helper reads the
 * other end into slots of one part each, at most 16 MiB of them (or one
 * part, if parts are bigger): an object that ends before the first slot
 * fills goes up in one PUT when the frontend commits; a bigger one
 * becomes a multipart upload, a part per full slot, several in flight at
 * once when parts are small.  Reading stops while every slot holds a
 * part, so memory stays bounded and the frontend feels back-pressure.
 * A part stays in memory until S3 took it, which is what makes a part
 * upload safe to retry.
 *
 * S3 publishes an object only when its PUT or CompleteMultipartUpload
 * succeeds, so writes go straight to the final key; every failure of a
 * multipart upload aborts it.
 */
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "store_s3.h"

#define S3_UPLOAD_MEMORY	(16 * S3_MIB)	/* per upload, in parts */
#define S3_SLOTS_MAX		(S3_UPLOAD_MEMORY / S3_PART_MIN)

/* One part's bytes, kept until S3 took them so a retry can resend. */
struct s3_slot {
	struct store_xfer	*x;
	char			*buf;		/* part_size mapped, or NULL */
	size_t			 len;
	int			 part;		/* its number once full, or 0 */
	struct s3_req		*req;		/* its upload, while running */
};

struct store_xfer {
	struct s3		*s3;
	char			*key;
	int			 fd;		/* our end of the socketpair */
	struct event		*rev;
	struct s3_slot		 slot[S3_SLOTS_MAX];
	int			 nslots;
	int			 fill;		/* slot being read into, or -1 */
	off_t			 total;
	int			 eof;
	int			 failed;	/* errno, 0 while all is well */
	int			 abandoned;	/* put_abort: nobody to report to */
	int			 committing;
	off_t			 want;
	store_done_cb		 cb;
	void			*arg;
	char			*upload_id;
	char			**etags;	/* by part number - 1 */
	int			 nparts;	/* numbered so far */
	char			*xml;		/* the completion's body */
	int			 completed;
	struct s3_req		*req;		/* create, PUT, complete, abort */
};

static void	s3_put_step(struct store_xfer *);

/*
 * Parts an upload may hold at once: S3_UPLOAD_MEMORY, or one part.
 * s3_init refuses parts under S3_PART_MIN, so this is S3_SLOTS_MAX at most.
 */
static int
s3_put_nslots(const struct s3 *s3)
{
	size_t	n = S3_UPLOAD_MEMORY / s3->part_size;

	return n < 1 ? 1 : n;
}

static int
s3_put_parts_running(const struct store_xfer *x)
{
	int	i, n = 0;

	for (i = 0; i < x->nslots; i++)
		if (x->slot[i].req != NULL)
			n++;
	return n;
}

static void
s3_put_cancel_parts(struct store_xfer *x)
{
	int	i;

	for (i = 0; i < x->nslots; i++) {
		if (x->slot[i].req != NULL) {
			s3_req_free(x->slot[i].req);
			x->slot[i].req = NULL;
		}
	}
}

static void
s3_put_free(struct store_xfer *x)
{
	int	i;

	s3_req_free(x->req);
	s3_put_cancel_parts(x);
	if (x->rev != NULL)
		event_free(x->rev);
	if (x->fd != -1)
		close(x->fd);
	for (i = 0; i < x->nslots; i++)
		if (x->slot[i].buf != NULL)
			munmap(x->slot[i].buf, x->s3->part_size);
	for (i = 0; i < x->nparts; i++)
		free(x->etags[i]);
	free(x->etags);
	free(x->upload_id);
	free(x->xml);
	free(x->key);
	free(x);
}

static void
s3_put_fail(struct store_xfer *x, int error)
{
	if (x->failed == 0)
		x->failed = error;
	/* Parts still going up are wasted: the upload will be aborted. */
	s3_put_cancel_parts(x);
	/* Further bytes are useless: make the frontend's writes fail. */
	if (x->rev != NULL) {
		event_free(x->rev);
		x->rev = NULL;
	}
	if (x->fd != -1) {
		close(x->fd);
		x->fd = -1;
	}
}

static void
s3_put_report(struct store_xfer *x, int error)
{
	store_done_cb	 cb = x->cb;
	void		*arg = x->arg;

	s3_put_free(x);
	cb(arg, error);
}

static void
s3_put_req_done(struct store_xfer *x, struct s3_req *req)
{
	x->req = NULL;
	s3_req_free(req);
	s3_put_step(x);
}

static void
s3_put_aborted(struct s3_req *req)
{
	struct store_xfer	*x = req->arg;

	if (s3_req_error(req) != 0 && s3_req_error(req) != ENOENT)
		s3_req_log(req, "abort multipart upload");
	free(x->upload_id);
	x->upload_id = NULL;
	s3_put_req_done(x, req);
}

static void
s3_put_created(struct s3_req *req)
{
	struct store_xfer	*x = req->arg;

	if (s3_req_error(req) != 0 ||
	    (x->upload_id = s3_req_xml_text(req->resp, "UploadId")) == NULL) {
		s3_req_log(req, "create multipart upload");
		s3_put_fail(x, EIO);
	}
	s3_put_req_done(x, req);
}

/* The slot is free again: reading may go on if it waited for one. */
static void
s3_put_slot_freed(struct store_xfer *x, struct s3_slot *s)
{
	s->len = 0;
	s->part = 0;
	if (x->fill == -1 && x->rev != NULL && !x->eof)
		event_add(x->rev, NULL);
}

static void
s3_put_part_done(struct s3_req *req)
{
	struct s3_slot		*s = req->arg;
	struct store_xfer	*x = s->x;

	s->req = NULL;
	if (s3_req_error(req) != 0 || req->etag[0] == '\0') {
		s3_req_log(req, "upload part");
		s3_put_fail(x, EIO);
	} else if ((x->etags[s->part - 1] = strdup(req->etag)) == NULL)
		s3_put_fail(x, ENOMEM);
	else
		s3_put_slot_freed(x, s);
	s3_req_free(req);
	s3_put_step(x);
}

static void
s3_put_done(struct s3_req *req)
{
	struct store_xfer	*x = req->arg;
	int			 error;

	if ((error = s3_req_error(req)) != 0) {
		s3_req_log(req, "put");
		s3_put_fail(x, error == ENOENT ? EIO : error);
	} else
		x->completed = 1;
	s3_put_req_done(x, req);
}

static void
s3_put_completed(struct s3_req *req)
{
	struct store_xfer	*x = req->arg;

	/* S3 may answer 200 and still put an <Error> in the body. */
	if (s3_req_error(req) != 0 || req->resp == NULL ||
	    strstr(req->resp, "<Error>") != NULL) {
		s3_req_log(req, "complete multipart upload");
		s3_put_fail(x, EIO);
	} else {
		x->completed = 1;
		free(x->upload_id);
		x->upload_id = NULL;
	}
	s3_put_req_done(x, req);
}

static int
s3_put_send(struct store_xfer *x, const char *method, const char *query,
    s3_req_cb done, const char *body, size_t len, const char *content_type)
{
	struct s3_req	*req;

	if ((req = s3_req_new(x->s3, method, x->key, query, done, x)) == NULL)
		return -1;
	req->content_type = content_type;
	req->body = body;
	req->body_len = len;
	req->has_body = body != NULL;
	x->req = req;
	s3_req_start(req);
	return 0;
}

/* The slot holds a whole part (or the last one): number it. */
static int
s3_put_part_ready(struct store_xfer *x, struct s3_slot *s)
{
	char	**etags;

	if ((etags = reallocarray(x->etags, x->nparts + 1,
	    sizeof(*etags))) == NULL)
		return -1;
	x->etags = etags;
	x->etags[x->nparts] = NULL;
	s->part = ++x->nparts;
	return 0;
}

static int
s3_put_part_start(struct store_xfer *x, struct s3_slot *s)
{
	struct s3_req	*req;
	char		 q[1024];

	snprintf(q, sizeof(q), "partNumber=%d&uploadId=%s", s->part,
	    x->upload_id);
	if ((req = s3_req_new(x->s3, "PUT", x->key, q, s3_put_part_done, s))
	    == NULL)
		return -1;
	req->body = s->buf;
	req->body_len = s->len;
	req->has_body = 1;
	s->req = req;
	s3_req_start(req);
	return 0;
}

/* Numbered parts not yet going up go now, once the upload exists. */
static void
s3_put_parts_start(struct store_xfer *x)
{
	int	i;

	for (i = 0; i < x->nslots && !x->failed; i++) {
		if (x->slot[i].part == 0 || x->slot[i].req != NULL)
			continue;
		if (x->upload_id == NULL) {
			if (x->req == NULL && s3_put_send(x, "POST", "uploads",
			    s3_put_created, NULL, 0, NULL) == -1)
				s3_put_fail(x, ENOMEM);
			return;
		}
		if (s3_put_part_start(x, &x->slot[i]) == -1)
			s3_put_fail(x, ENOMEM);
	}
}

static void
s3_put_complete(struct store_xfer *x)
{
	char	*xml = NULL, q[1024];
	size_t	 len = 0;
	FILE	*f;
	int	 i;

	if ((f = open_memstream(&xml, &len)) == NULL) {
		s3_put_fail(x, ENOMEM);
		return;
	}
	fputs("<CompleteMultipartUpload>", f);
	for (i = 0; i < x->nparts; i++)
		fprintf(f, "<Part><PartNumber>%d</PartNumber><ETag>%s</ETag>"
		    "</Part>", i + 1, x->etags[i]);
	fputs("</CompleteMultipartUpload>", f);
	if (fclose(f) != 0) {
		free(xml);
		s3_put_fail(x, ENOMEM);
		return;
	}
	free(x->xml);
	x->xml = xml;
	snprintf(q, sizeof(q), "uploadId=%s", x->upload_id);
	if (s3_put_send(x, "POST", q, s3_put_completed, x->xml, len,
	    "application/xml") == -1)
		s3_put_fail(x, ENOMEM);
}

/* After a failure: abort the upload if there is one, then report. */
static void
s3_put_step_failed(struct store_xfer *x)
{
	char	q[1024];

	if (x->upload_id != NULL) {
		snprintf(q, sizeof(q), "uploadId=%s", x->upload_id);
		if (s3_put_send(x, "DELETE", q, s3_put_aborted, NULL, 0,
		    NULL) == 0)
			return;
		log_warnx("s3: %s/%s: cannot abort the multipart upload",
		    x->s3->bucket, x->key);
		free(x->upload_id);
		x->upload_id = NULL;
	}
	if (x->abandoned)
		s3_put_free(x);
	else if (x->committing)
		s3_put_report(x, x->failed);
}

/* The frontend closed and committed: what is left, then the end. */
static void
s3_put_finish(struct store_xfer *x)
{
	struct s3_slot	*s = x->fill != -1 ? &x->slot[x->fill] : NULL;

	if (x->total != x->want) {
		log_warnx("s3: %s/%s: got %lld bytes, expected %lld",
		    x->s3->bucket, x->key, (long long)x->total,
		    (long long)x->want);
		s3_put_fail(x, EIO);
	} else if (x->nparts == 0) {
		/* It all fit in one part: a plain PUT. */
		if (s3_put_send(x, "PUT", NULL, s3_put_done,
		    s != NULL && s->buf != NULL ? s->buf : "",
		    s != NULL ? s->len : 0, NULL) == -1)
			s3_put_fail(x, ENOMEM);
	} else if (s != NULL && s->len > 0) {
		x->fill = -1;
		if (s3_put_part_ready(x, s) == -1)
			s3_put_fail(x, ENOMEM);
		else
			s3_put_parts_start(x);
	} else if (s3_put_parts_running(x) == 0)
		s3_put_complete(x);
}

/*
 * The write's state machine, run whenever something ended: parts go
 * up as they fill, several at once; once the frontend has both closed
 * its end and committed, the single PUT or the last part and the
 * completion.
 */
static void
s3_put_step(struct store_xfer *x)
{
	if (x->abandoned && x->failed == 0)
		s3_put_fail(x, ECANCELED);
	if (x->failed) {
		if (x->req == NULL)
			s3_put_step_failed(x);
		return;
	}
	if (x->req != NULL)
		return;
	if (x->completed) {
		s3_put_report(x, 0);
		return;
	}
	s3_put_parts_start(x);
	if (!x->failed && x->req == NULL && x->eof && x->committing)
		s3_put_finish(x);
	if (x->failed && x->req == NULL)
		s3_put_step_failed(x);
}

/*
 * A slot's buffer is mapped at its full part size on first use: only
 * the pages written count, a part never moves as it grows, and unmapping
 * gives the memory back at once, where malloc would keep it in its heap.
 */
static int
s3_put_slot_map(struct store_xfer *x, struct s3_slot *s)
{
	void	*p;

	if (s->buf != NULL)
		return 0;
	p = mmap(NULL, x->s3->part_size, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	s->buf = p;
	return 0;
}

/* A slot to read into: the one filling, or a free one, or -1. */
static int
s3_put_fill_slot(struct store_xfer *x)
{
	int	i;

	if (x->fill != -1)
		return x->fill;
	for (i = 0; i < x->nslots; i++)
		if (x->slot[i].part == 0)
			return x->fill = i;
	return -1;
}

static void
s3_put_readable(evutil_socket_t fd, short what, void *arg)
{
	struct store_xfer	*x = arg;
	struct s3_slot		*s;
	ssize_t			 n;

	for (;;) {
		if (s3_put_fill_slot(x) == -1) {
			/* Every slot holds a part: wait until one is up. */
			event_del(x->rev);
			break;
		}
		s = &x->slot[x->fill];
		if (s3_put_slot_map(x, s) == -1) {
			s3_put_fail(x, ENOMEM);
			break;
		}
		n = read(x->fd, s->buf + s->len, x->s3->part_size - s->len);
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n == -1) {
			log_warn("s3: %s/%s: read", x->s3->bucket, x->key);
			s3_put_fail(x, EIO);
			break;
		}
		if (n == 0) {
			x->eof = 1;
			event_del(x->rev);
			break;
		}
		s->len += n;
		x->total += n;
		if (s->len == x->s3->part_size) {
			x->fill = -1;
			if (s3_put_part_ready(x, s) == -1) {
				s3_put_fail(x, ENOMEM);
				break;
			}
			/* Not s3_put_step: that may free x on failure. */
			s3_put_parts_start(x);
			if (x->failed)
				break;
		}
	}
	s3_put_step(x);
}

int
s3_put_begin(struct store *st, const char *ref, int *fdp,
    struct store_xfer **xp)
{
	struct s3		*s3 = st->priv;
	struct store_xfer	*x;
	int			 sv[2], i;

	if ((x = calloc(1, sizeof(*x))) == NULL)
		return ENOMEM;
	x->s3 = s3;
	x->fd = -1;
	x->fill = -1;
	x->nslots = s3_put_nslots(s3);
	for (i = 0; i < x->nslots; i++)
		x->slot[i].x = x;
	if ((x->key = s3_req_key(s3, ref)) == NULL) {
		free(x);
		return EINVAL;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1) {
		s3_put_free(x);
		return errno;
	}
	x->fd = sv[0];
	if (fcntl(x->fd, F_SETFL, O_NONBLOCK) == -1 ||
	    (x->rev = event_new(st->base, x->fd, EV_READ | EV_PERSIST,
	    s3_put_readable, x)) == NULL || event_add(x->rev, NULL) == -1) {
		close(sv[1]);
		s3_put_free(x);
		return EIO;
	}
	*fdp = sv[1];
	*xp = x;
	return 0;
}

void
s3_put_commit(struct store_xfer *x, off_t size, store_done_cb cb, void *arg)
{
	x->committing = 1;
	x->want = size;
	x->cb = cb;
	x->arg = arg;
	s3_put_step(x);
}

/*
 * Whether the request in flight creates or aborts the multipart upload.
 * Cancelled, either would leave an upload on the server with nobody to
 * end it: a create the server has done but whose answer (the upload's
 * id) is not read yet, or an abort not yet sent.
 */
static int
s3_put_req_must_finish(const struct store_xfer *x)
{
	if (x->req == NULL)
		return 0;
	if (x->upload_id == NULL)
		return x->nparts > 0;
	return x->failed != 0;
}

void
s3_put_abort(struct store_xfer *x)
{
	x->abandoned = 1;
	if (x->req != NULL && !s3_put_req_must_finish(x)) {
		s3_req_free(x->req);
		x->req = NULL;
	}
	s3_put_step(x);
}