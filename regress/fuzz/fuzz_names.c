/* fuzz-sources: cmd/depotd/fe_refs_rewrite.c lib/names.c lib/log.c */
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
 * fuzz_names.c: lists of filenames made unique, as seed_names does for
 * a request's files and broker_output.c for a run's outputs.  After the
 * first byte, the input is the names, one a line; a short line repeats
 * the name before it (the cases that once looped are many files of one
 * long name), a line starting with '*' repeats the one before, times
 * its second byte.  The first byte picks the room (SBX_NAME_MAX, or
 * NAME_DEDUPE_MIN and up) and whether paths keep their directories.
 * Every name given must fit, be valid UTF-8 when its source was,
 * differ from all those before it, and be found within the bound
 * name_unique promises (its taken() is counted); seed_names, on the
 * same list, must give names that fit and differ too.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "fe_model.h"

#define FUZZ_NAMES	100	/* REFS_MAX: what a request may name */
#define FUZZ_REPEAT	(FUZZ_NAMES - 1)

struct list {
	char	 src[FUZZ_NAMES][FILENAME_MAX_BYTES];
	char	 base[FUZZ_NAMES][SBX_NAME_MAX];
	char	 out[FUZZ_NAMES][SBX_NAME_MAX];
	size_t	 n;
	size_t	 upto;		/* taken(): out[0 .. upto) */
	size_t	 asked;
};

static struct list	 l;
static struct fref	 frefs[FUZZ_NAMES];

static int
taken(const char *name, void *arg)
{
	struct list	*t = arg;
	size_t		 i;

	t->asked++;
	for (i = 0; i < t->upto; i++)
		if (strcmp(t->out[i], name) == 0)
			return 1;
	return 0;
}

/* Strict UTF-8: no overlongs, no surrogates, nothing past U+10FFFF. */
static int
utf8_valid(const char *s)
{
	const unsigned char	*p = (const unsigned char *)s;
	unsigned char		 lo, hi;
	size_t			 need, i;

	while (*p != '\0') {
		lo = 0x80;
		hi = 0xbf;
		if (*p < 0x80) {
			p++;
			continue;
		} else if (*p >= 0xc2 && *p <= 0xdf)
			need = 1;
		else if (*p >= 0xe0 && *p <= 0xef) {
			need = 2;
			if (*p == 0xe0)
				lo = 0xa0;
			else if (*p == 0xed)
				hi = 0x9f;
		} else if (*p >= 0xf0 && *p <= 0xf4) {
			need = 3;
			if (*p == 0xf0)
				lo = 0x90;
			else if (*p == 0xf4)
				hi = 0x8f;
		} else
			return 0;
		if (p[1] < lo || p[1] > hi)
			return 0;
		for (i = 2; i <= need; i++)
			if ((p[i] & 0xc0) != 0x80)
				return 0;
		p += need + 1;
	}
	return 1;
}

/* Appends src to the list, n times; 0 when the list is full. */
static int
push(const char *src, size_t len, size_t times)
{
	while (times-- > 0) {
		if (l.n == FUZZ_NAMES)
			return 0;
		if (len >= sizeof(l.src[0]))
			len = sizeof(l.src[0]) - 1;
		memcpy(l.src[l.n], src, len);
		l.src[l.n][len] = '\0';
		l.n++;
	}
	return 1;
}

static void
split(const uint8_t *p, size_t size)
{
	const uint8_t	*end = p + size, *nl;
	size_t		 len;

	while (p < end) {
		if ((nl = memchr(p, '\n', end - p)) == NULL)
			nl = end;
		len = nl - p;
		if (memchr(p, '\0', len) != NULL)
			len = strnlen((const char *)p, len);
		if (len >= 1 && p[0] == '*' && l.n > 0) {
			if (!push(l.src[l.n - 1], strlen(l.src[l.n - 1]),
			    len > 1 ? p[1] % FUZZ_REPEAT : 1))
				return;
		} else if (len < 2 && l.n > 0) {
			if (!push(l.src[l.n - 1], strlen(l.src[l.n - 1]), 1))
				return;
		} else if (!push((const char *)p, len, 1))
			return;
		p = nl + 1;
	}
}

/* name_unique over the list, as seed_names calls it, into room bytes. */
static void
unique_all(size_t room, int paths)
{
	size_t	 i, j, k;
	int	 same, n;

	for (i = 0; i < l.n; i++) {
		if (paths) {	/* cut as names.c cuts, at a character */
			k = strlen(l.src[i]);
			if (k >= room)
				k = utf8_cut(l.src[i], room - 1);
			memcpy(l.base[i], l.src[i], k);
			l.base[i][k] = '\0';
		} else
			name_last_segment(l.src[i], l.base[i], room);
		if (utf8_valid(l.src[i]) && !utf8_valid(l.base[i]))
			abort();
		for (same = 0, j = 0; j < i; j++)
			same += strcmp(l.base[j], l.base[i]) == 0;
		l.upto = i;
		l.asked = 0;
		n = name_unique(l.base[i], same + 1, i, taken, &l, l.out[i],
		    room);
		/* Termination: at most i + 2 names looked at. */
		if (n == -1 || l.asked > i + 2)
			abort();
		if (strlen(l.out[i]) >= room)
			abort();
		if (utf8_valid(l.base[i]) && !utf8_valid(l.out[i]))
			abort();
		for (j = 0; j < i; j++)
			if (strcmp(l.out[j], l.out[i]) == 0)
				abort();
	}
}

/* seed_names itself, on the same names. */
static void
seed_all(void)
{
	struct fref_list	 list;
	size_t			 i, j;

	TAILQ_INIT(&list);
	for (i = 0; i < l.n; i++) {
		memset(&frefs[i], 0, sizeof(frefs[i]));
		strlcpy(frefs[i].rec.filename, l.src[i],
		    sizeof(frefs[i].rec.filename));
		TAILQ_INSERT_TAIL(&list, &frefs[i], entry);
	}
	seed_names(&list);
	for (i = 0; i < l.n; i++) {
		if (strlen(frefs[i].seed_name) >= SBX_NAME_MAX ||
		    frefs[i].seed_name[0] == '\0' ||
		    strchr(frefs[i].seed_name, '/') != NULL)
			abort();
		if (utf8_valid(l.src[i]) && !utf8_valid(frefs[i].seed_name))
			abort();
		for (j = 0; j < i; j++)
			if (strcmp(frefs[j].seed_name,
			    frefs[i].seed_name) == 0)
				abort();
	}
}

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t	 room;

	if (size < 2)
		return 0;
	/* High bit: a sandbox name's room; else NAME_DEDUPE_MIN and up. */
	room = data[0] & 0x80 ? SBX_NAME_MAX :
	    NAME_DEDUPE_MIN + (data[0] & 0x3f);
	l.n = 0;
	split(data + 1, size - 1);
	unique_all(room, data[0] & 0x40);
	seed_all();
	return 0;
}
