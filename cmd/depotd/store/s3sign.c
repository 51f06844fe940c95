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
 * s3sign.c: AWS Signature Version 4 (header form) for the S3 store.
 *
 * Written from AWS's description of the algorithm; test_s3sign checks it
 * against AWS's published examples.
 */
#include <sys/types.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "s3sign.h"
#include "util.h"

#define HEX	"0123456789ABCDEF"

void
s3sign_amz_date(char *buf, size_t len, time_t t)
{
	struct tm	tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y%m%dT%H%M%SZ", &tm);
}

static int
s3sign_unreserved(unsigned char c)
{
	return isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

static char *
s3sign_encode_n(const char *s, size_t n, int keep_slash)
{
	char	*out, *p;
	size_t	 i;

	if ((out = malloc(3 * n + 1)) == NULL)
		return NULL;
	for (p = out, i = 0; i < n; i++) {
		unsigned char c = s[i];

		if (s3sign_unreserved(c) || (keep_slash && c == '/'))
			*p++ = c;
		else {
			*p++ = '%';
			*p++ = HEX[c >> 4];
			*p++ = HEX[c & 0xf];
		}
	}
	*p = '\0';
	return out;
}

char *
s3sign_uri_encode(const char *s, int keep_slash)
{
	return s3sign_encode_n(s, strlen(s), keep_slash);
}

struct qparam {
	char	*name;
	char	*value;
};

static int
s3sign_qparam_cmp(const void *a, const void *b)
{
	const struct qparam *x = a, *y = b;
	int	 c;

	if ((c = strcmp(x->name, y->name)) != 0)
		return c;
	return strcmp(x->value, y->value);
}

static void
s3sign_qparams_free(struct qparam *qp, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		free(qp[i].name);
		free(qp[i].value);
	}
	free(qp);
}

/* Splits "a=1&b" into encoded pairs; a bare name gets an empty value. */
static struct qparam *
s3sign_qparams_parse(const char *q, size_t *np)
{
	struct qparam	*qp;
	const char	*p, *amp, *eq;
	size_t		 n = 1, i = 0;

	for (p = q; *p; p++)
		if (*p == '&')
			n++;
	if ((qp = calloc(n, sizeof(*qp))) == NULL)
		return NULL;
	for (p = q; ; p = amp + 1) {
		amp = strchr(p, '&');
		if (amp == NULL)
			amp = p + strlen(p);
		if (amp > p) {
			eq = memchr(p, '=', amp - p);
			if (eq == NULL)
				eq = amp;
			qp[i].name = s3sign_encode_n(p, eq - p, 0);
			qp[i].value = eq < amp ?
			    s3sign_encode_n(eq + 1, amp - eq - 1, 0) :
			    strdup("");
			if (qp[i].name == NULL || qp[i].value == NULL) {
				s3sign_qparams_free(qp, n);
				return NULL;
			}
			i++;
		}
		if (*amp == '\0')
			break;
	}
	*np = i;
	return qp;
}

char *
s3sign_canonical_query(const char *q)
{
	struct qparam	*qp;
	char		*out = NULL;
	size_t		 n, i, outlen = 0;
	FILE		*f;

	if (q == NULL || *q == '\0')
		return strdup("");
	if ((qp = s3sign_qparams_parse(q, &n)) == NULL)
		return NULL;
	qsort(qp, n, sizeof(*qp), s3sign_qparam_cmp);
	if ((f = open_memstream(&out, &outlen)) != NULL) {
		for (i = 0; i < n; i++)
			fprintf(f, "%s%s=%s", i ? "&" : "", qp[i].name,
			    qp[i].value);
		if (fclose(f) != 0) {
			free(out);
			out = NULL;
		}
	}
	s3sign_qparams_free(qp, n);
	return out;
}

struct chdr {
	char	*name;
	char	*value;
};

static int
s3sign_chdr_cmp(const void *a, const void *b)
{
	return strcmp(((const struct chdr *)a)->name,
	    ((const struct chdr *)b)->name);
}

/* Lower-cased name; value trimmed, inner runs of blanks made one space. */
static int
s3sign_chdr_make(struct chdr *h, const struct s3sign_hdr *in)
{
	const char	*v;
	char		*p;

	if ((h->name = strdup(in->name)) == NULL)
		return -1;
	for (p = h->name; *p; p++)
		*p = tolower((unsigned char)*p);
	if ((h->value = malloc(strlen(in->value) + 1)) == NULL)
		return -1;
	for (v = in->value; *v == ' ' || *v == '\t'; v++)
		;
	for (p = h->value; *v; v++) {
		if (*v == ' ' || *v == '\t') {
			if (p > h->value && p[-1] == ' ')
				continue;
			*p++ = ' ';
		} else
			*p++ = *v;
	}
	while (p > h->value && p[-1] == ' ')
		p--;
	*p = '\0';
	return 0;
}

static void
s3sign_chdrs_free(struct chdr *h, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		free(h[i].name);
		free(h[i].value);
	}
	free(h);
}

static int
s3sign_canonical(const struct s3sign_req *req, struct s3sign_out *out)
{
	struct chdr	*h;
	char		*cq, *sh = NULL, *cr = NULL;
	size_t		 i, shlen, crlen;
	FILE		*fs, *fc;
	int		 rv = -1;

	if ((h = calloc(req->nhdrs ? req->nhdrs : 1, sizeof(*h))) == NULL)
		return -1;
	for (i = 0; i < req->nhdrs; i++)
		if (s3sign_chdr_make(&h[i], &req->hdrs[i]) == -1)
			goto done;
	qsort(h, req->nhdrs, sizeof(*h), s3sign_chdr_cmp);
	if ((cq = s3sign_canonical_query(req->query)) == NULL)
		goto done;
	fs = open_memstream(&sh, &shlen);
	fc = open_memstream(&cr, &crlen);
	if (fs != NULL && fc != NULL) {
		fprintf(fc, "%s\n%s\n%s\n", req->method, req->path, cq);
		for (i = 0; i < req->nhdrs; i++) {
			fprintf(fc, "%s:%s\n", h[i].name, h[i].value);
			fprintf(fs, "%s%s", i ? ";" : "", h[i].name);
		}
	}
	if (fs != NULL && fclose(fs) == 0 && fc != NULL) {
		fprintf(fc, "\n%s\n%s", sh, req->payload_hash);
		if (fclose(fc) == 0) {
			out->canonical_request = cr;
			out->signed_headers = sh;
			cr = sh = NULL;
			rv = 0;
		}
	} else if (fc != NULL)
		fclose(fc);
	free(cq);
	free(sh);
	free(cr);
 done:
	s3sign_chdrs_free(h, req->nhdrs);
	return rv;
}

static int
s3sign_hmac(const void *key, size_t keylen, const char *msg,
    unsigned char *md)
{
	unsigned int	mdlen = SHA256_DIGEST_LENGTH;

	return HMAC(EVP_sha256(), key, keylen, (const unsigned char *)msg,
	    strlen(msg), md, &mdlen) == NULL ? -1 : 0;
}

/* HMAC chain secret -> date -> region -> service -> "aws4_request". */
static int
s3sign_signing_key(const struct s3sign_cred *cred, const char *date,
    unsigned char *key)
{
	char		*k4;
	size_t		 k4len;
	int		 rv;

	k4len = strlen(cred->secret_key) + 4;
	if ((k4 = malloc(k4len + 1)) == NULL)
		return -1;
	snprintf(k4, k4len + 1, "AWS4%s", cred->secret_key);
	rv = s3sign_hmac(k4, k4len, date, key);
	freezero(k4, k4len + 1);
	if (rv == 0)
		rv = s3sign_hmac(key, SHA256_DIGEST_LENGTH, cred->region, key);
	if (rv == 0)
		rv = s3sign_hmac(key, SHA256_DIGEST_LENGTH, cred->service, key);
	if (rv == 0)
		rv = s3sign_hmac(key, SHA256_DIGEST_LENGTH, "aws4_request",
		    key);
	return rv;
}

int
s3sign(const struct s3sign_req *req, const struct s3sign_cred *cred,
    struct s3sign_out *out)
{
	unsigned char	 key[SHA256_DIGEST_LENGTH], sig[SHA256_DIGEST_LENGTH];
	char		 date[9], scope[256], crhash[SHA256_HEXLEN];
	char		 sighex[SHA256_HEXLEN];
	int		 rv = -1;

	memset(out, 0, sizeof(*out));
	if (strlen(req->amz_date) != 16) {
		errno = EINVAL;
		return -1;
	}
	memcpy(date, req->amz_date, 8);
	date[8] = '\0';
	if ((size_t)snprintf(scope, sizeof(scope), "%s/%s/%s/aws4_request",
	    date, cred->region, cred->service) >= sizeof(scope)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (s3sign_canonical(req, out) == -1)
		goto fail;
	sha256_hex(out->canonical_request, strlen(out->canonical_request),
	    crhash);
	if (asprintf(&out->string_to_sign, "AWS4-HMAC-SHA256\n%s\n%s\n%s",
	    req->amz_date, scope, crhash) == -1) {
		out->string_to_sign = NULL;
		goto fail;
	}
	if (s3sign_signing_key(cred, date, key) == -1 ||
	    s3sign_hmac(key, sizeof(key), out->string_to_sign, sig) == -1)
		goto fail;
	hex_encode(sig, sizeof(sig), sighex);
	if (asprintf(&out->authorization, "AWS4-HMAC-SHA256 Credential=%s/%s, "
	    "SignedHeaders=%s, Signature=%s", cred->access_key, scope,
	    out->signed_headers, sighex) == -1) {
		out->authorization = NULL;
		goto fail;
	}
	rv = 0;
 fail:
	explicit_bzero(key, sizeof(key));
	if (rv == -1)
		s3sign_out_free(out);
	return rv;
}

void
s3sign_out_free(struct s3sign_out *out)
{
	free(out->canonical_request);
	free(out->string_to_sign);
	free(out->signed_headers);
	free(out->authorization);
	memset(out, 0, sizeof(*out));
}
