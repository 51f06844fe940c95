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
 * service_files.c: the file routes of protocol v1: ListFiles, GetFile and
 * PutFile.  Every path is confined to the session's workspace.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http.h"
#include "log.h"
#include "multipart.h"
#include "util.h"
#include "sandboxd.h"
#include "service.h"

/* The path query parameter, confined; replies and returns -1 on error. */
static int
service_files_path_param(struct service_req *a, const char *dflt, char *rel,
    size_t len)
{
	char	 raw[4096];
	ssize_t	 n;

	n = http_query_param(a->req->query, "path", raw, sizeof(raw), NULL);
	if (n == -2) {
		service_error(a->req, 400, "bad path parameter");
		return -1;
	}
	if (n == -1) {
		if (dflt == NULL) {
			service_error(a->req, 400, "the path parameter is "
			    "required");
			return -1;
		}
		strlcpy(raw, dflt, sizeof(raw));
	}
	if (ws_clean_path(raw, rel, len) == -1) {
		service_error(a->req, 403, "path outside the workspace");
		return -1;
	}
	return 0;
}

static void
service_files_open_error(struct service_req *a, const char *what)
{
	switch (errno) {
	case ENOENT:
		service_error(a->req, 404, "no such file");
		break;
	case ENOTDIR:
		service_error(a->req, 400, "a path component is not a "
		    "directory");
		break;
	case EXDEV:
	case ELOOP:
	case EACCES:
	case EPERM:
		service_error(a->req, 403, "path outside the workspace");
		break;
	default:
		log_warn("%s %s", what, a->sid);
		service_error(a->req, 500, "cannot open the path");
	}
}

void
service_files_list(struct service_req *a)
{
	struct session		*s;
	struct ws_listing	 l;
	struct json_object	*o, *files, *f;
	char			 rel[4096];
	size_t			 i;

	if ((s = service_named_session(a)) == NULL ||
	    service_files_path_param(a, ".", rel, sizeof(rel)) == -1)
		return;
	if (ws_list(session_rootfd(s), rel, &l) == -1) {
		service_files_open_error(a, "list");
		return;
	}
	files = json_object_new_array();
	for (i = 0; i < l.n; i++) {
		const struct ws_entry *e = &l.entries[i];

		f = json_object_new_object();
		json_object_object_add(f, "path",
		    json_object_new_string(e->path));
		json_object_object_add(f, "size_bytes",
		    json_object_new_int64(e->size));
		json_object_object_add(f, "mime_type",
		    json_object_new_string(ws_mime_type(e->path)));
		json_object_object_add(f, "modified_at",
		    json_time((int64_t)e->mtime.tv_sec * 1000000 +
		    e->mtime.tv_nsec / 1000));
		json_object_array_add(files, f);
	}
	o = json_object_new_object();
	json_object_object_add(o, "files", files);
	if (l.truncated)
		json_object_object_add(o, "truncated",
		    json_object_new_boolean(1));
	log_info("list %s %s: %zu files", a->sid, rel, l.n);
	ws_listing_free(&l);
	service_json(a->req, 200, o);
}

void
service_files_get(struct service_req *a)
{
	struct session	*s;
	struct stat	 st;
	char		 rel[4096];
	int		 fd;

	if ((s = service_named_session(a)) == NULL ||
	    service_files_path_param(a, NULL, rel, sizeof(rel)) == -1)
		return;
	/* Non-blocking: a fifo planted by the code must not hang us. */
	fd = ws_open(session_rootfd(s), rel, O_RDONLY | O_NONBLOCK | O_NOCTTY,
	    0);
	if (fd == -1) {
		service_files_open_error(a, "get");
		return;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		close(fd);
		service_error(a->req, 400, S_ISDIR(st.st_mode) ?
		    "the path is a directory" : "not a regular file");
		return;
	}
	log_info("get %s %s: %lld bytes", a->sid, rel, (long long)st.st_size);
	http_reply_file(a->req, 200, ws_mime_type(rel), fd, 0, st.st_size);
}

void
service_files_put_discard(struct service_req *a)
{
	if (a->tmpfd != -1) {
		close(a->tmpfd);
		a->tmpfd = -1;
	}
	if (a->tmpname[0] != '\0') {
		unlinkat(sbx_conf->uploads_fd, a->tmpname, 0);
		a->tmpname[0] = '\0';
	}
}

static int
service_files_put_part_begin(void *arg, const struct multipart_part *p)
{
	struct service_req	*a = arg;

	a->part = 0;
	if (strcmp(p->name, "file") == 0) {
		if (a->have_file) {
			a->put_status = 400;
			a->put_error = "more than one file part";
			return -1;
		}
		a->have_file = 1;
		a->part = 1;
		strlcpy(a->filename, p->filename, sizeof(a->filename));
	} else if (strcmp(p->name, "path") == 0) {
		a->part = 2;
		a->pathlen = 0;
		a->path[0] = '\0';
	}
	return 0;
}

static int
service_files_put_part_data(void *arg, const void *data, size_t len)
{
	struct service_req	*a = arg;
	const char	*p = data;
	ssize_t		 n;

	if (a->part == 2) {
		if (a->pathlen + len >= sizeof(a->path)) {
			a->put_status = 400;
			a->put_error = "path too long";
			return -1;
		}
		memcpy(a->path + a->pathlen, data, len);
		a->pathlen += len;
		a->path[a->pathlen] = '\0';
		return 0;
	}
	if (a->part != 1)
		return 0;
	if (a->written + (int64_t)len > sbx_conf->limits.max_put) {
		a->put_status = 413;
		a->put_error = "file larger than the backend's cap";
		return -1;
	}
	while (len > 0) {
		if ((n = write(a->tmpfd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			log_warn("put %s: write", a->sid);
			a->put_status = 500;
			a->put_error = "cannot store the file";
			return -1;
		}
		p += n;
		len -= n;
		a->written += n;
	}
	return 0;
}

static int
service_files_put_part_end(void *arg)
{
	return 0;
}

static const struct multipart_cb service_files_put_calls = {
	service_files_put_part_begin, service_files_put_part_data,
	service_files_put_part_end
};

void
service_files_put_begin(struct service_req *a)
{
	const char	*why, *ctype;
	char		 rnd[ID_BUFSIZE];

	if (session_find(a->sid) == NULL) {
		service_error(a->req, 404, "no such session");
		return;
	}
	if (a->req->content_length > sbx_conf->limits.max_put + 65536) {
		service_error(a->req, 413,
		    "file larger than the backend's cap");
		return;
	}
	ctype = http_header_get(a->req, "content-type");
	if ((a->mp = multipart_new(ctype ? ctype : "",
	    &service_files_put_calls, a, &why)) == NULL) {
		service_error(a->req, 400, why);
		return;
	}
	id_new(rnd, sizeof(rnd), "up-");
	strlcpy(a->tmpname, rnd, sizeof(a->tmpname));
	a->tmpfd = openat(sbx_conf->uploads_fd, a->tmpname,
	    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (a->tmpfd == -1) {
		log_warn("put: temporary file");
		a->tmpname[0] = '\0';
		service_error(a->req, 500, "cannot store the file");
		return;
	}
	http_body_accept(a->req);
}

void
service_files_put_fail(struct service_req *a, int status, const char *message)
{
	service_files_put_discard(a);
	if (!a->req->replied)
		service_error(a->req, status, message);
	a->replied = 1;
}

/* Would the upload take the workspace past its quota? */
static int
service_files_put_over_quota(struct session *s, int64_t size)
{
	const struct sbx_limits	*lim = &sbx_conf->limits;
	struct ws_listing	 l;
	int			 over;

	if (ws_list(session_rootfd(s), ".", &l) == -1)
		return 0;
	over = ws_over_quota(&l) || l.nentries + 1 > lim->ws_entries ||
	    l.bytes + size > lim->ws_bytes;
	ws_listing_free(&l);
	return over;
}

void
service_files_put_end(struct service_req *a)
{
	struct session	*s;
	struct json_object *o;
	const char	*target, *leaf, *base;
	char		 joined[8192], rel[4096];
	int		 dirfd;

	if (multipart_finish(a->mp) == -1) {
		service_files_put_fail(a, 400, multipart_error(a->mp));
		return;
	}
	if (!a->have_file) {
		service_files_put_fail(a, 400, "no file part");
		return;
	}
	target = a->pathlen > 0 ? a->path : a->filename;
	if (*target == '\0') {
		service_files_put_fail(a, 400, "no path and no filename");
		return;
	}
	if (target[strlen(target) - 1] == '/') {
		/* A directory was named: keep the upload's own name. */
		base = strrchr(a->filename, '/');
		base = base ? base + 1 : a->filename;
		snprintf(joined, sizeof(joined), "%s%s", target, base);
		target = joined;
	}
	if (ws_clean_path(target, rel, sizeof(rel)) == -1) {
		service_files_put_fail(a, 403, "path outside the workspace");
		return;
	}
	if (strcmp(rel, ".") == 0) {
		service_files_put_fail(a, 400,
		    "the path names the workspace itself");
		return;
	}
	if ((s = service_named_session(a)) == NULL) {
		service_files_put_discard(a);
		return;
	}
	if (service_files_put_over_quota(s, a->written)) {
		service_files_put_fail(a, 413,
		    "the workspace is over its quota");
		return;
	}
	if ((dirfd = ws_open_parent(session_rootfd(s), rel, &leaf)) == -1) {
		service_files_put_discard(a);
		service_files_open_error(a, "put");
		return;
	}
	close(a->tmpfd);
	a->tmpfd = -1;
	if (renameat(sbx_conf->uploads_fd, a->tmpname, dirfd, leaf) == -1) {
		int saved = errno;

		close(dirfd);
		service_files_put_discard(a);
		if (saved == EISDIR || saved == ENOTEMPTY || saved == EEXIST)
			service_error(a->req, 400, "the path is a directory");
		else {
			errno = saved;
			service_files_open_error(a, "put");
		}
		return;
	}
	a->tmpname[0] = '\0';
	close(dirfd);
	log_info("put %s %s: %lld bytes", a->sid, rel, (long long)a->written);
	o = json_object_new_object();
	json_object_object_add(o, "path", json_object_new_string(rel));
	json_object_object_add(o, "size_bytes",
	    json_object_new_int64(a->written));
	service_json(a->req, 201, o);
}

