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
 * calltab.h: the calls a process has in flight to one peer, by the id
 * that rides in the imsg header's peer id.  Each call embeds a struct
 * call_entry; the table hands out ids that are never 0 and never those
 * of a call still in flight, finds a call by the id of its answer,
 * visits every call, and gives up every call when the peer goes away.
 */
#ifndef DEPOT_CALLTAB_H
#define DEPOT_CALLTAB_H

#include <stddef.h>
#include <stdint.h>

#include <sys/tree.h>

struct call_entry {
	RB_ENTRY(call_entry)	 node;
	uint32_t		 id;
};

RB_HEAD(call_tree, call_entry);

struct calltab {
	struct call_tree	 tree;
	uint32_t		 next_id;
	size_t			 count;
};

#define CALLTAB_INITIALIZER(t)	{ RB_INITIALIZER(&(t).tree), 1, 0 }

/* The call that holds entry e, whose member is named m. */
#define CALL_OF(e, type, m)						\
	((e) == NULL ? NULL :						\
	    (type *)(void *)((char *)(e) - offsetof(type, m)))

/* Gives e a fresh id and enters it; returns the id. */
uint32_t		 calltab_add(struct calltab *, struct call_entry *);
struct call_entry	*calltab_find(struct calltab *, uint32_t);
void			 calltab_remove(struct calltab *, struct call_entry *);
/* Removes and returns any one call, or NULL: for giving up every call. */
struct call_entry	*calltab_take_any(struct calltab *);
/* Every call in order of id; the loop must not remove any. */
struct call_entry	*calltab_first(struct calltab *);
struct call_entry	*calltab_next(struct calltab *, struct call_entry *);
size_t			 calltab_count(const struct calltab *);

#endif /* DEPOT_CALLTAB_H */
