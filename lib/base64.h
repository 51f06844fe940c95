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
 * base64.h: a streaming base64 encoder (RFC 4648, standard alphabet,
 * padded, no line breaks).  Input may come in pieces of any size: up to
 * two bytes wait in the state for the next piece, so that the output is
 * the same as encoding the whole at once.
 */
#ifndef DEPOT_BASE64_H
#define DEPOT_BASE64_H

#include <stddef.h>
#include <stdint.h>

struct b64enc {
	unsigned char	 carry[2];
	size_t		 ncarry;
};

/* Characters for n input bytes, padding included. */
#define B64_ENCLEN(n)	(((n) + 2) / 3 * 4)

void	 b64enc_init(struct b64enc *);
/*
 * Encodes len bytes after whatever the state carries.  out must hold
 * B64_ENCLEN(len + 2) characters; no NUL is written.  Returns the
 * characters written, always a multiple of 4.
 */
size_t	 b64enc_update(struct b64enc *, const void *in, size_t len,
	    char *out);
/* The carried bytes with their padding: 0 or 4 characters. */
size_t	 b64enc_final(struct b64enc *, char *out);

#endif
