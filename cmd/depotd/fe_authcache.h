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
 * fe_authcache.h: a frontend's cache of the storage helper's auth
 * answers (fe_authcache.c), so that a key in use costs no message.
 */
#ifndef DEPOTD_FE_AUTHCACHE_H
#define DEPOTD_FE_AUTHCACHE_H

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/tree.h>

#include <stdint.h>
#include <time.h>

#include "util.h"
#include "proto.h"

#define FE_AUTHCACHE_MAX	1024	/* entries per frontend */
/* The token's hash, or it and the user and workspace the admin key named. */
#define FE_AUTHCACHE_NAME	(SHA256_HEXLEN + 280)

/*
 * One answer and the handle it carries.  refs counts the requests using
 * it; cached says it is still found by name.  An entry leaves the table
 * when it expires, is pushed out or revoked, and is freed (its handle
 * released unless dead) once the last request using it is over.
 */
struct fe_authcache_entry {
	RB_ENTRY(fe_authcache_entry)	 node;
	TAILQ_ENTRY(fe_authcache_entry)	 lru;
	LIST_ENTRY(fe_authcache_entry)	 all;
	char				 name[FE_AUTHCACHE_NAME];
	struct auth_result		 res;
	int64_t				 until;		/* mono_usec() */
	int				 refs;
	int				 cached;
	int				 dead;	/* the handle is gone already */
};

/* What ends a handle that nothing uses any more. */
typedef void	(*fe_authcache_release_cb)(const char *handle);

void	 fe_authcache_init(int max, fe_authcache_release_cb);
void	 fe_authcache_name(char *, size_t, const char *token_sha256,
	    const char *user, const char *workspace);
struct fe_authcache_entry *fe_authcache_get(const char *name, int64_t now,
	    time_t wall);
struct fe_authcache_entry *fe_authcache_put(const char *name,
	    const struct auth_result *, int64_t now);
void	 fe_authcache_unref(struct fe_authcache_entry *);
int	 fe_authcache_drop(const char *handle);
int	 fe_authcache_len(void);

#endif
