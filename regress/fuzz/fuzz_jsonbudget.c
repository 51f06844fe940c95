/* fuzz-sources: lib/jsontext.c */
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
 * fuzz_jsonbudget.c: the budget scan of a request body
 * (json_text_measure) reads no byte past len, and never counts less
 * than json-c builds: whenever the text parses, the values json-c made
 * (member names included) and their nesting are at most what the scan
 * said, and a budget the scan found the text within lets it parse
 * the same.
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "jsontext.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define DEPTH	32

/* Values in o, member names included; *depth the deepest nesting. */
static int64_t
count(struct json_object *o, int level, int *depth)
{
	struct json_object_iterator	 it, end;
	int64_t				 n = 1;
	size_t				 i;

	switch (json_object_get_type(o)) {
	case json_type_array:
		if (level + 1 > *depth)
			*depth = level + 1;
		for (i = 0; i < json_object_array_length(o); i++)
			n += count(json_object_array_get_idx(o, i), level + 1,
			    depth);
		return n;
	case json_type_object:
		if (level + 1 > *depth)
			*depth = level + 1;
		it = json_object_iter_begin(o);
		end = json_object_iter_end(o);
		for (; !json_object_iter_equal(&it, &end);
		    json_object_iter_next(&it))
			n += 1 + count(json_object_iter_peek_value(&it),
			    level + 1, depth);
		return n;
	default:
		return 1;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_budget	 b = { 0, 0, DEPTH };
	struct json_text_size	 sz;
	enum json_text_status	 st, st2;
	struct json_object	*o, *o2;
	char			*s;
	int			 depth = 0;

	/* A copy of exactly size bytes, so that ASan sees any overread. */
	if ((s = malloc(size ? size : 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	st = json_text_measure(s, size, &b, &sz);
	o = json_text_parse(s, size, DEPTH);
	if (o != NULL) {
		if (st != JSON_TEXT_OK || count(o, 0, &depth) > sz.values ||
		    depth > sz.depth)
			abort();
		/* Within a budget of exactly what it measured: it parses. */
		b.max_values = sz.values;
		b.max_bytes = sz.bytes;
		if ((o2 = json_text_parse_budget(s, size, &b, &st2)) == NULL ||
		    st2 != JSON_TEXT_OK)
			abort();
		json_object_put(o2);
		/* One value less and it is refused unbuilt. */
		b.max_values = sz.values - 1;
		if (sz.values > 1 && (json_text_parse_budget(s, size, &b,
		    &st2) != NULL || st2 != JSON_TEXT_VALUES))
			abort();
	}
	json_object_put(o);
	free(s);
	return 0;
}
