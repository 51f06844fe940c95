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
 * jsontext.h: JSON texts as RFC 8259 defines them.  json-c on its own
 * also takes NaN, Infinity and numbers too large for a double (read as
 * infinities); none of those can be written back as JSON, so a value
 * holding one would be forwarded as text no peer can read.
 */
#ifndef DEPOT_JSONTEXT_H
#define DEPOT_JSONTEXT_H

#include <stddef.h>

struct json_object;

/*
 * The value len bytes at s hold, nested at most depth deep, with only
 * blanks after it; NULL for anything else, non-finite numbers included.
 */
struct json_object	*json_text_parse(const char *s, size_t len, int depth);
/* 1 when no number in o, however deep, is NaN or infinite. */
int			 json_text_finite(struct json_object *o);

#endif
