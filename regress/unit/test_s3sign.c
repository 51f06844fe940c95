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
 * test_s3sign: the SigV4 signer against AWS's published examples: the
 * SigV4 test suite (get-vanilla, get-vanilla-query-order-key-case,
 * post-vanilla, post-x-www-form-urlencoded, get-utf8) and the S3
 * GetObject and ListObjects examples of the S3 API reference.  The
 * expected strings below are those published values.
 */
#include <stdlib.h>
#include <string.h>

#include "store/s3sign.h"
#include "t.h"
#include "util.h"

static const struct s3sign_cred suite_cred = {
	"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
	"us-east-1", "service"
};

static const struct s3sign_cred s3doc_cred = {
	"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	"us-east-1", "s3"
};

static const struct s3sign_hdr vanilla_hdrs[] = {
	{ "Host", "example.amazonaws.com" },
	{ "X-Amz-Date", "20150830T123600Z" },
};

static void
get_vanilla(void)
{
	struct s3sign_req	 r = { "GET", "/", NULL, vanilla_hdrs, 2,
	    S3SIGN_EMPTY_SHA256, "20150830T123600Z" };
	struct s3sign_out	 o;

	T_OK(s3sign(&r, &suite_cred, &o) == 0, "get-vanilla signs");
	T_EQ_STR(o.canonical_request, "GET\n/\n\n"
	    "host:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
	    "host;x-amz-date\n" S3SIGN_EMPTY_SHA256,
	    "get-vanilla canonical request");
	T_EQ_STR(o.string_to_sign, "AWS4-HMAC-SHA256\n20150830T123600Z\n"
	    "20150830/us-east-1/service/aws4_request\n"
	    "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63",
	    "get-vanilla string to sign");
	T_EQ_STR(o.authorization, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/"
	    "20150830/us-east-1/service/aws4_request, SignedHeaders=host;"
	    "x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a"
	    "2260956d9b8aae1d763fbf31", "get-vanilla authorization");
	s3sign_out_free(&o);
}

static void
get_vanilla_query_order_key_case(void)
{
	struct s3sign_req	 r = { "GET", "/", "Param2=value2&Param1=value1",
	    vanilla_hdrs, 2, S3SIGN_EMPTY_SHA256, "20150830T123600Z" };
	struct s3sign_out	 o;

	T_OK(s3sign(&r, &suite_cred, &o) == 0, "query-order-key-case signs");
	T_EQ_STR(o.canonical_request, "GET\n/\nParam1=value1&Param2=value2\n"
	    "host:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
	    "host;x-amz-date\n" S3SIGN_EMPTY_SHA256,
	    "query-order-key-case canonical request sorts the query");
	T_OK(o.authorization != NULL && strstr(o.authorization, "Signature="
	    "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500")
	    != NULL, "query-order-key-case signature");
	s3sign_out_free(&o);
}

static void
post_vanilla(void)
{
	struct s3sign_req	 r = { "POST", "/", NULL, vanilla_hdrs, 2,
	    S3SIGN_EMPTY_SHA256, "20150830T123600Z" };
	struct s3sign_out	 o;

	T_OK(s3sign(&r, &suite_cred, &o) == 0, "post-vanilla signs");
	T_OK(o.authorization != NULL && strstr(o.authorization, "Signature="
	    "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b")
	    != NULL, "post-vanilla signature");
	s3sign_out_free(&o);
}

static void
post_form(void)
{
	static const struct s3sign_hdr h[] = {
		{ "Content-Type", "application/x-www-form-urlencoded" },
		{ "Host", "example.amazonaws.com" },
		{ "X-Amz-Date", "20150830T123600Z" },
	};
	char			 body[SHA256_HEXLEN];
	struct s3sign_req	 r = { "POST", "/", NULL, h, 3, body,
	    "20150830T123600Z" };
	struct s3sign_out	 o;

	sha256_hex("", 0, body);
	T_EQ_STR(body, S3SIGN_EMPTY_SHA256, "the empty payload's hash is "
	    "util.c's SHA-256 of nothing");
	sha256_hex("Param1=value1", 13, body);
	T_EQ_STR(body, "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f"
	    "4c7b24d0b6e", "post-x-www-form-urlencoded payload hash");
	T_OK(s3sign(&r, &suite_cred, &o) == 0, "post-x-www-form signs");
	T_EQ_STR(o.string_to_sign, "AWS4-HMAC-SHA256\n20150830T123600Z\n"
	    "20150830/us-east-1/service/aws4_request\n"
	    "42a5e5bb34198acb3e84da4f085bb7927f2bc277ca766e6d19c73c2154021281",
	    "post-x-www-form-urlencoded string to sign");
	T_EQ_STR(o.authorization, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/"
	    "20150830/us-east-1/service/aws4_request, SignedHeaders="
	    "content-type;host;x-amz-date, Signature=ff11897932ad3f4e8b18135d"
	    "722051e5ac45fc38421b1da7b9d196a0fe09473a",
	    "post-x-www-form-urlencoded authorization");
	s3sign_out_free(&o);
}

static void
get_utf8(void)
{
	char			*path = s3sign_uri_encode("/\xe1\x88\xb4", 1);
	struct s3sign_req	 r = { "GET", path, NULL, vanilla_hdrs, 2,
	    S3SIGN_EMPTY_SHA256, "20150830T123600Z" };
	struct s3sign_out	 o;

	T_EQ_STR(path, "/%E1%88%B4", "get-utf8 path encoding");
	T_OK(s3sign(&r, &suite_cred, &o) == 0, "get-utf8 signs");
	T_OK(o.authorization != NULL && strstr(o.authorization, "Signature="
	    "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85")
	    != NULL, "get-utf8 signature");
	s3sign_out_free(&o);
	free(path);
}

/* The S3 API reference's GetObject example, with Range. */
static void
s3_get_object(void)
{
	static const struct s3sign_hdr h[] = {
		{ "Host", "examplebucket.s3.amazonaws.com" },
		{ "Range", "bytes=0-9" },
		{ "x-amz-content-sha256", S3SIGN_EMPTY_SHA256 },
		{ "x-amz-date", "20130524T000000Z" },
	};
	struct s3sign_req	 r = { "GET", "/test.txt", NULL, h, 4,
	    S3SIGN_EMPTY_SHA256, "20130524T000000Z" };
	struct s3sign_out	 o;

	T_OK(s3sign(&r, &s3doc_cred, &o) == 0, "S3 GetObject signs");
	T_OK(o.string_to_sign != NULL && strstr(o.string_to_sign, "\n7344ae5b"
	    "7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972") != NULL,
	    "S3 GetObject canonical request hash");
	T_EQ_STR(o.signed_headers, "host;range;x-amz-content-sha256;"
	    "x-amz-date", "S3 GetObject signed headers");
	T_OK(o.authorization != NULL && strstr(o.authorization, "Signature="
	    "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
	    != NULL, "S3 GetObject signature");
	s3sign_out_free(&o);
}

/* The S3 API reference's ListObjects example: a query to sort. */
static void
s3_list_objects(void)
{
	static const struct s3sign_hdr h[] = {
		{ "Host", "examplebucket.s3.amazonaws.com" },
		{ "x-amz-content-sha256", S3SIGN_EMPTY_SHA256 },
		{ "x-amz-date", "20130524T000000Z" },
	};
	struct s3sign_req	 r = { "GET", "/", "prefix=J&max-keys=2", h, 3,
	    S3SIGN_EMPTY_SHA256, "20130524T000000Z" };
	struct s3sign_out	 o;

	T_OK(s3sign(&r, &s3doc_cred, &o) == 0, "S3 ListObjects signs");
	T_OK(o.authorization != NULL && strstr(o.authorization, "Signature="
	    "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7")
	    != NULL, "S3 ListObjects signature");
	s3sign_out_free(&o);
}

static void
encoding(void)
{
	char	*s;

	s = s3sign_canonical_query("uploads");
	T_EQ_STR(s, "uploads=", "a bare name gets an empty value");
	free(s);
	s = s3sign_canonical_query("uploadId=a b/c+d&partNumber=10");
	T_EQ_STR(s, "partNumber=10&uploadId=a%20b%2Fc%2Bd",
	    "query values are encoded, '/' included, then sorted");
	free(s);
	s = s3sign_canonical_query("");
	T_EQ_STR(s, "", "empty query");
	free(s);
	s = s3sign_uri_encode("pre fix/ab/file-~x.y_z", 1);
	T_EQ_STR(s, "pre%20fix/ab/file-~x.y_z", "keys keep '/' and unreserved");
	free(s);
}

static void
amz_date(void)
{
	char	buf[17];

	s3sign_amz_date(buf, sizeof(buf), 1440938160);
	T_EQ_STR(buf, "20150830T123600Z", "amz date format");
}

int
main(void)
{
	get_vanilla();
	get_vanilla_query_order_key_case();
	post_vanilla();
	post_form();
	get_utf8();
	s3_get_object();
	s3_list_objects();
	encoding();
	amz_date();
	return t_done();
}
