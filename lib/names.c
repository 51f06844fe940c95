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
 * names.c: MIME types from extensions, and the safe forms of a stored
 * filename that headers and sandbox paths use.
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "names.h"

#define OCTET_STREAM	"application/octet-stream"
#define FALLBACK_NAME	"file"

static const struct {
	const char	*ext;
	const char	*mime;
} mime_table[] = {
	{ "txt",	"text/plain" },
	{ "md",		"text/markdown" },
	{ "csv",	"text/csv" },
	{ "tsv",	"text/tab-separated-values" },
	{ "json",	"application/json" },
	{ "jsonl",	"application/jsonl" },
	{ "xml",	"application/xml" },
	{ "html",	"text/html" },
	{ "htm",	"text/html" },
	{ "css",	"text/css" },
	{ "js",		"text/javascript" },
	{ "mjs",	"text/javascript" },
	/* Not video/mp2t: here a .ts is far likelier code than video. */
	{ "ts",		"text/x-typescript" },
	{ "py",		"text/x-python" },
	{ "c",		"text/x-c" },
	{ "h",		"text/x-c" },
	{ "cpp",	"text/x-c++" },
	{ "java",	"text/x-java" },
	{ "go",		"text/x-go" },
	{ "rs",		"text/x-rust" },
	{ "rb",		"text/x-ruby" },
	{ "sh",		"application/x-sh" },
	{ "yaml",	"application/yaml" },
	{ "yml",	"application/yaml" },
	{ "toml",	"application/toml" },
	{ "pdf",	"application/pdf" },
	{ "png",	"image/png" },
	{ "jpg",	"image/jpeg" },
	{ "jpeg",	"image/jpeg" },
	{ "gif",	"image/gif" },
	{ "webp",	"image/webp" },
	{ "svg",	"image/svg+xml" },
	{ "bmp",	"image/bmp" },
	{ "tiff",	"image/tiff" },
	{ "tif",	"image/tiff" },
	{ "ico",	"image/vnd.microsoft.icon" },
	{ "zip",	"application/zip" },
	{ "gz",		"application/gzip" },
	{ "tar",	"application/x-tar" },
	{ "tgz",	"application/gzip" },
	{ "bz2",	"application/x-bzip2" },
	{ "xz",		"application/x-xz" },
	{ "7z",		"application/x-7z-compressed" },
	{ "doc",	"application/msword" },
	{ "docx",	"application/vnd.openxmlformats-officedocument."
			"wordprocessingml.document" },
	{ "xls",	"application/vnd.ms-excel" },
	{ "xlsx",	"application/vnd.openxmlformats-officedocument."
			"spreadsheetml.sheet" },
	{ "ppt",	"application/vnd.ms-powerpoint" },
	{ "pptx",	"application/vnd.openxmlformats-officedocument."
			"presentationml.presentation" },
	{ "odt",	"application/vnd.oasis.opendocument.text" },
	{ "mp3",	"audio/mpeg" },
	{ "wav",	"audio/wav" },
	{ "ogg",	"audio/ogg" },
	{ "mp4",	"video/mp4" },
	{ "webm",	"video/webm" },
	{ "mov",	"video/quicktime" },
	{ "parquet",	"application/vnd.apache.parquet" },
	{ "ipynb",	"application/x-ipynb+json" },
};

/* Types outside text/ that are text all the same. */
static const char *text_types[] = {
	"application/json",
	"application/jsonl",
	"application/x-ndjson",
	"application/xml",
	"application/yaml",
	"application/x-yaml",
	"application/toml",
	"application/javascript",
	"application/typescript",
	"application/x-sh",
	"application/sql",
	"application/x-python",
};

size_t
utf8_cut(const char *s, size_t n)
{
	size_t	 lead = n, need;
	int	 c;

	while (lead > 0 && ((unsigned char)s[lead - 1] & 0xc0) == 0x80)
		lead--;
	if (lead == 0)
		return n;
	c = (unsigned char)s[lead - 1];
	if (c < 0xc0)
		return n;
	need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
	return n - (lead - 1) < need ? lead - 1 : n;
}

/*
 * How many bytes to replace by one '_': a whole UTF-8 character when p
 * starts one, else the one byte.
 */
static size_t
utf8_seqlen(const unsigned char *p)
{
	size_t	 need, i;

	if (*p >= 0xc2 && *p <= 0xdf)
		need = 2;
	else if (*p >= 0xe0 && *p <= 0xef)
		need = 3;
	else if (*p >= 0xf0 && *p <= 0xf4)
		need = 4;
	else
		return 1;
	for (i = 1; i < need; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 1;
	return need;
}

/* Copies s[0..n) into out, cut at a character boundary to fit. */
static void
copy_cut(char *out, size_t len, const char *s, size_t n)
{
	if (len == 0)
		return;
	if (n >= len)
		n = utf8_cut(s, len - 1);
	memmove(out, s, n);
	out[n] = '\0';
}

/* Where the last path segment of name starts. */
static const char *
last_segment(const char *name)
{
	const char	*p, *seg = name;

	for (p = name; *p != '\0'; p++)
		if (*p == '/' || *p == '\\')
			seg = p + 1;
	return seg;
}

/* The extension of the last segment, without the dot, or NULL. */
static const char *
extension(const char *filename)
{
	const char	*seg, *dot;

	seg = last_segment(filename);
	if ((dot = strrchr(seg, '.')) == NULL || dot == seg)
		return NULL;	/* none, or a dotfile such as ".bashrc" */
	return dot + 1;
}

const char *
mime_guess(const char *filename)
{
	const char	*ext;
	size_t		 i;

	if (filename == NULL || (ext = extension(filename)) == NULL)
		return NULL;
	for (i = 0; i < sizeof(mime_table) / sizeof(mime_table[0]); i++)
		if (strcasecmp(ext, mime_table[i].ext) == 0)
			return mime_table[i].mime;
	return NULL;
}

/* The length of the type/subtype before any parameters and spaces. */
static size_t
essence_len(const char *mime)
{
	size_t	 n;

	n = strcspn(mime, ";");
	while (n > 0 && (mime[n - 1] == ' ' || mime[n - 1] == '\t'))
		n--;
	return n;
}

static int
essence_is(const char *mime, const char *type)
{
	size_t	 n = essence_len(mime);

	return n == strlen(type) && strncasecmp(mime, type, n) == 0;
}

/*
 * A type that may go into a Content-Type header as it stands: a
 * token/token essence and nothing but printable ASCII.
 */
static int
mime_valid(const char *mime)
{
	const char	*p, *slash;
	size_t		 n;

	for (p = mime; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			return 0;
	n = essence_len(mime);
	if ((slash = memchr(mime, '/', n)) == NULL || slash == mime ||
	    slash == mime + n - 1)
		return 0;
	for (p = mime; p < mime + n; p++)
		if (p != slash && !isalnum((unsigned char)*p) &&
		    strchr("!#$&-^_.+", *p) == NULL)
			return 0;
	return 1;
}

const char *
mime_for_upload(const char *part_ctype, const char *filename)
{
	const char	*guess;

	if (part_ctype != NULL && *part_ctype != '\0' &&
	    mime_valid(part_ctype) && !essence_is(part_ctype, OCTET_STREAM))
		return part_ctype;
	if ((guess = mime_guess(filename)) != NULL)
		return guess;
	return OCTET_STREAM;
}

static int
mime_type_is_text(const char *mime)
{
	size_t	 n, i;

	n = essence_len(mime);
	if (n > 5 && strncasecmp(mime, "text/", 5) == 0)
		return 1;
	if ((n > 5 && strncasecmp(mime + n - 5, "+json", 5) == 0) ||
	    (n > 4 && strncasecmp(mime + n - 4, "+xml", 4) == 0))
		return 1;
	for (i = 0; i < sizeof(text_types) / sizeof(text_types[0]); i++)
		if (essence_is(mime, text_types[i]))
			return 1;
	return 0;
}

int
mime_is_text(const char *mime, const char *filename)
{
	const char	*guess;

	if (mime != NULL && *mime != '\0' && !essence_is(mime, OCTET_STREAM))
		return mime_type_is_text(mime);
	if ((guess = mime_guess(filename)) == NULL)
		return 0;
	return mime_type_is_text(guess);
}

void
name_last_segment(const char *filename, char *out, size_t len)
{
	const char	*p, *seg;
	char		*w;

	if (len == 0)
		return;
	seg = last_segment(filename);
	copy_cut(out, len, seg, strlen(seg));
	for (p = w = out; *p != '\0'; p++)
		if ((unsigned char)*p >= 0x20 && *p != 0x7f)
			*w++ = *p;
	*w = '\0';
	if (*out == '\0' || strcmp(out, ".") == 0 || strcmp(out, "..") == 0)
		copy_cut(out, len, FALLBACK_NAME, strlen(FALLBACK_NAME));
}

void
name_ascii_fallback(const char *in, char *out, size_t len)
{
	const unsigned char	*p = (const unsigned char *)in;
	size_t			 n = 0;

	if (len == 0)
		return;
	while (*p != '\0' && n + 1 < len) {
		if (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\')
			out[n++] = *p++;
		else {
			out[n++] = '_';
			p += utf8_seqlen(p);
		}
	}
	out[n] = '\0';
	if (n == 0)
		copy_cut(out, len, FALLBACK_NAME, strlen(FALLBACK_NAME));
}

/* RFC 8187 attr-char: what may stand unencoded in an ext-value. */
static int
is_attr_char(int c)
{
	return c != '\0' && isascii(c) &&
	    (isalnum(c) || strchr("!#$&+-.^_`|~", c) != NULL);
}

/* Appends s to out at *off; -1 when it does not fit. */
static int
append(char *out, size_t len, size_t *off, const char *s)
{
	size_t	 n = strlen(s);

	if (*off + n >= len)
		return -1;
	memcpy(out + *off, s, n + 1);
	*off += n;
	return 0;
}

static int
append_percent_encoded(char *out, size_t len, size_t *off, const char *s)
{
	const unsigned char	*p;
	char			 esc[4];

	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		if (is_attr_char(*p)) {
			esc[0] = *p;
			esc[1] = '\0';
		} else
			snprintf(esc, sizeof(esc), "%%%02X", *p);
		if (append(out, len, off, esc) == -1)
			return -1;
	}
	return 0;
}

int
content_disposition(const char *filename, char *out, size_t len)
{
	char	*segment, *ascii;
	size_t	 bufsize, off = 0;
	int	 rv = -1;

	if (len == 0)
		return -1;
	out[0] = '\0';
	bufsize = strlen(filename) + sizeof(FALLBACK_NAME);
	segment = malloc(bufsize);
	ascii = malloc(bufsize);
	if (segment == NULL || ascii == NULL)
		goto done;
	name_last_segment(filename, segment, bufsize);
	name_ascii_fallback(segment, ascii, bufsize);
	if (append(out, len, &off, "attachment; filename=\"") == 0 &&
	    append(out, len, &off, ascii) == 0 &&
	    append(out, len, &off, "\"; filename*=UTF-8''") == 0 &&
	    append_percent_encoded(out, len, &off, segment) == 0)
		rv = 0;
	else
		out[0] = '\0';
done:
	free(segment);
	free(ascii);
	return rv;
}

/* Where "-n" goes: before the extension, or at the end. */
static size_t
dedupe_point(const char *name)
{
	const char	*seg, *dot, *prev;
	size_t		 end = strlen(name);

	seg = last_segment(name);
	if ((dot = strrchr(seg, '.')) == NULL || dot == seg)
		return end;
	/* "a.tar.gz": the whole ".tar.gz" is the extension. */
	for (prev = dot - 1; prev > seg && *prev != '.'; prev--)
		;
	if (prev > seg && dot - prev == 4 && strncasecmp(prev, ".tar", 4) == 0)
		dot = prev;
	return dot - name;
}

/*
 * The extension survives only when it fits beside the longest suffix
 * of all: the choice then depends on the name and len alone, never on
 * n, so that every n gives a name of its own (see name_unique).
 */
void
name_dedupe(const char *name, int n, char *out, size_t len)
{
	char	 suffix[16];
	size_t	 at, stem, slen, elen;

	if (len == 0)
		return;
	if (n < 2) {
		copy_cut(out, len, name, strlen(name));
		return;
	}
	at = dedupe_point(name);
	elen = strlen(name + at);
	if (elen + NAME_SUFFIX_MAX >= len) {
		/* No room for it: the extension is cut as the stem is. */
		at += elen;
		elen = 0;
	}
	slen = snprintf(suffix, sizeof(suffix), "-%d", n);
	if (slen >= len) {	/* below NAME_DEDUPE_MIN: no suffix fits */
		copy_cut(out, len, name, strlen(name));
		return;
	}
	stem = at;
	if (stem + slen + elen >= len)
		stem = utf8_cut(name, len - 1 - slen - elen);
	memmove(out, name, stem);
	memcpy(out + stem, suffix, slen);
	memmove(out + stem + slen, name + at, elen);
	out[stem + slen + elen] = '\0';
}

/*
 * Candidates n >= 2 differ from each other: each is a prefix of one
 * string (the stem, or the whole name), then "-n", then one extension,
 * and "-n" holds no '-' but its first.  Of ntaken + 1 of them one at
 * least is free.  The name itself may equal one (base "a-10", cut), so
 * it does not count among them.
 */
int
name_unique(const char *base, int first, size_t ntaken,
    int (*taken)(const char *, void *), void *arg, char *out, size_t len)
{
	size_t	 tries;
	int	 n;

	if (len == 0)
		return -1;
	if (first < 1)
		first = 1;
	if (first == 1) {
		copy_cut(out, len, base, strlen(base));
		if (!taken(out, arg))
			return 1;
		first = 2;
	}
	for (n = first, tries = 0; tries <= ntaken && n < INT_MAX;
	    n++, tries++) {
		name_dedupe(base, n, out, len);
		if (!taken(out, arg))
			return n;
	}
	/* Only when len < NAME_DEDUPE_MIN, where "-n" need not fit. */
	copy_cut(out, len, base, strlen(base));
	return -1;
}
