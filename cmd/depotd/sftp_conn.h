/*
 * sftp_conn.h: the parts of an SFTP store's connection that know
 * nothing of transfers: the storage URL, the host key check against a
 * known-hosts file, and sessions whose memory can always be reclaimed.
 */
#ifndef DEPOT_SFTP_CONN_H
#define DEPOT_SFTP_CONN_H

#include <sys/queue.h>

#include <libssh2.h>

/* "sftp://user@host[:port]/path", host possibly "[v6]". */
struct sftp_url {
	char	*user;
	char	*host;
	int	 port;
	char	*root;		/* absolute, no trailing slash; "" for "/" */
};

int	sftp_url_parse(struct sftp_url *, const char *);
void	sftp_url_free(struct sftp_url *);

/*
 * 1 when the session's host key is listed for host:port in the
 * known-hosts file.  Otherwise 0, after a log line naming the host,
 * the key type and its SHA256 fingerprint.
 */
int	sftp_hostkey_check(LIBSSH2_SESSION *, const char *host, int port,
	    const char *known_hosts);

/* Everything one session allocated, freed with it whatever state it is in. */
struct sftp_block;
LIST_HEAD(sftp_arena, sftp_block);

LIBSSH2_SESSION	*sftp_session_new(struct sftp_arena *);
/* graceful: say goodbye first.  sock is shut down, not closed. */
void		 sftp_session_destroy(LIBSSH2_SESSION *, struct sftp_arena *,
		    int sock, int graceful);

#endif
