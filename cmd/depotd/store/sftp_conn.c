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
 * sftp_conn.c: an SFTP store's connection: the host key check and the
 * session's state machine, driven without blocking from the
 * storage helper's event loop (TCP connect, SSH handshake, public key
 * authentication, the SFTP subsystem, keepalives, a watchdog for a
 * server that stops answering, backoff after a loss), and the passes
 * that let the transfers (store_sftp.c, through the callbacks it gives
 * sftp_conn_init) make their calls on it.
 *
 * libssh2 keeps per-channel state for an unfinished call and insists
 * that a call which returned EAGAIN is repeated exactly, so the
 * transfer whose call is pending holds the session ("busy") and the
 * others wait until that call completes.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <netdb.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <libssh2.h>
#include <openssl/evp.h>

#include "log.h"
#include "sftp_conn.h"
#include "store_sftp.h"

#define SFTP_PASSES		64	/* then let other events run */
#define SFTP_BACKOFF_MIN	1
#define SFTP_BACKOFF_MAX	30

static void	sftp_kick_cb(evutil_socket_t, short, void *);
static void	sftp_timer_cb(evutil_socket_t, short, void *);
static void	sftp_watchdog_cb(evutil_socket_t, short, void *);
static void	sftp_lost(struct sftp_store *, int);

static const char *
sftp_hostkey_type_name(int type)
{
	switch (type) {
	case LIBSSH2_HOSTKEY_TYPE_RSA:
		return "ssh-rsa";
	case LIBSSH2_HOSTKEY_TYPE_DSS:
		return "ssh-dss";
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_256:
		return "ecdsa-sha2-nistp256";
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_384:
		return "ecdsa-sha2-nistp384";
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_521:
		return "ecdsa-sha2-nistp521";
	case LIBSSH2_HOSTKEY_TYPE_ED25519:
		return "ssh-ed25519";
	default:
		return "unknown";
	}
}

static int
sftp_hostkey_type_mask(int type)
{
	switch (type) {
	case LIBSSH2_HOSTKEY_TYPE_RSA:
		return LIBSSH2_KNOWNHOST_KEY_SSHRSA;
	case LIBSSH2_HOSTKEY_TYPE_DSS:
		return LIBSSH2_KNOWNHOST_KEY_SSHDSS;
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_256:
		return LIBSSH2_KNOWNHOST_KEY_ECDSA_256;
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_384:
		return LIBSSH2_KNOWNHOST_KEY_ECDSA_384;
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_521:
		return LIBSSH2_KNOWNHOST_KEY_ECDSA_521;
	case LIBSSH2_HOSTKEY_TYPE_ED25519:
		return LIBSSH2_KNOWNHOST_KEY_ED25519;
	default:
		return LIBSSH2_KNOWNHOST_KEY_UNKNOWN;
	}
}

/* "SHA256:<base64>" as ssh-keygen -l prints it. */
static void
sftp_hostkey_fingerprint(LIBSSH2_SESSION *sess, char *buf, size_t len)
{
	const char	*hash;
	unsigned char	 b64[64];
	int		 n;

	hash = libssh2_hostkey_hash(sess, LIBSSH2_HOSTKEY_HASH_SHA256);
	if (hash == NULL) {
		strlcpy(buf, "(no fingerprint)", len);
		return;
	}
	n = EVP_EncodeBlock(b64, (const unsigned char *)hash, 32);
	while (n > 0 && b64[n - 1] == '=')
		b64[--n] = '\0';
	snprintf(buf, len, "SHA256:%s", b64);
}

/*
 * Strict: 1 only when the session's host key is listed for host:port in
 * the known-hosts file.  Otherwise 0, after a log line naming the host,
 * the key type and its SHA256 fingerprint.
 */
static int
sftp_hostkey_check(LIBSSH2_SESSION *sess, const char *host, int port,
    const char *known_hosts)
{
	LIBSSH2_KNOWNHOSTS		*kh;
	struct libssh2_knownhost	*entry;
	const char			*key;
	char				 fp[80];
	size_t				 len;
	int				 type, rc;

	if ((key = libssh2_session_hostkey(sess, &len, &type)) == NULL) {
		log_warnx("sftp: %s:%d sent no host key", host, port);
		return 0;
	}
	sftp_hostkey_fingerprint(sess, fp, sizeof(fp));
	if ((kh = libssh2_knownhost_init(sess)) == NULL)
		return 0;
	if (libssh2_knownhost_readfile(kh, known_hosts,
	    LIBSSH2_KNOWNHOST_FILE_OPENSSH) < 0) {
		log_warnx("sftp: cannot read known-hosts file %s; refusing to "
		    "connect to %s:%d", known_hosts, host, port);
		libssh2_knownhost_free(kh);
		return 0;
	}
	rc = libssh2_knownhost_checkp(kh, host, port, key, len,
	    LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW |
	    sftp_hostkey_type_mask(type), &entry);
	libssh2_knownhost_free(kh);
	switch (rc) {
	case LIBSSH2_KNOWNHOST_CHECK_MATCH:
		return 1;
	case LIBSSH2_KNOWNHOST_CHECK_MISMATCH:
		log_warnx("sftp: host key of %s:%d (%s %s) does not match "
		    "known-hosts file %s: possible impostor, refusing to "
		    "connect", host, port, sftp_hostkey_type_name(type), fp,
		    known_hosts);
		return 0;
	case LIBSSH2_KNOWNHOST_CHECK_NOTFOUND:
		log_warnx("sftp: host key of %s:%d (%s %s) is not in "
		    "known-hosts file %s: refusing to connect", host,
		    port, sftp_hostkey_type_name(type), fp, known_hosts);
		return 0;
	default:
		log_warnx("sftp: cannot check host key of %s:%d (%s %s)",
		    host, port, sftp_hostkey_type_name(type), fp);
		return 0;
	}
}

/* ---- the session ---- */

static const char *
sftp_lasterror(struct sftp_store *sftp)
{
	char	*msg = NULL;

	if (sftp->ssh == NULL)
		return "no session";
	libssh2_session_last_error(sftp->ssh, &msg, NULL, 0);
	return msg ? msg : "unknown error";
}

static void
sftp_sock_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sftp_store	*sftp = arg;
	char			 c;
	ssize_t			 n;

	if (what & EV_READ)
		sftp_link_readable(&sftp->link);
	if (sftp->state == CONN_UP && sftp->busy == NULL && (what & EV_READ)) {
		/* Nothing is expected: either the server went away... */
		n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
		if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR)) {
			sftp_lost(sftp, EIO);
			return;
		}
		/* ...or sent something only an SFTP call will consume. */
		if (n == 1 && !sftp->probing)
			sftp->xfer_ops->probe(sftp);
	}
	sftp_run(sftp);
}

static time_t
sftp_mono_now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/* Waiting for the server: a call is pending or the set-up is running. */
static int
sftp_waiting(struct sftp_store *sftp)
{
	return sftp->busy != NULL ||
	    (sftp->state > CONN_DOWN && sftp->state < CONN_UP);
}

/*
 * A server that stops answering (stopped, partitioned) would leave every
 * transfer hanging on a healthy-looking socket; give it up instead.
 */
static void
sftp_watchdog_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sftp_store	*sftp = arg;
	struct timeval		 tv = { 0, 0 };
	time_t			 idle;

	if (!sftp_waiting(sftp))
		return;
	idle = sftp_mono_now() - sftp->progress_at;
	if (idle >= sftp->stall) {
		log_warnx("sftp: %s:%d has not answered for %lld s; dropping "
		    "the connection", sftp->url.host, sftp->url.port,
		    (long long)idle);
		sftp_lost(sftp, EIO);
		return;
	}
	tv.tv_sec = sftp->stall - idle;
	evtimer_add(sftp->ev_watchdog, &tv);
}

static void
sftp_watchdog_arm(struct sftp_store *sftp)
{
	struct timeval	tv = { sftp->stall, 0 };

	if (sftp_waiting(sftp) && !evtimer_pending(sftp->ev_watchdog, NULL))
		evtimer_add(sftp->ev_watchdog, &tv);
}

static void
sftp_arm(struct sftp_store *sftp)
{
	short	what = 0;
	int	dir;

	sftp_watchdog_arm(sftp);
	if (sftp->sock == -1)
		return;
	if (sftp->state == CONN_TCP)
		what = EV_WRITE;
	else if (sftp->busy != NULL || sftp->state != CONN_UP) {
		dir = libssh2_session_block_directions(sftp->ssh);
		if (dir & LIBSSH2_SESSION_BLOCK_INBOUND)
			what |= EV_READ;
		if (dir & LIBSSH2_SESSION_BLOCK_OUTBOUND)
			what |= EV_WRITE;
	}
	if (what == 0)
		what = EV_READ;
	if (sftp->sock_armed)
		event_del(sftp->ev_sock);
	sftp->sock_armed = 1;
	event_assign(sftp->ev_sock, sftp->st->base, sftp->sock, what,
	    sftp_sock_cb, sftp);
	event_add(sftp->ev_sock, NULL);
}

static void
sftp_keepalive_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sftp_store	*sftp = arg;
	struct timeval		 tv = { sftp->keepalive, 0 };
	int			 next, rc;

	/* A pending call may own a half-sent packet: skip this round. */
	if (sftp->state == CONN_UP && sftp->busy == NULL) {
		rc = libssh2_keepalive_send(sftp->ssh, &next);
		if (rc != 0 && rc != LIBSSH2_ERROR_EAGAIN) {
			log_warnx("sftp: keepalive to %s:%d failed: %s",
			    sftp->url.host, sftp->url.port,
			    sftp_lasterror(sftp));
			sftp_lost(sftp, EIO);
			return;
		}
	}
	evtimer_add(sftp->ev_keepalive, &tv);
}

static void
sftp_teardown(struct sftp_store *sftp)
{
	if (sftp->sock_armed) {
		event_del(sftp->ev_sock);
		sftp->sock_armed = 0;
	}
	if (sftp->ev_keepalive != NULL) {
		event_free(sftp->ev_keepalive);
		sftp->ev_keepalive = NULL;
	}
	sftp->subsys = NULL;
	if (sftp->ssh != NULL) {
		sftp_session_destroy(sftp->ssh, &sftp->link, sftp->sock,
		    sftp->state == CONN_UP);
		sftp->ssh = NULL;
	}
	if (sftp->sock != -1) {
		close(sftp->sock);
		sftp->sock = -1;
	}
	sftp->busy = NULL;
	sftp->probing = 0;
}

static void
sftp_backoff(struct sftp_store *sftp)
{
	struct timeval	tv;

	sftp->state = CONN_BACKOFF;
	if (sftp->backoff < SFTP_BACKOFF_MIN)
		sftp->backoff = SFTP_BACKOFF_MIN;
	tv.tv_sec = sftp->backoff;
	tv.tv_usec = arc4random_uniform(250000);
	evtimer_add(sftp->ev_timer, &tv);
	sftp->backoff *= 2;
	if (sftp->backoff > SFTP_BACKOFF_MAX)
		sftp->backoff = SFTP_BACKOFF_MAX;
}

/* Start a TCP connection; the rest happens in sftp_connect_step. */
void
sftp_connect(struct sftp_store *sftp)
{
	struct addrinfo	 hints, *res = NULL;
	char		 port[8];
	int		 rc, on = 1;

	if (sftp->state != CONN_DOWN && sftp->state != CONN_BACKOFF)
		return;
	evtimer_del(sftp->ev_timer);
	sftp->state = CONN_TCP;
	sftp->progress_at = sftp_mono_now();
	sftp->conn_error = 0;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(port, sizeof(port), "%d", sftp->url.port);
	/* Store hosts are addresses or /etc/hosts names in practice. */
	if ((rc = getaddrinfo(sftp->url.host, port, &hints, &res)) != 0) {
		log_warnx("sftp: cannot resolve %s: %s", sftp->url.host,
		    gai_strerror(rc));
		sftp->conn_error = EIO;
	} else if ((sftp->sock = socket(res->ai_family, res->ai_socktype |
	    SOCK_NONBLOCK | SOCK_CLOEXEC, res->ai_protocol)) == -1) {
		log_warn("sftp: socket");
		sftp->conn_error = EIO;
	} else {
		/*
		 * libssh2 sends each SFTP read request as its own small
		 * packet; Nagle would hold all but the first until the
		 * server's delayed ACK and starve the read-ahead (a get
		 * ran at a quarter of OpenSSH's speed).
		 */
		if (setsockopt(sftp->sock, IPPROTO_TCP, TCP_NODELAY, &on,
		    sizeof(on)) == -1)
			log_warn("sftp: TCP_NODELAY");
		if (connect(sftp->sock, res->ai_addr, res->ai_addrlen) == -1 &&
		    errno != EINPROGRESS) {
			log_warn("sftp: connect to %s:%d", sftp->url.host,
			    sftp->url.port);
			sftp->conn_error = EIO;
		}
	}
	if (res != NULL)
		freeaddrinfo(res);
	/* Failures are reported from the loop, never to the caller's face. */
	if (sftp->conn_error != 0)
		sftp_kick(sftp);
	else
		sftp_arm(sftp);
}

static int
sftp_tcp_done(struct sftp_store *sftp)
{
	int		err = 0;
	socklen_t	len = sizeof(err);

	if (sftp->conn_error != 0)
		return -1;
	if (getsockopt(sftp->sock, SOL_SOCKET, SO_ERROR, &err, &len) == -1)
		err = errno;
	if (err == EINPROGRESS || err == EALREADY)
		return 0;
	if (err != 0) {
		errno = err;
		log_warn("sftp: connect to %s:%d", sftp->url.host,
		    sftp->url.port);
		sftp->conn_error = EIO;
		return -1;
	}
	if ((sftp->ssh = sftp_session_new(&sftp->link)) == NULL) {
		sftp->conn_error = EIO;
		return -1;
	}
	libssh2_session_set_blocking(sftp->ssh, 0);
	sftp->state = CONN_HANDSHAKE;
	return 1;
}

static void
sftp_up(struct sftp_store *sftp)
{
	struct timeval	 tv = { sftp->keepalive, 0 };

	sftp->state = CONN_UP;
	sftp->backoff = 0;
	log_info("sftp: connected to %s:%d as %s", sftp->url.host,
	    sftp->url.port, sftp->url.user);
	if (sftp->keepalive > 0) {
		/* No reply wanted: an idle session then reads nothing. */
		libssh2_keepalive_config(sftp->ssh, 0, sftp->keepalive);
		sftp->ev_keepalive = evtimer_new(sftp->st->base,
		    sftp_keepalive_cb, sftp);
		if (sftp->ev_keepalive != NULL)
			evtimer_add(sftp->ev_keepalive, &tv);
	}
	sftp->xfer_ops->reconnected(sftp);
}

/* One step of the connection set-up; 1 when it progressed. */
static int
sftp_connect_step(struct sftp_store *sftp)
{
	int	rc;

	switch (sftp->state) {
	case CONN_TCP:
		if ((rc = sftp_tcp_done(sftp)) <= 0)
			goto out;
		return 1;
	case CONN_HANDSHAKE:
		rc = libssh2_session_handshake(sftp->ssh, sftp->sock);
		if (rc == LIBSSH2_ERROR_EAGAIN)
			return 0;
		if (rc != 0) {
			log_warnx("sftp: SSH handshake with %s:%d failed: %s",
			    sftp->url.host, sftp->url.port,
			    sftp_lasterror(sftp));
			sftp->conn_error = EIO;
			goto out;
		}
		if (!sftp_hostkey_check(sftp->ssh, sftp->url.host,
		    sftp->url.port, sftp->known_hosts)) {
			sftp->conn_error = EACCES;
			goto out;
		}
		sftp->state = CONN_AUTH;
		return 1;
	case CONN_AUTH:
		rc = libssh2_userauth_publickey_fromfile_ex(sftp->ssh,
		    sftp->url.user, strlen(sftp->url.user), NULL,
		    sftp->identity, sftp->passphrase);
		if (rc == LIBSSH2_ERROR_EAGAIN)
			return 0;
		if (rc != 0) {
			/* libssh2's text never includes the passphrase. */
			log_warnx("sftp: public key authentication as %s to "
			    "%s:%d with %s failed: %s", sftp->url.user,
			    sftp->url.host, sftp->url.port, sftp->identity,
			    sftp_lasterror(sftp));
			sftp->conn_error = EACCES;
			goto out;
		}
		sftp->state = CONN_SFTP;
		return 1;
	case CONN_SFTP:
		sftp->subsys = libssh2_sftp_init(sftp->ssh);
		if (sftp->subsys == NULL) {
			if (libssh2_session_last_errno(sftp->ssh) ==
			    LIBSSH2_ERROR_EAGAIN)
				return 0;
			log_warnx("sftp: cannot start the SFTP subsystem on "
			    "%s:%d: %s", sftp->url.host, sftp->url.port,
			    sftp_lasterror(sftp));
			sftp->conn_error = EIO;
			goto out;
		}
		sftp_up(sftp);
		return 1;
	default:
		return 0;
	}
 out:
	if (sftp->conn_error != 0)
		sftp_lost(sftp, sftp->conn_error);
	return 0;
}

static void
sftp_lost(struct sftp_store *sftp, int error)
{
	struct store_xfer	*x, *next;

	if (sftp->state == CONN_UP)
		log_warnx("sftp: connection to %s:%d lost", sftp->url.host,
		    sftp->url.port);
	sftp_teardown(sftp);
	TAILQ_FOREACH_SAFE(x, &sftp->xfers, entry, next)
		sftp->xfer_ops->lost(x, error);
	sftp->conn_error = error;
	sftp_backoff(sftp);
	/* The failed xfers report from the loop. */
	sftp_kick(sftp);
}

static void
sftp_run_xfers(struct sftp_store *sftp)
{
	struct store_xfer	*x, *next;
	enum sftp_step_result	 res;
	int			 pass, progressed;

	for (pass = 0; pass < SFTP_PASSES; pass++) {
		progressed = 0;
		TAILQ_FOREACH_SAFE(x, &sftp->xfers, entry, next) {
			if (sftp->busy != NULL && sftp->busy != x)
				continue;
			if (sftp->state != CONN_UP &&
			    sftp->xfer_ops->needs_session(x))
				continue;
			res = sftp->xfer_ops->step(x);
			if (res == STEP_AGAIN) {
				if (sftp->busy != x)
					sftp->progress_at = sftp_mono_now();
				sftp->busy = x;
				return;
			}
			if (res == STEP_LOST) {
				log_warnx("sftp: %s:%d: %s", sftp->url.host,
				    sftp->url.port, sftp_lasterror(sftp));
				sftp_lost(sftp, EIO);
				return;
			}
			if (res != STEP_DONE && sftp->busy == x)
				sftp->busy = NULL;
			if (res != STEP_IDLE) {
				progressed = 1;
				sftp->progress_at = sftp_mono_now();
			}
		}
		if (!progressed)
			return;
	}
	sftp_kick(sftp);
}

void
sftp_run(struct sftp_store *sftp)
{
	if (sftp->running) {
		sftp->rerun = 1;
		return;
	}
	sftp->running = 1;
	do {
		sftp->rerun = 0;
		while (sftp->state > CONN_DOWN && sftp->state < CONN_UP &&
		    sftp_connect_step(sftp))
			sftp->progress_at = sftp_mono_now();
		sftp_run_xfers(sftp);
	} while (sftp->rerun);
	sftp->running = 0;
	sftp_arm(sftp);
}

void
sftp_kick(struct sftp_store *sftp)
{
	event_active(sftp->ev_kick, 0, 0);
}

static void
sftp_kick_cb(evutil_socket_t fd, short what, void *arg)
{
	sftp_run(arg);
}

/* The backoff is over: try again, whether or not work is waiting. */
static void
sftp_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	sftp_connect(arg);
}

/* ops: how the transfers are run, lost and probed (store_sftp.c's). */
int
sftp_conn_init(struct sftp_store *sftp, const struct sftp_xfer_ops *ops)
{
	struct event_base	*base = sftp->st->base;

	sftp->xfer_ops = ops;
	sftp->ev_timer = evtimer_new(base, sftp_timer_cb, sftp);
	sftp->ev_kick = event_new(base, -1, 0, sftp_kick_cb, sftp);
	sftp->ev_watchdog = evtimer_new(base, sftp_watchdog_cb, sftp);
	sftp->ev_sock = calloc(1, event_get_struct_event_size());
	if (sftp->ev_timer == NULL || sftp->ev_kick == NULL ||
	    sftp->ev_sock == NULL || sftp->ev_watchdog == NULL)
		return -1;
	return 0;
}

void
sftp_conn_free(struct sftp_store *sftp)
{
	sftp_teardown(sftp);
	if (sftp->ev_timer != NULL)
		event_free(sftp->ev_timer);
	if (sftp->ev_kick != NULL)
		event_free(sftp->ev_kick);
	if (sftp->ev_watchdog != NULL)
		event_free(sftp->ev_watchdog);
	free(sftp->ev_sock);
}
