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
 * util.h: small helpers every depotd program needs: randomness, ids and
 * API tokens, SHA-256, constant-time comparison, time formatting and the
 * size and duration units of the configuration file.
 */
#ifndef DEPOT_UTIL_H
#define DEPOT_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define ID_HEXLEN	32	/* hex digits after the prefix: 128 bits */
#define ID_BUFSIZE	64	/* enough for any prefix we use, NUL included */
#define TOKEN_PREFIX	"dpt-"
#define TOKEN_LEN	48	/* "dpt-" + 43 base64url chars + NUL */
#define SHA256_HEXLEN	65	/* 64 hex digits + NUL */
#define RFC3339_LEN	32	/* "2026-11-29T10:15:30.123456Z" + NUL, padded */

/* Fills buf with len random bytes.  0, or -1 with errno set. */
int	 random_bytes(void *buf, size_t len);

/*
 * prefix + 32 lowercase hex digits of 128 random bits, e.g. "file-5c0d...".
 * Aborts (fatalx) if buf is too small or the kernel has no randomness.
 */
void	 id_new(char *buf, size_t len, const char *prefix);
/* 1 when s is exactly prefix + 32 lowercase hex digits, else 0 (NULL: 0). */
int	 id_valid(const char *s, const char *prefix);

/* "dpt-" + base64url of 256 random bits; len >= TOKEN_LEN.  Wipe after use. */
void	 token_new(char *buf, size_t len);

/* out gets 2 * len lowercase hex digits and a NUL. */
void	 hex_encode(const void *data, size_t len, char *out);

void	 sha256_hex(const void *data, size_t len, char out[SHA256_HEXLEN]);

/* For digests of streamed uploads. */
struct sha256_ctx {
	void	*md;		/* EVP_MD_CTX, kept opaque for callers */
};
int	 sha256_init(struct sha256_ctx *);	/* 0 or -1 */
int	 sha256_update(struct sha256_ctx *, const void *, size_t);
/* Writes the digest and releases the context; call it exactly once. */
int	 sha256_final_hex(struct sha256_ctx *, char out[SHA256_HEXLEN]);
/* Releases a context without a digest (an aborted upload). */
void	 sha256_abort(struct sha256_ctx *);

/*
 * 1 when equal, 0 otherwise or when either is NULL.  Time depends only
 * on the longer length, not on the content.
 */
int	 timingsafe_streq(const char *a, const char *b);

/* Microseconds since the epoch, wall clock. */
int64_t	 now_usec(void);
/* Seconds of a clock that never steps back: for deadlines and ages. */
int64_t	 mono_seconds(void);
/* The same clock in microseconds: for durations in logs. */
int64_t	 mono_usec(void);
/* "2026-11-29T10:15:30.123456Z"; len >= RFC3339_LEN. */
void	 time_rfc3339_usec(int64_t usec, char *buf, size_t len);

/*
 * "512M", "1G", "100k", "4096": bytes, binary multiples (k, m, g, t in
 * either case).  0, or -1 on junk, a negative number or overflow.
 */
int	 parse_size(const char *s, int64_t *bytes);
/*
 * "30d", "1h", "15m", "90s", "2w", "0", "3600": seconds.  0, or -1 on
 * junk, a negative number or overflow.
 */
int	 parse_duration(const char *s, int64_t *seconds);

struct sockaddr_un;
/* An AF_UNIX address for path; -1 (ENAMETOOLONG) if it does not fit. */
int	 unix_addr(struct sockaddr_un *, const char *path);

/* A unit letter and its multiplier; tables end with letter '\0'. */
struct unit {
	char	 letter;
	int64_t	 factor;
};
extern const struct unit unit_size[];		/* K M G T */
extern const struct unit unit_duration[];	/* s m h d w */
/* v in the largest unit that divides it exactly ("512M", "30s", "7"). */
void	 format_units(char *buf, size_t len, int64_t v, const struct unit *);

#endif
