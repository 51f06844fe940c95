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
 * fe_extract_none.c: fe_extract as it behaves without an extract
 * child, so that fe_refs.c links before fe_extract.c (branch extract)
 * is merged.  Weak: the real one wins.  Delete this file then.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <unistd.h>

#include "model.h"

__attribute__((weak)) uint32_t
fe_extract(int pdf_fd, int pages, int timeout, void (*cb)(void *, int),
    void *arg)
{
	close(pdf_fd);
	cb(arg, -1);
	return 0;
}

__attribute__((weak)) void
fe_extract_cancel(uint32_t id)
{
}
