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
 * test_multipart.c: the streaming multipart/form-data parser.
 */
#include <sys/resource.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "multipart.h"
#include "t.h"

#define MAXPARTS	8
#define DATACAP		(1 << 20)

struct got_part {
	struct multipart_part	 hdr;
	char			*data;
	size_t			 len;
	int			 ended;
};

struct got {
	struct got_part	 part[MAXPARTS];
	int		 nparts;
	int		 open;		/* a part has begun and not ended */
	int		 misordered;	/* a callback came out of order */
	int		 data_calls;
};

static int
on_begin(void *arg, const struct multipart_part *p)
{
	struct got	*g = arg;

	if (g->open || g->nparts == MAXPARTS) {
		g->misordered = 1;
		return -1;
	}
	g->part[g->nparts].hdr = *p;
	g->part[g->nparts].data = malloc(DATACAP);
	g->nparts++;
	g->open = 1;
	return 0;
}

static int
on_data(void *arg, const void *buf, size_t len)
{
	struct got	*g = arg;
	struct got_part	*gp;

	if (!g->open || len == 0) {
		g->misordered = 1;
		return -1;
	}
	gp = &g->part[g->nparts - 1];
	if (gp->len + len > DATACAP)
		return -1;
	memcpy(gp->data + gp->len, buf, len);
	gp->len += len;
	g->data_calls++;
	return 0;
}

static int
on_end(void *arg)
{
	struct got	*g = arg;

	if (!g->open) {
		g->misordered = 1;
		return -1;
	}
	g->part[g->nparts - 1].ended = 1;
	g->open = 0;
	return 0;
}

static const struct multipart_cb cbs = { on_begin, on_data, on_end };

static void
got_free(struct got *g)
{
	int	 i;

	for (i = 0; i < g->nparts; i++)
		free(g->part[i].data);
	memset(g, 0, sizeof(*g));
}

/*
 * Parses body in pieces: step 0 feeds it whole, step > 0 in pieces of
 * that size, step < 0 in pseudo-random pieces seeded by -step.
 * Returns 0 when feed and finish both succeeded; *err the error.
 */
static int
parse(const char *ct, const char *body, size_t len, long step,
    struct got *g, const char **err)
{
	struct multipart	*mp;
	const char		*why = NULL;
	size_t			 off = 0, n;
	uint32_t		 seed = (uint32_t)-step;
	int			 rv = 0;

	memset(g, 0, sizeof(*g));
	*err = NULL;
	if ((mp = multipart_new(ct, &cbs, g, &why)) == NULL) {
		*err = why;
		return -1;
	}
	while (off < len && rv == 0) {
		if (step == 0)
			n = len;
		else if (step > 0)
			n = (size_t)step;
		else {
			seed = seed * 1103515245 + 12345;
			n = 1 + (seed >> 16) % 97;
		}
		if (n > len - off)
			n = len - off;
		rv = multipart_feed(mp, body + off, n);
		off += n;
	}
	if (rv == 0)
		rv = multipart_finish(mp);
	if (rv == -1)
		*err = multipart_error(mp);
	multipart_free(mp);
	return rv;
}

#define CT	"multipart/form-data; boundary=XyZ123"

static const char normal_form[] =
    "--XyZ123\r\n"
    "Content-Disposition: form-data; name=\"purpose\"\r\n"
    "\r\n"
    "assistants\r\n"
    "--XyZ123\r\n"
    "Content-Disposition: form-data; name=\"file\"; "
    "filename=\"notes.txt\"\r\n"
    "Content-Type: text/plain\r\n"
    "\r\n"
    "hello\r\nworld\n\r\r\n-\r\n--XyZ12\r\n--Xy--\r\n"
    "--XyZ123--\r\n";

static const char normal_file[] =
    "hello\r\nworld\n\r\r\n-\r\n--XyZ12\r\n--Xy--";

static int
same_parts(const struct got *a, const struct got *b)
{
	int	 i;

	if (a->nparts != b->nparts || a->misordered || b->misordered)
		return 0;
	for (i = 0; i < a->nparts; i++) {
		if (a->part[i].len != b->part[i].len ||
		    memcmp(a->part[i].data, b->part[i].data,
		    a->part[i].len) != 0 ||
		    memcmp(&a->part[i].hdr, &b->part[i].hdr,
		    sizeof(a->part[i].hdr)) != 0 ||
		    a->part[i].ended != b->part[i].ended)
			return 0;
	}
	return 1;
}

static void
test_normal(void)
{
	struct got	 g;
	const char	*err;

	T_EQ_INT(parse(CT, normal_form, sizeof(normal_form) - 1, 0, &g, &err),
	    0, "normal form parses");
	T_EQ_INT(g.nparts, 2, "two parts");
	T_OK(!g.misordered && !g.open, "callbacks in order, all parts ended");
	T_EQ_STR(g.part[0].hdr.name, "purpose", "first part name");
	T_EQ_INT(g.part[0].hdr.has_filename, 0, "purpose has no filename");
	T_EQ_STR(g.part[0].hdr.content_type, "", "purpose has no type");
	T_OK(g.part[0].len == 10 && memcmp(g.part[0].data, "assistants",
	    10) == 0, "purpose value");
	T_EQ_STR(g.part[1].hdr.name, "file", "second part name");
	T_EQ_STR(g.part[1].hdr.filename, "notes.txt", "filename");
	T_EQ_INT(g.part[1].hdr.has_filename, 1, "has_filename");
	T_EQ_STR(g.part[1].hdr.content_type, "text/plain", "part type");
	T_EQ_INT(g.part[1].len, sizeof(normal_file) - 1,
	    "near-boundary body length intact");
	T_OK(g.part[1].len == sizeof(normal_file) - 1 &&
	    memcmp(g.part[1].data, normal_file, g.part[1].len) == 0,
	    "near-boundary sequences passed through");
	got_free(&g);
}

static void
test_splits(void)
{
	struct got	 whole, g;
	const char	*err;
	long		 step;
	int		 ok_all = 1, same_all = 1;

	parse(CT, normal_form, sizeof(normal_form) - 1, 0, &whole, &err);
	T_OK(parse(CT, normal_form, sizeof(normal_form) - 1, 1, &g,
	    &err) == 0 && same_parts(&whole, &g), "one byte at a time");
	T_OK(g.data_calls > whole.data_calls, "bytes came in more calls");
	got_free(&g);
	for (step = 2; step < 40; step++) {
		if (parse(CT, normal_form, sizeof(normal_form) - 1, step, &g,
		    &err) != 0)
			ok_all = 0;
		if (!same_parts(&whole, &g))
			same_all = 0;
		got_free(&g);
	}
	for (step = -1; step > -200; step--) {
		if (parse(CT, normal_form, sizeof(normal_form) - 1, step, &g,
		    &err) != 0)
			ok_all = 0;
		if (!same_parts(&whole, &g))
			same_all = 0;
		got_free(&g);
	}
	T_OK(ok_all, "every split parses");
	T_OK(same_all, "every split gives the same parts and bytes");
	got_free(&whole);
}

static void
test_framing(void)
{
	struct got	 g;
	const char	*err;
	const char	*body;

	body = "preamble text\r\n--b\r\n"
	    "Content-Disposition: form-data; name=\"a\"\r\n\r\n"
	    "1\r\n--b--\r\nepilogue --b\r\n garbage";
	T_EQ_INT(parse("multipart/form-data; boundary=\"b\"", body,
	    strlen(body), 0, &g, &err), 0, "quoted boundary, preamble and "
	    "epilogue");
	T_OK(g.nparts == 1 && g.part[0].len == 1 && g.part[0].data[0] == '1',
	    "only the part's bytes");
	got_free(&g);

	body = "--a'b (c)\r\n"
	    "content-disposition: FORM-DATA; NAME=x\r\n\r\n"
	    "v\r\n--a'b (c)  \r\n"
	    "Content-Disposition: form-data; name=y\r\n\r\n"
	    "\r\n--a'b (c)--";
	T_EQ_INT(parse("Multipart/Form-Data ; charset=utf-8; "
	    "BOUNDARY=\"a'b (c)\"", body, strlen(body), 1, &g, &err), 0,
	    "case-insensitive names, padding, odd boundary characters");
	T_OK(g.nparts == 2 && strcmp(g.part[0].hdr.name, "x") == 0 &&
	    g.part[1].len == 0 && g.part[1].ended, "token name, empty part");
	got_free(&g);

	body = "--b\r\nContent-Disposition: form-data; name=\"file\"; "
	    "filename=\"empty.bin\"\r\n\r\n\r\n--b--";
	T_EQ_INT(parse("multipart/form-data; boundary=b", body, strlen(body),
	    0, &g, &err), 0, "empty file part");
	T_OK(g.nparts == 1 && g.part[0].len == 0 &&
	    g.part[0].hdr.has_filename && g.data_calls == 0,
	    "empty file: no bytes, no data calls");
	got_free(&g);
}

static void
expect_error(const char *ct, const char *body, const char *want,
    const char *what)
{
	struct got	 g;
	const char	*err;
	int		 rv;

	rv = parse(ct, body, strlen(body), 1, &g, &err);
	T_OK(rv == -1 && err != NULL && strcmp(err, want) == 0,
	    "%s: error \"%s\"", what, err ? err : "(none)");
	got_free(&g);
}

#define DISP	"Content-Disposition: form-data; name=\"f\"\r\n\r\n"

static void
test_errors(void)
{
	static char	 big[MULTIPART_MAXHEADER + 200];
	static char	 fits[MULTIPART_MAXHEADER + 200];
	char		 b70[71], ct70[128], body70[128];
	struct got	 g;
	const char	*err;
	size_t		 n;

	expect_error("multipart/form-data", "", "missing boundary",
	    "no boundary parameter");
	expect_error("multipart/form-data; charset=x", "", "missing boundary",
	    "other parameters only");
	expect_error("application/json", "", "not multipart/form-data",
	    "other media type");
	expect_error("multipart/form-data; boundary=\"\"", "",
	    "invalid boundary", "empty boundary");
	expect_error("multipart/form-data; boundary=a\x01z", "",
	    "invalid boundary", "control character in boundary");
	expect_error("multipart/form-data; boundary=12345678901234567890"
	    "123456789012345678901234567890123456789012345678901", "",
	    "invalid boundary", "71-character boundary");
	memset(b70, 'b', 70);
	b70[70] = '\0';
	snprintf(ct70, sizeof(ct70), "multipart/form-data; boundary=%s", b70);
	snprintf(body70, sizeof(body70), "--%s--", b70);
	T_OK(parse(ct70, body70, strlen(body70), 1, &g, &err) == 0,
	    "70-character boundary");
	got_free(&g);

	expect_error(CT, "--XyZ123\r\n" DISP "abc",
	    "body ended before the closing boundary", "no closing boundary");
	expect_error(CT, "--XyZ123\r\n" DISP "abc\r\n--XyZ12",
	    "body ended before the closing boundary",
	    "closing boundary cut short");
	expect_error(CT, "", "body ended before the closing boundary",
	    "empty body");
	expect_error(CT, "--XyZ123\r\nContent-Disposition: attachment; "
	    "name=\"f\"\r\n\r\nx\r\n--XyZ123--",
	    "part without Content-Disposition form-data", "attachment");
	expect_error(CT, "--XyZ123\r\nContent-Type: text/plain\r\n\r\n"
	    "x\r\n--XyZ123--", "part without Content-Disposition form-data",
	    "no Content-Disposition");
	expect_error(CT, "--XyZ123\r\nContent-Disposition form-data\r\n\r\n"
	    "x\r\n--XyZ123--", "malformed part headers", "no colon");
	expect_error(CT, "--XyZ123\r\nX-A: b\r\n c\r\n" DISP
	    "x\r\n--XyZ123--", "malformed part headers", "folded header");
	expect_error(CT, "--XyZ123\r\n" DISP "x\r\n--XyZ1234--\r\n"
	    "--XyZ123--", "malformed boundary line",
	    "a line that starts with the delimiter");
	expect_error(CT, "--XyZ123\r\nContent-Disposition: form-data; "
	    "name=\"f\r\n\r\nx\r\n--XyZ123--", "malformed part headers",
	    "unterminated quote");
	expect_error(CT, "--XyZ123\r\nContent-Disposition: form-data; "
	    "name=\"f\"\nX: y\r\n\r\nx\r\n--XyZ123--",
	    "malformed part headers", "bare LF in headers");
	expect_error(CT, "--XyZ123\r\nContent-Disposition: form-data; "
	    "name\r\n\r\nx\r\n--XyZ123--", "malformed part headers",
	    "parameter without a value at the end of the line");
	expect_error("multipart/form-data; boundary", "", "malformed Content-Type",
	    "boundary without a value");
	expect_error(CT, "--XyZ123\r\nContent-Disposition: form-data; "
	    "filename=\"a\"\r\n\r\nx\r\n--XyZ123--", "part without a name",
	    "no name parameter");
	expect_error(CT, "--XyZ123\r\n" DISP "x\r\n--XyZ123x\r\n",
	    "malformed boundary line", "delimiter followed by text");
	expect_error(CT, "--XyZ123\n" DISP "x\n--XyZ123--\n",
	    "malformed boundary line", "bare LF after the delimiter");

	/* Headers of exactly the limit pass; one byte more does not. */
	n = MULTIPART_MAXHEADER - strlen(DISP) - strlen("X: \r\n");
	snprintf(fits, sizeof(fits), "--XyZ123\r\nX: %0*d\r\n" DISP
	    "x\r\n--XyZ123--", (int)n, 0);
	T_OK(parse(CT, fits, strlen(fits), 0, &g, &err) == 0,
	    "headers of exactly MULTIPART_MAXHEADER bytes");
	got_free(&g);
	snprintf(big, sizeof(big), "--XyZ123\r\nX: %0*d\r\n" DISP
	    "x\r\n--XyZ123--", (int)n + 1, 0);
	expect_error(CT, big, "part headers too large", "headers one byte over");
}

static int
abort_on_data(void *arg, const void *buf, size_t len)
{
	return -1;
}

static void
test_abort(void)
{
	struct multipart_cb	 cb = { NULL, abort_on_data, NULL };
	struct multipart	*mp;
	const char		*why;

	mp = multipart_new(CT, &cb, NULL, &why);
	T_OK(mp != NULL, "parser with NULL callbacks");
	T_EQ_INT(multipart_feed(mp, normal_form, sizeof(normal_form) - 1), -1,
	    "callback stops the parse");
	T_EQ_STR(multipart_error(mp), "aborted", "error says aborted");
	T_EQ_INT(multipart_feed(mp, "x", 1), -1, "stays failed");
	T_EQ_INT(multipart_finish(mp), -1, "finish fails after abort");
	T_EQ_STR(multipart_error(mp), "aborted", "first error kept");
	multipart_free(mp);
}

/* The filename the parser gives for a Content-Disposition tail. */
static const char *
filename_of(const char *params, int *has)
{
	static char	 fn[4096];
	char		 body[2048];
	struct got	 g;
	const char	*err;

	snprintf(body, sizeof(body), "--XyZ123\r\nContent-Disposition: "
	    "form-data; name=\"file\"%s\r\n\r\nx\r\n--XyZ123--", params);
	if (parse(CT, body, strlen(body), 0, &g, &err) != 0 ||
	    g.nparts != 1) {
		got_free(&g);
		return err ? err : "(no part)";
	}
	strlcpy(fn, g.part[0].hdr.filename, sizeof(fn));
	*has = g.part[0].hdr.has_filename;
	got_free(&g);
	return fn;
}

static void
test_filenames(void)
{
	int	 has = -1;

	T_EQ_STR(filename_of("; filename=\"a%22b.txt\"", &has), "a\"b.txt",
	    "%22 is a quote");
	T_EQ_STR(filename_of("; filename=\"a%0D%0Ab.txt\"", &has), "ab.txt",
	    "%0D%0A decoded then removed");
	T_EQ_STR(filename_of("; filename=\"a%0d%0ab.txt\"", &has), "ab.txt",
	    "lowercase escapes too");
	T_EQ_STR(filename_of("; filename=\"a%5Cb.txt\"", &has), "a%5Cb.txt",
	    "%5C stays as is");
	T_EQ_STR(filename_of("; filename=\"100%25.txt\"", &has), "100%25.txt",
	    "other escapes stay");
	T_EQ_STR(filename_of("; filename=\"a\x01\x1f\x7f\tb\"", &has), "ab",
	    "control characters removed");
	T_EQ_STR(filename_of("; filename=\"caf\xc3\xa9 \xe6\x97\xa5.txt\"",
	    &has), "caf\xc3\xa9 \xe6\x97\xa5.txt", "UTF-8 kept");
	T_EQ_STR(filename_of("; filename=\"dir/sub/../x.txt\"", &has),
	    "dir/sub/../x.txt", "slashes kept");
	T_EQ_STR(filename_of("; filename=\"say \\\"hi\\\".txt\"", &has),
	    "say \"hi\".txt", "backslash-escaped quotes");
	T_EQ_STR(filename_of("; filename=\"C:\\\\dir\\\\f.txt\"", &has),
	    "C:\\dir\\f.txt", "doubled backslashes (httpx)");
	T_EQ_STR(filename_of("; filename=\"C:\\dir\\f.txt\"", &has),
	    "C:\\dir\\f.txt", "lone backslashes (browsers, undici)");
	T_EQ_STR(filename_of("; filename=\"ends\\\"", &has), "ends\\",
	    "trailing lone backslash");
	T_EQ_STR(filename_of("; filename=plain.csv", &has), "plain.csv",
	    "token filename");
	T_EQ_STR(filename_of("; filename=\"fallback.txt\"; "
	    "filename*=UTF-8''%E2%82%AC%20rates%22%5C.txt", &has),
	    "\xe2\x82\xac rates\"\\.txt", "filename* wins, fully decoded");
	T_EQ_STR(filename_of("; filename*=utf-8'en'a%0Ab; "
	    "filename=\"fallback.txt\"", &has), "ab",
	    "filename* wins before filename too, controls removed");
	T_EQ_STR(filename_of("; filename*=ISO-8859-1''caf%E9", &has),
	    "caf\xc3\xa9", "Latin-1 filename* converted");
	T_EQ_STR(filename_of("; filename*=UTF-8''bad%zz", &has),
	    "malformed part headers", "bad percent escape in filename*");
	T_EQ_STR(filename_of("; filename*=KOI8-R''x", &has),
	    "malformed part headers", "unknown charset");
	has = -1;
	T_EQ_STR(filename_of("", &has), "", "no filename");
	T_EQ_INT(has, 0, "no filename: has_filename 0");
	T_EQ_STR(filename_of("; filename=\"\"", &has), "", "empty filename");
	T_EQ_INT(has, 1, "empty filename: has_filename 1");
}

static void
test_decode_direct(void)
{
	char	 buf[16];

	strlcpy(buf, "x%22y", sizeof(buf));
	multipart_decode_filename(buf, sizeof(buf), buf);
	T_EQ_STR(buf, "x\"y", "decode in place");
	multipart_decode_filename(buf, 6, "ab\xe2\x82\xac");
	T_EQ_STR(buf, "ab\xe2\x82\xac", "fits exactly");
	multipart_decode_filename(buf, 5, "ab\xe2\x82\xac");
	T_EQ_STR(buf, "ab", "never cut inside a UTF-8 character");
	multipart_decode_filename(buf, sizeof(buf), "%00a%0");
	T_EQ_STR(buf, "%00a%0", "%00 and a short escape stay");
}

/*
 * 64 MiB of a file part generated as it is fed, full of near-misses
 * of the delimiter; the bytes that come out are hashed and counted.
 */
struct hashsink {
	uint64_t	 hash;
	uint64_t	 bytes;
	int		 parts;
	int		 ended;
	uint64_t	 calls;
};

static uint64_t
fnv(uint64_t h, const void *buf, size_t len)
{
	const uint8_t	*p = buf;

	while (len-- > 0)
		h = (h ^ *p++) * 0x100000001b3ULL;
	return h;
}

static int
sink_begin(void *arg, const struct multipart_part *p)
{
	((struct hashsink *)arg)->parts++;
	return 0;
}

static int
sink_data(void *arg, const void *buf, size_t len)
{
	struct hashsink	*s = arg;

	s->hash = fnv(s->hash, buf, len);
	s->bytes += len;
	s->calls++;
	return 0;
}

static int
sink_end(void *arg)
{
	((struct hashsink *)arg)->ended++;
	return 0;
}

static long
maxrss_kb(void)
{
	struct rusage	 ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static void
test_big_stream(void)
{
	/* Each ends so that no byte after it completes a delimiter. */
	static const char	*tricks[] = { "\r\n--XyZ12x", "\r\n--", "\r\r\n",
	    "\r\n--XyZ\r\n--", "x--XyZ123", "\r\n-" };
	struct multipart_cb	 cb = { sink_begin, sink_data, sink_end };
	struct hashsink		 s = { 0xcbf29ce484222325ULL, 0, 0, 0, 0 };
	struct multipart	*mp;
	const char		*why, *head, *tail;
	uint8_t			 chunk[65536 + 7];
	uint64_t		 want = 0xcbf29ce484222325ULL, sent = 0;
	uint64_t		 total = 64ULL << 20;
	uint32_t		 seed = 42;
	long			 rss_before;
	size_t			 i, n, t;
	uint64_t		 feeds = 0;
	int			 rv = 0;

	rss_before = maxrss_kb();
	mp = multipart_new(CT, &cb, &s, &why);
	head = "--XyZ123\r\nContent-Disposition: form-data; name=\"file\"; "
	    "filename=\"big.bin\"\r\n\r\n";
	tail = "\r\n--XyZ123--\r\n";
	rv |= multipart_feed(mp, head, strlen(head));
	while (sent < total && rv == 0) {
		/* Odd chunk sizes move the tricks across feed boundaries. */
		n = sizeof(chunk) - (sent / sizeof(chunk)) % 7;
		if (n > total - sent)
			n = total - sent;
		for (i = 0; i < n; i++) {
			seed = seed * 1103515245 + 12345;
			chunk[i] = seed >> 24;
			if ((seed & 0x3ff) == 0) {
				t = (seed >> 10) % 6;
				if (i + strlen(tricks[t]) <= n) {
					memcpy(chunk + i, tricks[t],
					    strlen(tricks[t]));
					i += strlen(tricks[t]) - 1;
				}
			}
		}
		want = fnv(want, chunk, n);
		rv |= multipart_feed(mp, chunk, n);
		sent += n;
		feeds++;
	}
	rv |= multipart_feed(mp, tail, strlen(tail));
	rv |= multipart_finish(mp);
	T_EQ_INT(rv, 0, "64 MiB stream parses");
	T_OK(s.parts == 1 && s.ended == 1, "one part, ended");
	T_OK(s.bytes == total, "64 MiB out (%llu)",
	    (unsigned long long)s.bytes);
	T_OK(s.hash == want, "the bytes out are the bytes in");
	/*
	 * A CR that starts no delimiter stays inside its span: a span per
	 * feed and one for bytes held back across a feed's end, not a span
	 * per CR (there is one every 256 bytes).
	 */
	T_OK(s.calls <= 2 * feeds,
	    "%llu data calls for %llu feeds, not one per CR",
	    (unsigned long long)s.calls, (unsigned long long)feeds);
	T_OK(maxrss_kb() - rss_before < 4096,
	    "memory grew by %ld KiB, not with the body",
	    maxrss_kb() - rss_before);
	multipart_free(mp);
}

int
main(void)
{
	test_normal();
	test_splits();
	test_framing();
	test_errors();
	test_abort();
	test_filenames();
	test_decode_direct();
	test_big_stream();
	return t_done();
}
