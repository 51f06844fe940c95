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
 * calltab.c: calls in flight by id.  A red-black tree, because a
 * frontend under load has hundreds of calls out to the storage helper
 * and a list made every answer a walk.
 */
#include <sys/tree.h>

#include <stdint.h>

#include "calltab.h"

static int
call_cmp(struct call_entry *a, struct call_entry *b)
{
	return a->id < b->id ? -1 : a->id > b->id;
}

/* libbsd's tree.h marks its functions __unused, which glibc lacks. */
#ifndef __unused
#define __unused	__attribute__((__unused__))
#define CALLTAB_UNUSED_DEFINED
#endif
RB_GENERATE_STATIC(call_tree, call_entry, node, call_cmp)
#ifdef CALLTAB_UNUSED_DEFINED
#undef __unused
#endif

uint32_t
calltab_add(struct calltab *t, struct call_entry *e)
{
	/*
	 * Ids wrap after 2^32 calls; one still in flight from the last
	 * lap keeps its id, and 0 means "no call" on every channel.
	 */
	do {
		e->id = t->next_id++;
	} while (e->id == 0 || calltab_find(t, e->id) != NULL);
	RB_INSERT(call_tree, &t->tree, e);
	t->count++;
	return e->id;
}

struct call_entry *
calltab_find(struct calltab *t, uint32_t id)
{
	struct call_entry	 key;

	if (id == 0)
		return NULL;
	key.id = id;
	return RB_FIND(call_tree, &t->tree, &key);
}

void
calltab_remove(struct calltab *t, struct call_entry *e)
{
	RB_REMOVE(call_tree, &t->tree, e);
	t->count--;
}

struct call_entry *
calltab_take_any(struct calltab *t)
{
	struct call_entry	*e;

	if ((e = RB_ROOT(&t->tree)) != NULL)
		calltab_remove(t, e);
	return e;
}

struct call_entry *
calltab_first(struct calltab *t)
{
	return RB_MIN(call_tree, &t->tree);
}

struct call_entry *
calltab_next(struct calltab *t, struct call_entry *e)
{
	return RB_NEXT(call_tree, &t->tree, e);
}

size_t
calltab_count(const struct calltab *t)
{
	return t->count;
}
