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
 * test_retry_after.c: an upstream's Retry-After as the caller gets it.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "t.h"
#include "fe_upcall.h"

static const char *
convert(const char *v, size_t len)
{
	static char	 out[32];

	strcpy(out, "untouched");
	retry_after_seconds(v, len, out, sizeof(out));
	return out;
}

int
main(void)
{
	char		 date[64];
	const char	*got;
	time_t		 t;

	T_EQ_STR(convert("7", 1), "7", "seconds pass as they are");
	T_EQ_STR(convert("120\r\n", 3), "120", "only len bytes are read");
	T_EQ_STR(convert("soon", 4), "untouched", "nonsense is dropped");
	T_EQ_STR(convert("", 0), "untouched", "an empty value is dropped");
	T_EQ_STR(convert("-5", 2), "untouched", "a negative count is dropped");
	T_EQ_STR(convert("123456789012345678901234567890123", 33),
	    "untouched", "digits past the buffer are dropped");
	t = time(NULL) + 60;
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", gmtime(&t));
	got = convert(date, strlen(date));
	T_OK(atoi(got) >= 58 && atoi(got) <= 60,
	    "an HTTP-date a minute ahead: about 60 (%s)", got);
	T_EQ_STR(convert("Sun, 06 Nov 1994 08:49:37 GMT", 29), "0",
	    "a date gone by: 0");
	return t_done();
}
