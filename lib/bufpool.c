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
 * A block is taken for one read, and either handed to the connection's
 * input evbuffer by reference (bufpool_add: the evbuffer returns it
 * when the parser has drained its last byte) or, when the read was
 * small, copied out and put back at once, so that an idle connection
 * never pins a block.  The list keeps BUFPOOL_KEEP blocks; more come
 * back only while many connections hold unparsed input at once, and
 * those are freed.  The HTTP layer runs on one event loop, so the list
 * takes no lock: it is not for threads.
 */
#include <stdlib.h>

#include <event2/buffer.h>

#include "bufpool.h"

struct block {
	struct block	*next;
};

static struct block	*idle;
static size_t		 nidle, nout, nmade;

void *
bufpool_get(void)
{
	struct block	*b;

	if ((b = idle) != NULL) {
		idle = b->next;
		nidle--;
	} else {
		if ((b = malloc(BUFPOOL_BLOCK)) == NULL)
			return NULL;
		nmade++;
	}
	nout++;
	return b;
}

void
bufpool_put(void *p)
{
	struct block	*b = p;

	if (b == NULL)
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

static void
bufpool_cleanup(const void *data, size_t len, void *block)
{
	bufpool_put(block);
}

/*
 * Appends the first len bytes of block to buf without a copy; buf owns
 * the block from here, on failure as well.
 */
int
bufpool_add(struct evbuffer *buf, void *block, size_t len)
{
	if (evbuffer_add_reference(buf, block, len, bufpool_cleanup,
	    block) == -1) {
		bufpool_put(block);
		return -1;
	}
	return 0;
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
