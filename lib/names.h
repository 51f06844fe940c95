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
 * names.h: filenames and MIME types as uploads bring them and as
 * response headers and sandbox paths may show them.  Pure string
 * functions: no I/O, nothing kept between calls.
 */
#ifndef DEPOT_NAMES_H
#define DEPOT_NAMES_H

#include <stddef.h>

/* The MIME type for the filename's extension (any case), or NULL. */
const char	*mime_guess(const char *filename);

/*
 * SPEC 4.1: the part's Content-Type unless absent, empty, malformed or
 * application/octet-stream; then the guess from the extension; else
 * application/octet-stream.  Returns part_ctype itself or a constant.
 */
const char	*mime_for_upload(const char *part_ctype, const char *filename);

/*
 * Whether the content is text a person or a program reads as such:
 * any text/ type, JSON, XML, YAML, TOML, scripts.  A missing or generic mime
 * (application/octet-stream) is judged by the filename's extension.
 */
int		 mime_is_text(const char *mime, const char *filename);

/*
 * The part after the last '/' or '\\', control characters removed; it
 * is never empty, "." or ".." ("file" stands in).  Cut at a UTF-8
 * character boundary when out is too small.
 */
void		 name_last_segment(const char *filename, char *out, size_t len);

/*
 * Printable ASCII only: '"', '\\', control characters and each
 * non-ASCII (UTF-8) character become '_'.  Never empty ("file").
 */
void		 name_ascii_fallback(const char *in, char *out, size_t len);

/*
 * The Content-Disposition value for a download:
 *   attachment; filename="<ascii>"; filename*=UTF-8''<percent-encoded>
 * both built from the last path segment.  No CR, LF, '"' or '\\' can
 * reach it.  Returns -1 (out set to "") when it does not fit.
 */
int		 content_disposition(const char *filename, char *out,
		    size_t len);

/* The longest "-n" of all ("-2147483647"). */
#define NAME_SUFFIX_MAX		11
/* The smallest out in which every n gets a name of its own. */
#define NAME_DEDUPE_MIN		(NAME_SUFFIX_MAX + 1)

/*
 * The n-th name (n >= 2) for a name already taken: "-n" goes before
 * the extension ("notes.txt" -> "notes-2.txt"), or at the end when
 * there is none ("Makefile" -> "Makefile-2", ".bashrc" -> ".bashrc-2").
 * A compressed tarball keeps both extensions ("a.tar.gz" ->
 * "a-2.tar.gz").  n < 2 copies the name.  The result always fits out:
 * the stem is shortened, at a UTF-8 character boundary, so that the
 * suffix survives; an extension that leaves no room for the longest
 * suffix (NAME_SUFFIX_MAX) is treated as part of the stem, and the
 * suffix goes at the end.  With len >= NAME_DEDUPE_MIN no two n give
 * the same name.
 */
void		 name_dedupe(const char *name, int n, char *out, size_t len);

/*
 * A name for base that taken(name, arg) says is free, into out:
 * base itself (cut to fit), else name_dedupe(base, 2), 3 ... starting
 * at first (1: base itself; a caller that knows the candidates before
 * first are taken starts past them).  taken() knows at most ntaken
 * names, so at most ntaken + 2 candidates are tried: one of them is
 * free.  Returns the n that was free (1 for base), or -1, out then
 * holding base cut to fit, when none was (only possible when len <
 * NAME_DEDUPE_MIN).
 */
int		 name_unique(const char *base, int first, size_t ntaken,
		    int (*taken)(const char *, void *), void *arg, char *out,
		    size_t len);

/*
 * The length of s[0..n) less a UTF-8 sequence cut short at its end:
 * where a string may be truncated without breaking a character.
 */
size_t		 utf8_cut(const char *s, size_t n);

#endif
