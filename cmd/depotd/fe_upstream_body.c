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
 * fe_upstream_body.c: an upstream request body made of pieces of
 * serialised JSON and of file descriptors whose bytes go out as
 * base64.  The JSON carries a placeholder where each descriptor's
 * base64 belongs; the body is cut there once serialised.  The length is known before the
 * first byte, so curl sends Content-Length, and no more than one small
 * buffer of a file is ever in memory.
 *
 * A descriptor may be a pipe the storage helper fills (S3, SFTP):
 * reads never block; with nothing to read the transfer pauses and a
 * one-shot read event wakes the owner, who unpauses it.  A regular
 * file is read with pread from where it was when bound, so its offset
 * never moves, and a body for the same JSON again (a code-execution
 * round) reads a duplicate of it instead of a file opened anew.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "base64.h"
#include "log.h"
#include "randpool.h"
#include "util.h"
#include "fe_model.h"

#define UB_PREFIX	"DEPOTUB"
#define UB_PH_LEN	80
#define UB_CHUNK	12288	/* bytes read at once: a multiple of 3 */
#define UB_MAXFDS	4096
/*
 * A body all in memory and no larger than this goes to curl as
 * CURLOPT_POSTFIELDS: it leaves in the same send as the headers, and
 * curl can send it again on a fresh connection when a kept-alive one
 * died under the request.
 */
#define UB_INLINE_MAX	(64 * 1024)

struct ufd {
	int		 fd;
	int64_t		 size;
	int		 seekable;	/* a regular file: pread */
	off_t		 start;		/* its offset when bound */
	int		 used;		/* found in the JSON */
	char		 ph[UB_PH_LEN];
	char		 tag[IDLEN];	/* the file's id, "" none */
};

struct useg {
	const char	*mem;		/* NULL: a descriptor's base64 */
	size_t		 len;
	struct ufd	*f;
};

struct upstream_body {
	struct event_base	*base;
	char			 prefix[48];	/* up to the number */
	struct ufd		**fds;
	size_t			 nfds;
	char			*json;
	struct useg		*segs;
	size_t			 nsegs;
	int64_t			 length;
	int64_t			 sent;

	/* Where curl is. */
	size_t			 seg;
	size_t			 off;		/* in a memory piece */
	int64_t			 left;		/* of a descriptor's bytes */
	int			 fd_done;	/* its padding is out */
	struct b64enc		 enc;
	size_t			 out_len, out_off;
	int			 failed;

	struct event		*ev;
	void			(*wake)(void *);
	void			*wake_arg;

	/* Only a body with descriptors needs them: not on every call. */
	struct ub_io {
		unsigned char	 in[UB_CHUNK];
		char		 out[B64_ENCLEN(UB_CHUNK + 2)];
	}			*io;
};

struct upstream_body *
upstream_body_new(struct event_base *base)
{
	struct upstream_body	*ub;
	unsigned char	 nonce[16];
	char		 hex[sizeof(nonce) * 2 + 1];

	if ((ub = calloc(1, sizeof(*ub))) == NULL)
		return NULL;
	ub->base = base;
	/* Random, so that no caller's text can pass for a placeholder. */
	randpool_bytes(nonce, sizeof(nonce));
	hex_encode(nonce, sizeof(nonce), hex);
	snprintf(ub->prefix, sizeof(ub->prefix), "%s%sN", UB_PREFIX, hex);
	return ub;
}

const char *
upstream_body_placeholder(struct upstream_body *ub, int fd, int64_t size)
{
	return upstream_body_placeholder_tagged(ub, fd, size, NULL);
}

/*
 * f takes fd.  A pipe from the storage helper may lag: fd is made
 * non-blocking.  A regular file is read with pread from its offset now.
 */
static void
upstream_body_take(struct ufd *f, int fd)
{
	struct stat	 st;
	int		 flags;

	if ((flags = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, flags | O_NONBLOCK) == -1)
		log_warn("%s: O_NONBLOCK", __func__);
	f->fd = fd;
	f->seekable = 0;
	f->start = 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (f->start = lseek(fd, 0, SEEK_CUR)) != -1)
		f->seekable = 1;
	else
		f->start = 0;
}

const char *
upstream_body_placeholder_tagged(struct upstream_body *ub, int fd, int64_t size,
    const char *tag)
{
	struct ufd	*f, **nf;

	if (ub->nfds >= UB_MAXFDS || size < 0 ||
	    (f = calloc(1, sizeof(*f))) == NULL)
		goto fail;
	if ((nf = reallocarray(ub->fds, ub->nfds + 1, sizeof(*nf))) == NULL) {
		free(f);
		goto fail;
	}
	ub->fds = nf;
	upstream_body_take(f, fd);
	if (tag != NULL)
		strlcpy(f->tag, tag, sizeof(f->tag));
	f->size = size;
	snprintf(f->ph, sizeof(f->ph), "%s%zuZ", ub->prefix, ub->nfds);
	ub->fds[ub->nfds++] = f;
	return f->ph;
 fail:
	close(fd);
	return NULL;
}

/*
 * The descriptor a placeholder at p names, and its end in *end; NULL
 * for text that only starts like one.
 */
static struct ufd *
upstream_body_match(struct upstream_body *ub, const char *p, const char **end)
{
	const char	*q = p + strlen(ub->prefix);
	size_t		 n = 0;

	if (*q < '0' || *q > '9')
		return NULL;
	for (; *q >= '0' && *q <= '9'; q++) {
		n = n * 10 + (*q - '0');
		if (n >= ub->nfds)
			return NULL;
	}
	if (*q != 'Z')
		return NULL;
	*end = q + 1;
	return ub->fds[n];
}

static void
upstream_body_add_seg(struct upstream_body *ub, const char *mem, size_t len, struct ufd *f)
{
	struct useg	*s = &ub->segs[ub->nsegs++];

	s->mem = mem;
	s->len = len;
	s->f = f;
	ub->length += f != NULL ? B64_ENCLEN(f->size) : (int64_t)len;
}

/* Curl's position moves to the start of segment ub->seg. */
static void
upstream_body_enter_seg(struct upstream_body *ub)
{
	ub->off = 0;
	ub->out_len = ub->out_off = 0;
	ub->fd_done = 0;
	if (ub->seg < ub->nsegs && ub->segs[ub->seg].f != NULL) {
		ub->left = ub->segs[ub->seg].f->size;
		b64enc_init(&ub->enc);
	}
}

int
upstream_body_set_json(struct upstream_body *ub, struct json_object *obj)
{
	const char	*s, *from, *p, *end;
	struct ufd	*f;
	size_t		 i;

	s = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	free(ub->json);
	free(ub->segs);
	ub->json = NULL;
	ub->segs = NULL;
	ub->nsegs = ub->seg = ub->off = 0;
	ub->length = 0;
	for (i = 0; i < ub->nfds; i++)
		ub->fds[i]->used = 0;
	if (s == NULL || (ub->json = strdup(s)) == NULL ||
	    (ub->segs = calloc(2 * ub->nfds + 1, sizeof(*ub->segs))) == NULL)
		return -1;
	for (from = p = ub->json; (p = strstr(p, ub->prefix)) != NULL; ) {
		if ((f = upstream_body_match(ub, p, &end)) == NULL) {
			p++;
			continue;
		}
		/* A descriptor is read once: its base64 cannot go twice. */
		if (f->used)
			return -1;
		f->used = 1;
		if (p > from)
			upstream_body_add_seg(ub, from, p - from, NULL);
		upstream_body_add_seg(ub, NULL, 0, f);
		from = p = end;
	}
	if (*from != '\0')
		upstream_body_add_seg(ub, from, strlen(from), NULL);
	upstream_body_enter_seg(ub);
	return 0;
}

int64_t
upstream_body_length(const struct upstream_body *ub)
{
	return ub->length;
}

/*
 * The whole body when it is one piece of memory (no descriptor to
 * read) of at most UB_INLINE_MAX bytes, else NULL.  It stays valid
 * until the next upstream_body_set_json or upstream_body_free.
 */
const char *
upstream_body_inline(const struct upstream_body *ub, size_t *len)
{
	if (ub->json == NULL || ub->nsegs > 1 ||
	    ub->length > UB_INLINE_MAX)
		return NULL;
	if (ub->nsegs == 0) {
		*len = 0;
		return ub->json;
	}
	if (ub->segs[0].f != NULL)
		return NULL;
	*len = ub->segs[0].len;
	return ub->segs[0].mem;
}

int64_t
upstream_body_sent(const struct upstream_body *ub)
{
	return ub->sent;
}

void
upstream_body_on_wake(struct upstream_body *ub, void (*cb)(void *), void *arg)
{
	ub->wake = cb;
	ub->wake_arg = arg;
}

static void
upstream_body_readable(int fd, short events, void *arg)
{
	struct upstream_body	*ub = arg;

	if (ub->wake != NULL)
		ub->wake(ub->wake_arg);
}

/* Waits, once, for the descriptor to have something to read. */
static void
upstream_body_arm(struct upstream_body *ub, int fd)
{
	if (ub->ev != NULL && event_get_fd(ub->ev) != fd) {
		event_free(ub->ev);
		ub->ev = NULL;
	}
	if (ub->ev == NULL &&
	    (ub->ev = event_new(ub->base, fd, EV_READ, upstream_body_readable,
	    ub)) == NULL)
		fatal("event_new");
	event_add(ub->ev, NULL);
}

/*
 * More base64 of the current descriptor in ub->io->out: 1 when some (maybe
 * none) came, 0 when it has nothing yet, -1 when it failed or ended
 * before its size.
 */
static int
upstream_body_fill(struct upstream_body *ub, struct ufd *f)
{
	ssize_t		 n;
	size_t		 want;

	ub->out_len = ub->out_off = 0;
	if (ub->io == NULL && (ub->io = malloc(sizeof(*ub->io))) == NULL) {
		log_warn("%s: malloc", __func__);
		return -1;
	}
	if (ub->left == 0) {
		ub->out_len = b64enc_final(&ub->enc, ub->io->out);
		ub->fd_done = 1;
		return 1;
	}
	want = ub->left < UB_CHUNK ? (size_t)ub->left : UB_CHUNK;
	do {
		if (f->seekable)
			n = pread(f->fd, ub->io->in, want,
			    f->start + (f->size - ub->left));
		else
			n = read(f->fd, ub->io->in, want);
	} while (n == -1 && errno == EINTR);
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	if (n == -1) {
		log_warn("%s: read", __func__);
		return -1;
	}
	if (n == 0) {
		log_warnx("%s: a file ended %" PRId64 " bytes short", __func__,
		    ub->left);
		return -1;
	}
	ub->left -= n;
	ub->out_len = b64enc_update(&ub->enc, ub->io->in, n, ub->io->out);
	return 1;
}

static size_t
upstream_body_copy(char *dst, size_t room, const char *src, size_t avail)
{
	size_t	 n = avail < room ? avail : room;

	memcpy(dst, src, n);
	return n;
}

size_t
upstream_body_read(char *buf, size_t size, size_t nitems, void *arg)
{
	struct upstream_body	*ub = arg;
	struct useg	*s;
	size_t		 room = size * nitems, n = 0, c;
	int		 r;

	if (ub->failed)
		return CURL_READFUNC_ABORT;
	while (n < room && ub->seg < ub->nsegs) {
		s = &ub->segs[ub->seg];
		if (s->f == NULL) {
			c = upstream_body_copy(buf + n, room - n, s->mem + ub->off,
			    s->len - ub->off);
			n += c;
			if ((ub->off += c) == s->len) {
				ub->seg++;
				upstream_body_enter_seg(ub);
			}
			continue;
		}
		if (ub->out_off < ub->out_len) {
			c = upstream_body_copy(buf + n, room - n,
			    ub->io->out + ub->out_off,
			    ub->out_len - ub->out_off);
			n += c;
			ub->out_off += c;
			continue;
		}
		if (ub->fd_done) {
			ub->seg++;
			upstream_body_enter_seg(ub);
			continue;
		}
		if ((r = upstream_body_fill(ub, s->f)) == -1) {
			ub->failed = 1;
			return CURL_READFUNC_ABORT;
		}
		if (r == 0) {
			if (n > 0)
				break;
			upstream_body_arm(ub, s->f->fd);
			return CURL_READFUNC_PAUSE;
		}
	}
	ub->sent += n;
	return n;
}

/*
 * A body for the same JSON once more: the same placeholders, each
 * regular file read again from a duplicate of its descriptor, each
 * other one waiting for a fresh descriptor of its file
 * (upstream_body_bind).
 */
struct upstream_body *
upstream_body_again(const struct upstream_body *old, struct event_base *base)
{
	struct upstream_body	*ub;
	size_t		 i;

	if ((ub = calloc(1, sizeof(*ub))) == NULL)
		return NULL;
	ub->base = base;
	strlcpy(ub->prefix, old->prefix, sizeof(ub->prefix));
	if (old->nfds > 0 && (ub->fds = calloc(old->nfds,
	    sizeof(*ub->fds))) == NULL) {
		free(ub);
		return NULL;
	}
	for (i = 0; i < old->nfds; i++) {
		if ((ub->fds[i] = malloc(sizeof(*ub->fds[i]))) == NULL) {
			upstream_body_free(ub);
			return NULL;
		}
		*ub->fds[i] = *old->fds[i];
		ub->fds[i]->fd = -1;
		ub->fds[i]->used = 0;
		ub->nfds++;
		if (old->fds[i]->seekable && old->fds[i]->fd != -1 &&
		    (ub->fds[i]->fd = dup(old->fds[i]->fd)) == -1) {
			upstream_body_free(ub);
			return NULL;
		}
	}
	return ub;
}

int
upstream_body_file_bound(const struct upstream_body *ub, size_t i)
{
	return i < ub->nfds && ub->fds[i]->fd != -1;
}

size_t
upstream_body_nfiles(const struct upstream_body *ub)
{
	return ub->nfds;
}

const char *
upstream_body_file_tag(const struct upstream_body *ub, size_t i)
{
	return i < ub->nfds ? ub->fds[i]->tag : "";
}

void
upstream_body_bind(struct upstream_body *ub, size_t i, int fd)
{
	if (i >= ub->nfds) {
		close(fd);
		return;
	}
	if (ub->fds[i]->fd != -1)
		close(ub->fds[i]->fd);
	upstream_body_take(ub->fds[i], fd);
}

void
upstream_body_free(struct upstream_body *ub)
{
	size_t	 i;

	if (ub == NULL)
		return;
	if (ub->ev != NULL)
		event_free(ub->ev);
	for (i = 0; i < ub->nfds; i++) {
		if (ub->fds[i]->fd != -1)
			close(ub->fds[i]->fd);
		free(ub->fds[i]);
	}
	free(ub->fds);
	free(ub->segs);
	free(ub->json);
	free(ub->io);
	free(ub);
}
