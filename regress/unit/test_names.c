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
 * test_names.c: MIME guesses, the safe forms of filenames, and names
 * made unique however long they are.
 */
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "t.h"

static void
test_mime_guess(void)
{
	static const char *exts[] = { "txt", "md", "csv", "tsv", "json",
	    "jsonl", "xml", "html", "htm", "css", "js", "mjs", "ts", "py",
	    "c", "h", "cpp", "java", "go", "rs", "rb", "sh", "yaml", "yml",
	    "toml", "pdf", "png", "jpg", "jpeg", "gif", "webp", "svg", "bmp",
	    "tiff", "ico", "zip", "gz", "tar", "tgz", "bz2", "xz", "7z", "doc",
	    "docx", "xls", "xlsx", "ppt", "pptx", "odt", "mp3", "wav", "ogg",
	    "mp4", "webm", "mov", "parquet", "ipynb" };
	char		 name[32];
	size_t		 i;
	int		 missing = 0;

	for (i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		snprintf(name, sizeof(name), "f.%s", exts[i]);
		if (mime_guess(name) == NULL) {
			printf("# no type for %s\n", name);
			missing++;
		}
	}
	T_EQ_INT(missing, 0, "every listed extension has a type");
	T_EQ_STR(mime_guess("notes.txt"), "text/plain", "txt");
	T_EQ_STR(mime_guess("PHOTO.JPG"), "image/jpeg", "upper case");
	T_EQ_STR(mime_guess("a.b.Json"), "application/json", "last dot");
	T_EQ_STR(mime_guess("archive.tar.gz"), "application/gzip", "tar.gz");
	T_EQ_STR(mime_guess("dir.pdf/readme.md"), "text/markdown",
	    "extension of the last segment");
	T_EQ_STR(mime_guess("x.xlsx"), "application/vnd.openxmlformats-"
	    "officedocument.spreadsheetml.sheet", "xlsx");
	T_OK(mime_guess("dir.pdf/README") == NULL, "no extension");
	T_OK(mime_guess(".json") == NULL, "dotfile has no extension");
	T_OK(mime_guess("a.") == NULL, "empty extension");
	T_OK(mime_guess("a.exe") == NULL, "unknown extension");
	T_OK(mime_guess("a.txt\r\n") == NULL, "hostile extension");
	T_OK(mime_guess("") == NULL, "empty name");
	T_OK(mime_guess(NULL) == NULL, "NULL name");
}

static void
test_mime_for_upload(void)
{
	const char	*ct = "image/png";

	T_OK(mime_for_upload(ct, "a.txt") == ct, "part type wins");
	T_EQ_STR(mime_for_upload("text/csv; charset=utf-8", "a.bin"),
	    "text/csv; charset=utf-8", "parameters kept");
	T_EQ_STR(mime_for_upload("application/octet-stream", "a.pdf"),
	    "application/pdf", "octet-stream: guess");
	T_EQ_STR(mime_for_upload("Application/Octet-Stream ; x=y", "a.pdf"),
	    "application/pdf", "octet-stream in any case with parameters");
	T_EQ_STR(mime_for_upload("", "a.md"), "text/markdown", "empty: guess");
	T_EQ_STR(mime_for_upload(NULL, "a.md"), "text/markdown", "NULL: guess");
	T_EQ_STR(mime_for_upload(NULL, "a.unknown"),
	    "application/octet-stream", "no guess: octet-stream");
	T_EQ_STR(mime_for_upload("", ""), "application/octet-stream",
	    "nothing at all");
	T_EQ_STR(mime_for_upload("text/plain\r\nX-Evil: 1", "a.json"),
	    "application/json", "CRLF in part type: not used");
	T_EQ_STR(mime_for_upload("text/pl\xc3\xa4in", "a.json"),
	    "application/json", "non-ASCII part type: not used");
	T_EQ_STR(mime_for_upload("garbage", "a.json"), "application/json",
	    "no slash: not used");
	T_EQ_STR(mime_for_upload("text/", "a.json"), "application/json",
	    "no subtype: not used");
}

static void
test_mime_is_text(void)
{
	T_OK(mime_is_text("text/plain", NULL), "text/plain");
	T_OK(mime_is_text("TEXT/CSV; charset=utf-8", "x.bin"), "text/csv");
	T_OK(mime_is_text("application/json", NULL), "json");
	T_OK(mime_is_text("application/ld+json", NULL), "+json");
	T_OK(mime_is_text("image/svg+xml", NULL), "+xml");
	T_OK(mime_is_text("application/yaml", NULL), "yaml");
	T_OK(mime_is_text("application/x-sh", NULL), "shell script");
	T_OK(!mime_is_text("image/png", "a.txt"), "a stated binary type wins");
	T_OK(!mime_is_text("application/pdf", NULL), "pdf");
	T_OK(!mime_is_text("application/jsonfoo", NULL), "prefix only");
	T_OK(mime_is_text("application/octet-stream", "main.py"),
	    "octet-stream judged by name");
	T_OK(mime_is_text(NULL, "data.CSV"), "no type: by name");
	T_OK(mime_is_text("", "README.md"), "empty type: by name");
	T_OK(mime_is_text(NULL, "x.ts"), "typescript source");
	T_OK(!mime_is_text(NULL, "x.zip"), "zip by name");
	T_OK(!mime_is_text(NULL, "README"), "no type, no extension");
	T_OK(!mime_is_text(NULL, NULL), "nothing known");
}

static void
test_last_segment(void)
{
	char	 out[64], small[6];

	name_last_segment("notes.txt", out, sizeof(out));
	T_EQ_STR(out, "notes.txt", "plain name");
	name_last_segment("a/b/c.txt", out, sizeof(out));
	T_EQ_STR(out, "c.txt", "after the last slash");
	name_last_segment("C:\\Users\\x\\d.doc", out, sizeof(out));
	T_EQ_STR(out, "d.doc", "after the last backslash");
	name_last_segment("a\\b/c\\e", out, sizeof(out));
	T_EQ_STR(out, "e", "mixed separators");
	name_last_segment("dir/", out, sizeof(out));
	T_EQ_STR(out, "file", "trailing slash");
	name_last_segment("", out, sizeof(out));
	T_EQ_STR(out, "file", "empty");
	name_last_segment("..", out, sizeof(out));
	T_EQ_STR(out, "file", "dot-dot");
	name_last_segment("a/.", out, sizeof(out));
	T_EQ_STR(out, "file", "dot");
	name_last_segment("x/../..", out, sizeof(out));
	T_EQ_STR(out, "file", "dot-dot at the end of a path");
	name_last_segment(".\r\n.", out, sizeof(out));
	T_EQ_STR(out, "file", "dot-dot hidden by control characters");
	name_last_segment("...", out, sizeof(out));
	T_EQ_STR(out, "...", "three dots are a name");
	name_last_segment(".bashrc", out, sizeof(out));
	T_EQ_STR(out, ".bashrc", "dotfile");
	name_last_segment("r\xc3\xa9sum\xc3\xa9\r\n.pdf", out, sizeof(out));
	T_EQ_STR(out, "r\xc3\xa9sum\xc3\xa9.pdf", "UTF-8 kept, CRLF gone");
	name_last_segment("abcd\xe2\x82\xac", small, sizeof(small));
	T_EQ_STR(small, "abcd", "cut before a split character");
}

static void
test_ascii_fallback(void)
{
	char	 out[64], small[4];

	name_ascii_fallback("report-2024 (final).pdf", out, sizeof(out));
	T_EQ_STR(out, "report-2024 (final).pdf", "printable ASCII kept");
	name_ascii_fallback("a\"b\\c", out, sizeof(out));
	T_EQ_STR(out, "a_b_c", "quote and backslash replaced");
	name_ascii_fallback("a\r\nb\x7f\tc", out, sizeof(out));
	T_EQ_STR(out, "a__b__c", "control characters replaced");
	name_ascii_fallback("caf\xc3\xa9 \xe6\x97\xa5\xf0\x9f\x98\x80.txt",
	    out, sizeof(out));
	T_EQ_STR(out, "caf_ __.txt", "one '_' per non-ASCII character");
	name_ascii_fallback("\xff\x80z", out, sizeof(out));
	T_EQ_STR(out, "__z", "invalid UTF-8 bytes replaced");
	name_ascii_fallback("", out, sizeof(out));
	T_EQ_STR(out, "file", "never empty");
	name_ascii_fallback("abcdef", small, sizeof(small));
	T_EQ_STR(small, "abc", "truncated to fit");
}

/* No CR, LF, '"' or '\\' beyond the quotes the format itself puts in. */
static int
header_safe(const char *v)
{
	const char	*q1, *q2, *p;

	if (strpbrk(v, "\r\n\\") != NULL)
		return 0;
	if ((q1 = strchr(v, '"')) == NULL || (q2 = strchr(q1 + 1, '"')) ==
	    NULL || strchr(q2 + 1, '"') != NULL)
		return 0;
	for (p = v; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			return 0;
	return 1;
}

static void
test_content_disposition(void)
{
	static const char *hostile[] = {
	    "a\"; filename=\"evil.sh", "x\r\nSet-Cookie: a=b", "a\\\"b",
	    "..", "", "\xe2\x80\xae\x00", "dir/\"\r\n\\", "\xff\xfe\"",
	    "C:\\temp\\\"quoted\".txt", "%0D%0A%22", "\x7f\x01" };
	char		 out[512];
	size_t		 i;
	int		 safe = 1;

	T_EQ_INT(content_disposition("notes.txt", out, sizeof(out)), 0,
	    "fits");
	T_EQ_STR(out, "attachment; filename=\"notes.txt\"; "
	    "filename*=UTF-8''notes.txt", "plain name");
	content_disposition("dir/caf\xc3\xa9 \"1\".txt", out, sizeof(out));
	T_EQ_STR(out, "attachment; filename=\"caf_ _1_.txt\"; "
	    "filename*=UTF-8''caf%C3%A9%20%221%22.txt",
	    "last segment, ASCII fallback and percent-encoding");
	content_disposition("a\\b%;'*=.tgz", out, sizeof(out));
	T_EQ_STR(out, "attachment; filename=\"b%;'*=.tgz\"; "
	    "filename*=UTF-8''b%25%3B%27%2A%3D.tgz",
	    "characters outside attr-char encoded");
	content_disposition("..", out, sizeof(out));
	T_EQ_STR(out, "attachment; filename=\"file\"; filename*=UTF-8''file",
	    "dot-dot falls back");
	for (i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		if (content_disposition(hostile[i], out, sizeof(out)) != 0 ||
		    !header_safe(out)) {
			printf("# unsafe: %s\n", out);
			safe = 0;
		}
	}
	T_OK(safe, "hostile names give safe header values");
	T_EQ_INT(content_disposition("notes.txt", out, 40), -1,
	    "too small: -1");
	T_EQ_STR(out, "", "too small: empty output");
	T_EQ_INT(content_disposition("notes.txt", out, 60), -1,
	    "one byte short");
	T_EQ_INT(content_disposition("notes.txt", out, 61), 0,
	    "exactly enough");
}

static void
test_dedupe(void)
{
	char	 out[64], mid[20], small[12], tiny[2];

	name_dedupe("notes.txt", 2, out, sizeof(out));
	T_EQ_STR(out, "notes-2.txt", "before the extension");
	name_dedupe("notes.txt", 1, out, sizeof(out));
	T_EQ_STR(out, "notes.txt", "n < 2 copies");
	name_dedupe("Makefile", 3, out, sizeof(out));
	T_EQ_STR(out, "Makefile-3", "no extension");
	name_dedupe(".bashrc", 2, out, sizeof(out));
	T_EQ_STR(out, ".bashrc-2", "dotfile");
	name_dedupe(".config.json", 2, out, sizeof(out));
	T_EQ_STR(out, ".config-2.json", "dotfile with extension");
	name_dedupe("archive.tar.gz", 12, out, sizeof(out));
	T_EQ_STR(out, "archive-12.tar.gz", "tarball keeps .tar.gz");
	name_dedupe("my.report.v2.pdf", 2, out, sizeof(out));
	T_EQ_STR(out, "my.report.v2-2.pdf", "last dot otherwise");
	name_dedupe("dir.d/README", 2, out, sizeof(out));
	T_EQ_STR(out, "dir.d/README-2", "dots in directories ignored");
	name_dedupe("", 2, out, sizeof(out));
	T_EQ_STR(out, "-2", "empty name");
	name_dedupe("verylongname.txt", 100, mid, sizeof(mid));
	T_EQ_STR(mid, "verylongnam-100.txt", "stem shortened, suffix kept");
	name_dedupe("\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac.txt", 100, mid,
	    16);
	T_EQ_STR(mid, "\xe2\x82\xac\xe2\x82\xac-100.txt",
	    "shortened at a character");
	name_dedupe("verylongname.txt", 100, small, sizeof(small));
	T_EQ_STR(small, "verylon-100", "no room for the extension beside "
	    "the longest suffix: it is cut as the stem is");
	name_dedupe("notes.txt", 2, tiny, sizeof(tiny));
	T_EQ_STR(tiny, "n", "smaller than any suffix: a copy cut to fit");
}

/* Whether s is UTF-8 through and through (no overlongs, no surrogates). */
static int
utf8_valid(const char *s)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 need, i;

	while (*p != '\0') {
		if (*p < 0x80) {
			p++;
			continue;
		}
		if (*p >= 0xc2 && *p <= 0xdf)
			need = 1;
		else if (*p >= 0xe0 && *p <= 0xef)
			need = 2;
		else if (*p >= 0xf0 && *p <= 0xf4)
			need = 3;
		else
			return 0;
		if ((*p == 0xe0 && p[1] < 0xa0) || (*p == 0xed && p[1] > 0x9f) ||
		    (*p == 0xf0 && p[1] < 0x90) || (*p == 0xf4 && p[1] > 0x8f))
			return 0;
		for (i = 1; i <= need; i++)
			if ((p[i] & 0xc0) != 0x80)
				return 0;
		p += need + 1;
	}
	return 1;
}

static char *
repeat(char *out, const char *head, const char *unit, int times,
    const char *tail)
{
	int	 i;

	strcpy(out, head);
	for (i = 0; i < times; i++)
		strcat(out, unit);
	strcat(out, tail);
	return out;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(a, b);
}

#define SEEN_MAX	2000

/* name_dedupe(name, 2 .. SEEN_MAX + 1) into len: each fits and differs. */
static int
all_differ(const char *name, size_t len, int *fit)
{
	static char	 seen[SEEN_MAX][256];
	int		 i;

	*fit = 1;
	for (i = 0; i < SEEN_MAX; i++) {
		name_dedupe(name, i + 2, seen[i], len);
		if (strlen(seen[i]) >= len || !utf8_valid(seen[i]))
			*fit = 0;
	}
	qsort(seen, SEEN_MAX, sizeof(seen[0]), cmp_str);
	for (i = 1; i < SEEN_MAX; i++)
		if (strcmp(seen[i - 1], seen[i]) == 0)
			return 0;
	return 1;
}

/* Issue 18: names that leave "-n" no room. */
static void
test_dedupe_long(void)
{
	char	 name[1100], out[256], want[300];
	int	 fit;

	/* "x." and 253 'a': 255 bytes, max-filename's default. */
	repeat(name, "x.", "a", 253, "");
	name_dedupe(name, 2, out, sizeof(out));
	T_EQ_STR(out, repeat(want, "x.", "a", 251, "-2"), "255 bytes: the "
	    "suffix goes at the end of the name, cut to fit");
	T_OK(all_differ(name, sizeof(out), &fit) && fit, "255 bytes: 2000 "
	    "names, each of its own and under 256");
	/* 254 bytes: -2 .. -9 fit before the extension, -10 did not. */
	repeat(name, "x.", "a", 252, "");
	name_dedupe(name, 10, out, sizeof(out));
	T_EQ_STR(out, repeat(want, "x.", "a", 250, "-10"), "254 bytes, -10: "
	    "cut to fit");
	name_dedupe(name, 9, out, sizeof(out));
	T_EQ_STR(out, repeat(want, "x.", "a", 251, "-9"), "254 bytes, -9: "
	    "the same rule for every n");
	T_OK(all_differ(name, sizeof(out), &fit) && fit, "254 bytes: 2000 "
	    "names, each of its own and under 256");
	/* The longest extension that stays: 244 bytes with its dot. */
	repeat(name, "ab.", "e", 243, "");
	name_dedupe(name, 2, out, sizeof(out));
	T_EQ_STR(out, repeat(want, "ab-2.", "e", 243, ""), "an extension "
	    "that fits beside any suffix stays");
	name_dedupe(name, 2000000000, out, sizeof(out));
	T_EQ_STR(out, repeat(want, "-2000000000.", "e", 243, ""), "even "
	    "beside the longest");
	repeat(name, "ab.", "e", 244, "");
	name_dedupe(name, 2, out, sizeof(out));
	T_EQ_STR(out, repeat(want, "ab.", "e", 244, "-2"), "one byte more: "
	    "the suffix goes at the end");
	/* An extension longer than the limit itself. */
	repeat(name, "x.", "a", 1000, "");
	name_dedupe(name, 7, out, sizeof(out));
	T_EQ_STR(out, repeat(want, "x.", "a", 251, "-7"), "an extension "
	    "longer than the limit: cut");
	T_OK(all_differ(name, sizeof(out), &fit) && fit, "... 2000 names "
	    "of its own");
	/* No extension at all. */
	repeat(name, "", "a", 255, "");
	name_dedupe(name, 12, out, sizeof(out));
	T_EQ_STR(out, repeat(want, "", "a", 252, "-12"), "no extension: the "
	    "end cut for the suffix");
	/* Multibyte stems: never cut inside a character. */
	repeat(name, "", "\xc3\xa9", 125, ".txt");
	name_dedupe(name, 2, out, sizeof(out));
	T_EQ_STR(out, repeat(want, "", "\xc3\xa9", 124, "-2.txt"), "a stem "
	    "of two-byte characters cut at one");
	T_OK(all_differ(name, sizeof(out), &fit) && fit, "... 2000 names, "
	    "valid UTF-8, each of its own");
	repeat(name, "x.", "\xe2\x82\xac", 84, "");
	name_dedupe(name, 10, out, sizeof(out));
	T_EQ_STR(out, repeat(want, "x.", "\xe2\x82\xac", 83, "-10"), "a "
	    "multibyte extension that gives way, cut at a character");
	T_OK(all_differ(name, sizeof(out), &fit) && fit, "... 2000 names, "
	    "valid UTF-8, each of its own");
	repeat(name, "", "\xf0\x9f\x98\x80", 63, ".tar.gz");
	T_OK(all_differ(name, sizeof(out), &fit) && fit, "four-byte "
	    "characters before .tar.gz: 2000 names of their own");
	T_OK(all_differ("notes.txt", NAME_DEDUPE_MIN, &fit) && fit,
	    "in NAME_DEDUPE_MIN bytes every n still differs");
}

struct taken {
	const char	**names;
	size_t		  n;
	int		  asked;
};

static int
taken(const char *name, void *arg)
{
	struct taken	*t = arg;
	size_t		 i;

	t->asked++;
	for (i = 0; i < t->n; i++)
		if (strcmp(t->names[i], name) == 0)
			return 1;
	return 0;
}

static void
test_unique(void)
{
	static char	 held[12][256];
	const char	*names[12];
	struct taken	 t = { names, 0, 0 };
	char		 name[300], out[256];
	int		 i, n, ok = 1;

	T_EQ_INT(name_unique("a.txt", 1, 0, taken, &t, out, sizeof(out)), 1,
	    "a free name is itself");
	T_EQ_STR(out, "a.txt", "... unchanged");
	/* Ten of one 254-byte name (issue 18: "-10" once looped). */
	repeat(name, "x.", "a", 252, "");
	for (i = 0; i < 10; i++) {
		t.asked = 0;
		n = name_unique(name, 1, t.n, taken, &t, held[i],
		    sizeof(held[i]));
		if (n != (i == 0 ? 1 : i + 1) || strlen(held[i]) > 255 ||
		    t.asked > (int)t.n + 2)
			ok = 0;
		names[t.n++] = held[i];
	}
	T_OK(ok, "ten of a 254-byte name: base, -2 ... -10, within bound");
	T_EQ_STR(held[9], repeat(name, "x.", "a", 250, "-10"), "the tenth");
	/* A base that is one of its own candidates once cut. */
	names[0] = "abcdefgh-10";
	t.n = 1;
	n = name_unique("abcdefgh-10", 1, 1, taken, &t, out, NAME_DEDUPE_MIN);
	T_OK(n == 2 && strcmp(out, "abcdefgh-10") != 0, "a base that a cut "
	    "candidate repeats is passed over (%s)", out);
	/* Starting past the candidates known taken. */
	names[0] = "a.txt";
	names[1] = "a-2.txt";
	t.n = 2;
	t.asked = 0;
	T_EQ_INT(name_unique("a.txt", 3, 2, taken, &t, out, sizeof(out)), 3,
	    "first: 3 starts at -3");
	T_OK(t.asked == 1 && strcmp(out, "a-3.txt") == 0, "asked once (%d)",
	    t.asked);
	/* No room for any suffix: a bounded search, then -1. */
	names[0] = "n";
	t.n = 1;
	t.asked = 0;
	T_EQ_INT(name_unique("notes.txt", 1, 1, taken, &t, out, 2), -1,
	    "nothing fits: -1");
	T_OK(t.asked <= 3 && strcmp(out, "n") == 0, "after %d tries, "
	    "the base cut to fit", t.asked);
}

static void
test_utf8_cut(void)
{
	const char	*s = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";

	T_EQ_INT(utf8_cut(s, 10), 10, "whole string");
	T_EQ_INT(utf8_cut(s, 9), 6, "inside a 4-byte character");
	T_EQ_INT(utf8_cut(s, 5), 3, "inside a 3-byte character");
	T_EQ_INT(utf8_cut(s, 2), 1, "inside a 2-byte character");
	T_EQ_INT(utf8_cut(s, 3), 3, "at a boundary");
	T_EQ_INT(utf8_cut("\x80\x80", 2), 2, "stray continuation bytes");
}

int
main(void)
{
	test_mime_guess();
	test_mime_for_upload();
	test_mime_is_text();
	test_last_segment();
	test_ascii_fallback();
	test_content_disposition();
	test_dedupe();
	test_dedupe_long();
	test_unique();
	test_utf8_cut();
	return t_done();
}
