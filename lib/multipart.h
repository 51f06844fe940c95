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
 * multipart.h: a streaming multipart/form-data parser (RFC 7578).
 *
 * Input arrives in pieces of any size; part bodies are passed on as
 * they are recognised, so memory does not grow with the body.  Only the
 * part headers (bounded by MULTIPART_MAXHEADER) are ever buffered.
 */
#ifndef DEPOT_MULTIPART_H
#define DEPOT_MULTIPART_H

#include <stddef.h>

#define MULTIPART_MAXHEADER	8192
#define MULTIPART_MAXBOUNDARY	70

struct multipart_part {
	char	 name[256];		/* Content-Disposition name */
	char	 filename[4096];	/* decoded, control characters gone */
	int	 has_filename;		/* a filename parameter was present */
	char	 content_type[256];	/* "" when absent */
};

struct multipart_cb {
	/* Each returns 0 to go on, -1 to stop the parse (error "aborted"). */
	int	(*part_begin)(void *, const struct multipart_part *);
	int	(*part_data)(void *, const void *, size_t);
	int	(*part_end)(void *);
};

struct multipart;

/*
 * content_type is the request's Content-Type header.  Returns NULL (and
 * a reason in *why) when it is not multipart/form-data with a valid
 * boundary.
 */
struct multipart *multipart_new(const char *content_type,
	    const struct multipart_cb *, void *arg, const char **why);
/*
 * 0 on success, -1 on malformed input or an abort: see multipart_error.
 * Framing is strict RFC 2046: CRLF line ends, and a line that starts
 * with the delimiter must be a delimiter line.  Part headers are not
 * folded.  The part passed to part_begin lives until the next part.
 * Bytes after the closing delimiter are ignored; after an error every
 * call fails.
 */
int	 multipart_feed(struct multipart *, const void *, size_t);
/* At end of body: -1 unless the closing boundary was seen. */
int	 multipart_finish(struct multipart *);
/*
 * Why the parse failed, NULL while it has not: "malformed part
 * headers", "part headers too large", "part without Content-Disposition
 * form-data", "part without a name", "malformed boundary line",
 * "filename too long", "part name too long", "part Content-Type too
 * long", "body ended before the closing boundary", "aborted".
 * multipart_new's reasons: "not multipart/form-data", "missing
 * boundary", "invalid boundary", "malformed Content-Type".
 */
const char *multipart_error(const struct multipart *);
void	 multipart_free(struct multipart *);

/*
 * Decodes a filename as browsers and the SDKs send it: %22, %0D, %0A
 * decoded, %5C kept as is, then control characters (0x00-0x1f, 0x7f)
 * removed.  UTF-8 is kept.  dst may be src.  A name too long for dst is
 * cut at a UTF-8 character boundary.  The parser applies this to the
 * filename and name parameters; filename* (RFC 8187) is percent-decoded
 * in full instead, then loses its control characters too.
 */
void	 multipart_decode_filename(char *dst, size_t dstlen, const char *src);

#endif
