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
 * workspace.c: the daemon's own access to session workspaces.
 *
 * The jailed code owns its workspace and may plant anything there:
 * symlinks to /etc, fifos, deep trees.  Every path the daemon follows on
 * a client's behalf is therefore resolved with openat2(2) beneath the
 * workspace root with magic links refused, and walks never follow
 * symlinks.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/openat2.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "util.h"
#include "sandboxd.h"

#define WS_REMOVE_DEPTH	512
/*
 * A walk (every Execute makes two) stops after this long, or one entry
 * past the quota: a workspace of millions of entries costs each call a
 * bounded stall, and counts as over its quota.
 */
#define WS_WALK_USEC	200000
/* What a walk may cost the event loop before it moves to a thread. */
#define WS_QUICK_USEC	1000

int
ws_clean_path(const char *in, char *out, size_t outlen)
{
	char	 buf[4096], *p, *comp;
	size_t	 len = 0, stack[256];
	int	 depth = 0;

	if (strlcpy(buf, in, sizeof(buf)) >= sizeof(buf))
		return -1;
	p = buf;
	if (*p == '/') {
		size_t n = strlen(SBX_JAIL_WORKSPACE);

		/* The path the code saw inside the jail. */
		if (strncmp(p, SBX_JAIL_WORKSPACE, n) != 0 ||
		    (p[n] != '\0' && p[n] != '/'))
			return -1;
		p += n;
	}
	if (outlen < 2)
		return -1;
	out[0] = '\0';
	while ((comp = strsep(&p, "/")) != NULL) {
		if (*comp == '\0' || strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			if (depth == 0)
				return -1;
			len = stack[--depth];
			out[len] = '\0';
			continue;
		}
		if (depth == (int)(sizeof(stack) / sizeof(stack[0])))
			return -1;
		stack[depth++] = len;
		if (len > 0) {
			if (len + 1 >= outlen)
				return -1;
			out[len++] = '/';
		}
		if (len + strlen(comp) >= outlen)
			return -1;
		memcpy(out + len, comp, strlen(comp) + 1);
		len += strlen(comp);
	}
	if (len == 0)
		strlcpy(out, ".", outlen);
	return 0;
}

int
ws_open(int rootfd, const char *rel, int flags, mode_t mode)
{
	struct open_how	 how;

	memset(&how, 0, sizeof(how));
	how.flags = flags | O_CLOEXEC;
	how.mode = (flags & O_CREAT) ? mode : 0;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
	return syscall(SYS_openat2, rootfd, rel, &how, sizeof(how));
}

int
ws_open_parent(int rootfd, const char *rel, const char **leaf)
{
	char		 prefix[4096];
	const char	*slash, *comp = rel;
	int		 fd, next;

	if ((fd = ws_open(rootfd, ".", O_RDONLY | O_DIRECTORY, 0)) == -1)
		return -1;
	while ((slash = strchr(comp, '/')) != NULL) {
		size_t	 n = slash - rel;
		char	 name[NAME_MAX + 1];

		if ((size_t)(slash - comp) > NAME_MAX || n >= sizeof(prefix))
			goto toolong;
		memcpy(name, comp, slash - comp);
		name[slash - comp] = '\0';
		/* A single component: mkdirat follows nothing. */
		if (mkdirat(fd, name, 0755) == -1 && errno != EEXIST)
			goto fail;
		memcpy(prefix, rel, n);
		prefix[n] = '\0';
		next = ws_open(rootfd, prefix, O_RDONLY | O_DIRECTORY, 0);
		if (next == -1)
			goto fail;
		close(fd);
		fd = next;
		comp = slash + 1;
	}
	*leaf = comp;
	return fd;
toolong:
	errno = ENAMETOOLONG;
fail:
	next = errno;
	close(fd);
	errno = next;
	return -1;
}

static int
ws_add(struct ws_listing *l, const char *path, const struct stat *st)
{
	struct ws_entry	*e;

	if (l->n >= WS_LIST_MAX) {
		l->truncated = 1;
		return 0;
	}
	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 64;

		e = reallocarray(l->entries, ncap, sizeof(*e));
		if (e == NULL)
			return -1;
		l->entries = e;
		l->cap = ncap;
	}
	e = &l->entries[l->n];
	if ((e->path = strdup(path)) == NULL)
		return -1;
	e->size = st->st_size;
	e->mtime = st->st_mtim;
	l->n++;
	return 0;
}

/* Counts one entry; 0 to go on, -1 when the walk must stop. */
static int
ws_count(struct ws_listing *l, const struct stat *st, int64_t deadline)
{
	l->nentries++;
	l->bytes += (int64_t)st->st_blocks * 512;
	if (l->nentries > sbx_conf->limits.ws_entries ||
	    ((l->nentries & 255) == 0 && now_usec() > deadline)) {
		l->cut = 1;
		return -1;
	}
	return 0;
}

static int
ws_walk(int dirfd, const char *prefix, int depth, struct ws_listing *l,
    int64_t deadline)
{
	DIR		*dir;
	struct dirent	*de;
	struct stat	 st;
	char		 path[4096];
	int		 fd;

	if ((dir = fdopendir(dirfd)) == NULL) {
		close(dirfd);
		return -1;
	}
	while (!l->cut && (de = readdir(dir)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1)
			continue;
		if (ws_count(l, &st, deadline) == -1)
			break;
		if (snprintf(path, sizeof(path), "%s%s%s", prefix,
		    *prefix ? "/" : "", de->d_name) >= (int)sizeof(path))
			continue;
		if (S_ISREG(st.st_mode)) {
			if (ws_add(l, path, &st) == -1)
				break;
		} else if (S_ISDIR(st.st_mode) && depth < WS_DEPTH_MAX) {
			fd = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC);
			if (fd != -1)
				ws_walk(fd, path, depth + 1, l, deadline);
		}
	}
	closedir(dir);
	return 0;
}

static int
ws_list_within(int rootfd, const char *sub, struct ws_listing *l,
    int64_t usec)
{
	int	 fd;

	memset(l, 0, sizeof(*l));
	if ((fd = ws_open(rootfd, sub, O_RDONLY | O_DIRECTORY, 0)) == -1)
		return -1;
	return ws_walk(fd, strcmp(sub, ".") == 0 ? "" : sub, 0, l,
	    now_usec() + usec);
}

int
ws_list(int rootfd, const char *sub, struct ws_listing *l)
{
	return ws_list_within(rootfd, sub, l, WS_WALK_USEC);
}

int
ws_list_quick(int rootfd, struct ws_listing *l)
{
	int	 rv;

	rv = ws_list_within(rootfd, ".", l, WS_QUICK_USEC);
	/* Cut short of the entry quota: it was the time. */
	if (rv == 0 && l->cut && l->nentries <= sbx_conf->limits.ws_entries) {
		ws_listing_free(l);
		return 1;
	}
	return rv;
}

int
ws_over_quota(const struct ws_listing *l)
{
	return l->cut || l->bytes > sbx_conf->limits.ws_bytes;
}

void
ws_listing_free(struct ws_listing *l)
{
	size_t	 i;

	for (i = 0; i < l->n; i++)
		free(l->entries[i].path);
	free(l->entries);
	memset(l, 0, sizeof(*l));
}

static int
ws_entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ws_entry *)a)->path,
	    ((const struct ws_entry *)b)->path);
}

static struct json_object *
ws_output(const char *path)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "type",
	    json_object_new_string("code_execution_output"));
	/* GetFile takes the path, so the path is the file's id here. */
	json_object_object_add(o, "file_id", json_object_new_string(path));
	json_object_object_add(o, "filename", json_object_new_string(path));
	return o;
}

struct json_object *
ws_produced(const struct ws_listing *before, const struct ws_listing *after)
{
	struct json_object	*files = json_object_new_array();
	size_t			 i, j = 0;
	int			 c;

	/* An empty listing has no array at all. */
	if (before->n > 1)
		qsort(before->entries, before->n, sizeof(struct ws_entry),
		    ws_entry_cmp);
	if (after->n > 1)
		qsort(after->entries, after->n, sizeof(struct ws_entry),
		    ws_entry_cmp);
	for (i = 0; i < after->n; i++) {
		const struct ws_entry *a = &after->entries[i], *b;

		c = 1;
		while (j < before->n &&
		    (c = strcmp(before->entries[j].path, a->path)) < 0)
			j++;
		if (j < before->n && c == 0) {
			b = &before->entries[j];
			if (b->size == a->size &&
			    b->mtime.tv_sec == a->mtime.tv_sec &&
			    b->mtime.tv_nsec == a->mtime.tv_nsec)
				continue;
		}
		json_object_array_add(files, ws_output(a->path));
	}
	return files;
}

/*
 * chmod 0700 of the directory name itself, never of what a symbolic
 * link put in its place would point to: fchmodat has no
 * AT_SYMLINK_NOFOLLOW, so the directory is pinned with O_PATH and
 * changed through its /proc/self/fd entry.
 */
static int
ws_chmod_dir(int dirfd, const char *name)
{
	char	 proc[64];
	int	 fd, rv;

	fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd == -1)
		return -1;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	rv = chmod(proc, 0700);
	close(fd);
	return rv;
}

static int
ws_remove_at(int dirfd, const char *name, int depth)
{
	struct stat	 st;
	struct dirent	*de;
	DIR		*dir;
	int		 fd, rv = 0;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dirfd, name, 0);
	if (depth > WS_REMOVE_DEPTH)
		return -1;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd == -1 && errno == EACCES) {
		/* The code may have made its directories unreadable. */
		if (ws_chmod_dir(dirfd, name) == -1)
			return -1;
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
	}
	if (fd == -1)
		return -1;
	if ((st.st_mode & 0700) != 0700)
		(void)fchmod(fd, 0700);
	if ((dir = fdopendir(fd)) == NULL) {
		close(fd);
		return -1;
	}
	while ((de = readdir(dir)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (ws_remove_at(fd, de->d_name, depth + 1) == -1)
			rv = -1;
	}
	closedir(dir);
	if (unlinkat(dirfd, name, AT_REMOVEDIR) == -1)
		rv = -1;
	return rv;
}

int
ws_remove_tree(int dirfd, const char *name)
{
	return ws_remove_at(dirfd, name, 0);
}

const char *
ws_mime_type(const char *path)
{
	static const struct {
		const char	*ext;
		const char	*type;
	} types[] = {
		{ "txt", "text/plain" },	{ "md", "text/markdown" },
		{ "csv", "text/csv" },		{ "tsv", "text/tab-separated-values" },
		{ "json", "application/json" },	{ "html", "text/html" },
		{ "xml", "application/xml" },	{ "py", "text/x-python" },
		{ "sh", "text/x-shellscript" },	{ "log", "text/plain" },
		{ "png", "image/png" },		{ "jpg", "image/jpeg" },
		{ "jpeg", "image/jpeg" },	{ "gif", "image/gif" },
		{ "svg", "image/svg+xml" },	{ "webp", "image/webp" },
		{ "pdf", "application/pdf" },	{ "zip", "application/zip" },
		{ "gz", "application/gzip" },	{ "tar", "application/x-tar" },
		{ "xlsx", "application/vnd.openxmlformats-officedocument."
		    "spreadsheetml.sheet" },
		{ "parquet", "application/vnd.apache.parquet" },
	};
	const char	*dot, *slash;
	size_t		 i;

	dot = strrchr(path, '.');
	slash = strrchr(path, '/');
	if (dot == NULL || (slash != NULL && dot < slash))
		return "application/octet-stream";
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcasecmp(dot + 1, types[i].ext) == 0)
			return types[i].type;
	return "application/octet-stream";
}
