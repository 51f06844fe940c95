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
 * mediatype.h: whether a media type may be stored and sent as a
 * Content-Type as it stands.
 */
#ifndef DEPOT_MEDIATYPE_H
#define DEPOT_MEDIATYPE_H

#define MEDIA_TYPE_MAX	255	/* bytes, the NUL not counted */
#define MEDIA_TYPE_DEFAULT "application/octet-stream"

/*
 * type "/" subtype as RFC 6838 restricts their names (a letter or
 * digit, then up to 126 of letters, digits and !#$&-^_.+), then any
 * number of ";" parameters, token "=" (token or quoted-string) as RFC
 * 9110 has them, with spaces or tabs around the ";".  Printable ASCII
 * only, at most MEDIA_TYPE_MAX bytes: no CR, LF or other control
 * character can reach a header through it.
 */
int		 media_type_ok(const char *);

/* The type if media_type_ok, else MEDIA_TYPE_DEFAULT. */
const char	*media_type_or_default(const char *);

#endif
