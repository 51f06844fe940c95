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
#include <stdint.h>

struct json_object;

/* The nesting a peer's text may have: a request, an answer, an event. */
#define JSON_TEXT_DEPTH_MAX	64

/*
 * What building a text's tree would take, found by a scan of the bytes
 * before json-c builds anything: the values (object member names
 * included), the deepest nesting, and an estimate of the bytes json-c
 * would allocate for the tree, from its cost per kind of value (an
 * empty object about 800 bytes, an array 160, a string 110 and its
 * length, a number 80: measured with json-c 0.16, and rounded up).
 * Over a budget the text is refused unbuilt, so that the memory a
 * request can take does not depend on its shape.  The scan validates
 * nothing; it only never counts less than json-c would build.
 */
struct json_budget {
	int64_t	 max_values;	/* 0: any number */
	int64_t	 max_bytes;	/* the estimate's bound; 0: any */
	int	 depth;		/* nesting */
};

enum json_text_status {
	JSON_TEXT_OK,
	JSON_TEXT_INVALID,	/* not one JSON value, or not finite */
	JSON_TEXT_DEEP,		/* nests deeper than depth */
	JSON_TEXT_VALUES,	/* more than max_values */
	JSON_TEXT_BYTES,	/* would take more than max_bytes */
	JSON_TEXT_NOMEM		/* within them, but malloc failed */
};

struct json_text_size {
	int64_t	 values;
	int64_t	 bytes;
	int	 depth;
};

/*
 * The value len bytes at s hold, nested at most depth deep, with only
 * blanks after it; NULL for anything else, non-finite numbers included.
 */
struct json_object	*json_text_parse(const char *s, size_t len, int depth);
/* json_text_parse nested at most JSON_TEXT_DEPTH_MAX deep. */
struct json_object	*json_text_parse_default(const char *s, size_t len);
/*
 * Measure len bytes at s into sz, stopping as soon as a limit of b is
 * passed; JSON_TEXT_OK or the limit passed.  O(len), allocates nothing.
 */
enum json_text_status	 json_text_measure(const char *s, size_t len,
			    const struct json_budget *b,
			    struct json_text_size *sz);
/*
 * json_text_parse within a budget: NULL with *st the reason, or the
 * value with *st JSON_TEXT_OK.
 */
struct json_object	*json_text_parse_budget(const char *s, size_t len,
			    const struct json_budget *b,
			    enum json_text_status *st);
/* 1 when no number in o, however deep, is NaN or infinite. */
int			 json_text_finite(struct json_object *o);

#endif
