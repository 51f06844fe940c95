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
 * store.h: the blob store interface of the storage helper.
 *
 * A store keeps blobs under references such as "ab/file-ab12..." that
 * the storage helper derives from file ids.  Every operation is
 * asynchronous and reports through a callback from the helper's event
 * loop; none may block the loop for long.  Bytes never pass through
 * the storage helper's memory beyond a bounded buffer: the store hands
 * out a descriptor that the frontend reads or writes directly (a file
 * of the local store, or one end of a socketpair the store drains into
 * S3 or SFTP).
 *
 * The storage helper calls curl_global_init() once at start-up, before
 * any store is initialised.
 *
 * Error codes are errno values: ENOENT for a missing blob, EIO for a
 * backend failure, EACCES for a refused credential, ENOSPC, EFBIG.
 */
#ifndef DEPOT_STORE_H
#define DEPOT_STORE_H

#include <sys/types.h>
#include <stdint.h>

#include <event2/event.h>

struct store;
struct store_xfer;

struct store_conf {
	const char	*url;		/* file:// s3:// sftp:// */
	/* s3 */
	const char	*endpoint;	/* "https://host[:port]"; "" for AWS */
	const char	*region;
	const char	*access_key;
	const char	*secret_key;	/* secret */
	const char	*session_token;	/* secret, optional */
	int		 path_style;
	int64_t		 part_size;	/* multipart above this; >= 5 MiB */
	int		 max_transfers;	/* concurrent transfers */
	/* sftp */
	const char	*identity;	/* private key file */
	const char	*passphrase;	/* secret, optional */
	const char	*known_hosts;
	int		 keepalive;	/* seconds */
};

/* fd: the descriptor for the frontend, or -1 on error. */
typedef void	(*store_done_cb)(void *arg, int error);
typedef void	(*store_stat_cb)(void *arg, int error, off_t size);
typedef void	(*store_open_cb)(void *arg, int error, int fd, int seekable);

/* Local paths a store uses, each list NULL-terminated. */
#define STORE_PATHS_MAX	2

struct store_ops {
	const char	*scheme;	/* "file", "s3", "sftp" */
	int	(*init)(struct store *, const struct store_conf *);
	/*
	 * The local paths the backend reads (ro) and writes (rw), at most
	 * STORE_PATHS_MAX of each, for the helper's Landlock rules.  The
	 * strings live as long as the store.
	 */
	void	(*paths)(struct store *, const char **ro, const char **rw);
	/* Startup and health check: can we reach and write the root? */
	void	(*check)(struct store *, store_done_cb, void *);
	/*
	 * Begin writing ref.  *fd gets the descriptor the frontend writes
	 * the bytes into.  Nothing is visible under ref until commit.
	 * Returns 0, or an errno value (and no descriptor).
	 */
	int	(*put_begin)(struct store *, const char *ref, int *fd,
		    struct store_xfer **);
	/*
	 * The frontend wrote size bytes and closed its descriptor: make
	 * the blob durable under ref (fsync and rename, complete the
	 * multipart upload, rename the SFTP temporary).  The callback
	 * reports the outcome and the xfer is freed either way.
	 */
	void	(*put_commit)(struct store_xfer *, off_t size, store_done_cb,
		    void *);
	/* Drop partial bytes (and abort multipart uploads); frees xfer. */
	void	(*put_abort)(struct store_xfer *);
	/*
	 * Size of a blob (HEAD, stat).  A download asks it before get even
	 * though the row holds the size, and that round trip stays: the
	 * Files API sends the store's real size as Content-Length, answers
	 * a missing blob with 500 and an unsatisfiable Range with 416 and
	 * the real size, all before its status line goes out, resolving the
	 * Range against that size as nginx does (SPEC 4.4).  A GET's own
	 * Content-Length or Content-Range could carry the size, but an S3
	 * server may ignore an inverted range (200, the whole object) and
	 * need not send the size with a 416, so leaning on it would move
	 * Range resolution into every store to save one request.
	 */
	void	(*stat)(struct store *, const char *ref, store_stat_cb, void *);
	/*
	 * Open length bytes of ref at offset for reading (length < 0: to
	 * the end).  A seekable fd (a regular file: the whole blob, read it
	 * at offset) or a stream that yields exactly the range and then
	 * EOF.  Once a stream is handed out, a failure can only show as a
	 * stream that ends early; the reader must treat a short stream as
	 * an error.
	 */
	void	(*get)(struct store *, const char *ref, off_t offset,
		    off_t length, store_open_cb, void *);
	/* Remove ref.  A missing blob is reported as ENOENT. */
	void	(*remove)(struct store *, const char *ref, store_done_cb,
		    void *);
	void	(*free)(struct store *);
};

struct store {
	const struct store_ops	*ops;
	struct event_base	*base;
	void			*priv;		/* the backend's state */
};

/* Chooses the backend by the URL's scheme.  NULL on an unknown one. */
struct store	*store_new(struct event_base *, const struct store_conf *,
		    const char **why);
void		 store_free(struct store *);
/* A ref is "xx/file-<32 hex>"; refuses empty, absolute, . and .. parts. */
int		 store_ref_valid(const char *ref);
void		 store_ref_for_id(char *buf, size_t len, const char *id);

extern const struct store_ops store_local_ops;
extern const struct store_ops store_s3_ops;
extern const struct store_ops store_sftp_ops;

#endif
