/*
 * store_sftp.c: blobs on an SFTP server, "sftp://user@host[:port]/path".
 *
 * One SSH session per store, driven without blocking from the storage
 * helper's event loop.  Every operation (put, get, stat, remove, check)
 * is a transfer with a small state machine; a pass over the transfers
 * lets each make one libssh2 call.  libssh2 keeps per-channel state for
 * an unfinished call and insists that a call which returned EAGAIN is
 * repeated exactly, so the transfer whose call is pending holds the
 * session ("busy") and the others wait until that call completes.
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

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <libssh2.h>
#include <libssh2_sftp.h>

#include "log.h"
#include "sftp_conn.h"
#include "store.h"

#define SFTP_BUFSIZE		(512 * 1024)
#define SFTP_PASSES		64	/* then let other events run */
#define SFTP_WINDOW_SLACK	4096	/* for other requests' packets */
#define SFTP_BACKOFF_MIN	1
#define SFTP_BACKOFF_MAX	30
#define SFTP_ORPHANS_MAX	1024
#define SFTP_STALL_DEFAULT	60	/* without keepalive */
#define SFTP_STALL_MIN		6

enum conn_state {
	CONN_DOWN,
	CONN_TCP,
	CONN_HANDSHAKE,
	CONN_AUTH,
	CONN_SFTP,
	CONN_UP,
	CONN_BACKOFF,
};

enum xfer_kind {
	XF_CHECK,
	XF_STAT,
	XF_REMOVE,
	XF_PUT,
	XF_GET,
	XF_CLEANUP,	/* remove a temporary nobody owns any more */
	XF_PROBE,	/* consume what the server sent while we were idle */
};

enum xfer_step {
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

enum step_result {
	STEP_IDLE,	/* waiting for the frontend or a commit */
	STEP_PROGRESS,
	STEP_AGAIN,	/* libssh2 said EAGAIN: repeat the same call */
	STEP_DONE,	/* the transfer was freed */
	STEP_LOST,	/* the session is unusable */
};

struct sftp_store;

/* Every operation is a transfer; the put's is what put_begin returns. */
struct store_xfer {
	TAILQ_ENTRY(store_xfer)	 entry;
	struct sftp_store	*ss;
	enum xfer_kind		 kind;
	enum xfer_step		 step;
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
TAILQ_HEAD(xfer_list, store_xfer);

struct orphan {
	TAILQ_ENTRY(orphan)	 entry;
	char			*path;
};
TAILQ_HEAD(orphan_list, orphan);

struct sftp_store {
	struct store		*st;
	struct sftp_url		 url;
	char			*identity;
	char			*passphrase;	/* secret */
	char			*known_hosts;
	int			 keepalive;

	enum conn_state		 state;
	int			 conn_error;	/* errno for waiting ops */
	int			 backoff;
	int			 sock;
	LIBSSH2_SESSION		*sess;
	LIBSSH2_SFTP		*sftp;
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
	struct xfer_list	 xfers;
	struct sftp_link	 link;		/* the session's memory, reads */
	struct orphan_list	 orphans;
	int			 norphans;
};

static void	ss_kick(struct sftp_store *);
static void	ss_kick_cb(evutil_socket_t, short, void *);
static void	ss_timer_cb(evutil_socket_t, short, void *);
static void	ss_watchdog_cb(evutil_socket_t, short, void *);
static void	ss_run(struct sftp_store *);
static void	ss_connect(struct sftp_store *);
static void	ss_lost(struct sftp_store *, int);
static void	xfer_free(struct store_xfer *);

static struct sftp_store *
ss_of(struct store *st)
{
	return st->priv;
}

static const char *
ss_lasterror(struct sftp_store *ss)
{
	char	*msg = NULL;

	if (ss->sess == NULL)
		return "no session";
	libssh2_session_last_error(ss->sess, &msg, NULL, 0);
	return msg ? msg : "unknown error";
}

/*
 * The errno for a failed libssh2 call, or -1 when the failure means
 * the session itself is gone and every transfer on it must fail.
 */
static int
ss_errno(struct sftp_store *ss, int rc)
{
	if (rc != LIBSSH2_ERROR_SFTP_PROTOCOL)
		return -1;
	switch (libssh2_sftp_last_error(ss->sftp)) {
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
ss_ptr_rc(struct sftp_store *ss, const void *p)
{
	if (p != NULL)
		return 0;
	return libssh2_session_last_errno(ss->sess);
}

/* "sftp://user@host[:port]/path", host possibly "[v6]". */

static int
sftp_init(struct store *st, const struct store_conf *sc)
{
	struct sftp_store	*ss;

	if ((ss = calloc(1, sizeof(*ss))) == NULL)
		return -1;
	st->priv = ss;
	ss->st = st;
	ss->sock = -1;
	TAILQ_INIT(&ss->xfers);
	TAILQ_INIT(&ss->orphans);
	if (sftp_url_parse(&ss->url, sc->url) == -1) {
		log_warnx("sftp: cannot parse storage URL \"%s\"", sc->url);
		goto fail;
	}
	if (sc->identity == NULL || sc->identity[0] == '\0' ||
	    sc->known_hosts == NULL || sc->known_hosts[0] == '\0') {
		log_warnx("sftp: %s needs an identity and a known-hosts file",
		    sc->url);
		goto fail;
	}
	ss->identity = strdup(sc->identity);
	ss->known_hosts = strdup(sc->known_hosts);
	ss->passphrase = strdup(sc->passphrase ? sc->passphrase : "");
	ss->keepalive = sc->keepalive > 0 ? sc->keepalive : 0;
	/* Like ssh(1): three unanswered keepalive intervals. */
	ss->stall = ss->keepalive > 0 ? 3 * ss->keepalive : SFTP_STALL_DEFAULT;
	if (ss->stall < SFTP_STALL_MIN)
		ss->stall = SFTP_STALL_MIN;
	if (ss->identity == NULL || ss->known_hosts == NULL ||
	    ss->passphrase == NULL)
		goto fail;
	if (libssh2_init(0) != 0) {
		log_warnx("sftp: libssh2_init failed");
		goto fail;
	}
	ss->ev_timer = evtimer_new(st->base, ss_timer_cb, ss);
	ss->ev_kick = event_new(st->base, -1, 0, ss_kick_cb, ss);
	ss->ev_watchdog = evtimer_new(st->base, ss_watchdog_cb, ss);
	ss->ev_sock = calloc(1, event_get_struct_event_size());
	if (ss->ev_timer == NULL || ss->ev_kick == NULL ||
	    ss->ev_sock == NULL || ss->ev_watchdog == NULL)
		goto fail;
	return 0;
 fail:
	st->ops->free(st);
	return -1;
}

/* ---- connection ---- */

/* A stat of the root, to make libssh2 read what arrived unasked. */
static void
ss_probe(struct sftp_store *ss)
{
	struct store_xfer	*x;

	if ((x = calloc(1, sizeof(*x))) == NULL)
		return;
	x->ss = ss;
	x->kind = XF_PROBE;
	x->fd = -1;
	strlcpy(x->path, ss->url.root[0] ? ss->url.root : "/",
	    sizeof(x->path));
	ss->probing = 1;
	TAILQ_INSERT_HEAD(&ss->xfers, x, entry);
}

static void
ss_sock_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sftp_store	*ss = arg;
	char			 c;
	ssize_t			 n;

	if (what & EV_READ)
		sftp_link_readable(&ss->link);
	if (ss->state == CONN_UP && ss->busy == NULL && (what & EV_READ)) {
		/* Nothing is expected: either the server went away... */
		n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
		if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR)) {
			ss_lost(ss, EIO);
			return;
		}
		/* ...or sent something only an SFTP call will consume. */
		if (n == 1 && !ss->probing)
			ss_probe(ss);
	}
	ss_run(ss);
}

static time_t
mono_now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/* Waiting for the server: a call is pending or the set-up is running. */
static int
ss_waiting(struct sftp_store *ss)
{
	return ss->busy != NULL ||
	    (ss->state > CONN_DOWN && ss->state < CONN_UP);
}

/*
 * A server that stops answering (stopped, partitioned) would leave every
 * transfer hanging on a healthy-looking socket; give it up instead.
 */
static void
ss_watchdog_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sftp_store	*ss = arg;
	struct timeval		 tv = { 0, 0 };
	time_t			 idle;

	if (!ss_waiting(ss))
		return;
	idle = mono_now() - ss->progress_at;
	if (idle >= ss->stall) {
		log_warnx("sftp: %s:%d has not answered for %lld s; dropping "
		    "the connection", ss->url.host, ss->url.port,
		    (long long)idle);
		ss_lost(ss, EIO);
		return;
	}
	tv.tv_sec = ss->stall - idle;
	evtimer_add(ss->ev_watchdog, &tv);
}

static void
ss_watchdog_arm(struct sftp_store *ss)
{
	struct timeval	tv = { ss->stall, 0 };

	if (ss_waiting(ss) && !evtimer_pending(ss->ev_watchdog, NULL))
		evtimer_add(ss->ev_watchdog, &tv);
}

static void
ss_arm(struct sftp_store *ss)
{
	short	what = 0;
	int	dir;

	ss_watchdog_arm(ss);
	if (ss->sock == -1)
		return;
	if (ss->state == CONN_TCP)
		what = EV_WRITE;
	else if (ss->busy != NULL || ss->state != CONN_UP) {
		dir = libssh2_session_block_directions(ss->sess);
		if (dir & LIBSSH2_SESSION_BLOCK_INBOUND)
			what |= EV_READ;
		if (dir & LIBSSH2_SESSION_BLOCK_OUTBOUND)
			what |= EV_WRITE;
	}
	if (what == 0)
		what = EV_READ;
	if (ss->sock_armed)
		event_del(ss->ev_sock);
	ss->sock_armed = 1;
	event_assign(ss->ev_sock, ss->st->base, ss->sock, what, ss_sock_cb,
	    ss);
	event_add(ss->ev_sock, NULL);
}

static void
ss_keepalive_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sftp_store	*ss = arg;
	struct timeval		 tv = { ss->keepalive, 0 };
	int			 next, rc;

	/* A pending call may own a half-sent packet: skip this round. */
	if (ss->state == CONN_UP && ss->busy == NULL) {
		rc = libssh2_keepalive_send(ss->sess, &next);
		if (rc != 0 && rc != LIBSSH2_ERROR_EAGAIN) {
			log_warnx("sftp: keepalive to %s:%d failed: %s",
			    ss->url.host, ss->url.port, ss_lasterror(ss));
			ss_lost(ss, EIO);
			return;
		}
	}
	evtimer_add(ss->ev_keepalive, &tv);
}

static void
ss_teardown(struct sftp_store *ss)
{
	if (ss->sock_armed) {
		event_del(ss->ev_sock);
		ss->sock_armed = 0;
	}
	if (ss->ev_keepalive != NULL) {
		event_free(ss->ev_keepalive);
		ss->ev_keepalive = NULL;
	}
	ss->sftp = NULL;
	if (ss->sess != NULL) {
		sftp_session_destroy(ss->sess, &ss->link, ss->sock,
		    ss->state == CONN_UP);
		ss->sess = NULL;
	}
	if (ss->sock != -1) {
		close(ss->sock);
		ss->sock = -1;
	}
	ss->busy = NULL;
	ss->probing = 0;
}

static void
ss_backoff(struct sftp_store *ss)
{
	struct timeval	tv;

	ss->state = CONN_BACKOFF;
	if (ss->backoff < SFTP_BACKOFF_MIN)
		ss->backoff = SFTP_BACKOFF_MIN;
	tv.tv_sec = ss->backoff;
	tv.tv_usec = arc4random_uniform(250000);
	evtimer_add(ss->ev_timer, &tv);
	ss->backoff *= 2;
	if (ss->backoff > SFTP_BACKOFF_MAX)
		ss->backoff = SFTP_BACKOFF_MAX;
}

/* Start a TCP connection; the rest happens in ss_connect_step. */
static void
ss_connect(struct sftp_store *ss)
{
	struct addrinfo	 hints, *res = NULL;
	char		 port[8];
	int		 rc, on = 1;

	if (ss->state != CONN_DOWN && ss->state != CONN_BACKOFF)
		return;
	evtimer_del(ss->ev_timer);
	ss->state = CONN_TCP;
	ss->progress_at = mono_now();
	ss->conn_error = 0;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(port, sizeof(port), "%d", ss->url.port);
	/* Store hosts are addresses or /etc/hosts names in practice. */
	if ((rc = getaddrinfo(ss->url.host, port, &hints, &res)) != 0) {
		log_warnx("sftp: cannot resolve %s: %s", ss->url.host,
		    gai_strerror(rc));
		ss->conn_error = EIO;
	} else if ((ss->sock = socket(res->ai_family, res->ai_socktype |
	    SOCK_NONBLOCK | SOCK_CLOEXEC, res->ai_protocol)) == -1) {
		log_warn("sftp: socket");
		ss->conn_error = EIO;
	} else {
		/*
		 * libssh2 sends each SFTP read request as its own small
		 * packet; Nagle would hold all but the first until the
		 * server's delayed ACK and starve the read-ahead (a get
		 * ran at a quarter of OpenSSH's speed).
		 */
		if (setsockopt(ss->sock, IPPROTO_TCP, TCP_NODELAY, &on,
		    sizeof(on)) == -1)
			log_warn("sftp: TCP_NODELAY");
		if (connect(ss->sock, res->ai_addr, res->ai_addrlen) == -1 &&
		    errno != EINPROGRESS) {
			log_warn("sftp: connect to %s:%d", ss->url.host,
			    ss->url.port);
			ss->conn_error = EIO;
		}
	}
	if (res != NULL)
		freeaddrinfo(res);
	/* Failures are reported from the loop, never to the caller's face. */
	if (ss->conn_error != 0)
		ss_kick(ss);
	else
		ss_arm(ss);
}

static int
ss_tcp_done(struct sftp_store *ss)
{
	int		err = 0;
	socklen_t	len = sizeof(err);

	if (ss->conn_error != 0)
		return -1;
	if (getsockopt(ss->sock, SOL_SOCKET, SO_ERROR, &err, &len) == -1)
		err = errno;
	if (err == EINPROGRESS || err == EALREADY)
		return 0;
	if (err != 0) {
		errno = err;
		log_warn("sftp: connect to %s:%d", ss->url.host, ss->url.port);
		ss->conn_error = EIO;
		return -1;
	}
	if ((ss->sess = sftp_session_new(&ss->link)) == NULL) {
		ss->conn_error = EIO;
		return -1;
	}
	libssh2_session_set_blocking(ss->sess, 0);
	ss->state = CONN_HANDSHAKE;
	return 1;
}

static void
ss_up(struct sftp_store *ss)
{
	struct store_xfer	*x;
	struct orphan		*o;
	struct timeval		 tv = { ss->keepalive, 0 };

	ss->state = CONN_UP;
	ss->backoff = 0;
	log_info("sftp: connected to %s:%d as %s", ss->url.host, ss->url.port,
	    ss->url.user);
	if (ss->keepalive > 0) {
		/* No reply wanted: an idle session then reads nothing. */
		libssh2_keepalive_config(ss->sess, 0, ss->keepalive);
		ss->ev_keepalive = evtimer_new(ss->st->base, ss_keepalive_cb,
		    ss);
		if (ss->ev_keepalive != NULL)
			evtimer_add(ss->ev_keepalive, &tv);
	}
	while ((o = TAILQ_FIRST(&ss->orphans)) != NULL) {
		TAILQ_REMOVE(&ss->orphans, o, entry);
		ss->norphans--;
		if ((x = calloc(1, sizeof(*x))) != NULL) {
			x->ss = ss;
			x->kind = XF_CLEANUP;
			x->fd = -1;
			strlcpy(x->tmp, o->path, sizeof(x->tmp));
			TAILQ_INSERT_TAIL(&ss->xfers, x, entry);
		}
		free(o->path);
		free(o);
	}
}

/* One step of the connection set-up; 1 when it progressed. */
static int
ss_connect_step(struct sftp_store *ss)
{
	int	rc;

	switch (ss->state) {
	case CONN_TCP:
		if ((rc = ss_tcp_done(ss)) <= 0)
			goto out;
		return 1;
	case CONN_HANDSHAKE:
		rc = libssh2_session_handshake(ss->sess, ss->sock);
		if (rc == LIBSSH2_ERROR_EAGAIN)
			return 0;
		if (rc != 0) {
			log_warnx("sftp: SSH handshake with %s:%d failed: %s",
			    ss->url.host, ss->url.port, ss_lasterror(ss));
			ss->conn_error = EIO;
			goto out;
		}
		if (!sftp_hostkey_check(ss->sess, ss->url.host, ss->url.port,
		    ss->known_hosts)) {
			ss->conn_error = EACCES;
			goto out;
		}
		ss->state = CONN_AUTH;
		return 1;
	case CONN_AUTH:
		rc = libssh2_userauth_publickey_fromfile_ex(ss->sess,
		    ss->url.user, strlen(ss->url.user), NULL, ss->identity,
		    ss->passphrase);
		if (rc == LIBSSH2_ERROR_EAGAIN)
			return 0;
		if (rc != 0) {
			/* libssh2's text never includes the passphrase. */
			log_warnx("sftp: public key authentication as %s to "
			    "%s:%d with %s failed: %s", ss->url.user,
			    ss->url.host, ss->url.port, ss->identity,
			    ss_lasterror(ss));
			ss->conn_error = EACCES;
			goto out;
		}
		ss->state = CONN_SFTP;
		return 1;
	case CONN_SFTP:
		ss->sftp = libssh2_sftp_init(ss->sess);
		if (ss->sftp == NULL) {
			if (libssh2_session_last_errno(ss->sess) ==
			    LIBSSH2_ERROR_EAGAIN)
				return 0;
			log_warnx("sftp: cannot start the SFTP subsystem on "
			    "%s:%d: %s", ss->url.host, ss->url.port,
			    ss_lasterror(ss));
			ss->conn_error = EIO;
			goto out;
		}
		ss_up(ss);
		return 1;
	default:
		return 0;
	}
 out:
	if (ss->conn_error != 0)
		ss_lost(ss, ss->conn_error);
	return 0;
}

/* ---- transfers ---- */

static void
xfer_close_fd(struct store_xfer *x)
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

static void
xfer_free(struct store_xfer *x)
{
	struct sftp_store	*ss = x->ss;

	if (ss->busy == x)
		ss->busy = NULL;
	if (x->kind == XF_PROBE)
		ss->probing = 0;
	TAILQ_REMOVE(&ss->xfers, x, entry);
	xfer_close_fd(x);
	free(x->buf);
	free(x);
}

static void
ss_orphan(struct sftp_store *ss, const char *path)
{
	struct orphan	*o;

	if (ss->norphans >= SFTP_ORPHANS_MAX) {
		log_warnx("sftp: too many temporaries to clean up; %s stays",
		    path);
		return;
	}
	if ((o = calloc(1, sizeof(*o))) == NULL ||
	    (o->path = strdup(path)) == NULL) {
		free(o);
		return;
	}
	TAILQ_INSERT_TAIL(&ss->orphans, o, entry);
	ss->norphans++;
}

/* Report and free; the callback comes last so it may start new work. */
static enum step_result
xfer_finish(struct store_xfer *x, int error, off_t size)
{
	enum xfer_kind	 kind = x->kind;
	store_done_cb	 done_cb = x->done_cb;
	store_stat_cb	 stat_cb = x->stat_cb;
	store_open_cb	 open_cb = x->open_cb;
	void		*arg = x->arg;
	int		 opened = x->opened, owned = x->owned;

	xfer_free(x);
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
xfer_fd_cb(evutil_socket_t fd, short what, void *arg)
{
	struct store_xfer	*x = arg;

	ss_run(x->ss);
}

/* Wait for the frontend's end to become ready in direction what. */
static void
xfer_wait_fd(struct store_xfer *x, short what)
{
	if (x->ev_fd == NULL)
		x->ev_fd = event_new(x->ss->st->base, x->fd, what, xfer_fd_cb,
		    x);
	if (x->ev_fd != NULL && !event_pending(x->ev_fd, what, NULL))
		event_add(x->ev_fd, NULL);
}

/* A put went wrong: stop reading the frontend, then clean up remotely. */
static void
put_fail(struct store_xfer *x, int error)
{
	if (x->error == 0)
		x->error = error;
	xfer_close_fd(x);
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
put_window(struct store_xfer *x)
{
	LIBSSH2_CHANNEL	*ch = libssh2_sftp_get_channel(x->ss->sftp);
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

static enum step_result
put_stream(struct store_xfer *x)
{
	struct sftp_store	*ss = x->ss;
	enum step_result	 res = STEP_IDLE;
	size_t			 count = 0;
	ssize_t			 n;

	/* Top up only between calls: a pending write must see its bytes. */
	if (ss->busy != x && !x->eof && x->len - x->off < SFTP_BUFSIZE / 2) {
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
			xfer_close_fd(x);
			res = STEP_PROGRESS;
		} else if (errno == EAGAIN || errno == EINTR)
			xfer_wait_fd(x, EV_READ);
		else {
			log_warn("sftp: put %s: reading the upload", x->ref);
			put_fail(x, EIO);
			return STEP_PROGRESS;
		}
	}
	if (x->off < x->len && (count = put_window(x)) == 0)
		/* The window is spent: acknowledgements will reopen it. */
		return res;
	if (x->off < x->len) {
		n = libssh2_sftp_write(x->handle, x->buf + x->off, count);
		if (n == LIBSSH2_ERROR_EAGAIN)
			return STEP_AGAIN;
		if (n < 0) {
			if ((n = ss_errno(ss, n)) == -1)
				return STEP_LOST;
			put_fail(x, n);
			return STEP_PROGRESS;
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

static enum step_result
put_step(struct store_xfer *x)
{
	struct sftp_store	*ss = x->ss;
	char			*slash;
	int			 rc, e;

	switch (x->step) {
	case ST_START:
		/* The shard directory; "already exists" is the usual answer. */
		slash = strrchr(x->path, '/');
		rc = libssh2_sftp_mkdir_ex(ss->sftp, x->path,
		    slash - x->path, 0755);
		if (rc == LIBSSH2_ERROR_EAGAIN)
			return STEP_AGAIN;
		if (rc < 0 && ss_errno(ss, rc) == -1)
			return STEP_LOST;
		x->step = ST_PUT_OPEN;
		return STEP_PROGRESS;
	case ST_PUT_OPEN:
		x->handle = libssh2_sftp_open_ex(ss->sftp, x->tmp,
		    strlen(x->tmp), LIBSSH2_FXF_WRITE | LIBSSH2_FXF_CREAT |
		    LIBSSH2_FXF_EXCL, 0600, LIBSSH2_SFTP_OPENFILE);
		if ((rc = ss_ptr_rc(ss, x->handle)) == LIBSSH2_ERROR_EAGAIN)
			return STEP_AGAIN;
		if (rc < 0) {
			if ((e = ss_errno(ss, rc)) == -1)
				return STEP_LOST;
			log_warnx("sftp: put %s: cannot create %s: %s", x->ref,
			    x->tmp, strerror(e));
			put_fail(x, e);
			return STEP_PROGRESS;
		}
		x->tmp_created = 1;
		x->step = ST_PUT_STREAM;
		return STEP_PROGRESS;
	case ST_PUT_STREAM:
		return put_stream(x);
	case ST_PUT_CLOSE:
		rc = libssh2_sftp_close_handle(x->handle);
		if (rc == LIBSSH2_ERROR_EAGAIN)
			return STEP_AGAIN;
		x->handle = NULL;
		if (rc < 0) {
			if ((e = ss_errno(ss, rc)) == -1)
				return STEP_LOST;
			put_fail(x, e);
		} else if (x->moved != x->size) {
			log_warnx("sftp: put %s: %lld bytes arrived, %lld "
			    "announced", x->ref, (long long)x->moved,
			    (long long)x->size);
			put_fail(x, EIO);
		} else
			x->step = ST_PUT_RENAME;
		return STEP_PROGRESS;
	case ST_PUT_RENAME:
		rc = libssh2_sftp_rename_ex(ss->sftp, x->tmp, strlen(x->tmp),
		    x->path, strlen(x->path), LIBSSH2_SFTP_RENAME_OVERWRITE |
		    LIBSSH2_SFTP_RENAME_ATOMIC | LIBSSH2_SFTP_RENAME_NATIVE);
		if (rc == LIBSSH2_ERROR_EAGAIN)
			return STEP_AGAIN;
		if (rc == 0) {
			x->tmp_created = 0;
			x->step = ST_PUT_REPORT;
		} else if ((e = ss_errno(ss, rc)) == -1)
			return STEP_LOST;
		else if (e == EIO && !x->renamed_once) {
			/* SFTPv3 will not rename over a file: unlink first. */
			x->renamed_once = 1;
			x->step = ST_PUT_UNLINK_TARGET;
		} else
			put_fail(x, e);
		return STEP_PROGRESS;
	case ST_PUT_UNLINK_TARGET:
		rc = libssh2_sftp_unlink_ex(ss->sftp, x->path,
		    strlen(x->path));
		if (rc == LIBSSH2_ERROR_EAGAIN)
			return STEP_AGAIN;
		if (rc < 0 && ss_errno(ss, rc) == -1)
			return STEP_LOST;
		x->step = ST_PUT_RENAME;
		return STEP_PROGRESS;
	case ST_PUT_REPORT:
		return xfer_finish(x, 0, x->size);
	case ST_PUT_FAIL_CLOSE:
		if (x->handle != NULL) {
			rc = libssh2_sftp_close_handle(x->handle);
			if (rc == LIBSSH2_ERROR_EAGAIN)
				return STEP_AGAIN;
			x->handle = NULL;
			if (rc < 0 && ss_errno(ss, rc) == -1)
				return STEP_LOST;
		}
		x->step = ST_PUT_FAIL_UNLINK;
		return STEP_PROGRESS;
	case ST_PUT_FAIL_UNLINK:
		if (x->tmp_created) {
			rc = libssh2_sftp_unlink_ex(ss->sftp, x->tmp,
			    strlen(x->tmp));
			if (rc == LIBSSH2_ERROR_EAGAIN)
				return STEP_AGAIN;
			if (rc < 0 && ss_errno(ss, rc) == -1)
				return STEP_LOST;
			x->tmp_created = 0;
		}
		x->step = ST_FAILED;
		return STEP_PROGRESS;
	case ST_FAILED:
		/* The caller still holds the xfer until commit or abort. */
		if (x->owned && !x->committed)
			return STEP_IDLE;
		return xfer_finish(x, x->error, 0);
	default:
		return STEP_IDLE;
	}
}

static enum step_result
get_stream(struct store_xfer *x)
{
	struct sftp_store	*ss = x->ss;
	ssize_t			 n;
	size_t			 want;

	if (x->off < x->len) {
		n = send(x->fd, x->buf + x->off, x->len - x->off,
		    MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
			xfer_wait_fd(x, EV_WRITE);
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
	if (n < 0 && ss_errno(ss, n) == -1)
		return STEP_LOST;
	if (n <= 0) {
		log_warnx("sftp: get %s: %lld bytes short: %s", x->ref,
		    (long long)x->remaining, n == 0 ? "the blob shrank" :
		    strerror(ss_errno(ss, n)));
		x->step = ST_GET_CLOSE;
		return STEP_PROGRESS;
	}
	x->len = n;
	x->remaining -= n;
	return STEP_PROGRESS;
}

static enum step_result
get_opened(struct store_xfer *x)
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

static enum step_result
get_step(struct store_xfer *x)
{
	struct sftp_store		*ss = x->ss;
	LIBSSH2_SFTP_ATTRIBUTES		 attrs;
	int				 rc, e;

	switch (x->step) {
	case ST_START:
		rc = libssh2_sftp_stat_ex(ss->sftp, x->path, strlen(x->path),
		    LIBSSH2_SFTP_STAT, &attrs);
		if (rc == LIBSSH2_ERROR_EAGAIN)
			return STEP_AGAIN;
		if (rc < 0) {
			if ((e = ss_errno(ss, rc)) == -1)
				return STEP_LOST;
			return xfer_finish(x, e, 0);
		}
		if (x->offset > (off_t)attrs.filesize)
			return xfer_finish(x, EINVAL, 0);
		if (x->remaining < 0 ||
		    x->remaining > (off_t)attrs.filesize - x->offset)
			x->remaining = attrs.filesize - x->offset;
		x->step = ST_GET_OPEN;
		return STEP_PROGRESS;
	case ST_GET_OPEN:
		x->handle = libssh2_sftp_open_ex(ss->sftp, x->path,
		    strlen(x->path), LIBSSH2_FXF_READ, 0,
		    LIBSSH2_SFTP_OPENFILE);
		if ((rc = ss_ptr_rc(ss, x->handle)) == LIBSSH2_ERROR_EAGAIN)
			return STEP_AGAIN;
		if (rc < 0) {
			if ((e = ss_errno(ss, rc)) == -1)
				return STEP_LOST;
			return xfer_finish(x, e, 0);
		}
		return get_opened(x);
	case ST_GET_STREAM:
		return get_stream(x);
	case ST_GET_CLOSE:
		/* EOF to the reader first; it need not wait for the server. */
		xfer_close_fd(x);
		if (x->handle != NULL) {
			/* Drop read-ahead the range did not need (local). */
			libssh2_sftp_seek64(x->handle, 0);
			rc = libssh2_sftp_close_handle(x->handle);
			if (rc == LIBSSH2_ERROR_EAGAIN)
				return STEP_AGAIN;
			x->handle = NULL;
			if (rc < 0 && ss_errno(ss, rc) == -1)
				return STEP_LOST;
		}
		return xfer_finish(x, x->error ? x->error : EIO, 0);
	default:
		return xfer_finish(x, x->error, 0);
	}
}

/* check, stat, remove, cleanup and probe: one call each. */
static enum step_result
meta_step(struct store_xfer *x)
{
	struct sftp_store		*ss = x->ss;
	LIBSSH2_SFTP_ATTRIBUTES		 attrs;
	const char			*path;
	int				 rc, e = 0;

	if (x->step == ST_FAILED)
		return xfer_finish(x, x->error, 0);
	if (x->kind == XF_REMOVE && !x->tmp_checked) {
		rc = libssh2_sftp_unlink_ex(ss->sftp, x->tmp, strlen(x->tmp));
		if (rc == LIBSSH2_ERROR_EAGAIN)
			return STEP_AGAIN;
		if (rc < 0 && (e = ss_errno(ss, rc)) == -1)
			return STEP_LOST;
		if (e != 0 && e != ENOENT)
			return xfer_finish(x, e, 0);
		x->tmp_checked = 1;
		x->tmp_removed = e == 0;
		e = 0;
	}
	path = x->kind == XF_CLEANUP ? x->tmp : x->path;
	if (x->kind == XF_REMOVE || x->kind == XF_CLEANUP)
		rc = libssh2_sftp_unlink_ex(ss->sftp, path, strlen(path));
	else
		rc = libssh2_sftp_stat_ex(ss->sftp, path, strlen(path),
		    LIBSSH2_SFTP_STAT, &attrs);
	if (rc == LIBSSH2_ERROR_EAGAIN)
		return STEP_AGAIN;
	if (rc < 0 && (e = ss_errno(ss, rc)) == -1)
		return STEP_LOST;
	/* A ref that only had a temporary was there all the same. */
	if (x->kind == XF_REMOVE && e == ENOENT && x->tmp_removed)
		e = 0;
	return xfer_finish(x, e, e == 0 && x->kind != XF_REMOVE &&
	    x->kind != XF_CLEANUP ? (off_t)attrs.filesize : 0);
}

/* The root must be a directory we can create and remove files in. */
static enum step_result
check_step(struct store_xfer *x)
{
	struct sftp_store		*ss = x->ss;
	LIBSSH2_SFTP_ATTRIBUTES		 attrs;
	int				 rc, e = 0;

	switch (x->step) {
	case ST_START:
		rc = libssh2_sftp_stat_ex(ss->sftp, x->path, strlen(x->path),
		    LIBSSH2_SFTP_STAT, &attrs);
		if (rc == LIBSSH2_ERROR_EAGAIN)
			return STEP_AGAIN;
		if (rc < 0 && (e = ss_errno(ss, rc)) == -1)
			return STEP_LOST;
		if (e == 0 && !LIBSSH2_SFTP_S_ISDIR(attrs.permissions))
			e = ENOTDIR;
		if (e == ENOENT)
			log_warnx("sftp: store root %s does not exist on "
			    "%s:%d", x->path, ss->url.host, ss->url.port);
		else if (e != 0)
			log_warnx("sftp: store root %s on %s:%d: %s", x->path,
			    ss->url.host, ss->url.port, strerror(e));
		if (e != 0)
			return xfer_finish(x, e, 0);
		x->step = ST_CHECK_OPEN;
		return STEP_PROGRESS;
	case ST_CHECK_OPEN:
		x->handle = libssh2_sftp_open_ex(ss->sftp, x->tmp,
		    strlen(x->tmp), LIBSSH2_FXF_WRITE | LIBSSH2_FXF_CREAT |
		    LIBSSH2_FXF_EXCL, 0600, LIBSSH2_SFTP_OPENFILE);
		if ((rc = ss_ptr_rc(ss, x->handle)) == LIBSSH2_ERROR_EAGAIN)
			return STEP_AGAIN;
		if (rc < 0) {
			if ((e = ss_errno(ss, rc)) == -1)
				return STEP_LOST;
			log_warnx("sftp: cannot create files in store root %s "
			    "on %s:%d: %s", x->path, ss->url.host, ss->url.port,
			    strerror(e));
			return xfer_finish(x, e, 0);
		}
		x->tmp_created = 1;
		x->step = ST_CHECK_CLOSE;
		return STEP_PROGRESS;
	case ST_CHECK_CLOSE:
		rc = libssh2_sftp_close_handle(x->handle);
		if (rc == LIBSSH2_ERROR_EAGAIN)
			return STEP_AGAIN;
		x->handle = NULL;
		if (rc < 0 && ss_errno(ss, rc) == -1)
			return STEP_LOST;
		x->step = ST_CHECK_UNLINK;
		return STEP_PROGRESS;
	case ST_CHECK_UNLINK:
		rc = libssh2_sftp_unlink_ex(ss->sftp, x->tmp, strlen(x->tmp));
		if (rc == LIBSSH2_ERROR_EAGAIN)
			return STEP_AGAIN;
		if (rc < 0 && (e = ss_errno(ss, rc)) == -1)
			return STEP_LOST;
		x->tmp_created = 0;
		if (e != 0)
			log_warnx("sftp: cannot remove files in store root %s "
			    "on %s:%d: %s", x->path, ss->url.host, ss->url.port,
			    strerror(e));
		return xfer_finish(x, e, 0);
	default:
		return xfer_finish(x, x->error, 0);
	}
}

static int
xfer_needs_session(struct store_xfer *x)
{
	return x->step != ST_FAILED;
}

static enum step_result
xfer_step(struct store_xfer *x)
{
	/* A cancel waits until no call of this xfer is pending. */
	if (x->cancel && x->ss->busy != x) {
		if (x->kind == XF_PUT && x->step < ST_PUT_FAIL_CLOSE)
			put_fail(x, x->cancel);
		else if (x->kind == XF_GET && x->step == ST_GET_STREAM)
			x->step = ST_GET_CLOSE;
		x->cancel = 0;
	}
	switch (x->kind) {
	case XF_PUT:
		return put_step(x);
	case XF_GET:
		return get_step(x);
	case XF_CHECK:
		return check_step(x);
	default:
		return meta_step(x);
	}
}

/* The session is gone: fail what needs it, remember what to clean. */
static void
xfer_lost(struct store_xfer *x, int error)
{
	struct sftp_store	*ss = x->ss;

	x->handle = NULL;	/* freed with the session */
	switch (x->kind) {
	case XF_PUT:
		if (x->step == ST_FAILED)
			return;
		if (x->tmp_created || x->step == ST_PUT_OPEN)
			ss_orphan(ss, x->tmp);
		x->tmp_created = 0;
		if (x->error == 0)
			x->error = error;
		xfer_close_fd(x);
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
		ss_orphan(ss, x->tmp);
		xfer_free(x);
		break;
	case XF_PROBE:
		xfer_free(x);
		break;
	default:
		if (x->kind == XF_CHECK && (x->tmp_created ||
		    x->step == ST_CHECK_OPEN))
			ss_orphan(ss, x->tmp);
		x->error = error;
		x->step = ST_FAILED;
		break;
	}
}

static void
ss_lost(struct sftp_store *ss, int error)
{
	struct store_xfer	*x, *next;

	if (ss->state == CONN_UP)
		log_warnx("sftp: connection to %s:%d lost", ss->url.host,
		    ss->url.port);
	ss_teardown(ss);
	TAILQ_FOREACH_SAFE(x, &ss->xfers, entry, next)
		xfer_lost(x, error);
	ss->conn_error = error;
	ss_backoff(ss);
	/* The failed xfers report from the loop. */
	ss_kick(ss);
}

static void
ss_run_xfers(struct sftp_store *ss)
{
	struct store_xfer	*x, *next;
	enum step_result	 res;
	int			 pass, progressed;

	for (pass = 0; pass < SFTP_PASSES; pass++) {
		progressed = 0;
		TAILQ_FOREACH_SAFE(x, &ss->xfers, entry, next) {
			if (ss->busy != NULL && ss->busy != x)
				continue;
			if (ss->state != CONN_UP && xfer_needs_session(x))
				continue;
			res = xfer_step(x);
			if (res == STEP_AGAIN) {
				if (ss->busy != x)
					ss->progress_at = mono_now();
				ss->busy = x;
				return;
			}
			if (res == STEP_LOST) {
				log_warnx("sftp: %s:%d: %s", ss->url.host,
				    ss->url.port, ss_lasterror(ss));
				ss_lost(ss, EIO);
				return;
			}
			if (res != STEP_DONE && ss->busy == x)
				ss->busy = NULL;
			if (res != STEP_IDLE) {
				progressed = 1;
				ss->progress_at = mono_now();
			}
		}
		if (!progressed)
			return;
	}
	ss_kick(ss);
}

static void
ss_run(struct sftp_store *ss)
{
	if (ss->running) {
		ss->rerun = 1;
		return;
	}
	ss->running = 1;
	do {
		ss->rerun = 0;
		while (ss->state > CONN_DOWN && ss->state < CONN_UP &&
		    ss_connect_step(ss))
			ss->progress_at = mono_now();
		ss_run_xfers(ss);
	} while (ss->rerun);
	ss->running = 0;
	ss_arm(ss);
}

static void
ss_kick(struct sftp_store *ss)
{
	event_active(ss->ev_kick, 0, 0);
}

static void
ss_kick_cb(evutil_socket_t fd, short what, void *arg)
{
	ss_run(arg);
}

/* The backoff is over: try again, whether or not work is waiting. */
static void
ss_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	ss_connect(arg);
}

/* A new transfer: it waits for the session, or fails fast while down. */
static struct store_xfer *
xfer_new(struct sftp_store *ss, enum xfer_kind kind, const char *ref)
{
	struct store_xfer	*x;

	if ((x = calloc(1, sizeof(*x))) == NULL)
		return NULL;
	x->ss = ss;
	x->kind = kind;
	x->fd = -1;
	if (ref != NULL) {
		strlcpy(x->ref, ref, sizeof(x->ref));
		if (!store_ref_valid(ref) || (size_t)snprintf(x->path,
		    sizeof(x->path), "%s/%s", ss->url.root, ref) >=
		    sizeof(x->path)) {
			x->error = EINVAL;
			x->step = ST_FAILED;
		}
	} else
		strlcpy(x->path, ss->url.root[0] ? ss->url.root : "/",
		    sizeof(x->path));
	if (x->step != ST_FAILED && ss->state == CONN_BACKOFF) {
		x->error = ss->conn_error ? ss->conn_error : EIO;
		x->step = ST_FAILED;
	}
	TAILQ_INSERT_TAIL(&ss->xfers, x, entry);
	if (ss->state == CONN_DOWN)
		ss_connect(ss);
	ss_kick(ss);
	return x;
}

static void
sftp_check(struct store *st, store_done_cb cb, void *arg)
{
	struct store_xfer	*x;
	uint64_t		 rnd;

	if ((x = xfer_new(ss_of(st), XF_CHECK, NULL)) == NULL) {
		cb(arg, ENOMEM);
		return;
	}
	/* A check is the one call that may wait out a backoff. */
	if (x->step == ST_FAILED && x->error != EINVAL) {
		x->step = ST_START;
		x->error = 0;
		ss_connect(ss_of(st));
	}
	arc4random_buf(&rnd, sizeof(rnd));
	snprintf(x->tmp, sizeof(x->tmp), "%s/.depot-check-%016llx",
	    ss_of(st)->url.root, (unsigned long long)rnd);
	x->done_cb = cb;
	x->arg = arg;
}

static int
sftp_put_begin(struct store *st, const char *ref, int *fd,
    struct store_xfer **xp)
{
	struct sftp_store	*ss = ss_of(st);
	struct store_xfer	*x;
	int			 sv[2];

	*fd = -1;
	if (ss->state == CONN_BACKOFF)
		return ss->conn_error ? ss->conn_error : EIO;
	if (!store_ref_valid(ref))
		return EINVAL;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		return errno;
	if (fcntl(sv[0], F_SETFL, O_NONBLOCK) == -1 ||
	    (x = xfer_new(ss, XF_PUT, ref)) == NULL) {
		close(sv[0]);
		close(sv[1]);
		return ENOMEM;
	}
	x->fd = sv[0];
	x->owned = 1;
	if ((size_t)snprintf(x->tmp, sizeof(x->tmp), "%s.tmp", x->path) >=
	    sizeof(x->tmp) ||
	    (x->buf = malloc(SFTP_BUFSIZE)) == NULL) {
		xfer_free(x);
		close(sv[1]);
		return ENOMEM;
	}
	*fd = sv[1];
	*xp = x;
	return 0;
}

static void
sftp_put_commit(struct store_xfer *x, off_t size, store_done_cb cb,
    void *arg)
{
	x->committed = 1;
	x->size = size;
	x->done_cb = cb;
	x->arg = arg;
	ss_kick(x->ss);
}

static void
sftp_put_abort(struct store_xfer *x)
{
	x->owned = 0;
	x->done_cb = NULL;
	if (x->error == 0)
		x->cancel = ECANCELED;
	ss_kick(x->ss);
}

static void
sftp_stat(struct store *st, const char *ref, store_stat_cb cb, void *arg)
{
	struct store_xfer	*x;

	if ((x = xfer_new(ss_of(st), XF_STAT, ref)) == NULL) {
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

	if ((x = xfer_new(ss_of(st), XF_GET, ref)) == NULL) {
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

	if ((x = xfer_new(ss_of(st), XF_REMOVE, ref)) == NULL) {
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

/* Pending callbacks are dropped: the caller is going away too. */
static void
sftp_free(struct store *st)
{
	struct sftp_store	*ss = ss_of(st);
	struct store_xfer	*x;
	struct orphan		*o;

	if (ss == NULL)
		return;
	while ((x = TAILQ_FIRST(&ss->xfers)) != NULL)
		xfer_free(x);
	while ((o = TAILQ_FIRST(&ss->orphans)) != NULL) {
		TAILQ_REMOVE(&ss->orphans, o, entry);
		free(o->path);
		free(o);
	}
	ss_teardown(ss);
	if (ss->ev_timer != NULL)
		event_free(ss->ev_timer);
	if (ss->ev_kick != NULL)
		event_free(ss->ev_kick);
	if (ss->ev_watchdog != NULL)
		event_free(ss->ev_watchdog);
	free(ss->ev_sock);
	if (ss->passphrase != NULL)
		freezero(ss->passphrase, strlen(ss->passphrase) + 1);
	sftp_url_free(&ss->url);
	free(ss->identity);
	free(ss->known_hosts);
	free(ss);
	st->priv = NULL;
}

const struct store_ops store_sftp_ops = {
	.scheme = "sftp",
	.init = sftp_init,
	.check = sftp_check,
	.put_begin = sftp_put_begin,
	.put_commit = sftp_put_commit,
	.put_abort = sftp_put_abort,
	.stat = sftp_stat,
	.get = sftp_get,
	.remove = sftp_remove,
	.free = sftp_free,
};
