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
 * bufpool.c: a free list of fixed-size read blocks, one per process.
 *
 * A block is counted: its taker holds one reference, and every span of
 * it handed to an evbuffer (bufpool_add) holds another until the
 * evbuffer has drained or freed the span.  The last reference puts the
 * block back on the free list, which keeps BUFPOOL_KEEP blocks and
 * frees any more: those only come back while many connections hold
 * unparsed input at once.  The HTTP layer runs on one event loop, so
 * the list takes no lock: it is not for threads.
 */
#include <stdlib.h>

#include <event2/buffer.h>

#include "bufpool.h"

/* Before each block's bytes; 64 keeps those aligned to a cache line. */
#define BLOCK_HEAD	64

struct block {
	struct block	*next;		/* on the free list */
	size_t		 refs;
};

static struct block	*idle;
static size_t		 nidle, nout, nmade;

static struct block *
block_of(const void *p)
{
	return (struct block *)((char *)p - BLOCK_HEAD);
}

/* A block of BUFPOOL_BLOCK bytes, with the caller's one reference. */
void *
bufpool_get(void)
{
	struct block	*b;

	if ((b = idle) != NULL) {
		idle = b->next;
		nidle--;
	} else {
		if ((b = malloc(BLOCK_HEAD + BUFPOOL_BLOCK)) == NULL)
			return NULL;
		nmade++;
	}
	b->refs = 1;
	nout++;
	return (char *)b + BLOCK_HEAD;
}

/* Drops a reference; the last one returns the block. */
void
bufpool_put(void *p)
{
	struct block	*b;

	if (p == NULL)
		return;
	b = block_of(p);
	if (--b->refs > 0)
		return;
	nout--;
	if (nidle >= BUFPOOL_KEEP) {
		free(b);
		return;
	}
	b->next = idle;
	idle = b;
	nidle++;
}

size_t
bufpool_refs(const void *p)
{
	return block_of(p)->refs;
}

static void
bufpool_cleanup(const void *data, size_t len, void *block)
{
	bufpool_put(block);
}

/*
 * Appends len bytes of block, from off, to buf without a copy; the span
 * holds a reference of its own until buf lets it go.
 */
int
bufpool_add(struct evbuffer *buf, void *block, size_t off, size_t len)
{
	block_of(block)->refs++;
	if (evbuffer_add_reference(buf, (char *)block + off, len,
	    bufpool_cleanup, block) == -1) {
		block_of(block)->refs--;
		return -1;
	}
	return 0;
}

/*
 * Where the next read goes and *room, its bytes (at least min): after
 * the spans of the cursor's block still held, in a new block when too
 * little is left, from the start when none is.  NULL: out of memory.
 */
void *
bufpool_cur_room(struct bufpool_cur *cur, size_t min, size_t *room)
{
	if (cur->blk != NULL && bufpool_refs(cur->blk) == 1)
		cur->off = 0;
	if (cur->blk != NULL && BUFPOOL_BLOCK - cur->off < min)
		bufpool_cur_free(cur);
	if (cur->blk == NULL) {
		if ((cur->blk = bufpool_get()) == NULL)
			return NULL;
		cur->off = 0;
	}
	*room = BUFPOOL_BLOCK - cur->off;
	return (char *)cur->blk + cur->off;
}

/*
 * Appends the n bytes just read at the cursor to buf.  A small read
 * while no span of the block is held (a chat request, a streamed
 * token) is copied, and the block goes back at once, so that a
 * connection that waits holds none; a larger one is handed over by
 * reference.
 */
int
bufpool_cur_keep(struct bufpool_cur *cur, struct evbuffer *buf, size_t n,
    size_t copy_max)
{
	int	 rv;

	if (n <= copy_max && bufpool_refs(cur->blk) == 1) {
		rv = evbuffer_add(buf, (char *)cur->blk + cur->off, n);
		bufpool_cur_free(cur);
		return rv;
	}
	if (bufpool_add(buf, cur->blk, cur->off, n) == -1)
		return -1;
	cur->off += n;
	return 0;
}

/* The block goes back if no span of it is held any more. */
void
bufpool_cur_trim(struct bufpool_cur *cur)
{
	if (cur->blk != NULL && bufpool_refs(cur->blk) == 1)
		bufpool_cur_free(cur);
}

/* Drops the cursor's reference; spans still held keep the block. */
void
bufpool_cur_free(struct bufpool_cur *cur)
{
	bufpool_put(cur->blk);
	cur->blk = NULL;
	cur->off = 0;
}

void
bufpool_stats(struct bufpool_stats *st)
{
	st->out = nout;
	st->idle = nidle;
	st->made = nmade;
}

/* Frees the idle blocks (a process that stops serving, or a test). */
void
bufpool_trim(void)
{
	struct block	*b;

	while ((b = idle) != NULL) {
		idle = b->next;
		free(b);
		nidle--;
	}
}
