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
 * tjson.h: JSON helpers for the unit tests.  Test JSON is written with
 * ' for " to stay readable; objects compare without regard to key
 * order, arrays in order.
 */
#ifndef DEPOT_TJSON_H
#define DEPOT_TJSON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "t.h"

static inline struct json_object *
J(const char *s)
{
	struct json_object	*o;
	char			*buf, *p;

	if ((buf = strdup(s)) == NULL)
		abort();
	for (p = buf; *p != '\0'; p++)
		if (*p == '\'')
			*p = '"';
	if ((o = json_tokener_parse(buf)) == NULL) {
		printf("# bad test JSON: %s\n", s);
		abort();
	}
	free(buf);
	return o;
}

static inline const char *
S(struct json_object *o)
{
	return o == NULL ? "NULL" : json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

/*
 * Checks and takes out a generated value at o[key]: a string of
 * prefix and 24 hex digits, or (prefix NULL) an integer.
 */
static inline int
take(struct json_object *o, const char *key, const char *prefix)
{
	struct json_object	*v;
	const char		*s;

	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	if (prefix == NULL) {
		if (!json_object_is_type(v, json_type_int))
			return 0;
	} else {
		s = json_object_get_string(v);
		if (!json_object_is_type(v, json_type_string) ||
		    strncmp(s, prefix, strlen(prefix)) != 0 ||
		    strlen(s) != strlen(prefix) + 24 ||
		    strspn(s + strlen(prefix), "0123456789abcdef") != 24)
			return 0;
	}
	json_object_object_del(o, key);
	return 1;
}

/* got equals want; err is shown when got is NULL. */
static inline void
same(struct json_object *got, const char *want, const char *err,
    const char *what)
{
	struct json_object	*w = J(want);
	int			 ok = got != NULL && json_object_equal(got, w);

	T_OK(ok, "%s", what);
	if (!ok) {
		printf("#  got: %s\n", S(got));
		printf("# want: %s\n", S(w));
		if (got == NULL)
			printf("#  err: %s\n", err);
	}
	json_object_put(w);
}

#endif
