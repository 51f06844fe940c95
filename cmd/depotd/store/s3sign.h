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
 * s3sign.h: AWS Signature Version 4 for the S3 store.
 *
 * The caller gives every header it will send and wants signed (host and
 * x-amz-date included), the canonical path already URI-encoded, and the
 * query as raw name=value pairs joined by '&'; the signer encodes and
 * sorts the query so that the URL sent and the string signed agree.
 */
#ifndef DEPOT_S3SIGN_H
#define DEPOT_S3SIGN_H

#include <stddef.h>
#include <time.h>

#define S3SIGN_EMPTY_SHA256 \
	"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

struct s3sign_hdr {
	const char	*name;
	const char	*value;
};

struct s3sign_req {
	const char		*method;
	const char		*path;		/* URI-encoded, starts with '/' */
	const char		*query;		/* raw pairs, NULL or "" for none */
	const struct s3sign_hdr	*hdrs;
	size_t			 nhdrs;
	const char		*payload_hash;	/* hex, or "UNSIGNED-PAYLOAD" */
	const char		*amz_date;	/* 20150830T123600Z */
};

struct s3sign_cred {
	const char	*access_key;
	const char	*secret_key;	/* secret */
	const char	*region;
	const char	*service;	/* "s3" */
};

/* What a signature was made of; every string is malloc'd. */
struct s3sign_out {
	char	*canonical_request;
	char	*string_to_sign;
	char	*signed_headers;
	char	*authorization;		/* the Authorization header's value */
};

/*
 * Percent-encodes all but the unreserved characters (A-Z a-z 0-9 - . _ ~),
 * and '/' too unless keep_slash.  Returns a malloc'd string.
 */
char	*s3sign_uri_encode(const char *, int keep_slash);
/* "b=2&a=1" -> "a=1&b=2", each name and value encoded; malloc'd. */
char	*s3sign_canonical_query(const char *);
/* The time as SigV4 wants it: YYYYMMDDTHHMMSSZ, in a 17-byte buffer. */
void	 s3sign_amz_date(char *, size_t, time_t);
/* 0, or -1 with errno set; free the result with s3sign_out_free. */
int	 s3sign(const struct s3sign_req *, const struct s3sign_cred *,
	    struct s3sign_out *);
void	 s3sign_out_free(struct s3sign_out *);

#endif
