/* fuzz-sources: lib/multipart.c lib/names.c */
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
 * fuzz_multipart.c: the multipart parser on arbitrary bodies.  The
 * first input byte decides how the rest is cut into feeds, so that
 * every split of the same body is explored; the callbacks check that
 * the parser keeps its promises.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "multipart.h"
#include "names.h"

#define CONTENT_TYPE	"multipart/form-data; boundary=fuzzbound"

struct tally {
	size_t	 data;		/* part bytes passed on */
	unsigned checksum;	/* keeps the byte reads from being dropped */
	int	 begun;
	int	 ended;
	int	 open;
};

/* The download header built from the name stays one safe line. */
static void
check_header_value(const char *filename)
{
	/* Room for the ASCII form plus every byte as "%XX". */
	char		 cd[4 * sizeof(((struct multipart_part *)0)->filename)
			    + 64];
	const char	*c;
	int		 quotes = 0;

	if (content_disposition(filename, cd, sizeof(cd)) != 0)
		abort();
	for (c = cd; *c != '\0'; c++) {
		if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e ||
		    *c == '\\')
			abort();
		quotes += *c == '"';
	}
	if (quotes != 2)
		abort();
}

static int
on_begin(void *arg, const struct multipart_part *p)
{
	struct tally	*t = arg;
	const char	*c;

	if (t->open)
		abort();	/* a part began inside another */
	/* Every string is terminated within its buffer... */
	if (memchr(p->name, '\0', sizeof(p->name)) == NULL ||
	    memchr(p->filename, '\0', sizeof(p->filename)) == NULL ||
	    memchr(p->content_type, '\0', sizeof(p->content_type)) == NULL)
		abort();
	/* ...and no control character survives in a filename. */
	for (c = p->filename; *c != '\0'; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			abort();
	if (!p->has_filename && p->filename[0] != '\0')
		abort();
	check_header_value(p->filename);
	t->begun++;
	t->open = 1;
	return 0;
}

static int
on_data(void *arg, const void *buf, size_t len)
{
	struct tally	*t = arg;
	unsigned	 sum = 0;
	size_t		 i;

	if (!t->open || len == 0)
		abort();
	/* Read every byte, so that ASan catches a pointer out of bounds. */
	for (i = 0; i < len; i++)
		sum += ((const uint8_t *)buf)[i];
	t->checksum ^= sum;
	t->data += len;
	return 0;
}

static int
on_end(void *arg)
{
	struct tally	*t = arg;

	if (!t->open)
		abort();
	t->ended++;
	t->open = 0;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct multipart_cb	 cb = { on_begin, on_data, on_end };
	struct tally		 t = { 0, 0, 0, 0, 0 };
	struct multipart	*mp;
	const char		*why;
	size_t			 off = 1, n, step;
	uint32_t		 seed;
	int			 rv = 0, finished;

	if (size == 0)
		return 0;
	if ((mp = multipart_new(CONTENT_TYPE, &cb, &t, &why)) == NULL)
		abort();
	/* 0: whole; 1..127: fixed pieces; 128..255: pseudo-random. */
	step = data[0] & 0x7f;
	seed = data[0];
	while (off < size && rv == 0) {
		if (data[0] == 0)
			n = size - off;
		else if (data[0] < 128)
			n = step;
		else {
			seed = seed * 1103515245 + 12345;
			n = 1 + (seed >> 16) % 64;
		}
		if (n > size - off)
			n = size - off;
		rv = multipart_feed(mp, data + off, n);
		off += n;
	}
	finished = rv == 0 && multipart_finish(mp) == 0;
	if (t.data > size - 1)
		abort();	/* more bytes out than went in */
	if (t.ended > t.begun || t.begun - t.ended > 1)
		abort();
	if (finished && (t.open || multipart_error(mp) != NULL))
		abort();
	if (!finished && multipart_error(mp) == NULL)
		abort();
	multipart_free(mp);
	return 0;
}
