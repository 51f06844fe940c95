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
 * the reads, the small operations and what the connection asks of
 * every transfer (a step, its loss), given to it as callbacks; what a
 * transfer is made of is sftp_xfer.c, the writer sftp_put.c.
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

static void	sftp_probe(struct sftp_store *);
static void	sftp_orphans_retry(struct sftp_store *);
static int	sftp_xfer_needs_session(struct store_xfer *);
static enum sftp_step_result sftp_xfer_step(struct store_xfer *);
static void	sftp_xfer_lost(struct store_xfer *, int);

/* How the connection runs the transfers. */
static const struct sftp_xfer_ops sftp_transfers = {
	.step = sftp_xfer_step,
	.needs_session = sftp_xfer_needs_session,
	.lost = sftp_xfer_lost,
	.probe = sftp_probe,
	.reconnected = sftp_orphans_retry,
};

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
	if (sftp_conn_init(sftp, &sftp_transfers) == -1)
		goto fail;
	return 0;
 fail:
	st->ops->free(st);
	return -1;
}

/* A stat of the root, to make libssh2 read what arrived unasked. */
static void
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

static void
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
	if (n < 0 && sftp_xfer_errno(sftp, n) == -1)
		return STEP_LOST;
	if (n <= 0) {
		log_warnx("sftp: get %s: %lld bytes short: %s", x->ref,
		    (long long)x->remaining, n == 0 ? "the blob shrank" :
		    strerror(sftp_xfer_errno(sftp, n)));
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

static int
sftp_xfer_needs_session(struct store_xfer *x)
{
	return x->step != ST_FAILED;
}

static enum sftp_step_result
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

static void
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
