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
 * test_mediatype.c: which media types may be stored and become a
 * Content-Type.
 */
#include <string.h>

#include "t.h"
#include "mediatype.h"

int
main(void)
{
	char	 long_type[400];
	size_t	 i;

	T_OK(media_type_ok("text/plain"), "text/plain");
	T_OK(media_type_ok("application/vnd.openxmlformats-officedocument."
	    "spreadsheetml.sheet"), "a long vendor type");
	T_OK(media_type_ok("image/svg+xml"), "a structured suffix");
	T_OK(media_type_ok("text/plain; charset=utf-8"), "a parameter");
	T_OK(media_type_ok("text/plain;charset=\"utf-8\";format=flowed"),
	    "a quoted parameter, then another");
	T_OK(media_type_ok("multipart/mixed; boundary=\"a;b\\\"c\""),
	    "a quoted-pair and a ';' inside quotes");
	T_OK(!media_type_ok("text/plain\r\nSet-Cookie: x"),
	    "CR LF and a header after it");
	T_OK(!media_type_ok("text/plain\nX: y"), "a bare LF");
	T_OK(!media_type_ok("text/pl\tain"), "a tab inside the subtype");
	T_OK(!media_type_ok("text/plain; a=\"b\rc\""), "CR inside quotes");
	T_OK(!media_type_ok("text/plain\x7f"), "DEL");
	T_OK(!media_type_ok("text/pl\xc3\xa4in"), "non-ASCII");
	T_OK(!media_type_ok(""), "empty");
	T_OK(!media_type_ok("text"), "no subtype");
	T_OK(!media_type_ok("text/"), "an empty subtype");
	T_OK(!media_type_ok("/plain"), "an empty type");
	T_OK(!media_type_ok("text/plain/x"), "two slashes");
	T_OK(!media_type_ok(".text/plain"), "a name that starts with '.'");
	T_OK(!media_type_ok("text/plain;"), "a ';' with no parameter");
	T_OK(!media_type_ok("text/plain; charset"), "a parameter without '='");
	T_OK(!media_type_ok("text/plain; charset=\"utf-8"),
	    "an unterminated quoted string");
	T_OK(!media_type_ok("text/plain x"), "garbage after the subtype");
	memset(long_type, 'a', sizeof(long_type) - 1);
	long_type[sizeof(long_type) - 1] = '\0';
	long_type[10] = '/';
	T_OK(!media_type_ok(long_type), "400 bytes: over the bound");
	strcpy(long_type, "text/plain; x=");
	for (i = strlen(long_type); i < MEDIA_TYPE_MAX; i++)
		long_type[i] = 'y';
	long_type[i] = '\0';
	T_OK(media_type_ok(long_type), "exactly MEDIA_TYPE_MAX bytes");
	long_type[i] = 'y';
	long_type[i + 1] = '\0';
	T_OK(!media_type_ok(long_type), "one byte more");
	T_EQ_STR(media_type_or_default("text/csv"), "text/csv",
	    "a good type stays");
	T_EQ_STR(media_type_or_default("a\r\nb: c"),
	    "application/octet-stream", "a bad one becomes octet-stream");
	T_EQ_STR(media_type_or_default(NULL), "application/octet-stream",
	    "none becomes octet-stream");
	return t_done();
}
