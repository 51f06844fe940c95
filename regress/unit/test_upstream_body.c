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
 * test_upstream_body.c: the streaming base64 encoder and the upstream body
 * built on it: placeholders, lengths known in advance, descriptors of
 * every size mod 3 against a reference encoder, pipes that fill in
 * pieces (pause, wake, resume), files that end early, memory that
 * does not grow with the file, and which bodies curl may take whole
 * from memory (upstream_body_inline).
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/resource.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "base64.h"
#include "fe_model.h"
#include "t.h"

/* A reference encoder written another way: a bit accumulator. */
static char *
ref_b64(const unsigned char *p, size_t n)
{
	static const char a[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char		*out = malloc(B64_ENCLEN(n) + 1), *o = out;
	unsigned long	 acc = 0;
	int		 bits = 0;
	size_t		 i;

	for (i = 0; i < n; i++) {
		acc = (acc << 8) | p[i];
		bits += 8;
		while (bits >= 6) {
			bits -= 6;
			*o++ = a[(acc >> bits) & 0x3f];
		}
	}
	if (bits > 0)
		*o++ = a[(acc << (6 - bits)) & 0x3f];
	while ((o - out) % 4 != 0)
		*o++ = '=';
	*o = '\0';
	return out;
}

static void
test_b64_vectors(void)
{
	static const char *in[] = { "", "f", "fo", "foo", "foob", "fooba",
	    "foobar" };
	static const char *want[] = { "", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==",
	    "Zm9vYmE=", "Zm9vYmFy" };
	struct b64enc	 e;
	char		 out[64];
	size_t		 i, n;

	for (i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		b64enc_init(&e);
		n = b64enc_update(&e, in[i], strlen(in[i]), out);
		n += b64enc_final(&e, out + n);
		out[n] = '\0';
		T_EQ_STR(out, want[i], "RFC 4648 vector");
	}
}

/* Every split of every length up to 40 gives the whole's encoding. */
static void
test_b64_pieces(void)
{
	unsigned char	 buf[40];
	char		 out[128], *ref;
	struct b64enc	 e;
	size_t		 len, cut1, cut2, n;
	int		 bad = 0, runs = 0;

	for (len = 0; len < sizeof(buf); len++)
		buf[len] = (unsigned char)(len * 37 + 11);
	for (len = 0; len <= sizeof(buf); len++) {
		ref = ref_b64(buf, len);
		for (cut1 = 0; cut1 <= len; cut1++)
			for (cut2 = cut1; cut2 <= len; cut2++) {
				b64enc_init(&e);
				n = b64enc_update(&e, buf, cut1, out);
				n += b64enc_update(&e, buf + cut1,
				    cut2 - cut1, out + n);
				n += b64enc_update(&e, buf + cut2,
				    len - cut2, out + n);
				n += b64enc_final(&e, out + n);
				out[n] = '\0';
				bad += strcmp(out, ref) != 0;
				runs++;
			}
		free(ref);
	}
	T_OK(bad == 0, "every 3-way split equals the whole (%d of %d "
	    "differ)", bad, runs);
}

static int
tmpfile_of(const unsigned char *p, size_t n)
{
	char	 path[] = "/tmp/test_upstream_body.XXXXXX";
	int	 fd;

	if ((fd = mkstemp(path)) == -1)
		abort();
	unlink(path);
	if (n > 0 && write(fd, p, n) != (ssize_t)n)
		abort();
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* Reads a whole body with reads of at most chunk bytes. */
static char *
drain(struct upstream_body *ub, size_t chunk, size_t *len, int *status)
{
	char	*out = NULL, *buf = malloc(chunk);
	size_t	 n, total = 0;

	*status = 0;
	for (;;) {
		n = upstream_body_read(buf, 1, chunk, ub);
		if (n == CURL_READFUNC_ABORT || n == CURL_READFUNC_PAUSE) {
			*status = n == CURL_READFUNC_ABORT ? -1 : 1;
			break;
		}
		if (n == 0)
			break;
		out = realloc(out, total + n + 1);
		memcpy(out + total, buf, n);
		total += n;
	}
	free(buf);
	if (out == NULL)
		out = calloc(1, 1);
	out[total] = '\0';
	*len = total;
	return out;
}

/* A body with two files around text; returns what it must read as. */
static char *
expected(const char *ph1, const char *b1, const char *ph2, const char *b2,
    struct json_object **objp)
{
	struct json_object	*o = json_object_new_object(), *arr;
	char			 url[256];
	char			*want;

	json_object_object_add(o, "model", json_object_new_string("m"));
	snprintf(url, sizeof(url), "data:image/png;base64,%s", ph1);
	json_object_object_add(o, "url", json_object_new_string(url));
	arr = json_object_new_array();
	json_object_array_add(arr, json_object_new_string(ph2));
	json_object_object_add(o, "d", arr);
	if (asprintf(&want, "{\"model\":\"m\",\"url\":\"data:image/png;"
	    "base64,%s\",\"d\":[\"%s\"]}", b1, b2) == -1)
		abort();
	*objp = o;
	return want;
}

static void
test_sizes(struct event_base *base)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 4, 5, 6, 7, 100, 12287,
	    12288, 12289, 12290, 65536, 100000, 100001, 100002 };
	static const size_t chunks[] = { 1, 5, 4096, 65536 };
	unsigned char	*data;
	struct upstream_body	*ub;
	struct json_object *o;
	const char	*ph1, *ph2;
	char		*r1, *r2, *want, *got;
	size_t		 i, k, len, bad = 0, badlen = 0;
	int		 st, runs = 0;

	data = malloc(100002);
	for (i = 0; i < 100002; i++)
		data[i] = (unsigned char)(i * 7919 >> 3);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (k = 0; k < sizeof(chunks) / sizeof(chunks[0]); k++) {
			if (chunks[k] == 1 && sizes[i] > 20000)
				continue;
			ub = upstream_body_new(base);
			ph1 = upstream_body_placeholder(ub,
			    tmpfile_of(data, sizes[i]), sizes[i]);
			ph2 = upstream_body_placeholder(ub,
			    tmpfile_of(data + 1, sizes[i] / 2), sizes[i] / 2);
			r1 = ref_b64(data, sizes[i]);
			r2 = ref_b64(data + 1, sizes[i] / 2);
			want = expected(ph1, r1, ph2, r2, &o);
			if (upstream_body_set_json(ub, o) == -1)
				bad++;
			badlen += upstream_body_length(ub) != (int64_t)strlen(want);
			got = drain(ub, chunks[k], &len, &st);
			bad += st != 0 || strcmp(got, want) != 0 ||
			    upstream_body_sent(ub) != (int64_t)len;
			runs++;
			free(got);
			free(want);
			free(r1);
			free(r2);
			json_object_put(o);
			upstream_body_free(ub);
		}
	free(data);
	T_OK(bad == 0, "%d bodies of files of every size mod 3 read as the "
	    "reference encoding (%zu differ)", runs, bad);
	T_OK(badlen == 0, "upstream_body_length is the bytes read (%zu differ)",
	    badlen);
}

static void
test_placeholders(struct event_base *base)
{
	struct upstream_body		*ub = upstream_body_new(base), *ub2 = upstream_body_new(base);
	struct json_object	*o;
	const char		*ph, *ph2, *other, *p;
	char			 fake[128], *got;
	size_t			 len;
	int			 st, ascii = 1;

	ph = upstream_body_placeholder(ub, tmpfile_of((const unsigned char *)"abc",
	    3), 3);
	ph2 = upstream_body_placeholder(ub, tmpfile_of((const unsigned char *)"x",
	    1), 1);
	other = upstream_body_placeholder(ub2, tmpfile_of((const unsigned char *)"y",
	    1), 1);
	for (p = ph; *p != '\0'; p++)
		ascii &= (*p >= '0' && *p <= '9') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= 'a' && *p <= 'z');
	T_OK(ascii, "a placeholder is letters and digits (%s)", ph);
	T_OK(strcmp(ph, ph2) != 0, "two placeholders of a body differ");
	T_OK(strncmp(ph, other, strlen(ph) - 2) != 0,
	    "another body's placeholders have another nonce");

	/* A look-alike (unknown number), the other body's, an unused one. */
	snprintf(fake, sizeof(fake), "%.*s99Z", (int)strlen(ph) - 2, ph);
	o = json_object_new_array();
	json_object_array_add(o, json_object_new_string(fake));
	json_object_array_add(o, json_object_new_string(other));
	json_object_array_add(o, json_object_new_string(ph));
	T_EQ_INT(upstream_body_set_json(ub, o), 0, "set_json");
	T_EQ_INT(upstream_body_length(ub), strlen(fake) + strlen(other) + 4 +
	    strlen("[\"\",\"\",\"\"]"), "length: look-alikes are text, an "
	    "unused placeholder counts nothing");
	got = drain(ub, 7, &len, &st);
	T_OK(strstr(got, "\"YWJj\"") != NULL && strstr(got, fake) != NULL &&
	    strstr(got, other) != NULL, "only the real placeholder became "
	    "base64: %s", got);
	free(got);
	T_EQ_INT(upstream_body_read(fake, 1, 10, ub), 0, "read after the end: 0");

	/* A descriptor's bytes cannot go twice. */
	json_object_array_add(o, json_object_new_string(ph));
	T_EQ_INT(upstream_body_set_json(ub, o), -1, "a placeholder used twice");
	json_object_put(o);
	upstream_body_free(ub);
	upstream_body_free(ub2);
}

static int	 woken;

static void
on_wake(void *arg)
{
	woken++;
}

/* A pipe the storage helper fills slowly: pause, wake, resume. */
static void
test_pipe(struct event_base *base)
{
	struct upstream_body		*ub = upstream_body_new(base);
	struct json_object	*o;
	unsigned char		 data[10000];
	char			 buf[65536], *ref, *want;
	const char		*ph;
	size_t			 n, total = 0, off = 0, i;
	int			 p[2], pauses = 0, wakes_ok = 1;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i ^ (i >> 5));
	if (pipe(p) == -1)
		abort();
	ph = upstream_body_placeholder(ub, p[0], sizeof(data));
	upstream_body_on_wake(ub, on_wake, NULL);
	o = json_object_new_string(ph);
	upstream_body_set_json(ub, o);
	ref = ref_b64(data, sizeof(data));
	if (asprintf(&want, "\"%s\"", ref) == -1)
		abort();
	T_EQ_INT(upstream_body_length(ub), strlen(want), "length of a pipe's body");
	/* Pieces of 1, 2, 3 ... bytes, each after a pause. */
	while (off < sizeof(data)) {
		n = upstream_body_read(buf + total, 1, sizeof(buf) - total, ub);
		if (n == CURL_READFUNC_PAUSE) {
			pauses++;
			woken = 0;
			i = pauses % 97 + 1;
			n = i < sizeof(data) - off ? i : sizeof(data) - off;
			if (write(p[1], data + off, n) != (ssize_t)n)
				abort();
			off += n;
			event_base_loop(base, EVLOOP_ONCE);
			wakes_ok &= woken == 1;
			continue;
		}
		if (n == CURL_READFUNC_ABORT)
			break;
		total += n;
	}
	close(p[1]);
	while ((n = upstream_body_read(buf + total, 1, sizeof(buf) - total, ub)) > 0 &&
	    n != CURL_READFUNC_PAUSE && n != CURL_READFUNC_ABORT)
		total += n;
	buf[total] = '\0';
	T_OK(pauses > 100, "the body paused while the pipe was empty (%d)",
	    pauses);
	T_OK(wakes_ok, "each pause ended with one wake-up");
	T_OK(strcmp(buf, want) == 0, "a pipe filled in pieces reads as the "
	    "reference (%zu bytes)", total);
	free(ref);
	free(want);
	json_object_put(o);
	upstream_body_free(ub);
}

static void
test_short(struct event_base *base)
{
	struct upstream_body		*ub;
	struct json_object	*o;
	unsigned char		 data[20] = "0123456789abcdefghij";
	char			*got;
	size_t			 len;
	int			 st, p[2];

	ub = upstream_body_new(base);
	o = json_object_new_string(upstream_body_placeholder(ub,
	    tmpfile_of(data, 10), 20));
	upstream_body_set_json(ub, o);
	got = drain(ub, 4096, &len, &st);
	T_EQ_INT(st, -1, "a file shorter than its size aborts the upload");
	T_OK(upstream_body_read(got, 1, 1, ub) == CURL_READFUNC_ABORT,
	    "and keeps aborting");
	free(got);
	json_object_put(o);
	upstream_body_free(ub);

	ub = upstream_body_new(base);
	if (pipe(p) == -1)
		abort();
	o = json_object_new_string(upstream_body_placeholder(ub, p[0], 20));
	upstream_body_set_json(ub, o);
	if (write(p[1], data, 5) != 5)
		abort();
	close(p[1]);
	got = drain(ub, 4096, &len, &st);
	T_EQ_INT(st, -1, "a pipe closed early aborts the upload");
	free(got);
	json_object_put(o);
	upstream_body_free(ub);
}

static long
maxrss_kb(void)
{
	struct rusage	 ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* 64 MiB through the body: the peak RSS must not follow. */
static void
test_memory(struct event_base *base)
{
	struct upstream_body		*ub = upstream_body_new(base);
	struct json_object	*o;
	char			 path[] = "/tmp/test_upstream_body.XXXXXX", buf[65536];
	int64_t			 size = 64LL << 20, total = 0;
	long			 before;
	size_t			 n;
	int			 fd;

	if ((fd = mkstemp(path)) == -1 || ftruncate(fd, size) == -1)
		abort();
	unlink(path);
	o = json_object_new_string(upstream_body_placeholder(ub, fd, size));
	upstream_body_set_json(ub, o);
	before = maxrss_kb();
	while ((n = upstream_body_read(buf, 1, sizeof(buf), ub)) > 0 &&
	    n != CURL_READFUNC_PAUSE && n != CURL_READFUNC_ABORT)
		total += n;
	T_EQ_INT(total, B64_ENCLEN(size) + 2, "64 MiB read as base64");
	T_OK(maxrss_kb() - before < 8192, "peak RSS grew by %ld KiB (< 8 MiB)",
	    maxrss_kb() - before);
	json_object_put(o);
	upstream_body_free(ub);
}

static int
pipe_of(const char *s)
{
	int	 p[2];

	if (pipe(p) == -1 || write(p[1], s, strlen(s)) != (ssize_t)strlen(s))
		abort();
	close(p[1]);
	return p[0];
}

/*
 * A code-execution round's body (upstream_body_again): a regular file
 * is bound already and read again from where it stood when first
 * bound (pread); a pipe waits for a fresh descriptor.
 */
static void
test_again(struct event_base *base)
{
	struct upstream_body	*ub = upstream_body_new(base), *again;
	struct json_object	*o;
	const char		*ph1, *ph2;
	char			*first, *second;
	size_t			 len;
	int			 fd, st;

	fd = tmpfile_of((const unsigned char *)"Zabc", 4);
	lseek(fd, 1, SEEK_SET);		/* the file starts at "abc" */
	ph1 = upstream_body_placeholder_tagged(ub, fd, 3, "file-a");
	ph2 = upstream_body_placeholder_tagged(ub, pipe_of("xy"), 2,
	    "file-b");
	o = json_object_new_array();
	json_object_array_add(o, json_object_new_string(ph1));
	json_object_array_add(o, json_object_new_string(ph2));
	T_EQ_INT(upstream_body_set_json(ub, o), 0, "again: set_json");
	first = drain(ub, 5, &len, &st);
	T_EQ_STR(first, "[\"YWJj\",\"eHk=\"]", "again: the first body");
	again = upstream_body_again(ub, base);
	T_OK(again != NULL, "again: a body for the next round");
	T_OK(upstream_body_file_bound(again, 0),
	    "again: the regular file is bound already");
	T_OK(!upstream_body_file_bound(again, 1),
	    "again: the pipe waits for a fresh descriptor");
	T_EQ_STR(upstream_body_file_tag(again, 1), "file-b", "again: its tag");
	upstream_body_bind(again, 1, pipe_of("xy"));
	T_EQ_INT(upstream_body_set_json(again, o), 0, "again: set_json");
	second = drain(again, 5, &len, &st);
	T_EQ_STR(second, first, "again: the same bytes, the file read twice");
	free(first);
	free(second);
	upstream_body_free(again);
	/* The first body's descriptor was never moved: a third round. */
	again = upstream_body_again(ub, base);
	upstream_body_bind(again, 1, pipe_of("xy"));
	upstream_body_set_json(again, o);
	second = drain(again, 3, &len, &st);
	T_EQ_STR(second, "[\"YWJj\",\"eHk=\"]", "again: a third round");
	free(second);
	upstream_body_free(again);
	json_object_put(o);
	upstream_body_free(ub);
}

/* Only a small body with no descriptor to read is handed over whole. */
static void
test_inline(struct event_base *base)
{
	struct upstream_body	*ub = upstream_body_new(base);
	struct json_object	*o = json_object_new_array();
	const char		*ph, *mem;
	char			*big;
	size_t			 len = 0;

	json_object_array_add(o, json_object_new_string("hi"));
	T_EQ_INT(upstream_body_set_json(ub, o), 0, "set_json");
	mem = upstream_body_inline(ub, &len);
	T_OK(mem != NULL && len == 6 && memcmp(mem, "[\"hi\"]", 6) == 0,
	    "JSON alone is in memory, whole: %.*s", (int)len,
	    mem ? mem : "");
	ph = upstream_body_placeholder(ub, tmpfile_of((const unsigned char *)
	    "abc", 3), 3);
	T_EQ_INT(upstream_body_set_json(ub, o), 0, "set_json, a file unused");
	T_OK(upstream_body_inline(ub, &len) != NULL && len == 6,
	    "a file the JSON does not name leaves it in memory");
	json_object_array_add(o, json_object_new_string(ph));
	T_EQ_INT(upstream_body_set_json(ub, o), 0, "set_json, a file used");
	T_OK(upstream_body_inline(ub, &len) == NULL,
	    "a file the JSON names is read from its descriptor");
	json_object_put(o);
	upstream_body_free(ub);

	ub = upstream_body_new(base);
	big = malloc(64 * 1024);
	memset(big, 'a', 64 * 1024 - 4);
	big[64 * 1024 - 4] = '\0';
	o = json_object_new_array();
	json_object_array_add(o, json_object_new_string(big));
	T_EQ_INT(upstream_body_set_json(ub, o), 0, "set_json, 64 KiB");
	T_OK(upstream_body_inline(ub, &len) != NULL && len == 64 * 1024,
	    "64 KiB of JSON is in memory (%zu)", len);
	json_object_array_add(o, json_object_new_string("b"));
	T_EQ_INT(upstream_body_set_json(ub, o), 0, "set_json, over 64 KiB");
	T_OK(upstream_body_inline(ub, &len) == NULL,
	    "more than 64 KiB is streamed");
	json_object_put(o);
	free(big);
	upstream_body_free(ub);
}

int
main(void)
{
	struct event_base	*base = event_base_new();

	signal(SIGPIPE, SIG_IGN);
	test_memory(base);
	test_b64_vectors();
	test_b64_pieces();
	test_sizes(base);
	test_placeholders(base);
	test_pipe(base);
	test_short(base);
	test_again(base);
	test_inline(base);
	event_base_free(base);
	return t_done();
}
