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
 * fe_refs.c: a request's file references, resolved under the caller's
 * visibility and rewritten before anything goes upstream (SPEC 6.1).
 *
 * Two rounds of storage calls, a few at a time.  First IMSG_FILE_OPEN
 * once per distinct id: its answer is the record and the open blob
 * (any failure is the same 400, so that nobody learns whether someone
 * else's file exists); a file only the sandbox reads is resolved with
 * IMSG_FILE_GET, as its bytes are not wanted here.  Then, from the
 * records, what each block needs: the first block read natively (its
 * descriptor goes to the upstream body) or as text (a text file, or a
 * PDF through the extract child) takes the descriptor already open,
 * and only a further block of the same file opens it again.  Text is
 * read here, non-blocking and never past extract-size.  Then the
 * blocks are rewritten (fe_refs_rewrite.c) and done runs.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "log.h"
#include "names.h"
#include "util.h"
#include "fe_refs.h"

#define REFS_MAX		100	/* references in one request */
#define REFS_PARALLEL		4	/* storage calls at once */
#define REFS_EXTRACT_TIMEOUT	60	/* seconds for one PDF */
#define REFS_CHUNK		16384

/* One distinct file. */
struct rfile {
	struct fref	 fr;		/* on the public list */
	char		*id;		/* as the request wrote it */
	int		 text_job;	/* its text is being read */
	int		 unreadable;	/* extraction failed: omitted */
	char		*text;
	size_t		 len;
	int		 truncated;
	int		 fd;		/* opened on resolving, not yet used */
	int64_t		 length;	/* of what fd reads */
};

/* One reference. */
struct rsite {
	struct ref_site	 s;
	struct rfile	*f;
	enum ref_treat	 treat;
	int		 fd;		/* native: the open blob */
	int64_t		 size;
};

enum refs_job_op {
	JOB_RESOLVE,		/* f's record, and its blob open */
	JOB_OPEN,		/* open f for site's inline data */
	JOB_TEXT,		/* read f's text, or its PDF's */
};

struct rjob {
	TAILQ_ENTRY(rjob)	 entry;
	struct refs		*r;
	enum refs_job_op	 op;
	struct rfile		*f;
	struct rsite		*site;
	uint32_t		 call;		/* storage */
	uint32_t		 xcall;		/* extract */
	int			 fd;		/* text being read */
	struct event		*ev;
	int64_t			 length;	/* of fd, if planned with it */
	int64_t			 want;		/* bytes to read at most */
	int			 to_eof;	/* a pipe of unknown length */
	char			*buf;
	size_t			 len, cap;
};
TAILQ_HEAD(rjob_list, rjob);

struct refs {
	struct api_req		*ar;
	enum wire		 wire;
	const struct model_conf	*model;
	struct upstream_body		*ub;
	int			 sandbox;
	refs_done_cb		 done;
	void			*arg;

	struct rsite		 sites[REFS_MAX];
	size_t			 nsites;
	int			 too_many;
	struct rfile		*files[REFS_MAX];
	size_t			 nfiles;
	struct fref_list	 list;

	struct rjob_list	 queue, running, ended;
	int			 nrunning;
	int			 phase;		/* 0 resolving, 1 opening */
	int			 pumping;
	int			 failed;
	int			 ok;
	struct event		*finish_ev;
};

static void	refs_pump(struct refs *);

/* --- ending --- */

/* done runs from the loop, never inside refs_resolve or a callback. */
static void
refs_finish_cb(int fd, short ev, void *arg)
{
	struct refs	*r = arg;

	r->done(r->arg, r->ok);
}

static void
refs_finish(struct refs *r, int ok)
{
	r->ok = ok;
	event_active(r->finish_ev, EV_TIMEOUT, 1);
}

/* Stops what a job has in flight. */
static void
refs_job_stop(struct rjob *j)
{
	if (j->call != 0)
		fe_storage_cancel(j->call);
	if (j->xcall != 0)
		fe_extract_cancel(j->xcall);
	j->call = j->xcall = 0;
	if (j->ev != NULL)
		event_free(j->ev);
	j->ev = NULL;
	if (j->fd != -1)
		close(j->fd);
	j->fd = -1;
}

static void
refs_fail(struct refs *r, int status, const char *fmt, ...)
{
	struct rjob	*j;
	char		 msg[512];
	va_list		 ap;

	if (r->failed)
		return;
	r->failed = 1;
	TAILQ_FOREACH(j, &r->running, entry)
		refs_job_stop(j);
	if (fmt != NULL) {
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		fe_reply_error(r->ar, status, NULL, "%s", msg);
	}
	refs_finish(r, 0);
}

/* Missing, someone else's, deleted or unfinished: one answer for all. */
static void
refs_unresolvable(struct refs *r, const char *id)
{
	refs_fail(r, 400, "file %.128s could not be resolved: no such file",
	    id);
}

static void
refs_job_end(struct rjob *j)
{
	struct refs	*r = j->r;

	refs_job_stop(j);
	TAILQ_REMOVE(&r->running, j, entry);
	TAILQ_INSERT_TAIL(&r->ended, j, entry);
	r->nrunning--;
	refs_pump(r);
}

/*
 * A storage error: a 4xx is the same 400 as a missing file; a 5xx
 * (the database or the store down) is passed on.
 */
static int
refs_job_storage_ok(struct rjob *j, struct imsg *imsg, uint32_t want,
    size_t size)
{
	struct error_msg	 em;

	j->call = 0;
	if (imsg->hdr.type == IMSG_ERROR && imsg->datalen == sizeof(em)) {
		memcpy(&em, imsg->data, sizeof(em));
		if (em.status < 500) {
			refs_unresolvable(j->r, j->f->id);
			return 0;
		}
	}
	if (!fe_reply_storage_ok(j->r->ar, imsg, want, size)) {
		refs_fail(j->r, 0, NULL);
		return 0;
	}
	return 1;
}

/* --- resolving --- */

static void
refs_job_record(struct rjob *j, const struct file_rec *from)
{
	struct file_rec	*rec = &j->f->fr.rec;

	memcpy(rec, from, sizeof(*rec));
	rec->filename[sizeof(rec->filename) - 1] = '\0';
	rec->mime_type[sizeof(rec->mime_type) - 1] = '\0';
}

/* A file only the sandbox reads: its record alone. */
static void
refs_job_got(void *arg, struct imsg *imsg)
{
	struct rjob	*j = arg;
	struct file_rec	 rec;

	if (!refs_job_storage_ok(j, imsg, IMSG_FILE_INFO, sizeof(rec)))
		return;
	memcpy(&rec, imsg->data, sizeof(rec));
	refs_job_record(j, &rec);
	refs_job_end(j);
}

static void	refs_job_get_start(struct rjob *);

/*
 * The record, and the blob open for the first block that reads it.  A
 * blob the store cannot open fails only the blocks that read it, as
 * when the record alone was asked first: the record is asked again.
 */
static void
refs_job_resolved(void *arg, struct imsg *imsg)
{
	struct rjob		*j = arg;
	struct file_opened	 fo;
	struct error_msg	 em;

	if (imsg->hdr.type == IMSG_ERROR && imsg->datalen == sizeof(em)) {
		memcpy(&em, imsg->data, sizeof(em));
		if (em.status >= 500) {
			refs_job_get_start(j);
			return;
		}
	}
	if (!refs_job_storage_ok(j, imsg, IMSG_FILE_OPENED, sizeof(fo)))
		return;
	memcpy(&fo, imsg->data, sizeof(fo));
	if ((j->f->fd = imsg_get_fd(imsg)) == -1)
		fatalx("file opened without a descriptor");
	j->f->length = fo.length;
	refs_job_record(j, &fo.rec);
	refs_job_end(j);
}

static void
refs_job_key(struct rjob *j, struct file_key *fk)
{
	memset(fk, 0, sizeof(*fk));
	strlcpy(fk->handle, j->r->ar->who.handle, sizeof(fk->handle));
	strlcpy(fk->id, j->f->id, sizeof(fk->id));
}

/* The record alone. */
static void
refs_job_get_start(struct rjob *j)
{
	struct file_key	 fk;

	refs_job_key(j, &fk);
	j->call = fe_storage_request(IMSG_FILE_GET, -1, &fk, sizeof(fk),
	    refs_job_got, j);
}

static void
refs_job_resolve_start(struct rjob *j)
{
	struct file_open	 fo;

	if (strlen(j->f->id) >= sizeof(fo.key.id)) {
		refs_unresolvable(j->r, j->f->id);
		return;
	}
	/* Every reference of it is the sandbox's: its bytes go there. */
	if (j->r->sandbox && j->f->fr.container_upload) {
		refs_job_get_start(j);
		return;
	}
	memset(&fo, 0, sizeof(fo));
	refs_job_key(j, &fo.key);
	fo.range_first = fo.range_last = -1;
	j->call = fe_storage_request(IMSG_FILE_OPEN, -1, &fo, sizeof(fo),
	    refs_job_resolved, j);
}

/* --- reading text --- */

static void	refs_job_read(struct rjob *);

static void
refs_job_readable(int fd, short ev, void *arg)
{
	refs_job_read(arg);
}

static void
refs_job_text_done(struct rjob *j)
{
	struct rfile	*f = j->f;

	f->text = j->buf;
	f->len = j->len;
	j->buf = NULL;
	if (j->to_eof && f->len == (size_t)j->want) {
		f->len--;	/* the byte that showed there was more */
		f->truncated = 1;
	}
	refs_job_end(j);
}

/* Makes room for the next read; 0 or -1. */
static int
refs_job_grow(struct rjob *j)
{
	size_t	 cap;
	char	*p;

	if (j->cap - j->len >= REFS_CHUNK || j->cap == (size_t)j->want)
		return 0;
	cap = j->cap * 2 < REFS_CHUNK ? REFS_CHUNK : j->cap * 2;
	if (cap > (size_t)j->want)
		cap = j->want;
	if ((p = realloc(j->buf, cap)) == NULL)
		return -1;
	j->buf = p;
	j->cap = cap;
	return 0;
}

static void
refs_job_read(struct rjob *j)
{
	ssize_t	 n;

	while (j->len < (size_t)j->want) {
		if (refs_job_grow(j) == -1) {
			refs_fail(j->r, 503, "out of memory");
			return;
		}
		n = read(j->fd, j->buf + j->len, j->cap - j->len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (j->ev == NULL && (j->ev = event_new(fe.base, j->fd,
			    EV_READ, refs_job_readable, j)) == NULL)
				fatal("event_new");
			event_add(j->ev, NULL);
			return;
		}
		if (n == -1 || (n == 0 && !j->to_eof)) {
			/* The store failed mid-file: nothing half-read goes. */
			log_warnx("file %s: read %zu of %lld bytes", j->f->id,
			    j->len, (long long)j->want);
			refs_fail(j->r, 502, "file %.128s could not be read",
			    j->f->id);
			return;
		}
		if (n == 0)
			break;
		j->len += n;
	}
	refs_job_text_done(j);
}

static void
refs_job_read_start(struct rjob *j, int fd, int64_t want, int to_eof)
{
	int	 flags;

	j->fd = fd;
	j->want = want;
	j->to_eof = to_eof;
	if ((flags = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, flags | O_NONBLOCK) == -1)
		log_warn("%s: O_NONBLOCK", __func__);
	refs_job_read(j);
}

static int64_t
refs_extract_size(void)
{
	return fe.conf->extract_size;
}

static void
refs_job_extracted(void *arg, int fd)
{
	struct rjob	*j = arg;

	j->xcall = 0;
	if (fd == -1) {
		log_warnx("file %s: no text could be extracted", j->f->id);
		j->f->unreadable = 1;
		refs_job_end(j);
		return;
	}
	/* One byte more than is kept: to know that there was more. */
	refs_job_read_start(j, fd, refs_extract_size() + 1, 1);
}

static void
refs_job_extract_start(struct rjob *j, int fd)
{
	uint32_t	 x;

	x = fe_extract(fd, fe.conf->extract_pages, REFS_EXTRACT_TIMEOUT,
	    refs_job_extracted, j);
	/* When the child is not there, refs_job_extracted has already run. */
	if (x != 0 && j->f->text == NULL && !j->f->unreadable)
		j->xcall = x;
}

/* --- opening --- */

/* fd reads length bytes of j's file: what j opened it for. */
static void
refs_job_use(struct rjob *j, int fd, int64_t length)
{
	int64_t	 cap = refs_extract_size();

	if (j->op == JOB_OPEN) {
		j->site->fd = fd;
		j->site->size = length;
		refs_job_end(j);
	} else if (j->site->treat == TREAT_PDF)
		refs_job_extract_start(j, fd);
	else {
		j->f->truncated = length > cap;
		refs_job_read_start(j, fd, length > cap ? cap : length, 0);
	}
}

static void
refs_job_opened(void *arg, struct imsg *imsg)
{
	struct rjob		*j = arg;
	struct file_opened	 fo;
	int			 fd;

	if (!refs_job_storage_ok(j, imsg, IMSG_FILE_OPENED, sizeof(fo)))
		return;
	memcpy(&fo, imsg->data, sizeof(fo));
	if ((fd = imsg_get_fd(imsg)) == -1)
		fatalx("file opened without a descriptor");
	refs_job_use(j, fd, fo.length);
}

static void
refs_job_open_start(struct rjob *j)
{
	struct file_open	 fo;
	int			 fd;

	/* Planned with the descriptor resolving opened: no call. */
	if ((fd = j->fd) != -1) {
		j->fd = -1;
		refs_job_use(j, fd, j->length);
		return;
	}
	memset(&fo, 0, sizeof(fo));
	refs_job_key(j, &fo.key);
	fo.range_first = fo.range_last = -1;
	j->call = fe_storage_request(IMSG_FILE_OPEN, -1, &fo, sizeof(fo),
	    refs_job_opened, j);
}

/* --- the queue --- */

static void
refs_file_close(struct rfile *f)
{
	if (f->fd != -1)
		close(f->fd);
	f->fd = -1;
}

static struct rjob *
refs_queue(struct refs *r, enum refs_job_op op, struct rfile *f,
    struct rsite *site)
{
	struct rjob	*j;

	/* Out of memory is the request's 503, not the frontend's end. */
	if ((j = calloc(1, sizeof(*j))) == NULL) {
		refs_fail(r, 503, "out of memory");
		return NULL;
	}
	j->r = r;
	j->op = op;
	j->f = f;
	j->site = site;
	j->fd = -1;
	TAILQ_INSERT_TAIL(&r->queue, j, entry);
	return j;
}

/* A job that reads f: the first takes what resolving opened. */
static void
refs_queue_read(struct refs *r, enum refs_job_op op, struct rsite *s)
{
	struct rjob	*j;

	if ((j = refs_queue(r, op, s->f, s)) == NULL || s->f->fd == -1)
		return;
	j->fd = s->f->fd;
	j->length = s->f->length;
	s->f->fd = -1;
}

static void
refs_job_start(struct rjob *j)
{
	struct refs	*r = j->r;

	TAILQ_REMOVE(&r->queue, j, entry);
	TAILQ_INSERT_TAIL(&r->running, j, entry);
	r->nrunning++;
	if (j->op == JOB_RESOLVE)
		refs_job_resolve_start(j);
	else
		refs_job_open_start(j);
}

/* After resolving: what each reference needs read. */
static void
refs_plan(struct refs *r)
{
	struct rsite	*s;
	const char	*why;
	size_t		 i;

	for (i = 0; i < r->nfiles; i++)
		TAILQ_INSERT_TAIL(&r->list, &r->files[i]->fr, entry);
	for (i = 0; i < r->nsites; i++) {
		s = &r->sites[i];
		s->treat = refs_treatment(s->s.kind, r->model, &s->f->fr.rec,
		    r->sandbox);
		if ((why = refs_refused(s->s.kind, r->model)) != NULL) {
			refs_fail(r, 400, "model %s %s", r->model->name, why);
			return;
		}
		if (s->treat == TREAT_NATIVE)
			refs_queue_read(r, JOB_OPEN, s);
		else if ((s->treat == TREAT_TEXT || s->treat == TREAT_PDF) &&
		    !s->f->text_job) {
			s->f->text_job = 1;
			refs_queue_read(r, JOB_TEXT, s);
		}
	}
	/* Omitted, or the sandbox's: the bytes opened are not read. */
	for (i = 0; i < r->nfiles; i++)
		refs_file_close(r->files[i]);
}

static int	refs_apply(struct refs *);

static void
refs_pump(struct refs *r)
{
	if (r->pumping)
		return;		/* the loop below sees what changed */
	r->pumping = 1;
	while (!r->failed) {
		if (r->nrunning < REFS_PARALLEL && !TAILQ_EMPTY(&r->queue)) {
			refs_job_start(TAILQ_FIRST(&r->queue));
			continue;
		}
		if (r->nrunning > 0 || !TAILQ_EMPTY(&r->queue))
			break;
		if (r->phase++ == 0) {
			refs_plan(r);
			continue;
		}
		seed_names(&r->list);	/* the sandbox's, whether or not */
		if (refs_apply(r) == 0)
			refs_finish(r, 1);
		break;
	}
	r->pumping = 0;
}

/* --- rewriting --- */

static int
refs_apply_site(struct refs *r, struct rsite *s)
{
	struct rfile	*f = s->f;
	const char	*ph;
	char		 name[FILENAME_MAX_BYTES];
	char		 marker[FILENAME_MAX_BYTES + 64];
	char		*text;
	size_t		 len;
	int		 rc;

	if (s->treat == TREAT_NATIVE) {
		ph = upstream_body_placeholder_tagged(r->ub, s->fd, s->size,
		    f->fr.rec.id);
		s->fd = -1;		/* the body's now */
		if (ph == NULL)
			return -1;
		return refs_rewrite_native(r->wire, &s->s, &f->fr.rec, ph);
	}
	name_last_segment(f->fr.rec.filename, name, sizeof(name));
	if (s->treat == TREAT_SANDBOX)	/* seed_names gave it, once */
		strlcpy(name, f->fr.seed_name, sizeof(name));
	if (s->treat == TREAT_SANDBOX || s->treat == TREAT_OMIT ||
	    f->unreadable) {
		refs_marker(s->treat == TREAT_SANDBOX ? TREAT_SANDBOX :
		    TREAT_OMIT, name, marker, sizeof(marker));
		return refs_rewrite_text(r->wire, &s->s, marker,
		    strlen(marker));
	}
	if ((text = refs_attached_text(name, f->text, f->len, f->truncated,
	    &len)) == NULL)
		return -1;
	rc = refs_rewrite_text(r->wire, &s->s, text, len);
	free(text);
	return rc;
}

static int
refs_apply(struct refs *r)
{
	size_t	 i;

	for (i = 0; i < r->nsites; i++)
		if (refs_apply_site(r, &r->sites[i]) == -1) {
			refs_fail(r, 503, "out of memory");
			return -1;
		}
	return 0;
}

/* --- finding --- */

static struct rfile *
refs_file(struct refs *r, const char *id, enum ref_kind kind)
{
	struct rfile	*f;
	size_t		 i;

	for (i = 0; i < r->nfiles; i++)
		if (strcmp(r->files[i]->id, id) == 0) {
			if (kind != REF_CONTAINER_UPLOAD)
				r->files[i]->fr.container_upload = 0;
			return r->files[i];
		}
	if ((f = calloc(1, sizeof(*f))) == NULL ||
	    (f->id = strdup(id)) == NULL) {
		free(f);
		refs_fail(r, 503, "out of memory");
		return NULL;
	}
	f->fd = -1;
	f->fr.container_upload = kind == REF_CONTAINER_UPLOAD;
	r->files[r->nfiles++] = f;
	refs_queue(r, JOB_RESOLVE, f, NULL);
	return f;
}

static int
refs_found(void *arg, const struct ref_site *s)
{
	struct refs	*r = arg;
	struct rsite	*rs;

	if (r->nsites == REFS_MAX) {
		r->too_many = 1;
		return -1;
	}
	rs = &r->sites[r->nsites++];
	rs->s = *s;
	rs->fd = -1;
	if ((rs->f = refs_file(r, s->file_id, s->kind)) == NULL) {
		r->nsites--;
		return -1;
	}
	return 0;
}

struct refs *
refs_resolve(struct api_req *ar, enum wire wire, struct json_object *body,
    const struct model_conf *model, struct upstream_body *ub, int sandbox,
    refs_done_cb done, void *arg)
{
	struct refs	*r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->ar = ar;
	r->wire = wire;
	r->model = model;
	r->ub = ub;
	r->sandbox = sandbox;
	r->done = done;
	r->arg = arg;
	TAILQ_INIT(&r->list);
	TAILQ_INIT(&r->queue);
	TAILQ_INIT(&r->running);
	TAILQ_INIT(&r->ended);
	if ((r->finish_ev = event_new(fe.base, -1, 0, refs_finish_cb, r)) ==
	    NULL) {
		free(r);
		return NULL;
	}
	if (refs_find(wire, body, refs_found, r) == -1 && r->too_many) {
		refs_fail(r, 400, "too many file references (at most %d)",
		    REFS_MAX);
		return r;
	}
	if (r->failed)
		return r;
	refs_pump(r);
	return r;
}

struct fref_list *
refs_files(struct refs *r)
{
	return &r->list;
}

static void
refs_free_jobs(struct rjob_list *l)
{
	struct rjob	*j;

	while ((j = TAILQ_FIRST(l)) != NULL) {
		TAILQ_REMOVE(l, j, entry);
		refs_job_stop(j);
		free(j->buf);
		free(j);
	}
}

void
refs_free(struct refs *r)
{
	size_t	 i;

	if (r == NULL)
		return;
	refs_free_jobs(&r->queue);
	refs_free_jobs(&r->running);
	refs_free_jobs(&r->ended);
	for (i = 0; i < r->nsites; i++)
		if (r->sites[i].fd != -1)
			close(r->sites[i].fd);
	for (i = 0; i < r->nfiles; i++) {
		refs_file_close(r->files[i]);
		free(r->files[i]->id);
		free(r->files[i]->text);
		free(r->files[i]);
	}
	event_free(r->finish_ev);
	free(r);
}
