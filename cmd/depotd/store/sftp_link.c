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
 * sftp_link.c: an SFTP session's side of its socket: the memory libssh2
 * allocates for the session, and the reads ahead of it.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <libssh2.h>

#include "sftp_conn.h"

#define SFTP_LINK_IN	(256 * 1024)

/*
 * libssh2 1.10 frees an SFTP handle only when the server confirms its
 * close, so a session that died with transfers open would leak their
 * buffers.  Each session allocates from its own list instead, and
 * whatever libssh2 still holds after libssh2_session_free goes with it.
 */

struct sftp_block {
	LIST_ENTRY(sftp_block)	 entry;
	max_align_t		 pad[0];
};

/* The arena of the link libssh2 hands back to the allocators. */
static struct sftp_arena *
sftp_sess_arena(void **abstract)
{
	return &((struct sftp_link *)*abstract)->arena;
}

static void *
sftp_sess_alloc(size_t size, void **abstract)
{
	struct sftp_arena	*arena = sftp_sess_arena(abstract);
	struct sftp_block	*b;

	if ((b = malloc(sizeof(*b) + size)) == NULL)
		return NULL;
	LIST_INSERT_HEAD(arena, b, entry);
	return b + 1;
}

static void
sftp_sess_free(void *p, void **abstract)
{
	struct sftp_block	*b;

	if (p == NULL)
		return;
	b = (struct sftp_block *)p - 1;
	LIST_REMOVE(b, entry);
	free(b);
}

static void *
sftp_sess_realloc(void *p, size_t size, void **abstract)
{
	struct sftp_block	*b, *nb;

	if (p == NULL)
		return sftp_sess_alloc(size, abstract);
	b = (struct sftp_block *)p - 1;
	LIST_REMOVE(b, entry);
	if ((nb = realloc(b, sizeof(*b) + size)) == NULL) {
		LIST_INSERT_HEAD(sftp_sess_arena(abstract), b, entry);
		return NULL;
	}
	LIST_INSERT_HEAD(sftp_sess_arena(abstract), nb, entry);
	return nb + 1;
}

static void
sftp_sess_sweep(struct sftp_arena *arena)
{
	struct sftp_block	*b;

	while ((b = LIST_FIRST(arena)) != NULL) {
		LIST_REMOVE(b, entry);
		free(b);
	}
}


/*
 * libssh2 reads at most a packet buffer's worth per call and asks the
 * socket again after every packet, even when it just said EAGAIN; on
 * a bulk transfer that is most of the helper's system calls.  Reads
 * here go through a larger buffer, and an empty socket is not asked
 * again until the event loop reports it readable -- except in
 * blocking mode, where libssh2 waits for readability itself.
 */
static ssize_t
sftp_sess_recv(libssh2_socket_t sock, void *buf, size_t len, int flags,
    void **abstract)
{
	struct sftp_link	*l = *abstract;
	ssize_t			 n;

	if (l->in_off == l->in_len) {
		if (l->in_dry && !l->blocking)
			return -EAGAIN;
		n = recv(sock, l->in, SFTP_LINK_IN, flags);
		if (n == -1) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				l->in_dry = 1;
			return -errno;
		}
		if (n == 0)
			return 0;
		l->in_off = 0;
		l->in_len = n;
	}
	if (len > l->in_len - l->in_off)
		len = l->in_len - l->in_off;
	memcpy(buf, l->in + l->in_off, len);
	l->in_off += len;
	return len;
}

/* Every cipher libssh2 1.10 has, cheapest first: it runs AES per block. */
static const char sess_ciphers[] = "aes128-ctr,aes192-ctr,aes256-ctr,"
    "aes128-cbc,aes192-cbc,aes256-cbc,rijndael-cbc@lysator.liu.se,"
    "3des-cbc";

LIBSSH2_SESSION *
sftp_session_new(struct sftp_link *l)
{
	LIBSSH2_SESSION	*sess;

	LIST_INIT(&l->arena);
	l->in_off = l->in_len = 0;
	l->in_dry = l->blocking = 0;
	if (l->in == NULL && (l->in = malloc(SFTP_LINK_IN)) == NULL)
		return NULL;
	if ((sess = libssh2_session_init_ex(sftp_sess_alloc, sftp_sess_free,
	    sftp_sess_realloc, l)) == NULL)
		return NULL;
	libssh2_session_callback_set(sess, LIBSSH2_CALLBACK_RECV,
	    (void *)sftp_sess_recv);
	libssh2_session_method_pref(sess, LIBSSH2_METHOD_CRYPT_CS,
	    sess_ciphers);
	libssh2_session_method_pref(sess, LIBSSH2_METHOD_CRYPT_SC,
	    sess_ciphers);
	return sess;
}

void
sftp_link_readable(struct sftp_link *l)
{
	l->in_dry = 0;
}

void
sftp_session_destroy(LIBSSH2_SESSION *sess, struct sftp_link *l,
    int sock, int graceful)
{
	/*
	 * Freeing closes channels and waits for the peer, which a
	 * non-blocking session cannot: with the socket shut down every
	 * wait ends at once and the free completes.
	 */
	l->blocking = 1;
	if (graceful)
		libssh2_session_disconnect(sess, "closing");
	if (sock != -1)
		shutdown(sock, SHUT_RDWR);
	libssh2_session_set_timeout(sess, 1000);
	libssh2_session_set_blocking(sess, 1);
	libssh2_session_free(sess);
	sftp_sess_sweep(&l->arena);
	free(l->in);
	l->in = NULL;
}
