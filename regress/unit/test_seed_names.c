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
 * test_seed_names.c: the names the request's files get in the sandbox.
 */
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "model.h"

static struct fref_list	 files = TAILQ_HEAD_INITIALIZER(files);

static struct fref *
add(const char *id, const char *filename)
{
	struct fref	*f;

	if ((f = calloc(1, sizeof(*f))) == NULL)
		exit(1);
	strlcpy(f->rec.id, id, sizeof(f->rec.id));
	strlcpy(f->rec.filename, filename, sizeof(f->rec.filename));
	TAILQ_INSERT_TAIL(&files, f, entry);
	return f;
}

int
main(void)
{
	struct fref	*a, *b, *c, *d, *e, *g;

	a = add("file-1", "data.csv");
	b = add("file-2", "reports/2026/data.csv");
	c = add("file-3", "data.csv");
	d = add("file-4", "");
	e = add("file-5", "archive.tar.gz");
	g = add("file-6", "..");
	seed_names(&files);
	T_EQ_STR(a->seed_name, "data.csv", "the first keeps its name");
	T_EQ_STR(b->seed_name, "data-2.csv", "a clash of last segments: -2");
	T_EQ_STR(c->seed_name, "data-3.csv", "a third: -3");
	T_EQ_STR(d->seed_name, "file", "no name: \"file\"");
	T_EQ_STR(e->seed_name, "archive.tar.gz", "no clash, no change");
	T_OK(strcmp(g->seed_name, "..") != 0 && strchr(g->seed_name, '/') ==
	    NULL, "a name that is a path step is never used (%s)",
	    g->seed_name);
	return t_done();
}
