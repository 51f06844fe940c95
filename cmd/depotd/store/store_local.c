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
 * store_local.c: blobs as files in a local directory.
 *
 * A blob is written to a hidden temporary beside its final name, then
 * fsynced, renamed into place and its directory fsynced, so that a
 * reader sees either nothing or the whole blob.  The temporary's name
 * derives from the reference, so removing a reference also removes
 * whatever an interrupted write left behind.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "store.h"
#include "store_url.h"

struct local_store {
	char	 root[PATH_MAX];
	int	 rootfd;
};

struct store_xfer {
	struct local_store	*local;
	char			 ref[PATH_MAX];
	char			 tmp[PATH_MAX];
	int			 fd;		/* our copy, for fsync */
};

static struct local_store *
local_of(struct store *st)
{
	return st->priv;
}

static int
local_init(struct store *st, const struct store_conf *sc)
{
	struct local_store	*local;
	const char		*path;

	if ((path = local_url_root(sc->url)) == NULL) {
		log_warnx("storage: file URL needs an absolute path");
		return -1;
	}
	if ((local = calloc(1, sizeof(*local))) == NULL)
		return -1;
	strlcpy(local->root, path, sizeof(local->root));
	local->rootfd = open(local->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (local->rootfd == -1) {
		log_warn("storage: %s", local->root);
		free(local);
		return -1;
	}
	st->priv = local;
	return 0;
}

static void
local_tmp_for_ref(char *buf, size_t len, const char *ref)
{
	const char	*slash = strrchr(ref, '/');

	if (slash == NULL)
		snprintf(buf, len, ".%s.tmp", ref);
	else
		snprintf(buf, len, "%.*s/.%s.tmp", (int)(slash - ref), ref,
		    slash + 1);
}

static int
local_mkdir_for_ref(struct local_store *local, const char *ref)
{
	char	 dir[PATH_MAX], *slash;

	strlcpy(dir, ref, sizeof(dir));
	if ((slash = strrchr(dir, '/')) == NULL)
		return 0;
	*slash = '\0';
	if (mkdirat(local->rootfd, dir, 0750) == -1 && errno != EEXIST)
		return -1;
	return 0;
}

static void
local_check(struct store *st, store_done_cb cb, void *arg)
{
	struct local_store	*local = local_of(st);
	const char		*probe = ".depotd-probe";
	int			 fd, error = 0;

	fd = openat(local->rootfd, probe, O_WRONLY | O_CREAT | O_TRUNC |
	    O_CLOEXEC, 0600);
	if (fd == -1)
		error = errno;
	else {
		close(fd);
		unlinkat(local->rootfd, probe, 0);
	}
	cb(arg, error);
}

static int
local_put_begin(struct store *st, const char *ref, int *fd,
    struct store_xfer **xp)
{
	struct local_store	*local = local_of(st);
	struct store_xfer	*x;

	if (!store_ref_valid(ref))
		return EINVAL;
	if ((x = calloc(1, sizeof(*x))) == NULL)
		return ENOMEM;
	x->local = local;
	strlcpy(x->ref, ref, sizeof(x->ref));
	local_tmp_for_ref(x->tmp, sizeof(x->tmp), ref);
	if (local_mkdir_for_ref(local, ref) == -1 ||
	    (x->fd = openat(local->rootfd, x->tmp, O_RDWR | O_CREAT | O_EXCL |
	    O_CLOEXEC, 0640)) == -1 ||
	    (*fd = fcntl(x->fd, F_DUPFD_CLOEXEC, 0)) == -1) {
		int	 error = errno;

		log_warn("storage: cannot create %s", x->tmp);
		if (x->fd > 0) {
			close(x->fd);
			unlinkat(local->rootfd, x->tmp, 0);
		}
		free(x);
		return error;
	}
	*xp = x;
	return 0;
}

static void
local_xfer_free(struct store_xfer *x)
{
	close(x->fd);
	free(x);
}

static int
local_fsync_parent(struct local_store *local, const char *ref)
{
	char	 dir[PATH_MAX], *slash;
	int	 fd, rc;

	strlcpy(dir, ref, sizeof(dir));
	if ((slash = strrchr(dir, '/')) == NULL)
		return fsync(local->rootfd);
	*slash = '\0';
	if ((fd = openat(local->rootfd, dir, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

static void
local_put_commit(struct store_xfer *x, off_t size, store_done_cb cb,
    void *arg)
{
	struct local_store	*local = x->local;
	struct stat		 sb;
	int			 error = 0;

	if (fstat(x->fd, &sb) == -1)
		error = errno;
	else if (sb.st_size != size) {
		log_warnx("storage: %s holds %lld bytes, expected %lld",
		    x->tmp, (long long)sb.st_size, (long long)size);
		error = EIO;
	} else if (fsync(x->fd) == -1 ||
	    renameat(local->rootfd, x->tmp, local->rootfd, x->ref) == -1 ||
	    local_fsync_parent(local, x->ref) == -1)
		error = errno;
	if (error != 0)
		unlinkat(local->rootfd, x->tmp, 0);
	local_xfer_free(x);
	cb(arg, error);
}

static void
local_put_abort(struct store_xfer *x)
{
	unlinkat(x->local->rootfd, x->tmp, 0);
	local_xfer_free(x);
}

static void
local_stat(struct store *st, const char *ref, store_stat_cb cb, void *arg)
{
	struct stat	 sb;

	if (!store_ref_valid(ref)) {
		cb(arg, EINVAL, 0);
		return;
	}
	if (fstatat(local_of(st)->rootfd, ref, &sb, AT_SYMLINK_NOFOLLOW) == -1)
		cb(arg, errno, 0);
	else if (!S_ISREG(sb.st_mode))
		cb(arg, EIO, 0);
	else
		cb(arg, 0, sb.st_size);
}

static void
local_get(struct store *st, const char *ref, off_t offset, off_t length,
    store_open_cb cb, void *arg)
{
	int	 fd;

	if (!store_ref_valid(ref)) {
		cb(arg, EINVAL, -1, 0);
		return;
	}
	fd = openat(local_of(st)->rootfd, ref, O_RDONLY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd == -1)
		cb(arg, errno, -1, 0);
	else
		cb(arg, 0, fd, 1);
}

static void
local_remove(struct store *st, const char *ref, store_done_cb cb, void *arg)
{
	struct local_store	*local = local_of(st);
	char			 tmp[PATH_MAX];
	int			 error = 0;

	if (!store_ref_valid(ref)) {
		cb(arg, EINVAL);
		return;
	}
	local_tmp_for_ref(tmp, sizeof(tmp), ref);
	if (unlinkat(local->rootfd, tmp, 0) == -1 && errno != ENOENT)
		error = errno;
	if (unlinkat(local->rootfd, ref, 0) == -1 && error == 0)
		error = errno;
	cb(arg, error);
}

/* The root, read and written. */
static void
local_paths(struct store *st, const char **ro, const char **rw)
{
	struct local_store	*local = local_of(st);

	ro[0] = NULL;
	rw[0] = local->root;
	rw[1] = NULL;
}

static void
local_free(struct store *st)
{
	struct local_store	*local = local_of(st);

	if (local == NULL)
		return;
	close(local->rootfd);
	free(local);
	st->priv = NULL;
}

const struct store_ops store_local_ops = {
	.scheme = "file",
	.init = local_init,
	.paths = local_paths,
	.check = local_check,
	.put_begin = local_put_begin,
	.put_commit = local_put_commit,
	.put_abort = local_put_abort,
	.stat = local_stat,
	.get = local_get,
	.remove = local_remove,
	.free = local_free,
};
