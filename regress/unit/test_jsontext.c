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
 * test_jsontext.c: what a peer's JSON text may and may not hold.
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "t.h"
#include "jsontext.h"

static int
parses(const char *s, size_t len, int depth)
{
	struct json_object	*o = json_text_parse(s, len, depth);

	json_object_put(o);
	return o != NULL;
}

#define ACCEPT(s)	T_OK(parses(s, strlen(s), 16), "accepts %s", s)
#define REFUSE(s)	T_OK(!parses(s, strlen(s), 16), "refuses %s", s)

static void
test_wire_json(void)
{
	ACCEPT("{\"a\":[1,2.5,-3e2,true,false,null,\"x\"]}");
	ACCEPT("  {\"a\":1}\r\n\t ");
	ACCEPT("[1e308]");
	ACCEPT("\"\\u0000 escaped is fine\"");
}

/* json_text_parse_default: JSON_TEXT_DEPTH_MAX levels, not one more. */
static void
test_default_depth(void)
{
	char			 s[2 * (JSON_TEXT_DEPTH_MAX + 1) + 1];
	struct json_object	*o;
	int			 n;

	for (n = JSON_TEXT_DEPTH_MAX; n <= JSON_TEXT_DEPTH_MAX + 1; n++) {
		memset(s, '[', n);
		memset(s + n, ']', n);
		s[2 * n] = '\0';
		o = json_text_parse_default(s, 2 * n);
		T_OK((o != NULL) == (n <= JSON_TEXT_DEPTH_MAX),
		    "json_text_parse_default: %d levels %s", n,
		    n <= JSON_TEXT_DEPTH_MAX ? "taken" : "refused");
		json_object_put(o);
	}
	o = json_text_parse_default("{\"a\":NaN}", 10);
	T_OK(o == NULL, "json_text_parse_default: refuses NaN");
	json_object_put(o);
}

static void
test_not_json(void)
{
	REFUSE("");
	REFUSE("   ");
	REFUSE("{\"a\":NaN}");
	REFUSE("{\"a\":Infinity}");
	REFUSE("{\"a\":[-Infinity]}");
	REFUSE("{\"a\":1e999}");
	REFUSE("{\"deep\":{\"a\":[{\"b\":-1e400}]}}");
	REFUSE("{\"a\":1,}");
	REFUSE("{\"a\":1} x");
	REFUSE("{\"a\":1}{}");
	REFUSE("{\"a\":");
}

static void
test_bounds(void)
{
	const char	 nul[] = "{\"a\":1}\0{\"b\":2}";
	const char	 cut[] = "{\"a\":1}GARBAGE";
	char		 deep[64];
	int		 i;

	T_OK(!parses(nul, sizeof(nul) - 1, 16),
	    "refuses a text with a NUL inside");
	/* Only len bytes count, whatever follows them in memory. */
	T_OK(parses(cut, 7, 16), "reads len bytes and no more");
	for (i = 0; i < 20; i++)
		deep[i] = '[';
	for (; i < 40; i++)
		deep[i] = ']';
	deep[i] = '\0';
	T_OK(parses(deep, 40, 20), "20 levels within a depth of 20");
	T_OK(!parses(deep, 40, 19), "20 levels refused at a depth of 19");
}

/* n copies of unit between [ and ], in a buffer to free. */
static char *
array_of(const char *unit, size_t n, size_t *len)
{
	size_t	 u = strlen(unit), i;
	char	*s;

	if ((s = malloc(n * (u + 1) + 2)) == NULL)
		abort();
	*len = 0;
	s[(*len)++] = '[';
	for (i = 0; i < n; i++) {
		if (i > 0)
			s[(*len)++] = ',';
		memcpy(s + *len, unit, u);
		*len += u;
	}
	s[(*len)++] = ']';
	return s;
}

/* Bytes malloc has handed out, its own overhead included. */
static long
in_use(void)
{
	struct mallinfo2	 mi = mallinfo2();

	return (long)(mi.uordblks + mi.hblkhd);
}

static void
test_measure(void)
{
	struct json_budget	 b = { 0, 0, 16 };
	struct json_text_size	 sz;
	const char		*t = "{\"a\":[1,\"x\\\"y\",true,null,-2.5e3,{}]}";

	T_OK(json_text_measure(t, strlen(t), &b, &sz) == JSON_TEXT_OK &&
	    sz.values == 9 && sz.depth == 3,
	    "counts 9 values 3 deep in %s (%lld, %d)", t,
	    (long long)sz.values, sz.depth);
	b.max_values = 8;
	T_OK(json_text_measure(t, strlen(t), &b, &sz) == JSON_TEXT_VALUES,
	    "9 values refused with max_values 8");
	b.max_values = 0;
	b.depth = 2;
	T_OK(json_text_measure(t, strlen(t), &b, &sz) == JSON_TEXT_DEEP,
	    "3 levels refused at a depth of 2");
	/* json-c builds a double for each NaN before it is refused. */
	b.depth = 16;
	T_OK(json_text_measure("[NaN,NaN,x]", 11, &b, &sz) == JSON_TEXT_OK &&
	    sz.values == 4, "bare words count as values (%lld)",
	    (long long)sz.values);
	T_OK(json_text_measure("\"abc", 4, &b, &sz) == JSON_TEXT_OK &&
	    json_text_measure("\"\\", 2, &b, &sz) == JSON_TEXT_OK,
	    "an unended string or escape stays within len");
}

/*
 * The estimate never falls short of what json-c takes: for each kind
 * of value, a text of 200000 of them is built and what malloc handed
 * out for it compared with the estimate.  Under AddressSanitizer the
 * allocator is not glibc's and its figures are not production's.
 */
static void
test_estimate(void)
{
	static const char *const units[] = { "{}", "[]", "\"a\"", "1",
	    "true", "null", "{\"k\":0}", "[[]]", "\"a longer string, 40 "
	    "bytes or so...\"" };
	struct json_budget	 b = { 0, 0, 16 };
	struct json_text_size	 sz;
	struct json_object	*o;
	size_t			 i, len;
	long			 r0, r1;
	char			*s;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		s = array_of(units[i], 200000, &len);
		json_text_measure(s, len, &b, &sz);
		r0 = in_use();
		o = json_text_parse(s, len, 16);
		r1 = in_use();
#ifdef __SANITIZE_ADDRESS__
		T_OK(o != NULL, "200000 of %s built (%ld KiB by glibc's "
		    "count, estimated %lld KiB, not compared under "
		    "AddressSanitizer)", units[i], (r1 - r0) / 1024,
		    (long long)sz.bytes / 1024);
#else
		T_OK(o != NULL && r1 - r0 <= sz.bytes,
		    "200000 of %s: json-c took %ld KiB, estimated %lld KiB",
		    units[i], (r1 - r0) / 1024, (long long)sz.bytes / 1024);
#endif
		json_object_put(o);
		free(s);
	}
}

static void
test_budget(void)
{
	struct json_budget	 b = { 1000, 64 * 1024, 16 };
	enum json_text_status	 st;
	struct json_object	*o;
	size_t			 len;
	char			*s;

	s = array_of("{}", 50, &len);
	o = json_text_parse_budget(s, len, &b, &st);
	T_OK(o != NULL && st == JSON_TEXT_OK, "50 objects within 64 KiB");
	json_object_put(o);
	free(s);
	s = array_of("{}", 100000, &len);
	o = json_text_parse_budget(s, len, &b, &st);
	T_OK(o == NULL && st == JSON_TEXT_BYTES,
	    "100000 objects over 64 KiB, refused (%d)", st);
	free(s);
	s = array_of("null", 5000, &len);
	b.max_bytes = 0;
	o = json_text_parse_budget(s, len, &b, &st);
	T_OK(o == NULL && st == JSON_TEXT_VALUES,
	    "5000 nulls over 1000 values, refused (%d)", st);
	free(s);
	o = json_text_parse_budget("[1,", 3, &b, &st);
	T_OK(o == NULL && st == JSON_TEXT_INVALID, "an unended text refused");
}

int
main(void)
{
	test_wire_json();
	test_not_json();
	test_default_depth();
	test_bounds();
	test_measure();
	test_estimate();
	test_budget();
	return t_done();
}
