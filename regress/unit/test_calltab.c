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
 * test_calltab.c: the table of calls in flight: unique ids, never 0,
 * found by id until removed, visited in order, and every call given up
 * at the end.
 */
#include <stdint.h>
#include <stdlib.h>

#include "t.h"
#include "calltab.h"

struct call {
	int			 tag;
	struct call_entry	 ce;
};

static void
test_ids(void)
{
	struct calltab	 t = CALLTAB_INITIALIZER(t);
	struct call	 c[100];
	int		 i, distinct = 1, found = 1;

	for (i = 0; i < 100; i++) {
		c[i].tag = i;
		calltab_add(&t, &c[i].ce);
	}
	T_EQ_INT(calltab_count(&t), 100, "100 calls in flight");
	for (i = 1; i < 100; i++)
		if (c[i].ce.id == c[i - 1].ce.id || c[i].ce.id == 0)
			distinct = 0;
	T_OK(distinct, "ids are distinct and never 0");
	for (i = 0; i < 100; i++)
		if (CALL_OF(calltab_find(&t, c[i].ce.id), struct call,
		    ce) != &c[i])
			found = 0;
	T_OK(found, "each call found by its id");
	T_OK(calltab_find(&t, 0) == NULL, "id 0 is no call");
	calltab_remove(&t, &c[50].ce);
	T_OK(calltab_find(&t, c[50].ce.id) == NULL,
	    "a removed call is not found");
	T_OK(CALL_OF(calltab_find(&t, c[51].ce.id), struct call, ce) == &c[51],
	    "its neighbour still is");
	T_EQ_INT(calltab_count(&t), 99, "99 left");
	for (i = 0; calltab_take_any(&t) != NULL; i++)
		;
	T_EQ_INT(i, 99, "take_any gives up every call once");
	T_EQ_INT(calltab_count(&t), 0, "none left");
}

static void
test_wrap(void)
{
	struct calltab	 t = CALLTAB_INITIALIZER(t);
	struct call	 a, b, c;

	t.next_id = UINT32_MAX;
	calltab_add(&t, &a.ce);
	T_EQ_INT(a.ce.id, UINT32_MAX, "the last id of a lap");
	calltab_add(&t, &b.ce);
	T_EQ_INT(b.ce.id, 1, "the next lap skips 0");
	t.next_id = UINT32_MAX;
	calltab_add(&t, &c.ce);
	T_EQ_INT(c.ce.id, 2, "ids still in flight are skipped");
}

static void
test_walk(void)
{
	struct calltab		 t = CALLTAB_INITIALIZER(t);
	struct call		 c[10];
	struct call_entry	*e;
	uint32_t		 last = 0;
	int			 i, n = 0, sum = 0, ordered = 1;

	T_OK(calltab_first(&t) == NULL, "an empty table has no first call");
	for (i = 0; i < 10; i++) {
		c[i].tag = i;
		calltab_add(&t, &c[i].ce);
	}
	calltab_remove(&t, &c[3].ce);
	for (e = calltab_first(&t); e != NULL; e = calltab_next(&t, e)) {
		if (e->id <= last)
			ordered = 0;
		last = e->id;
		sum += CALL_OF(e, struct call, ce)->tag;
		n++;
	}
	T_EQ_INT(n, 9, "the walk visits every call in flight");
	T_EQ_INT(sum, 45 - 3, "each once, not the removed one");
	T_OK(ordered, "in order of id");
}

int
main(void)
{
	test_ids();
	test_wrap();
	test_walk();
	return t_done();
}
