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
 * store_sftp.c: blobs on an SFTP server, "sftp://user@host[:port]/path".
 *
 * One SSH session per store (sftp_conn.c).  Every operation (put, get,
 * stat, remove, check) is a transfer with a small state machine; a pass
 * over the transfers lets each make one libssh2 call.  This file holds
 * what the transfers share, the reads and the small operations; the
 * writer is sftp_put.c.
 *
 * Bytes move between the SFTP server and one end of a socketpair that
 * the frontend writes or reads, through one bounded buffer per
 * transfer: a put stops reading its socket while the buffer is full
 * and a get stops reading the server while the frontend lags.
 *
 * Uploads go to "<ref>.tmp" and are renamed on commit; a temporary
 * that could not be removed because the connection was lost is
 * remembered and removed after the next reconnect.  Its name derives
 * from the ref (ids are never reused), so that removing a ref also
 * removes whatever an interrupted upload left, even one this process
 * no longer remembers: the sweep relies on that.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <libssh2.h>
#include <libssh2_sftp.h>

#include "log.h"
#include "sftp_conn.h"
#include "store_sftp.h"

#define SFTP_ORPHANS_MAX	1024
#define SFTP_STALL_DEFAULT	60	/* without keepalive */
#define SFTP_STALL_MIN		6

/*
 * The errno for a failed libssh2 call, or -1 when the failure means
 * the session itself is gone and every transfer on it must fail.
 */
static int
sftp_errno(struct sftp_store *sftp, int rc)
{
	if (rc != LIBSSH2_ERROR_SFTP_PROTOCOL)
		return -1;
	switch (libssh2_sftp_last_error(sftp->subsys)) {
	case LIBSSH2_FX_NO_SUCH_FILE:
	case LIBSSH2_FX_NO_SUCH_PATH:
		return ENOENT;
	case LIBSSH2_FX_PERMISSION_DENIED:
	case LIBSSH2_FX_WRITE_PROTECT:
		return EACCES;
	case LIBSSH2_FX_NO_SPACE_ON_FILESYSTEM:
	case LIBSSH2_FX_QUOTA_EXCEEDED:
		return ENOSPC;
	case LIBSSH2_FX_FILE_ALREADY_EXISTS:
		return EEXIST;
	default:
		return EIO;
	}
}

/* The rc of a libssh2 call that returned a pointer, NULL meaning failure. */
static int
sftp_ptr_rc(struct sftp_store *sftp, const void *p)
{
	if (p != NULL)
		return 0;
	return libssh2_session_last_errno(sftp->ssh);
}

enum sftp_step_result
sftp_call(struct sftp_store *sftp, int rc, int *error)
{
	*error = 0;
	if (rc == LIBSSH2_ERROR_EAGAIN)
		return STEP_AGAIN;
	if (rc < 0 && (*error = sftp_errno(sftp, rc)) == -1)
		return STEP_LOST;
	return STEP_PROGRESS;
}

static enum sftp_step_result
sftp_xfer_open(struct store_xfer *x, const char *path, unsigned long flags,
    long mode, int *error)
{
	struct sftp_store	*sftp = x->sftp;

	x->handle = libssh2_sftp_open_ex(sftp->subsys, path, strlen(path),
	    flags, mode, LIBSSH2_SFTP_OPENFILE);
	return sftp_call(sftp, sftp_ptr_rc(sftp, x->handle), error);
}

/* A new file of ours alone: a temporary, or the check's probe. */
enum sftp_step_result
sftp_xfer_create(struct store_xfer *x, const char *path, int *error)
{
	return sftp_xfer_open(x, path, LIBSSH2_FXF_WRITE | LIBSSH2_FXF_CREAT |
	    LIBSSH2_FXF_EXCL, 0600, error);
}

enum sftp_step_result
sftp_xfer_close(struct store_xfer *x, int *error)
{
	int	rc;

	rc = libssh2_sftp_close_handle(x->handle);
	if (rc != LIBSSH2_ERROR_EAGAIN)
		x->handle = NULL;
	return sftp_call(x->sftp, rc, error);
}

enum sftp_step_result
sftp_xfer_unlink(struct store_xfer *x, const char *path, int *error)
{
	return sftp_call(x->sftp, libssh2_sftp_unlink_ex(x->sftp->subsys,
	    path, strlen(path)), error);
}

static enum sftp_step_result
sftp_xfer_stat(struct store_xfer *x, const char *path,
    LIBSSH2_SFTP_ATTRIBUTES *attrs, int *error)
{
	return sftp_call(x->sftp, libssh2_sftp_stat_ex(x->sftp->subsys, path,
	    strlen(path), LIBSSH2_SFTP_STAT, attrs), error);
}

static int
sftp_init(struct store *st, const struct store_conf *sc)
{
	struct sftp_store	*sftp;

	if ((sftp = calloc(1, sizeof(*sftp))) == NULL)
		return -1;
	st->priv = sftp;
	sftp->st = st;
	sftp->sock = -1;
	TAILQ_INIT(&sftp->xfers);
	TAILQ_INIT(&sftp->orphans);
	if (sftp_url_parse(&sftp->url, sc->url) == -1) {
		log_warnx("sftp: cannot parse storage URL \"%s\"", sc->url);
		goto fail;
	}
	if (sc->identity == NULL || sc->identity[0] == '\0' ||
	    sc->known_hosts == NULL || sc->known_hosts[0] == '\0') {
		log_warnx("sftp: %s needs an identity and a known-hosts file",
		    sc->url);
		goto fail;
	}
	sftp->identity = strdup(sc->identity);
	sftp->known_hosts = strdup(sc->known_hosts);
	sftp->passphrase = strdup(sc->passphrase ? sc->passphrase : "");
	sftp->keepalive = sc->keepalive > 0 ? sc->keepalive : 0;
	/* Like ssh(1): three unanswered keepalive intervals. */
	sftp->stall = sftp->keepalive > 0 ? 3 * sftp->keepalive :
	    SFTP_STALL_DEFAULT;
	if (sftp->stall < SFTP_STALL_MIN)
		sftp->stall = SFTP_STALL_MIN;
	if (sftp->identity == NULL || sftp->known_hosts == NULL ||
	    sftp->passphrase == NULL)
		goto fail;
	if (libssh2_init(0) != 0) {
		log_warnx("sftp: libssh2_init failed");
		goto fail;
	}
	if (sftp_conn_init(sftp) == -1)
		goto fail;
	return 0;
 fail:
	st->ops->free(st);
	return -1;
}

/* A stat of the root, to make libssh2 read what arrived unasked. */
void
sftp_probe(struct sftp_store *sftp)
{
	struct store_xfer	*x;

	if ((x = calloc(1, sizeof(*x))) == NULL)
		return;
	x->sftp = sftp;
	x->kind = XF_PROBE;
	x->fd = -1;
	strlcpy(x->path, sftp->url.root[0] ? sftp->url.root : "/",
	    sizeof(x->path));
	sftp->probing = 1;
	TAILQ_INSERT_HEAD(&sftp->xfers, x, entry);
}

void
sftp_xfer_close_fd(struct store_xfer *x)
{
	if (x->ev_fd != NULL) {
		event_free(x->ev_fd);
		x->ev_fd = NULL;
	}
	if (x->fd != -1) {
		close(x->fd);
		x->fd = -1;
	}
}

void
sftp_xfer_free(struct store_xfer *x)
{
	struct sftp_store	*sftp = x->sftp;

	if (sftp->busy == x)
		sftp->busy = NULL;
	if (x->kind == XF_PROBE)
		sftp->probing = 0;
	TAILQ_REMOVE(&sftp->xfers, x, entry);
	sftp_xfer_close_fd(x);
	free(x->buf);
	free(x);
}

static void
sftp_orphan(struct sftp_store *sftp, const char *path)
{
	struct sftp_orphan	*o;

	if (sftp->norphans >= SFTP_ORPHANS_MAX) {
		log_warnx("sftp: too many temporaries to clean up; %s stays",
		    path);
		return;
	}
	if ((o = calloc(1, sizeof(*o))) == NULL ||
	    (o->path = strdup(path)) == NULL) {
		free(o);
		return;
	}
	TAILQ_INSERT_TAIL(&sftp->orphans, o, entry);
	sftp->norphans++;
}

/* Report and free; the callback comes last so it may start new work. */
enum sftp_step_result
sftp_xfer_finish(struct store_xfer *x, int error, off_t size)
{
	enum sftp_xfer_kind	 kind = x->kind;
	store_done_cb	 done_cb = x->done_cb;
	store_stat_cb	 stat_cb = x->stat_cb;
	store_open_cb	 open_cb = x->open_cb;
	void		*arg = x->arg;
	int		 opened = x->opened, owned = x->owned;

	sftp_xfer_free(x);
	switch (kind) {
	case XF_CHECK:
	case XF_REMOVE:
		done_cb(arg, error);
		break;
	case XF_PUT:
		if (owned && done_cb != NULL)
			done_cb(arg, error);
		break;
	case XF_STAT:
		stat_cb(arg, error, size);
		break;
	case XF_GET:
		if (!opened)
			open_cb(arg, error, -1, 0);
		break;
	default:
		break;
	}
	return STEP_DONE;
}

static void
sftp_xfer_fd_cb(evutil_socket_t fd, short what, void *arg)
{
	struct store_xfer	*x = arg;

	sftp_run(x->sftp);
}

void
sftp_xfer_wait_fd(struct store_xfer *x, short what)
{
	if (x->ev_fd == NULL)
		x->ev_fd = event_new(x->sftp->st->base, x->fd, what,
		    sftp_xfer_fd_cb, x);
	if (x->ev_fd != NULL && !event_pending(x->ev_fd, what, NULL))
		event_add(x->ev_fd, NULL);
}

void
sftp_orphans_retry(struct sftp_store *sftp)
{
	struct store_xfer	*x;
	struct sftp_orphan	*o;

	while ((o = TAILQ_FIRST(&sftp->orphans)) != NULL) {
		TAILQ_REMOVE(&sftp->orphans, o, entry);
		sftp->norphans--;
		if ((x = calloc(1, sizeof(*x))) != NULL) {
			x->sftp = sftp;
			x->kind = XF_CLEANUP;
			x->fd = -1;
			strlcpy(x->tmp, o->path, sizeof(x->tmp));
			TAILQ_INSERT_TAIL(&sftp->xfers, x, entry);
		}
		free(o->path);
		free(o);
	}
}

static enum sftp_step_result
sftp_get_stream(struct store_xfer *x)
{
	struct sftp_store	*sftp = x->sftp;
	ssize_t			 n;
	size_t			 want;

	if (x->off < x->len) {
		n = send(x->fd, x->buf + x->off, x->len - x->off,
		    MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
			sftp_xfer_wait_fd(x, EV_WRITE);
			return STEP_IDLE;
		}
		if (n == -1) {
			/* The reader went away: nothing left to deliver. */
			x->step = ST_GET_CLOSE;
			return STEP_PROGRESS;
		}
		x->off += n;
		if (x->off == x->len)
			x->off = x->len = 0;
		return STEP_PROGRESS;
	}
	if (x->remaining == 0) {
		x->step = ST_GET_CLOSE;
		return STEP_PROGRESS;
	}
	want = x->remaining < SFTP_BUFSIZE ? x->remaining : SFTP_BUFSIZE;
	n = libssh2_sftp_read(x->handle, x->buf, want);
	if (n == LIBSSH2_ERROR_EAGAIN)
		return STEP_AGAIN;
	if (n < 0 && sftp_errno(sftp, n) == -1)
		return STEP_LOST;
	if (n <= 0) {
		log_warnx("sftp: get %s: %lld bytes short: %s", x->ref,
		    (long long)x->remaining, n == 0 ? "the blob shrank" :
		    strerror(sftp_errno(sftp, n)));
		x->step = ST_GET_CLOSE;
		return STEP_PROGRESS;
	}
	x->len = n;
	x->remaining -= n;
	return STEP_PROGRESS;
}

static enum sftp_step_result
sftp_get_opened(struct store_xfer *x)
{
	int	sv[2];

	libssh2_sftp_seek64(x->handle, x->offset);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1) {
		log_warn("sftp: get %s: socketpair", x->ref);
		x->error = EIO;
		x->step = ST_GET_CLOSE;
		return STEP_PROGRESS;
	}
	if (fcntl(sv[0], F_SETFL, O_NONBLOCK) == -1) {
		close(sv[0]);
		close(sv[1]);
		x->error = EIO;
		x->step = ST_GET_CLOSE;
		return STEP_PROGRESS;
	}
	x->fd = sv[0];
	x->opened = 1;
	x->step = ST_GET_STREAM;
	x->open_cb(x->arg, 0, sv[1], 0);
	return STEP_PROGRESS;
}

static enum sftp_step_result
sftp_get_step(struct store_xfer *x)
{
	LIBSSH2_SFTP_ATTRIBUTES		 attrs;
	enum sftp_step_result		 res;
	int				 e;

	switch (x->step) {
	case ST_START:
		if ((res = sftp_xfer_stat(x, x->path, &attrs, &e)) !=
		    STEP_PROGRESS)
			return res;
		if (e != 0)
			return sftp_xfer_finish(x, e, 0);
		if (x->offset > (off_t)attrs.filesize)
			return sftp_xfer_finish(x, EINVAL, 0);
		if (x->remaining < 0 ||
		    x->remaining > (off_t)attrs.filesize - x->offset)
			x->remaining = attrs.filesize - x->offset;
		x->step = ST_GET_OPEN;
		return STEP_PROGRESS;
	case ST_GET_OPEN:
		res = sftp_xfer_open(x, x->path, LIBSSH2_FXF_READ, 0, &e);
		if (res != STEP_PROGRESS)
			return res;
		if (e != 0)
			return sftp_xfer_finish(x, e, 0);
		return sftp_get_opened(x);
	case ST_GET_STREAM:
		return sftp_get_stream(x);
	case ST_GET_CLOSE:
		/* EOF to the reader first; it need not wait for the server. */
		sftp_xfer_close_fd(x);
		if (x->handle != NULL) {
			/* Drop read-ahead the range did not need (local). */
			libssh2_sftp_seek64(x->handle, 0);
			if ((res = sftp_xfer_close(x, &e)) != STEP_PROGRESS)
				return res;
		}
		return sftp_xfer_finish(x, x->error ? x->error : EIO, 0);
	default:
		return sftp_xfer_finish(x, x->error, 0);
	}
}

/* check, stat, remove, cleanup and probe: one call each. */
static enum sftp_step_result
sftp_meta_step(struct store_xfer *x)
{
	LIBSSH2_SFTP_ATTRIBUTES		 attrs;
	enum sftp_step_result		 res;
	const char			*path;
	int				 e;

	if (x->step == ST_FAILED)
		return sftp_xfer_finish(x, x->error, 0);
	if (x->kind == XF_REMOVE && !x->tmp_checked) {
		if ((res = sftp_xfer_unlink(x, x->tmp, &e)) != STEP_PROGRESS)
			return res;
		if (e != 0 && e != ENOENT)
			return sftp_xfer_finish(x, e, 0);
		x->tmp_checked = 1;
		x->tmp_removed = e == 0;
	}
	path = x->kind == XF_CLEANUP ? x->tmp : x->path;
	if (x->kind == XF_REMOVE || x->kind == XF_CLEANUP)
		res = sftp_xfer_unlink(x, path, &e);
	else
		res = sftp_xfer_stat(x, path, &attrs, &e);
	if (res != STEP_PROGRESS)
		return res;
	/* A ref that only had a temporary was there all the same. */
	if (x->kind == XF_REMOVE && e == ENOENT && x->tmp_removed)
		e = 0;
	return sftp_xfer_finish(x, e, e == 0 && x->kind != XF_REMOVE &&
	    x->kind != XF_CLEANUP ? (off_t)attrs.filesize : 0);
}

/* The root must be a directory we can create and remove files in. */
static enum sftp_step_result
sftp_check_step(struct store_xfer *x)
{
	struct sftp_store		*sftp = x->sftp;
	LIBSSH2_SFTP_ATTRIBUTES		 attrs;
	enum sftp_step_result		 res;
	int				 e;

	switch (x->step) {
	case ST_START:
		if ((res = sftp_xfer_stat(x, x->path, &attrs, &e)) !=
		    STEP_PROGRESS)
			return res;
		if (e == 0 && !LIBSSH2_SFTP_S_ISDIR(attrs.permissions))
			e = ENOTDIR;
		if (e == ENOENT)
			log_warnx("sftp: store root %s does not exist on "
			    "%s:%d", x->path, sftp->url.host, sftp->url.port);
		else if (e != 0)
			log_warnx("sftp: store root %s on %s:%d: %s", x->path,
			    sftp->url.host, sftp->url.port, strerror(e));
		if (e != 0)
			return sftp_xfer_finish(x, e, 0);
		x->step = ST_CHECK_OPEN;
		return STEP_PROGRESS;
	case ST_CHECK_OPEN:
		if ((res = sftp_xfer_create(x, x->tmp, &e)) != STEP_PROGRESS)
			return res;
		if (e != 0) {
			log_warnx("sftp: cannot create files in store root %s "
			    "on %s:%d: %s", x->path, sftp->url.host,
			    sftp->url.port, strerror(e));
			return sftp_xfer_finish(x, e, 0);
		}
		x->tmp_created = 1;
		x->step = ST_CHECK_CLOSE;
		return STEP_PROGRESS;
	case ST_CHECK_CLOSE:
		if ((res = sftp_xfer_close(x, &e)) != STEP_PROGRESS)
			return res;
		x->step = ST_CHECK_UNLINK;
		return STEP_PROGRESS;
	case ST_CHECK_UNLINK:
		if ((res = sftp_xfer_unlink(x, x->tmp, &e)) != STEP_PROGRESS)
			return res;
		x->tmp_created = 0;
		if (e != 0)
			log_warnx("sftp: cannot remove files in store root %s "
			    "on %s:%d: %s", x->path, sftp->url.host,
			    sftp->url.port, strerror(e));
		return sftp_xfer_finish(x, e, 0);
	default:
		return sftp_xfer_finish(x, x->error, 0);
	}
}

int
sftp_xfer_needs_session(struct store_xfer *x)
{
	return x->step != ST_FAILED;
}

enum sftp_step_result
sftp_xfer_step(struct store_xfer *x)
{
	/* A cancel waits until no call of this xfer is pending. */
	if (x->cancel && x->sftp->busy != x) {
		if (x->kind == XF_PUT && x->step < ST_PUT_FAIL_CLOSE)
			sftp_put_fail(x, x->cancel);
		else if (x->kind == XF_GET && x->step == ST_GET_STREAM)
			x->step = ST_GET_CLOSE;
		x->cancel = 0;
	}
	switch (x->kind) {
	case XF_PUT:
		return sftp_put_step(x);
	case XF_GET:
		return sftp_get_step(x);
	case XF_CHECK:
		return sftp_check_step(x);
	default:
		return sftp_meta_step(x);
	}
}

void
sftp_xfer_lost(struct store_xfer *x, int error)
{
	struct sftp_store	*sftp = x->sftp;

	x->handle = NULL;	/* freed with the session */
	switch (x->kind) {
	case XF_PUT:
		if (x->step == ST_FAILED)
			return;
		if (x->tmp_created || x->step == ST_PUT_OPEN)
			sftp_orphan(sftp, x->tmp);
		x->tmp_created = 0;
		if (x->error == 0)
			x->error = error;
		sftp_xfer_close_fd(x);
		x->step = ST_FAILED;
		break;
	case XF_GET:
		if (x->opened)
			log_warnx("sftp: get %s: connection lost, %lld bytes "
			    "undelivered: %s", x->ref,
			    (long long)(x->remaining + x->len - x->off),
			    strerror(error));
		x->error = error;
		x->step = ST_FAILED;
		break;
	case XF_CLEANUP:
		sftp_orphan(sftp, x->tmp);
		sftp_xfer_free(x);
		break;
	case XF_PROBE:
		sftp_xfer_free(x);
		break;
	default:
		if (x->kind == XF_CHECK && (x->tmp_created ||
		    x->step == ST_CHECK_OPEN))
			sftp_orphan(sftp, x->tmp);
		x->error = error;
		x->step = ST_FAILED;
		break;
	}
}

/* A new transfer: it waits for the session, or fails fast while down. */
struct store_xfer *
sftp_xfer_new(struct sftp_store *sftp, enum sftp_xfer_kind kind,
    const char *ref)
{
	struct store_xfer	*x;

	if ((x = calloc(1, sizeof(*x))) == NULL)
		return NULL;
	x->sftp = sftp;
	x->kind = kind;
	x->fd = -1;
	if (ref != NULL) {
		strlcpy(x->ref, ref, sizeof(x->ref));
		if (!store_ref_valid(ref) || (size_t)snprintf(x->path,
		    sizeof(x->path), "%s/%s", sftp->url.root, ref) >=
		    sizeof(x->path)) {
			x->error = EINVAL;
			x->step = ST_FAILED;
		}
	} else
		strlcpy(x->path, sftp->url.root[0] ? sftp->url.root : "/",
		    sizeof(x->path));
	if (x->step != ST_FAILED && sftp->state == CONN_BACKOFF) {
		x->error = sftp->conn_error ? sftp->conn_error : EIO;
		x->step = ST_FAILED;
	}
	TAILQ_INSERT_TAIL(&sftp->xfers, x, entry);
	if (sftp->state == CONN_DOWN)
		sftp_connect(sftp);
	sftp_kick(sftp);
	return x;
}

static void
sftp_check(struct store *st, store_done_cb cb, void *arg)
{
	struct sftp_store	*sftp = st->priv;
	struct store_xfer	*x;
	uint64_t		 rnd;

	if ((x = sftp_xfer_new(sftp, XF_CHECK, NULL)) == NULL) {
		cb(arg, ENOMEM);
		return;
	}
	/* A check is the one call that may wait out a backoff. */
	if (x->step == ST_FAILED && x->error != EINVAL) {
		x->step = ST_START;
		x->error = 0;
		sftp_connect(sftp);
	}
	arc4random_buf(&rnd, sizeof(rnd));
	snprintf(x->tmp, sizeof(x->tmp), "%s/.depot-check-%016llx",
	    sftp->url.root, (unsigned long long)rnd);
	x->done_cb = cb;
	x->arg = arg;
}

static void
sftp_stat(struct store *st, const char *ref, store_stat_cb cb, void *arg)
{
	struct store_xfer	*x;

	if ((x = sftp_xfer_new(st->priv, XF_STAT, ref)) == NULL) {
		cb(arg, ENOMEM, 0);
		return;
	}
	x->stat_cb = cb;
	x->arg = arg;
}

static void
sftp_get(struct store *st, const char *ref, off_t offset, off_t length,
    store_open_cb cb, void *arg)
{
	struct store_xfer	*x;

	if ((x = sftp_xfer_new(st->priv, XF_GET, ref)) == NULL) {
		cb(arg, ENOMEM, -1, 0);
		return;
	}
	x->open_cb = cb;
	x->arg = arg;
	x->offset = offset;
	x->remaining = length;
	if (offset < 0 || (x->buf = malloc(SFTP_BUFSIZE)) == NULL) {
		x->error = offset < 0 ? EINVAL : ENOMEM;
		x->step = ST_FAILED;
	}
}

static void
sftp_remove(struct store *st, const char *ref, store_done_cb cb, void *arg)
{
	struct store_xfer	*x;

	if ((x = sftp_xfer_new(st->priv, XF_REMOVE, ref)) == NULL) {
		cb(arg, ENOMEM);
		return;
	}
	if ((size_t)snprintf(x->tmp, sizeof(x->tmp), "%s.tmp", x->path) >=
	    sizeof(x->tmp)) {
		x->error = ENAMETOOLONG;
		x->step = ST_FAILED;
	}
	x->done_cb = cb;
	x->arg = arg;
}

/* The key files; the rest is on the other side of the connection. */
static void
sftp_paths(struct store *st, const char **ro, const char **rw)
{
	struct sftp_store	*sftp = st->priv;

	ro[0] = sftp->identity;
	ro[1] = sftp->known_hosts;
	ro[2] = NULL;
	rw[0] = NULL;
}

/* Pending callbacks are dropped: the caller is going away too. */
static void
sftp_free(struct store *st)
{
	struct sftp_store	*sftp = st->priv;
	struct store_xfer	*x;
	struct sftp_orphan		*o;

	if (sftp == NULL)
		return;
	while ((x = TAILQ_FIRST(&sftp->xfers)) != NULL)
		sftp_xfer_free(x);
	while ((o = TAILQ_FIRST(&sftp->orphans)) != NULL) {
		TAILQ_REMOVE(&sftp->orphans, o, entry);
		free(o->path);
		free(o);
	}
	sftp_conn_free(sftp);
	if (sftp->passphrase != NULL)
		freezero(sftp->passphrase, strlen(sftp->passphrase) + 1);
	sftp_url_free(&sftp->url);
	free(sftp->identity);
	free(sftp->known_hosts);
	free(sftp);
	st->priv = NULL;
}

const struct store_ops store_sftp_ops = {
	.scheme = "sftp",
	.init = sftp_init,
	.paths = sftp_paths,
	.check = sftp_check,
	.put_begin = sftp_put_begin,
	.put_commit = sftp_put_commit,
	.put_abort = sftp_put_abort,
	.stat = sftp_stat,
	.get = sftp_get,
	.remove = sftp_remove,
	.free = sftp_free,
};
