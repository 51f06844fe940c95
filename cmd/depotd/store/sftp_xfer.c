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
 * sftp_xfer.c: what every transfer of the SFTP store is made of: its
 * life (new, finish, free), its frontend's descriptor, and the libssh2
 * calls it makes (open, close, unlink, stat), each a step that may
 * have to be repeated (see store_sftp.h).
 *
 * Below the reads and small operations (store_sftp.c) and the writer
 * (sftp_put.c), above the connection (sftp_conn.c), which runs the
 * transfers through the callbacks store_sftp.c gives it.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <libssh2.h>
#include <libssh2_sftp.h>

#include "log.h"
#include "store_sftp.h"

/*
 * The errno for a failed libssh2 call, or -1 when the failure means
 * the session itself is gone and every transfer on it must fail.
 */
int
sftp_xfer_errno(struct sftp_store *sftp, int rc)
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
sftp_xfer_call(struct sftp_store *sftp, int rc, int *error)
{
	*error = 0;
	if (rc == LIBSSH2_ERROR_EAGAIN)
		return STEP_AGAIN;
	if (rc < 0 && (*error = sftp_xfer_errno(sftp, rc)) == -1)
		return STEP_LOST;
	return STEP_PROGRESS;
}

enum sftp_step_result
sftp_xfer_open(struct store_xfer *x, const char *path, unsigned long flags,
    long mode, int *error)
{
	struct sftp_store	*sftp = x->sftp;

	x->handle = libssh2_sftp_open_ex(sftp->subsys, path, strlen(path),
	    flags, mode, LIBSSH2_SFTP_OPENFILE);
	return sftp_xfer_call(sftp, sftp_ptr_rc(sftp, x->handle), error);
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
	return sftp_xfer_call(x->sftp, rc, error);
}

enum sftp_step_result
sftp_xfer_unlink(struct store_xfer *x, const char *path, int *error)
{
	return sftp_xfer_call(x->sftp, libssh2_sftp_unlink_ex(x->sftp->subsys,
	    path, strlen(path)), error);
}

enum sftp_step_result
sftp_xfer_stat(struct store_xfer *x, const char *path,
    LIBSSH2_SFTP_ATTRIBUTES *attrs, int *error)
{
	return sftp_xfer_call(x->sftp, libssh2_sftp_stat_ex(x->sftp->subsys,
	    path, strlen(path), LIBSSH2_SFTP_STAT, attrs), error);
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
