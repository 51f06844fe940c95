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
 * jsontext.c: strict JSON reading for every text a peer sends: request
 * bodies, upstream answers and stream events, tool-call arguments.
 */
#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include <json-c/json.h>

#include "jsontext.h"

int
json_text_finite(struct json_object *o)
{
	struct json_object_iterator	 it, end;
	size_t				 i;

	switch (json_object_get_type(o)) {
	case json_type_double:
		return isfinite(json_object_get_double(o));
	case json_type_array:
		for (i = 0; i < json_object_array_length(o); i++)
			if (!json_text_finite(json_object_array_get_idx(o, i)))
				return 0;
		return 1;
	case json_type_object:
		it = json_object_iter_begin(o);
		end = json_object_iter_end(o);
		for (; !json_object_iter_equal(&it, &end);
		    json_object_iter_next(&it))
			if (!json_text_finite(json_object_iter_peek_value(&it)))
				return 0;
		return 1;
	default:
		return 1;
	}
}

/* s need not end in a NUL: look at len bytes, no more. */
static int
only_blanks(const char *s, size_t len)
{
	size_t	 i;

	for (i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' &&
		    s[i] != '\n')
			return 0;
	return 1;
}

/* json-c 0.16's bytes per value, rounded up (see jsontext.h). */
#define COST_OBJECT	800
#define COST_ARRAY	160
#define COST_STRING	112	/* and its length */
#define COST_WORD	80	/* a number, true, false, null */

/* Bytes that end a bare word (a number or a literal). */
static int
word_end(unsigned char c)
{
	switch (c) {
	case '{': case '}': case '[': case ']': case '"': case ',': case ':':
	case ' ': case '\t': case '\r': case '\n':
		return 1;
	default:
		return 0;
	}
}

static enum json_text_status
over(const struct json_budget *b, const struct json_text_size *sz)
{
	if (sz->depth > b->depth)
		return JSON_TEXT_DEEP;
	if (b->max_values > 0 && sz->values > b->max_values)
		return JSON_TEXT_VALUES;
	if (b->max_bytes > 0 && sz->bytes > b->max_bytes)
		return JSON_TEXT_BYTES;
	return JSON_TEXT_OK;
}

/*
 * Anything that is not structure, a string or a blank starts a bare
 * word and counts as a value: json-c builds a double for NaN too,
 * before json_text_finite refuses it.
 */
enum json_text_status
json_text_measure(const char *s, size_t len, const struct json_budget *b,
    struct json_text_size *sz)
{
	enum json_text_status	 st;
	size_t			 i, start;
	int			 d = 0;

	memset(sz, 0, sizeof(*sz));
	for (i = 0; i < len; i++) {
		switch ((unsigned char)s[i]) {
		case '{':
		case '[':
			sz->values++;
			sz->bytes += s[i] == '{' ? COST_OBJECT : COST_ARRAY;
			if (++d > sz->depth)
				sz->depth = d;
			break;
		case '}':
		case ']':
			if (d > 0)
				d--;
			continue;
		case ',': case ':': case ' ': case '\t': case '\r': case '\n':
			continue;
		case '"':
			for (start = i++; i < len && s[i] != '"'; i++)
				if (s[i] == '\\')
					i++;
			sz->values++;
			sz->bytes += COST_STRING + (int64_t)(i - start);
			break;
		default:
			while (i + 1 < len && !word_end(s[i + 1]))
				i++;
			sz->values++;
			sz->bytes += COST_WORD;
			break;
		}
		if ((st = over(b, sz)) != JSON_TEXT_OK)
			return st;
	}
	return JSON_TEXT_OK;
}

struct json_object *
json_text_parse_budget(const char *s, size_t len,
    const struct json_budget *b, enum json_text_status *st)
{
	struct json_text_size	 sz;
	struct json_object	*o;

	if ((*st = json_text_measure(s, len, b, &sz)) != JSON_TEXT_OK)
		return NULL;
	/* json-c 0.16 has no error of its own for it: malloc's errno. */
	errno = 0;
	if ((o = json_text_parse(s, len, b->depth)) == NULL)
		*st = errno == ENOMEM ? JSON_TEXT_NOMEM : JSON_TEXT_INVALID;
	return o;
}

struct json_object *
json_text_parse(const char *s, size_t len, int depth)
{
	struct json_tokener	*tok;
	struct json_object	*o;
	size_t			 end;

	/* The tokener stops at a NUL: one inside would hide what follows. */
	if (len == 0 || len > INT_MAX || memchr(s, '\0', len) != NULL ||
	    (tok = json_tokener_new_ex(depth)) == NULL)
		return NULL;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, s, (int)len);
	end = json_tokener_get_parse_end(tok);
	if (o != NULL && (json_tokener_get_error(tok) != json_tokener_success ||
	    !only_blanks(s + end, len - end) || !json_text_finite(o))) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

struct json_object *
json_text_parse_default(const char *s, size_t len)
{
	return json_text_parse(s, len, JSON_TEXT_DEPTH_MAX);
}
