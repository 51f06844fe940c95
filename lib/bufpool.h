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
 * bufpool.h: the read blocks of a process's HTTP connections, kept on
 * a short free list so that a socket is read into memory that is
 * already faulted in rather than into a fresh malloc that glibc hands
 * back to the kernel as soon as the parser has drained it.
 */
#ifndef DEPOT_BUFPOOL_H
#define DEPOT_BUFPOOL_H

#include <stddef.h>

struct evbuffer;

#define BUFPOOL_BLOCK	(256 * 1024)	/* bytes a block holds */
#define BUFPOOL_KEEP	8		/* idle blocks kept, at most */

struct bufpool_stats {
	size_t	 out;		/* blocks taken and not yet returned */
	size_t	 idle;		/* blocks on the free list */
	size_t	 made;		/* blocks ever allocated */
};

/*
 * A cursor: one taker's block, filled in order by reads whose bytes go
 * to an evbuffer span by span, so that the blocks pinned by what an
 * evbuffer holds stay within its bytes and one block more.
 */
struct bufpool_cur {
	void	*blk;		/* NULL: none taken */
	size_t	 off;		/* bytes of it used */
};

void	*bufpool_cur_room(struct bufpool_cur *, size_t, size_t *);
int	 bufpool_cur_keep(struct bufpool_cur *, struct evbuffer *, size_t,
	    size_t);
void	 bufpool_cur_trim(struct bufpool_cur *);
void	 bufpool_cur_free(struct bufpool_cur *);

void	*bufpool_get(void);
void	 bufpool_put(void *);
size_t	 bufpool_refs(const void *);
int	 bufpool_add(struct evbuffer *, void *, size_t, size_t);
void	 bufpool_stats(struct bufpool_stats *);
void	 bufpool_trim(void);

#endif /* DEPOT_BUFPOOL_H */
