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
 * xlate_json.c: what every request and answer translator shares: the
 * first error's message, JSON members read and copied without a
 * check at each step, ids, function arguments, data: URLs, joined
 * text and the tools list.  Calls nothing of the other xlate files.
 */
#include <sys/types.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <json-c/printbuf.h>

#include "jsontext.h"
#include "wire.h"
#include "xlate.h"


int
xlate_fail(struct xlate *x, const char *fmt, ...)
{
	va_list	 ap;

	/* The first failure is the cause; later ones only unwind. */
	if (x->errlen > 0 && x->err[0] == '\0') {
		va_start(ap, fmt);
		vsnprintf(x->err, x->errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int
xlate_where(struct xlate *x, const char *fmt, ...)
{
	va_list	 ap;
	char	 where[64];
	size_t	 n, len;

	va_start(ap, fmt);
	vsnprintf(where, sizeof(where), fmt, ap);
	va_end(ap);
	n = strlen(where);
	len = strnlen(x->err, x->errlen);
	/* Room for "where: " and the message's end, or no prefix. */
	if (x->errlen == 0 || len + n + 3 > x->errlen)
		return -1;
	memmove(x->err + n + 2, x->err, len + 1);
	memcpy(x->err, where, n);
	memcpy(x->err + n, ": ", 2);
	return -1;
}

struct json_object *
xlate_get(struct json_object *o, const char *key)
{
	struct json_object	*v;

	if (!xlate_is(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

const char *
xlate_str(struct json_object *o, const char *key)
{
	struct json_object	*v;

	v = xlate_get(o, key);
	return xlate_is(v, json_type_string) ? json_object_get_string(v) : NULL;
}

int
xlate_is(struct json_object *o, json_type t)
{
	return o != NULL && json_object_is_type(o, t);
}

struct json_object *
xlate_dup(struct json_object *o)
{
	struct json_object	*copy = NULL;

	if (o == NULL || json_object_deep_copy(o, &copy, NULL) != 0)
		return NULL;
	return copy;
}

void
xlate_copy(struct json_object *dst, const char *dkey, struct json_object *src,
    const char *skey)
{
	struct json_object	*v;

	if (xlate_is(src, json_type_object) &&
	    json_object_object_get_ex(src, skey, &v) && v != NULL)
		json_object_object_add(dst, dkey, xlate_dup(v));
}

void
xlate_set_str(struct json_object *o, const char *key, const char *s)
{
	json_object_object_add(o, key, json_object_new_string(s));
}

void
xlate_id(char *buf, size_t len, const char *prefix)
{
	static const char	 hex[] = "0123456789abcdef";
	unsigned char		 rnd[12];
	char			 digits[2 * sizeof(rnd) + 1];
	size_t			 i;

	arc4random_buf(rnd, sizeof(rnd));
	for (i = 0; i < sizeof(rnd); i++) {
		digits[2 * i] = hex[rnd[i] >> 4];
		digits[2 * i + 1] = hex[rnd[i] & 0xf];
	}
	digits[2 * sizeof(rnd)] = '\0';
	snprintf(buf, len, "%s%s", prefix, digits);
}

struct json_object *
xlate_args_parse(const char *s)
{
	struct json_object	*o;
	size_t			 len;

	len = strlen(s);
	/* A call without parameters often comes with no text at all. */
	if (strspn(s, " \t\r\n") == len)
		return json_object_new_object();
	o = json_text_parse(s, len, JSON_DEPTH_MAX);
	if (o != NULL && !xlate_is(o, json_type_object)) {
		json_object_put(o);
		o = NULL;
	}
	return o;
}

struct json_object *
xlate_args_string(struct json_object *args)
{
	if (args == NULL)
		return json_object_new_string("{}");
	return json_object_new_string(json_object_to_json_string_ext(args,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
}

int
xlate_data_url(const char *url, char *mt, size_t mtlen, const char **data)
{
	const char	*comma;
	size_t		 n;

	if (strncasecmp(url, "data:", 5) != 0)
		return -1;
	url += 5;
	/* The first comma ends the header; the rest is never looked at. */
	if ((comma = strchr(url, ',')) == NULL)
		return -1;
	n = comma - url;
	if (n < 7 || strncasecmp(comma - 7, ";base64", 7) != 0)
		return -1;
	n -= 7;
	/* Parameters (";charset=...") are not part of the media type. */
	if (memchr(url, ';', n) != NULL)
		n = (const char *)memchr(url, ';', n) - url;
	if (n == 0 || n >= mtlen)
		return -1;
	memcpy(mt, url, n);
	mt[n] = '\0';
	*data = comma + 1;
	return 0;
}

struct json_object *
xlate_data_url_new(const char *mt, const char *data)
{
	struct json_object	*s;
	size_t			 mlen, dlen;
	char			*buf;

	mlen = strlen(mt);
	dlen = strlen(data);
	if ((buf = malloc(5 + mlen + 8 + dlen + 1)) == NULL)
		return NULL;
	memcpy(buf, "data:", 5);
	memcpy(buf + 5, mt, mlen);
	memcpy(buf + 5 + mlen, ";base64,", 8);
	memcpy(buf + 5 + mlen + 8, data, dlen + 1);
	s = json_object_new_string_len(buf, (int)(5 + mlen + 8 + dlen));
	free(buf);
	return s;
}

static int
type_in(const char *type, const char *const *types)
{
	for (; type != NULL && *types != NULL; types++)
		if (strcmp(type, *types) == 0)
			return 1;
	return 0;
}

struct json_object *
xlate_join_text(struct json_object *arr, const char *const *types,
    const char *sep, int *other)
{
	struct json_object	*item, *s;
	struct printbuf		*pb;
	const char		*text;
	size_t			 i, n;
	int			 first = 1;

	*other = 0;
	if (!xlate_is(arr, json_type_array) || (pb = printbuf_new()) == NULL)
		return NULL;
	n = json_object_array_length(arr);
	for (i = 0; i < n; i++) {
		item = json_object_array_get_idx(arr, i);
		if (!type_in(xlate_str(item, "type"), types) ||
		    (text = xlate_str(item, "text")) == NULL) {
			(*other)++;
			continue;
		}
		if (!first)
			printbuf_memappend(pb, sep, strlen(sep));
		printbuf_memappend(pb, text,
		    json_object_get_string_len(xlate_get(item, "text")));
		first = 0;
	}
	s = json_object_new_string_len(pb->buf, pb->bpos);
	printbuf_free(pb);
	return s;
}

struct json_object *
xlate_part(const char *type, const char *key, struct json_object *val)
{
	struct json_object	*p;

	p = json_object_new_object();
	xlate_set_str(p, "type", type);
	json_object_object_add(p, key, val);
	return p;
}

int
xlate_tools(struct xlate *x, struct json_object *req, struct json_object *out,
    struct json_object *(*conv)(struct xlate *, struct json_object *))
{
	struct json_object	*tools, *arr, *t;
	size_t			 i;

	tools = xlate_get(req, "tools");
	if (tools == NULL)
		return 0;
	if (!xlate_is(tools, json_type_array))
		return xlate_fail(x, "tools must be an array");
	/* OpenAI refuses an empty list; none is the same. */
	if (json_object_array_length(tools) == 0)
		return 0;
	arr = json_object_new_array();
	json_object_object_add(out, "tools", arr);
	for (i = 0; i < json_object_array_length(tools); i++) {
		if ((t = conv(x, json_object_array_get_idx(tools, i))) == NULL)
			return xlate_where(x, "tools[%zu]", i);
		json_object_array_add(arr, t);
	}
	return 0;
}

int64_t
xlate_tokens(struct json_object *o, const char *key)
{
	int64_t	 n;

	n = wire_tokens(xlate_get(o, key));
	return n < 0 ? 0 : n;
}
