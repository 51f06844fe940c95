/* fuzz-sources: cmd/depotd/fe_refs_find.c cmd/depotd/fe_refs_rewrite.c lib/names.c lib/log.c */
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
 * fuzz_refs.c: request bodies as callers send them, walked for file
 * references in each wire, every reference then rewritten (natively,
 * or as text, by the input's choice) as fe_refs.c would.  Each site
 * must point at its block, hold a non-empty id, and survive the
 * rewrites of the sites before it; the result must serialise.  The
 * first byte picks the wire and the rewrites.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "fe_refs.h"

#define FUZZ_SITES	64

struct sites {
	struct ref_site	 s[FUZZ_SITES];
	int		 n;
};

static int
keep(void *arg, const struct ref_site *s)
{
	struct sites	*st = arg;

	if (json_object_array_get_idx(s->array, s->index) != s->block ||
	    s->file_id == NULL || s->file_id[0] == '\0')
		abort();
	st->s[st->n++] = *s;
	return st->n == FUZZ_SITES;
}

static void
rewrite_all(enum wire w, struct sites *st, unsigned mode)
{
	static const char *mimes[] = { "image/png", "application/pdf" };
	struct file_rec	 rec;
	int		 i;

	memset(&rec, 0, sizeof(rec));
	strlcpy(rec.filename, "dir/a.bin", sizeof(rec.filename));
	for (i = 0; i < st->n; i++) {
		/* Earlier rewrites must have left this site in place. */
		if (json_object_array_get_idx(st->s[i].array,
		    st->s[i].index) != st->s[i].block)
			abort();
		strlcpy(rec.mime_type, mimes[st->s[i].kind != REF_IMAGE],
		    sizeof(rec.mime_type));
		if ((mode >> (i % 8)) & 1) {
			if (refs_rewrite_native(w, &st->s[i], &rec, "PH") != 0)
				abort();
		} else if (refs_rewrite_text(w, &st->s[i], "t", 1) != 0)
			abort();
	}
}

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_tokener	*tok;
	struct json_object	*o;
	struct sites		 st;
	enum wire		 w;
	char			*s;
	size_t			 len;

	if (size < 2)
		return 0;
	w = data[0] % 3;
	if ((tok = json_tokener_new_ex(JSON_DEPTH_MAX)) == NULL)
		return 0;
	o = json_tokener_parse_ex(tok, (const char *)data + 2, size - 2);
	json_tokener_free(tok);
	if (o == NULL)
		return 0;
	memset(&st, 0, sizeof(st));
	refs_find(w, o, keep, &st);
	rewrite_all(w, &st, data[1]);
	if (json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN) == NULL)
		abort();
	/* The text wrapper over the same bytes: valid UTF-8 or U+FFFD. */
	if ((s = refs_attached_text("n", (const char *)data, size,
	    data[0] & 8, &len)) == NULL)
		abort();
	free(s);
	json_object_put(o);
	return 0;
}
