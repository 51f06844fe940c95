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
 * sftp_put.c: the SFTP store's writer.  Bytes move from the frontend's
 * socketpair through one bounded buffer to "<ref>.tmp" on the server,
 * which is renamed to the ref on commit; reading the socket stops while
 * the buffer is full.  A failed put closes and removes its temporary,
 * or leaves it to be removed after a reconnect when the session was
 * lost (store_sftp.c's sftp_orphans_retry).
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <libssh2.h>
#include <libssh2_sftp.h>

#include "log.h"
#include "store_sftp.h"

#define SFTP_WINDOW_SLACK	4096	/* for other requests' packets */

/* A put went wrong: stop reading the frontend, then clean up remotely. */
void
sftp_put_fail(struct store_xfer *x, int error)
{
	if (x->error == 0)
		x->error = error;
	sftp_xfer_close_fd(x);
	x->step = ST_PUT_FAIL_CLOSE;
}

/*
 * How much of the buffer to hand to libssh2_sftp_write.  libssh2 1.10
 * cuts a write packet in two when the channel's window runs out, and
 * the next handle's packet then lands inside it: the server reads
 * garbage and the session hangs.  So new bytes go out only as far as
 * the window reaches, less the packets' headers; bytes handed before
 * and not yet acknowledged are handed again, as libssh2 expects.
 */
static size_t
sftp_put_window(struct store_xfer *x)
{
	LIBSSH2_CHANNEL	*ch = libssh2_sftp_get_channel(x->sftp->subsys);
	size_t		 want = x->len - x->off, win, room;

	if (want <= x->handed)
		return want;
	win = ch != NULL ? libssh2_channel_window_write(ch) : 0;
	room = win > SFTP_WINDOW_SLACK ? win - win / 64 - SFTP_WINDOW_SLACK :
	    0;
	if (want - x->handed > room)
		want = x->handed + room;
	x->handed = want;
	return want;
}

static enum sftp_step_result
sftp_put_stream(struct store_xfer *x)
{
	struct sftp_store	*sftp = x->sftp;
	enum sftp_step_result	 res = STEP_IDLE;
	size_t			 count = 0;
	ssize_t			 n;
	int			 e;

	/* Top up only between calls: a pending write must see its bytes. */
	if (sftp->busy != x && !x->eof && x->len - x->off < SFTP_BUFSIZE / 2) {
		if (x->off > 0) {
			memmove(x->buf, x->buf + x->off, x->len - x->off);
			x->len -= x->off;
			x->off = 0;
		}
		n = read(x->fd, x->buf + x->len, SFTP_BUFSIZE - x->len);
		if (n > 0) {
			x->len += n;
			res = STEP_PROGRESS;
		} else if (n == 0) {
			x->eof = 1;
			sftp_xfer_close_fd(x);
			res = STEP_PROGRESS;
		} else if (errno == EAGAIN || errno == EINTR)
			sftp_xfer_wait_fd(x, EV_READ);
		else {
			log_warn("sftp: put %s: reading the upload", x->ref);
			sftp_put_fail(x, EIO);
			return STEP_PROGRESS;
		}
	}
	if (x->off < x->len && (count = sftp_put_window(x)) == 0)
		/* The window is spent: acknowledgements will reopen it. */
		return res;
	if (x->off < x->len) {
		n = libssh2_sftp_write(x->handle, x->buf + x->off, count);
		if (n < 0) {
			res = sftp_xfer_call(sftp, n, &e);
			if (res == STEP_PROGRESS)
				sftp_put_fail(x, e);
			return res;
		}
		x->off += n;
		x->moved += n;
		x->handed = x->handed > (size_t)n ? x->handed - n : 0;
		if (x->off == x->len)
			x->off = x->len = 0;
		return STEP_PROGRESS;
	}
	if (x->eof && x->committed) {
		x->step = ST_PUT_CLOSE;
		return STEP_PROGRESS;
	}
	return res;
}

/* The temporary is written: check the size, then rename it into place. */
static enum sftp_step_result
sftp_put_finish(struct store_xfer *x)
{
	struct sftp_store	*sftp = x->sftp;
	enum sftp_step_result	 res;
	int			 rc, e;

	switch (x->step) {
	case ST_PUT_CLOSE:
		if ((res = sftp_xfer_close(x, &e)) != STEP_PROGRESS)
			return res;
		if (e != 0)
			sftp_put_fail(x, e);
		else if (x->moved != x->size) {
			log_warnx("sftp: put %s: %lld bytes arrived, %lld "
			    "announced", x->ref, (long long)x->moved,
			    (long long)x->size);
			sftp_put_fail(x, EIO);
		} else
			x->step = ST_PUT_RENAME;
		return STEP_PROGRESS;
	case ST_PUT_RENAME:
		rc = libssh2_sftp_rename_ex(sftp->subsys, x->tmp,
		    strlen(x->tmp), x->path, strlen(x->path),
		    LIBSSH2_SFTP_RENAME_OVERWRITE | LIBSSH2_SFTP_RENAME_ATOMIC |
		    LIBSSH2_SFTP_RENAME_NATIVE);
		if ((res = sftp_xfer_call(sftp, rc, &e)) != STEP_PROGRESS)
			return res;
		if (e == 0) {
			x->tmp_created = 0;
			x->step = ST_PUT_REPORT;
		} else if (e == EIO && !x->renamed_once) {
			/* SFTPv3 will not rename over a file: unlink first. */
			x->renamed_once = 1;
			x->step = ST_PUT_UNLINK_TARGET;
		} else
			sftp_put_fail(x, e);
		return STEP_PROGRESS;
	case ST_PUT_UNLINK_TARGET:
		if ((res = sftp_xfer_unlink(x, x->path, &e)) != STEP_PROGRESS)
			return res;
		x->step = ST_PUT_RENAME;
		return STEP_PROGRESS;
	default:
		return sftp_xfer_finish(x, 0, x->size);
	}
}

/* After a failure: close and remove the temporary, then report. */
static enum sftp_step_result
sftp_put_failed(struct store_xfer *x)
{
	enum sftp_step_result	 res;
	int			 e;

	switch (x->step) {
	case ST_PUT_FAIL_CLOSE:
		if (x->handle != NULL &&
		    (res = sftp_xfer_close(x, &e)) != STEP_PROGRESS)
			return res;
		x->step = ST_PUT_FAIL_UNLINK;
		return STEP_PROGRESS;
	case ST_PUT_FAIL_UNLINK:
		if (x->tmp_created) {
			if ((res = sftp_xfer_unlink(x, x->tmp, &e)) !=
			    STEP_PROGRESS)
				return res;
			x->tmp_created = 0;
		}
		x->step = ST_FAILED;
		return STEP_PROGRESS;
	default:
		/* The caller still holds the xfer until commit or abort. */
		if (x->owned && !x->committed)
			return STEP_IDLE;
		return sftp_xfer_finish(x, x->error, 0);
	}
}

enum sftp_step_result
sftp_put_step(struct store_xfer *x)
{
	struct sftp_store	*sftp = x->sftp;
	enum sftp_step_result	 res;
	char			*slash;
	int			 rc, e;

	switch (x->step) {
	case ST_START:
		/* The shard directory; "already exists" is the usual answer. */
		slash = strrchr(x->path, '/');
		rc = libssh2_sftp_mkdir_ex(sftp->subsys, x->path,
		    slash - x->path, 0755);
		if ((res = sftp_xfer_call(sftp, rc, &e)) != STEP_PROGRESS)
			return res;
		x->step = ST_PUT_OPEN;
		return STEP_PROGRESS;
	case ST_PUT_OPEN:
		if ((res = sftp_xfer_create(x, x->tmp, &e)) != STEP_PROGRESS)
			return res;
		if (e != 0) {
			log_warnx("sftp: put %s: cannot create %s: %s", x->ref,
			    x->tmp, strerror(e));
			sftp_put_fail(x, e);
			return STEP_PROGRESS;
		}
		x->tmp_created = 1;
		x->step = ST_PUT_STREAM;
		return STEP_PROGRESS;
	case ST_PUT_STREAM:
		return sftp_put_stream(x);
	case ST_PUT_CLOSE:
	case ST_PUT_RENAME:
	case ST_PUT_UNLINK_TARGET:
	case ST_PUT_REPORT:
		return sftp_put_finish(x);
	case ST_PUT_FAIL_CLOSE:
	case ST_PUT_FAIL_UNLINK:
	case ST_FAILED:
		return sftp_put_failed(x);
	default:
		return STEP_IDLE;
	}
}

int
sftp_put_begin(struct store *st, const char *ref, int *fd,
    struct store_xfer **xp)
{
	struct sftp_store	*sftp = st->priv;
	struct store_xfer	*x;
	int			 sv[2];

	*fd = -1;
	if (sftp->state == CONN_BACKOFF)
		return sftp->conn_error ? sftp->conn_error : EIO;
	if (!store_ref_valid(ref))
		return EINVAL;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		return errno;
	if (fcntl(sv[0], F_SETFL, O_NONBLOCK) == -1 ||
	    (x = sftp_xfer_new(sftp, XF_PUT, ref)) == NULL) {
		close(sv[0]);
		close(sv[1]);
		return ENOMEM;
	}
	x->fd = sv[0];
	x->owned = 1;
	if ((size_t)snprintf(x->tmp, sizeof(x->tmp), "%s.tmp", x->path) >=
	    sizeof(x->tmp) ||
	    (x->buf = malloc(SFTP_BUFSIZE)) == NULL) {
		sftp_xfer_free(x);
		close(sv[1]);
		return ENOMEM;
	}
	*fd = sv[1];
	*xp = x;
	return 0;
}

void
sftp_put_commit(struct store_xfer *x, off_t size, store_done_cb cb,
    void *arg)
{
	x->committed = 1;
	x->size = size;
	x->done_cb = cb;
	x->arg = arg;
	sftp_kick(x->sftp);
}

void
sftp_put_abort(struct store_xfer *x)
{
	x->owned = 0;
	x->done_cb = NULL;
	if (x->error == 0)
		x->cancel = ECANCELED;
	sftp_kick(x->sftp);
}
