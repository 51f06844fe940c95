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
 * base64.c: the streaming encoder of base64.h.
 */
#include <string.h>

#include "base64.h"

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void
b64enc_init(struct b64enc *e)
{
	memset(e, 0, sizeof(*e));
}

static void
b64_quad(const unsigned char *p, char *out)
{
	out[0] = b64_alphabet[p[0] >> 2];
	out[1] = b64_alphabet[((p[0] & 0x03) << 4) | (p[1] >> 4)];
	out[2] = b64_alphabet[((p[1] & 0x0f) << 2) | (p[2] >> 6)];
	out[3] = b64_alphabet[p[2] & 0x3f];
}

size_t
b64enc_update(struct b64enc *e, const void *in, size_t len, char *out)
{
	const unsigned char	*p = in;
	unsigned char		 first[3];
	size_t			 n = 0;

	/* Complete the carried group first. */
	if (e->ncarry > 0) {
		if (e->ncarry + len < 3) {
			memcpy(e->carry + e->ncarry, p, len);
			e->ncarry += len;
			return 0;
		}
		memcpy(first, e->carry, e->ncarry);
		memcpy(first + e->ncarry, p, 3 - e->ncarry);
		p += 3 - e->ncarry;
		len -= 3 - e->ncarry;
		e->ncarry = 0;
		b64_quad(first, out);
		n = 4;
	}
	for (; len >= 3; p += 3, len -= 3, n += 4)
		b64_quad(p, out + n);
	memcpy(e->carry, p, len);
	e->ncarry = len;
	return n;
}

size_t
b64enc_final(struct b64enc *e, char *out)
{
	unsigned char	 last[3] = { 0, 0, 0 };

	if (e->ncarry == 0)
		return 0;
	memcpy(last, e->carry, e->ncarry);
	b64_quad(last, out);
	out[3] = '=';
	if (e->ncarry == 1)
		out[2] = '=';
	e->ncarry = 0;
	return 4;
}
