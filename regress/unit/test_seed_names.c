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
 * test_seed_names.c: the names the request's files get in the sandbox,
 * each its own and under SBX_NAME_MAX however long the stored names.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "t.h"
#include "fe_model.h"

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

static void
clear(void)
{
	struct fref	*f;

	while ((f = TAILQ_FIRST(&files)) != NULL) {
		TAILQ_REMOVE(&files, f, entry);
		free(f);
	}
}

/* count files of name; seed_names; whether each name fits and differs. */
static int
distinct(const char *name, int count, int *fit)
{
	struct fref	*f, *g;
	char		 id[16];
	int		 i;

	clear();
	for (i = 0; i < count; i++) {
		snprintf(id, sizeof(id), "file-%d", i);
		add(id, name);
	}
	seed_names(&files);
	*fit = 1;
	TAILQ_FOREACH(f, &files, entry) {
		if (strlen(f->seed_name) >= SBX_NAME_MAX ||
		    f->seed_name[0] == '\0')
			*fit = 0;
		for (g = TAILQ_NEXT(f, entry); g != NULL;
		    g = TAILQ_NEXT(g, entry))
			if (strcmp(f->seed_name, g->seed_name) == 0)
				return 0;
	}
	return 1;
}

/* Whether s is UTF-8 through and through. */
static int
utf8_valid(const char *s)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 need, i;

	while (*p != '\0') {
		if (*p < 0x80) {
			p++;
			continue;
		}
		if (*p >= 0xc2 && *p <= 0xdf)
			need = 1;
		else if (*p >= 0xe0 && *p <= 0xef)
			need = 2;
		else if (*p >= 0xf0 && *p <= 0xf4)
			need = 3;
		else
			return 0;
		for (i = 1; i <= need; i++)
			if ((p[i] & 0xc0) != 0x80)
				return 0;
		p += need + 1;
	}
	return 1;
}

static int
all_utf8(void)
{
	struct fref	*f;

	TAILQ_FOREACH(f, &files, entry)
		if (!utf8_valid(f->seed_name))
			return 0;
	return 1;
}

static char *
repeat(char *out, const char *head, const char *unit, int times)
{
	int	 i;

	strcpy(out, head);
	for (i = 0; i < times; i++)
		strcat(out, unit);
	return out;
}

static void
test_plain(void)
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
	clear();
	a = add("file-1", "a.txt");
	b = add("file-2", "a-2.txt");
	c = add("file-3", "a.txt");
	d = add("file-4", "a-3.txt");
	e = add("file-5", "a.txt");
	seed_names(&files);
	T_OK(strcmp(c->seed_name, "a-3.txt") == 0 &&
	    strcmp(d->seed_name, "a-3-2.txt") == 0 &&
	    strcmp(e->seed_name, "a-4.txt") == 0, "uploads named like the "
	    "names given are passed over (%s %s %s)", c->seed_name,
	    d->seed_name, e->seed_name);
}

/* Issue 18: names with no room for "-n" once looped for good. */
static void
test_long(void)
{
	struct fref	*a, *b;
	char		 name[1100], want[300];
	struct timespec	 t0, t1;
	double		 took;
	int		 fit;

	clear();
	repeat(name, "x.", "a", 253);	/* 255 bytes */
	a = add("file-1", name);
	b = add("file-2", name);
	seed_names(&files);
	T_EQ_STR(a->seed_name, name, "255 bytes: the first keeps it");
	T_EQ_STR(b->seed_name, strcat(repeat(want, "x.", "a", 251), "-2"),
	    "the second: cut for -2 at the end");
	repeat(name, "x.", "a", 252);	/* 254 bytes */
	T_OK(distinct(name, 10, &fit) && fit, "ten of a 254-byte name: "
	    "ten names, each under 256");
	T_EQ_STR(TAILQ_LAST(&files, fref_list)->seed_name,
	    strcat(repeat(want, "x.", "a", 250), "-10"), "the tenth: -10");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	repeat(name, "x.", "a", 253);
	T_OK(distinct(name, 100, &fit) && fit, "as many as a request may "
	    "name (100) of a 255-byte name");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	took = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	T_OK(took < 1.0, "... in %.3f s", took);
	repeat(name, "", "b", 1000);	/* cut to 255 by its last segment */
	T_OK(distinct(name, 12, &fit) && fit, "a 1000-byte name, twelve "
	    "times");
	repeat(name, "x.", "a", 1000);	/* an extension over the limit */
	T_OK(distinct(name, 12, &fit) && fit, "an extension of 1001 bytes, "
	    "twelve times");
	repeat(name, "", "\xc3\xa9", 127);	/* 254 bytes, no extension */
	T_OK(distinct(name, 12, &fit) && fit && all_utf8(), "a name of "
	    "two-byte characters, no extension, twelve times: valid UTF-8");
	repeat(name, "", "\xe2\x82\xac", 84);
	strcat(name, ".csv");		/* 256 bytes: cut inside a character */
	T_OK(distinct(name, 12, &fit) && fit && all_utf8(), "a stem of "
	    "three-byte characters, twelve times: valid UTF-8");
	repeat(name, "dir/", "\xf0\x9f\x98\x80", 63);
	strcat(name, ".tar.gz");
	T_OK(distinct(name, 12, &fit) && fit && all_utf8(), "four-byte "
	    "characters before .tar.gz, twelve times: valid UTF-8");
}

int
main(void)
{
	/* The old loop never ended: fail, rather than hang the suite. */
	alarm(30);
	test_plain();
	test_long();
	clear();
	return t_done();
}
