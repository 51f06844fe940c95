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
 * mediatype.c: media types from callers and sandboxes checked before
 * they are stored or written into a header.
 */
#include <string.h>

#include "mediatype.h"

#define NAME_MAX_LEN	127	/* RFC 6838 4.2 */

static int
is_alnum(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9');
}

/* RFC 6838 restricted-name: the length of one at s, 0 if none. */
static size_t
restricted_name(const char *s)
{
	size_t	 n;

	if (!is_alnum((unsigned char)s[0]))
		return 0;
	for (n = 1; s[n] != '\0' && (is_alnum((unsigned char)s[n]) ||
	    strchr("!#$&-^_.+", s[n]) != NULL); n++)
		;
	return n <= NAME_MAX_LEN ? n : 0;
}

/* RFC 9110 token. */
static size_t
token(const char *s)
{
	size_t	 n;

	for (n = 0; s[n] != '\0' && (is_alnum((unsigned char)s[n]) ||
	    strchr("!#$%&'*+-.^_`|~", s[n]) != NULL); n++)
		;
	return n;
}

/* RFC 9110 quoted-string, printable ASCII only (no HTAB, no obs-text). */
static size_t
quoted(const char *s)
{
	size_t	 n;

	if (s[0] != '"')
		return 0;
	for (n = 1; s[n] != '\0' && s[n] != '"'; n++) {
		if (s[n] == '\\')
			n++;
		if ((unsigned char)s[n] < 0x20 || (unsigned char)s[n] > 0x7e)
			return 0;
	}
	return s[n] == '"' ? n + 1 : 0;
}

static const char *
ows(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

int
media_type_ok(const char *s)
{
	const char	*p;
	size_t		 n;

	if (s == NULL || strlen(s) > MEDIA_TYPE_MAX)
		return 0;
	for (p = s; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			return 0;
	if ((n = restricted_name(s)) == 0 || s[n] != '/')
		return 0;
	p = s + n + 1;
	if ((n = restricted_name(p)) == 0)
		return 0;
	for (p += n; *(p = ows(p)) != '\0';) {
		if (*p++ != ';')
			return 0;
		p = ows(p);
		if ((n = token(p)) == 0 || p[n] != '=')
			return 0;
		p += n + 1;
		if ((n = *p == '"' ? quoted(p) : token(p)) == 0)
			return 0;
		p += n;
	}
	return 1;
}

const char *
media_type_or_default(const char *s)
{
	return media_type_ok(s) ? s : MEDIA_TYPE_DEFAULT;
}
