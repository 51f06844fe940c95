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
 * http_query.c: query string parameters, form-decoded.
 */
#include <sys/types.h>

#include <string.h>

#include "http.h"

static int
hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Form decoding of src[0..len) into dst, NUL-terminated; -1 on error. */
static ssize_t
form_decode(const char *src, size_t len, char *dst, size_t dstlen)
{
	size_t	 i, o = 0;
	int	 ch, hi, lo;

	if (dstlen == 0)
		return -1;
	for (i = 0; i < len; i++) {
		ch = (unsigned char)src[i];
		if (ch == '+')
			ch = ' ';
		else if (ch == '%') {
			if (i + 2 >= len)
				return -1;
			hi = hexval((unsigned char)src[i + 1]);
			lo = hexval((unsigned char)src[i + 2]);
			/* %00 would cut the C string short of its length. */
			if (hi < 0 || lo < 0 || (hi | lo) == 0)
				return -1;
			ch = hi << 4 | lo;
			i += 2;
		}
		if (o + 1 >= dstlen)
			return -1;
		dst[o++] = ch;
	}
	dst[o] = '\0';
	return o;
}

ssize_t
http_query_param(const char *query, const char *name, char *buf,
    size_t buflen, const char **from)
{
	const char	*p, *end, *eq;
	char		 key[256];
	ssize_t		 r;

	if (query == NULL)
		return -1;
	p = (from != NULL && *from != NULL) ? *from : query;
	while (*p != '\0') {
		if ((end = strchr(p, '&')) == NULL)
			end = p + strlen(p);
		eq = memchr(p, '=', end - p);
		r = form_decode(p, (eq ? eq : end) - p, key, sizeof(key));
		if (r >= 0 && strcmp(key, name) == 0) {
			if (from != NULL)
				*from = *end ? end + 1 : end;
			if (eq == NULL) {
				if (buflen == 0)
					return -2;
				buf[0] = '\0';
				return 0;
			}
			r = form_decode(eq + 1, end - eq - 1, buf, buflen);
			return r < 0 ? -2 : r;
		}
		p = *end ? end + 1 : end;
	}
	return -1;
}
