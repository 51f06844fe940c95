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
 * util.c: randomness, ids, tokens, digests, time and unit parsing.
 */
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "log.h"
#include "util.h"

int
random_bytes(void *buf, size_t len)
{
	unsigned char	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		n = getrandom(p, len, 0);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= n;
	}
	return 0;
}

void
hex_encode(const void *data, size_t len, char *out)
{
	static const char	 digits[] = "0123456789abcdef";
	const unsigned char	*p = data;
	size_t			 i;

	for (i = 0; i < len; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 0xf];
	}
	out[2 * len] = '\0';
}

void
id_new(char *buf, size_t len, const char *prefix)
{
	unsigned char	 rnd[ID_HEXLEN / 2];
	size_t		 plen = strlen(prefix);

	if (len < plen + ID_HEXLEN + 1)
		fatalx("%s: buffer too small", __func__);
	if (random_bytes(rnd, sizeof(rnd)) == -1)
		fatal("%s: getrandom", __func__);
	memcpy(buf, prefix, plen);
	hex_encode(rnd, sizeof(rnd), buf + plen);
}

int
id_valid(const char *s, const char *prefix)
{
	size_t	 plen = strlen(prefix), i;

	if (s == NULL || strncmp(s, prefix, plen) != 0)
		return 0;
	s += plen;
	for (i = 0; i < ID_HEXLEN; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	}
	return s[ID_HEXLEN] == '\0';
}

/* Unpadded base64url; out must hold 4 * ceil(len / 3) + 1 bytes. */
static size_t
base64url_encode(const unsigned char *p, size_t len, char *out)
{
	static const char	 alphabet[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789-_";
	size_t			 i, o = 0;
	uint32_t		 v;

	for (i = 0; i + 2 < len; i += 3) {
		v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		out[o++] = alphabet[v >> 18 & 0x3f];
		out[o++] = alphabet[v >> 12 & 0x3f];
		out[o++] = alphabet[v >> 6 & 0x3f];
		out[o++] = alphabet[v & 0x3f];
	}
	if (len - i == 1) {
		v = (uint32_t)p[i] << 16;
		out[o++] = alphabet[v >> 18 & 0x3f];
		out[o++] = alphabet[v >> 12 & 0x3f];
	} else if (len - i == 2) {
		v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
		out[o++] = alphabet[v >> 18 & 0x3f];
		out[o++] = alphabet[v >> 12 & 0x3f];
		out[o++] = alphabet[v >> 6 & 0x3f];
	}
	out[o] = '\0';
	return o;
}

void
token_new(char *buf, size_t len)
{
	unsigned char	 rnd[32];
	size_t		 plen = strlen(TOKEN_PREFIX);

	if (len < TOKEN_LEN)
		fatalx("%s: buffer too small", __func__);
	if (random_bytes(rnd, sizeof(rnd)) == -1)
		fatal("%s: getrandom", __func__);
	memcpy(buf, TOKEN_PREFIX, plen);
	base64url_encode(rnd, sizeof(rnd), buf + plen);
	explicit_bzero(rnd, sizeof(rnd));
}

void
sha256_hex(const void *data, size_t len, char out[SHA256_HEXLEN])
{
	unsigned char	 md[EVP_MAX_MD_SIZE];
	unsigned int	 mdlen = 0;

	if (EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) != 1)
		fatalx("%s: EVP_Digest failed", __func__);
	hex_encode(md, mdlen, out);
}

int
sha256_init(struct sha256_ctx *ctx)
{
	EVP_MD_CTX	*md;

	ctx->md = NULL;
	if ((md = EVP_MD_CTX_new()) == NULL)
		return -1;
	if (EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(md);
		return -1;
	}
	ctx->md = md;
	return 0;
}

int
sha256_update(struct sha256_ctx *ctx, const void *data, size_t len)
{
	if (ctx->md == NULL)
		return -1;
	return EVP_DigestUpdate(ctx->md, data, len) == 1 ? 0 : -1;
}

int
sha256_final_hex(struct sha256_ctx *ctx, char out[SHA256_HEXLEN])
{
	unsigned char	 md[EVP_MAX_MD_SIZE];
	unsigned int	 mdlen = 0;
	int		 ok;

	if (ctx->md == NULL)
		return -1;
	ok = EVP_DigestFinal_ex(ctx->md, md, &mdlen) == 1;
	sha256_abort(ctx);
	if (!ok)
		return -1;
	hex_encode(md, mdlen, out);
	return 0;
}

void
sha256_abort(struct sha256_ctx *ctx)
{
	EVP_MD_CTX_free(ctx->md);
	ctx->md = NULL;
}

int
timingsafe_streq(const char *a, const char *b)
{
	size_t		 alen, blen, n, i;
	unsigned char	 diff;

	/* A missing secret never matches, not even another missing one. */
	if (a == NULL || b == NULL)
		return 0;
	alen = strlen(a);
	blen = strlen(b);
	n = alen > blen ? alen : blen;
	diff = alen != blen;

	/*
	 * Walk the longer length on both strings, reading the shorter one
	 * from its terminating NUL on, so that the loop never ends early.
	 */
	for (i = 0; i < n; i++)
		diff |= (unsigned char)a[i < alen ? i : alen] ^
		    (unsigned char)b[i < blen ? i : blen];
	return diff == 0;
}

int64_t
now_usec(void)
{
	struct timespec	 ts;

	if (clock_gettime(CLOCK_REALTIME, &ts) == -1)
		fatal("%s: clock_gettime", __func__);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t
mono_seconds(void)
{
	struct timespec	 ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		fatal("%s: clock_gettime", __func__);
	return ts.tv_sec;
}

int64_t
mono_usec(void)
{
	struct timespec	 ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		fatal("%s: clock_gettime", __func__);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void
time_rfc3339_usec(int64_t usec, char *buf, size_t len)
{
	struct tm	 tm;
	time_t		 secs;
	int64_t		 frac;

	/* Floor division, so that times before the epoch format right. */
	secs = usec / 1000000;
	frac = usec % 1000000;
	if (frac < 0) {
		frac += 1000000;
		secs--;
	}
	if (gmtime_r(&secs, &tm) == NULL) {
		strlcpy(buf, "", len);
		return;
	}
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, (long long)frac);
}

/*
 * The units of sizes and durations, largest first, for both parsing
 * and printing.  Size letters are read in either case; duration
 * letters only as written ("m" is minutes, and "M" would read as
 * months).
 */
const struct unit unit_size[] = {
	{ 'T', 1LL << 40 },
	{ 'G', 1LL << 30 },
	{ 'M', 1LL << 20 },
	{ 'K', 1LL << 10 },
	{ '\0', 0 },
};

const struct unit unit_duration[] = {
	{ 'w', 7 * 86400 },
	{ 'd', 86400 },
	{ 'h', 3600 },
	{ 'm', 60 },
	{ 's', 1 },
	{ '\0', 0 },
};

/*
 * A run of decimal digits then at most one unit letter (compared
 * case-insensitively when fold is set).
 */
static int
parse_units(const char *s, const struct unit *units, int fold, int64_t *out)
{
	const struct unit	*u = NULL;
	int64_t			 v = 0, factor = 1;
	char			 c;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (INT64_MAX - (*s - '0')) / 10)
			return -1;
		v = v * 10 + (*s - '0');
	}
	if (*s != '\0') {
		c = *s;
		if (fold && c >= 'a' && c <= 'z')
			c = c - 'a' + 'A';
		for (u = units; u->letter != '\0'; u++)
			if (u->letter == c)
				break;
		if (u->letter == '\0' || s[1] != '\0')
			return -1;
		factor = u->factor;
	}
	if (v > INT64_MAX / factor)
		return -1;
	*out = v * factor;
	return 0;
}

int
parse_size(const char *s, int64_t *bytes)
{
	return parse_units(s, unit_size, 1, bytes);
}

int
parse_duration(const char *s, int64_t *seconds)
{
	return parse_units(s, unit_duration, 0, seconds);
}

void
format_units(char *buf, size_t len, int64_t v, const struct unit *units)
{
	const struct unit	*u;

	for (u = units; v != 0 && u->letter != '\0'; u++)
		if (v % u->factor == 0) {
			snprintf(buf, len, "%lld%c", (long long)(v / u->factor),
			    u->letter);
			return;
		}
	snprintf(buf, len, "%lld", (long long)v);
}

int
unix_addr(struct sockaddr_un *sun, const char *path)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (strlcpy(sun->sun_path, path, sizeof(sun->sun_path)) >=
	    sizeof(sun->sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}
