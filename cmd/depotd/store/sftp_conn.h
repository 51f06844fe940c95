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
 * sftp_conn.h: the parts of an SFTP store's connection that know
 * nothing of transfers: the host key check against a known-hosts file
 * (sftp_conn.c), and sessions whose memory can always be reclaimed
 * (sftp_link.c).  The URL's grammar is store_url.c's.
 */
#ifndef DEPOT_SFTP_CONN_H
#define DEPOT_SFTP_CONN_H

#include <sys/queue.h>

#include <libssh2.h>

#include "store_url.h"

/*
 * A session's side of its socket.  arena: everything the session
 * allocated, freed with it whatever state it is in.  in: bytes read
 * from the socket ahead of libssh2, which asks for at most 16 KiB per
 * call; in_dry: the socket said EAGAIN and has not been reported
 * readable since, so asking again would only cost a system call.
 */
struct sftp_block;
LIST_HEAD(sftp_arena, sftp_block);

struct sftp_link {
	struct sftp_arena	 arena;
	unsigned char		*in;
	size_t			 in_off;
	size_t			 in_len;
	int			 in_dry;
	int			 blocking;
};

LIBSSH2_SESSION	*sftp_session_new(struct sftp_link *);
/* The event loop saw the socket readable. */
void		 sftp_link_readable(struct sftp_link *);
/* graceful: say goodbye first.  sock is shut down, not closed. */
void		 sftp_session_destroy(LIBSSH2_SESSION *, struct sftp_link *,
		    int sock, int graceful);

#endif
