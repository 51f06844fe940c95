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

int
main(void)
{
	test_wire_json();
	test_not_json();
	test_bounds();
	return t_done();
}
