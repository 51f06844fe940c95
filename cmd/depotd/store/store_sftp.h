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
 * store_sftp.h: what the SFTP store's files share: the store, its
 * transfers, the connection (sftp_conn.c), the transfers' common
 * steps (sftp_xfer.c), the writer (sftp_put.c) and, on top, the reads
 * and small operations (store_sftp.c).
 */
#ifndef DEPOT_STORE_SFTP_H
#define DEPOT_STORE_SFTP_H

#include <sys/queue.h>

#include <limits.h>
#include <time.h>

#include <event2/event.h>
#include <libssh2.h>
#include <libssh2_sftp.h>

#include "sftp_conn.h"
#include "store.h"

#define SFTP_BUFSIZE		(512 * 1024)	/* per transfer */

enum sftp_conn_state {
	CONN_DOWN,
	CONN_TCP,
	CONN_HANDSHAKE,
	CONN_AUTH,
	CONN_SFTP,
	CONN_UP,
	CONN_BACKOFF,
};

enum sftp_xfer_kind {
	XF_CHECK,
	XF_STAT,
	XF_REMOVE,
	XF_PUT,
	XF_GET,
	XF_CLEANUP,	/* remove a temporary nobody owns any more */
	XF_PROBE,	/* consume what the server sent while we were idle */
};

enum sftp_xfer_step {
	ST_START,
	ST_PUT_OPEN,
	ST_PUT_STREAM,
	ST_PUT_CLOSE,
	ST_PUT_RENAME,
	ST_PUT_UNLINK_TARGET,
	ST_PUT_REPORT,
	ST_PUT_FAIL_CLOSE,
	ST_PUT_FAIL_UNLINK,
	ST_GET_OPEN,
	ST_GET_STREAM,
	ST_GET_CLOSE,
	ST_CHECK_OPEN,
	ST_CHECK_CLOSE,
	ST_CHECK_UNLINK,
	ST_FAILED,	/* no server work left: report x->error and finish */
};

enum sftp_step_result {
	STEP_IDLE,	/* waiting for the frontend or a commit */
	STEP_PROGRESS,
	STEP_AGAIN,	/* libssh2 said EAGAIN: repeat the same call */
	STEP_DONE,	/* the transfer was freed */
	STEP_LOST,	/* the session is unusable */
};

/* Every operation is a transfer; the put's is what put_begin returns. */
struct store_xfer {
	TAILQ_ENTRY(store_xfer)	 entry;
	struct sftp_store	*sftp;
	enum sftp_xfer_kind	 kind;
	enum sftp_xfer_step	 step;
	int			 error;
	int			 cancel;	/* act on it outside a call */
	char			 ref[PATH_MAX];
	char			 path[PATH_MAX];
	char			 tmp[PATH_MAX];
	LIBSSH2_SFTP_HANDLE	*handle;
	int			 tmp_created;
	int			 tmp_checked;	/* remove: the temporary is gone */
	int			 tmp_removed;
	int			 renamed_once;
	int			 fd;		/* our end of the socketpair */
	struct event		*ev_fd;
	char			*buf;
	size_t			 off, len;
	size_t			 handed;	/* past off, given to libssh2 */
	off_t			 offset, remaining, moved, size;
	int			 eof;
	int			 owned;		/* put: the caller holds it */
	int			 committed;
	int			 opened;	/* get: fd handed out */
	store_done_cb		 done_cb;
	store_stat_cb		 stat_cb;
	store_open_cb		 open_cb;
	void			*arg;
};
TAILQ_HEAD(sftp_xfer_list, store_xfer);

struct sftp_orphan {
	TAILQ_ENTRY(sftp_orphan) entry;
	char			*path;
};
TAILQ_HEAD(sftp_orphan_list, sftp_orphan);

struct sftp_store {
	struct store		*st;
	struct sftp_url		 url;
	char			*identity;
	char			*passphrase;	/* secret */
	char			*known_hosts;
	int			 keepalive;

	enum sftp_conn_state	 state;
	int			 conn_error;	/* errno for waiting ops */
	int			 backoff;
	int			 sock;
	LIBSSH2_SESSION		*ssh;
	LIBSSH2_SFTP		*subsys;	/* the SFTP channel on ssh */
	struct event		*ev_sock;
	int			 sock_armed;
	struct event		*ev_timer;	/* backoff */
	struct event		*ev_keepalive;
	struct event		*ev_kick;
	struct event		*ev_watchdog;
	time_t			 progress_at;	/* last answer, wait start */
	int			 stall;		/* seconds without an answer */
	struct store_xfer	*busy;
	int			 probing;
	int			 running, rerun;
	struct sftp_xfer_list	 xfers;
	struct sftp_link	 link;		/* the session's memory, reads */
	struct sftp_orphan_list	 orphans;
	int			 norphans;
	const struct sftp_xfer_ops *xfer_ops;	/* store_sftp.c's */
};

/*
 * What the connection asks of the transfers, given by store_sftp.c to
 * sftp_conn_init(): the connection runs them without calling up.
 */
struct sftp_xfer_ops {
	/* One step of x; see enum sftp_step_result. */
	enum sftp_step_result	(*step)(struct store_xfer *);
	int			(*needs_session)(struct store_xfer *);
	/* The session is gone: fail x, or keep what it must clean up. */
	void			(*lost)(struct store_xfer *, int error);
	/* A transfer that consumes what the server sent while idle. */
	void			(*probe)(struct sftp_store *);
	/* After a reconnect: remove the temporaries a lost session left. */
	void			(*reconnected)(struct sftp_store *);
};

/* sftp_conn.c: the session, and the passes that run the transfers. */
int		 sftp_conn_init(struct sftp_store *,
		    const struct sftp_xfer_ops *);
void		 sftp_conn_free(struct sftp_store *);
/* Start connecting, unless a connection is up or on its way. */
void		 sftp_connect(struct sftp_store *);
/* Run the transfers from the loop, soon. */
void		 sftp_kick(struct sftp_store *);
/* Run the connection set-up and the transfers now. */
void		 sftp_run(struct sftp_store *);

/* sftp_xfer.c: what every transfer is made of. */
struct store_xfer *sftp_xfer_new(struct sftp_store *, enum sftp_xfer_kind,
		    const char *ref);
void		 sftp_xfer_free(struct store_xfer *);
void		 sftp_xfer_close_fd(struct store_xfer *);
/* Wait for the frontend's end to become ready in direction what. */
void		 sftp_xfer_wait_fd(struct store_xfer *, short what);
enum sftp_step_result sftp_xfer_finish(struct store_xfer *, int error,
		    off_t size);
/*
 * The steps of the libssh2 calls a transfer makes.  Each returns
 * STEP_AGAIN to be repeated as it was (libssh2 said EAGAIN), STEP_LOST
 * when the session is gone, or STEP_PROGRESS with *error 0 or the
 * errno of a call the server refused.
 */
/* The errno of a failed libssh2 call, -1 when the session is gone. */
int		 sftp_xfer_errno(struct sftp_store *, int rc);
enum sftp_step_result sftp_xfer_call(struct sftp_store *, int rc,
		    int *error);
enum sftp_step_result sftp_xfer_open(struct store_xfer *, const char *path,
		    unsigned long flags, long mode, int *error);
enum sftp_step_result sftp_xfer_create(struct store_xfer *, const char *path,
		    int *error);
enum sftp_step_result sftp_xfer_close(struct store_xfer *, int *error);
enum sftp_step_result sftp_xfer_unlink(struct store_xfer *,
		    const char *path, int *error);
enum sftp_step_result sftp_xfer_stat(struct store_xfer *, const char *path,
		    LIBSSH2_SFTP_ATTRIBUTES *, int *error);

/* sftp_put.c: the writer. */
enum sftp_step_result sftp_put_step(struct store_xfer *);
void		 sftp_put_fail(struct store_xfer *, int error);
int		 sftp_put_begin(struct store *, const char *ref, int *fd,
		    struct store_xfer **);
void		 sftp_put_commit(struct store_xfer *, off_t, store_done_cb,
		    void *);
void		 sftp_put_abort(struct store_xfer *);

#endif
