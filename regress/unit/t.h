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
 * t.h: the smallest test harness that works.  Each check prints one
 * TAP-style line; t_done() prints the totals and gives the exit status.
 */
#ifndef DEPOT_T_H
#define DEPOT_T_H

#include <stdio.h>
#include <string.h>

static int t_passed, t_failed;

#define T_OK(cond, ...) do {						\
	if (cond) {							\
		t_passed++;						\
		printf("ok - ");					\
	} else {							\
		t_failed++;						\
		printf("not ok - %s:%d: ", __FILE__, __LINE__);		\
	}								\
	printf(__VA_ARGS__);						\
	printf("\n");							\
	fflush(stdout);							\
} while (0)

#define T_EQ_INT(a, b, what) do {					\
	long long t_a = (long long)(a), t_b = (long long)(b);		\
	T_OK(t_a == t_b, "%s (%lld == %lld)", what, t_a, t_b);		\
} while (0)

#define T_EQ_STR(a, b, what) do {					\
	const char *t_a = (a), *t_b = (b);				\
	T_OK(t_a != NULL && t_b != NULL && strcmp(t_a, t_b) == 0,	\
	    "%s (\"%s\" == \"%s\")", what, t_a ? t_a : "(null)",	\
	    t_b ? t_b : "(null)");					\
} while (0)

static inline int
t_done(void)
{
	printf("%d passed, %d failed\n", t_passed, t_failed);
	return t_failed != 0;
}

#endif
