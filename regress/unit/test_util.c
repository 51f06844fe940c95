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
 * test_util.c: ids, tokens, digests, time formatting and unit parsing.
 */
#include <stdint.h>
#include <string.h>

#include "t.h"
#include "util.h"

static int
all_base64url(const char *s)
{
	for (; *s != '\0'; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		    (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
			return 0;
	return 1;
}

static void
test_random(void)
{
	unsigned char	 a[64], b[64], zero[64];

	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	memset(zero, 0, sizeof(zero));
	T_EQ_INT(random_bytes(a, sizeof(a)), 0, "random_bytes succeeds");
	T_EQ_INT(random_bytes(b, sizeof(b)), 0, "random_bytes again");
	T_OK(memcmp(a, zero, sizeof(a)) != 0, "random bytes are not zero");
	T_OK(memcmp(a, b, sizeof(a)) != 0, "two draws differ");
	T_EQ_INT(random_bytes(a, 0), 0, "zero-length draw");
}

static void
test_ids(void)
{
	char	 a[ID_BUFSIZE], b[ID_BUFSIZE];

	id_new(a, sizeof(a), "file-");
	id_new(b, sizeof(b), "file-");
	T_EQ_INT(strlen(a), 5 + 32, "id length");
	T_OK(strncmp(a, "file-", 5) == 0, "id prefix: %s", a);
	T_OK(id_valid(a, "file-"), "new id is valid");
	T_OK(id_valid(b, "file-"), "second id is valid");
	T_OK(strcmp(a, b) != 0, "ids differ");
	T_OK(!id_valid(a, "sess-"), "other prefix refused");

	T_OK(id_valid("file-0123456789abcdef0123456789abcdef", "file-"),
	    "fixed id accepted");
	T_OK(!id_valid("file-0123456789ABCDEF0123456789abcdef", "file-"),
	    "uppercase hex refused");
	T_OK(!id_valid("file-0123456789abcdef0123456789abcde", "file-"),
	    "31 digits refused");
	T_OK(!id_valid("file-0123456789abcdef0123456789abcdef0", "file-"),
	    "33 digits refused");
	T_OK(!id_valid("file-0123456789abcdef0123456789abcdeg", "file-"),
	    "non-hex refused");
	T_OK(!id_valid("0123456789abcdef0123456789abcdef", "file-"),
	    "missing prefix refused");
	T_OK(!id_valid("", "file-"), "empty refused");
	T_OK(!id_valid("file-", "file-"), "prefix alone refused");
	T_OK(!id_valid(NULL, "file-"), "NULL refused");
}

static void
test_tokens(void)
{
	char	 a[TOKEN_LEN], b[TOKEN_LEN];

	token_new(a, sizeof(a));
	token_new(b, sizeof(b));
	T_EQ_INT(strlen(a), TOKEN_LEN - 1, "token length");
	T_OK(strncmp(a, "dpt-", 4) == 0, "token prefix");
	T_OK(all_base64url(a + 4), "token body is base64url");
	T_OK(strcmp(a, b) != 0, "tokens differ");
}

static void
test_hex(void)
{
	const unsigned char	 in[] = { 0x00, 0x01, 0xab, 0xff, 0x7f };
	char			 out[11];

	hex_encode(in, sizeof(in), out);
	T_EQ_STR(out, "0001abff7f", "hex_encode");
	hex_encode(in, 0, out);
	T_EQ_STR(out, "", "hex_encode of nothing");
}

static void
test_sha256(void)
{
	struct sha256_ctx	 ctx;
	char			 one[SHA256_HEXLEN], inc[SHA256_HEXLEN];
	static char		 big[100000];
	size_t			 i;

	sha256_hex("abc", 3, one);
	T_EQ_STR(one, "ba7816bf8f01cfea414140de5dae2223"
	    "b00361a396177a9cb410ff61f20015ad", "sha256(\"abc\")");
	sha256_hex("", 0, one);
	T_EQ_STR(one, "e3b0c44298fc1c149afbf4c8996fb924"
	    "27ae41e4649b934ca495991b7852b855", "sha256(\"\")");

	for (i = 0; i < sizeof(big); i++)
		big[i] = (char)(i * 7 + 3);
	sha256_hex(big, sizeof(big), one);
	T_EQ_INT(sha256_init(&ctx), 0, "sha256_init");
	/* Uneven pieces, so that block boundaries fall inside updates. */
	for (i = 0; i < sizeof(big); i += 997) {
		size_t n = sizeof(big) - i < 997 ? sizeof(big) - i : 997;

		if (sha256_update(&ctx, big + i, n) != 0)
			break;
	}
	T_OK(i >= sizeof(big), "every update succeeded");
	T_EQ_INT(sha256_final_hex(&ctx, inc), 0, "sha256_final_hex");
	T_EQ_STR(inc, one, "incremental equals one-shot");
	T_EQ_INT(sha256_final_hex(&ctx, inc), -1, "second final refused");

	T_EQ_INT(sha256_init(&ctx), 0, "sha256_init for abort");
	sha256_update(&ctx, "x", 1);
	sha256_abort(&ctx);
	T_OK(ctx.md == NULL, "abort releases the context");
}

static void
test_streq(void)
{
	T_OK(timingsafe_streq("secret", "secret"), "equal strings");
	T_OK(!timingsafe_streq("secret", "secreT"), "last byte differs");
	T_OK(!timingsafe_streq("secret", "secret1"), "longer b");
	T_OK(!timingsafe_streq("secret1", "secret"), "longer a");
	T_OK(!timingsafe_streq("", "x"), "empty vs one");
	T_OK(timingsafe_streq("", ""), "empty vs empty");
	T_OK(!timingsafe_streq(NULL, "x") && !timingsafe_streq(NULL, NULL),
	    "NULL never matches");
}

static void
test_time(void)
{
	char	 buf[RFC3339_LEN];
	int64_t	 now;

	time_rfc3339_usec(0, buf, sizeof(buf));
	T_EQ_STR(buf, "1970-01-01T00:00:00.000000Z", "epoch");
	time_rfc3339_usec(1795947330123456LL, buf, sizeof(buf));
	T_EQ_STR(buf, "2026-11-29T10:15:30.123456Z", "fixed time with usec");
	time_rfc3339_usec(951782400000001LL, buf, sizeof(buf));
	T_EQ_STR(buf, "2000-02-29T00:00:00.000001Z", "leap day, 1 usec");
	time_rfc3339_usec(-1, buf, sizeof(buf));
	T_EQ_STR(buf, "1969-12-31T23:59:59.999999Z", "one usec before epoch");

	now = now_usec();
	T_OK(now > 1700000000LL * 1000000 && now < 4102444800LL * 1000000,
	    "now_usec is a plausible wall-clock time (%lld)", (long long)now);
}

/* mono_usec: the clock mono_seconds reads, never back, in microseconds. */
static void
test_mono_usec(void)
{
	int64_t	 a, b, s;

	a = mono_usec();
	s = mono_seconds();
	b = mono_usec();
	T_OK(a > 0 && b >= a, "mono_usec does not step back (%lld, %lld)",
	    (long long)a, (long long)b);
	T_OK(a / 1000000 <= s && s <= b / 1000000,
	    "mono_usec is mono_seconds' clock (%lld s)", (long long)s);
}

static void
size_ok(const char *s, int64_t want)
{
	int64_t	 v = -1;
	int	 rc = parse_size(s, &v);

	T_OK(rc == 0 && v == want, "parse_size(\"%s\") = %lld (rc %d)", s,
	    (long long)v, rc);
}

static void
size_bad(const char *s)
{
	int64_t	 v = 12345;

	T_OK(parse_size(s, &v) == -1 && v == 12345,
	    "parse_size(\"%s\") refused", s);
}

static void
duration_ok(const char *s, int64_t want)
{
	int64_t	 v = -1;
	int	 rc = parse_duration(s, &v);

	T_OK(rc == 0 && v == want, "parse_duration(\"%s\") = %lld (rc %d)", s,
	    (long long)v, rc);
}

static void
duration_bad(const char *s)
{
	int64_t	 v = 12345;

	T_OK(parse_duration(s, &v) == -1 && v == 12345,
	    "parse_duration(\"%s\") refused", s);
}

static void
test_units(void)
{
	size_ok("0", 0);
	size_ok("4096", 4096);
	size_ok("100k", 102400);
	size_ok("100K", 102400);
	size_ok("512M", 512LL << 20);
	size_ok("1G", 1LL << 30);
	size_ok("2t", 2LL << 40);
	size_ok("9223372036854775807", INT64_MAX);
	size_bad("");
	size_bad("-1");
	size_bad("-1M");
	size_bad("+1");
	size_bad(" 1");
	size_bad("1 M");
	size_bad("M");
	size_bad("1MB");
	size_bad("1x");
	size_bad("1.5G");
	size_bad("9223372036854775808");
	size_bad("8388608T");
	size_bad("99999999999999999999999");

	duration_ok("0", 0);
	duration_ok("90", 90);
	duration_ok("90s", 90);
	duration_ok("15m", 900);
	duration_ok("1h", 3600);
	duration_ok("30d", 30 * 86400);
	duration_ok("2w", 14 * 86400);
	duration_bad("");
	duration_bad("-5s");
	duration_bad("1H");
	duration_bad("1y");
	duration_bad("1d2h");
	duration_bad("d");
	duration_bad("106751991167301d");
	duration_bad("99999999999999999999s");
}

int
main(void)
{
	test_random();
	test_ids();
	test_tokens();
	test_hex();
	test_sha256();
	test_streq();
	test_time();
	test_mono_usec();
	test_units();
	return t_done();
}
