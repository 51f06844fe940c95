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
 * xlate.c: whole requests and whole answers between chat completions,
 * Responses and Messages.  Chat completions is the hub: every other
 * pair goes through it, so each dialect needs only its way to and
 * from chat.  Everything here is a pure function of its arguments;
 * the helpers below are shared by xlate_messages.c, xlate_manswer.c
 * and xlate_responses.c.
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
#include "fe_model.h"
#include "xlate.h"

static const char *const wire_names[] = {
	[WIRE_CHAT] = "chat completions",
	[WIRE_RESPONSES] = "Responses",
	[WIRE_MESSAGES] = "Messages",
};

static const char *
wire_name(enum wire w)
{
	if ((unsigned int)w >= sizeof(wire_names) / sizeof(wire_names[0]))
		return "unknown";
	return wire_names[w];
}

/* --- the entry points --- */

struct json_object *
xlate_request(enum wire from, enum wire to, struct json_object *req,
    const struct model_conf *model, char *err, size_t errlen)
{
	struct xl		 x = { err, errlen };
	struct json_object	*chat, *out;
	int			 max_tokens;

	if (errlen > 0)
		err[0] = '\0';
	if (!xl_is(req, json_type_object)) {
		xl_fail(&x, "the request is not a JSON object");
		return NULL;
	}
	if (from == to)
		return xl_dup(req);
	max_tokens = model != NULL && model->max_tokens > 0 ?
	    model->max_tokens : 4096;

	switch (from) {
	case WIRE_MESSAGES:
		if (to != WIRE_CHAT)
			break;
		return xl_msgreq_to_chat(&x, req);
	case WIRE_CHAT:
		if (to != WIRE_MESSAGES)
			break;
		return xl_chatreq_to_msg(&x, req, max_tokens);
	case WIRE_RESPONSES:
		if ((chat = xl_respreq_to_chat(&x, req)) == NULL)
			return NULL;
		if (to == WIRE_CHAT)
			return chat;
		out = xl_chatreq_to_msg(&x, chat, max_tokens);
		json_object_put(chat);
		return out;
	}
	xl_fail(&x, "a %s request cannot be sent to a %s upstream",
	    wire_name(from), wire_name(to));
	return NULL;
}

struct json_object *
xlate_response(enum wire from, enum wire to, struct json_object *resp,
    const char *model, char *err, size_t errlen)
{
	struct xl		 x = { err, errlen };
	struct json_object	*chat, *out;

	if (errlen > 0)
		err[0] = '\0';
	if (!xl_is(resp, json_type_object)) {
		xl_fail(&x, "the upstream's answer is not a JSON object");
		return NULL;
	}
	if (model == NULL)
		model = "";
	if (from == to) {
		if ((out = xl_dup(resp)) != NULL)
			xl_set_str(out, "model", model);
		return out;
	}
	switch (from) {
	case WIRE_CHAT:
		if (to == WIRE_MESSAGES)
			return xl_chat_to_msgans(&x, resp, model);
		return xl_chat_to_respans(&x, resp, model);
	case WIRE_MESSAGES:
		if ((chat = xl_msgans_to_chat(&x, resp, model)) == NULL)
			return NULL;
		if (to == WIRE_CHAT)
			return chat;
		out = xl_chat_to_respans(&x, chat, model);
		json_object_put(chat);
		return out;
	case WIRE_RESPONSES:
		break;
	}
	xl_fail(&x, "a %s answer cannot be given as %s", wire_name(from),
	    wire_name(to));
	return NULL;
}

static int64_t
usage_field(struct json_object *usage, const char *key)
{
	return wire_tokens(xl_get(usage, key));
}

void
xlate_usage(enum wire w, struct json_object *resp, int64_t *in,
    int64_t *out)
{
	struct json_object	*usage = xl_get(resp, "usage");
	int64_t			 n;

	*in = *out = -1;
	if (!xl_is(usage, json_type_object))
		return;
	if (w == WIRE_CHAT) {
		*in = usage_field(usage, "prompt_tokens");
		*out = usage_field(usage, "completion_tokens");
		return;
	}
	*in = usage_field(usage, "input_tokens");
	*out = usage_field(usage, "output_tokens");
	/* Messages counts cached input apart; the log wants all of it. */
	if (w == WIRE_MESSAGES && *in >= 0) {
		if ((n = usage_field(usage, "cache_read_input_tokens")) > 0)
			*in += n;
		if ((n = usage_field(usage,
		    "cache_creation_input_tokens")) > 0)
			*in += n;
	}
}

/* --- shared helpers --- */

int
xl_fail(struct xl *x, const char *fmt, ...)
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
xl_where(struct xl *x, const char *fmt, ...)
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
xl_get(struct json_object *o, const char *key)
{
	struct json_object	*v;

	if (!xl_is(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

const char *
xl_str(struct json_object *o, const char *key)
{
	struct json_object	*v = xl_get(o, key);

	return xl_is(v, json_type_string) ? json_object_get_string(v) : NULL;
}

int
xl_is(struct json_object *o, json_type t)
{
	return o != NULL && json_object_is_type(o, t);
}

struct json_object *
xl_dup(struct json_object *o)
{
	struct json_object	*copy = NULL;

	if (o == NULL || json_object_deep_copy(o, &copy, NULL) != 0)
		return NULL;
	return copy;
}

void
xl_copy(struct json_object *dst, const char *dkey, struct json_object *src,
    const char *skey)
{
	struct json_object	*v;

	if (xl_is(src, json_type_object) &&
	    json_object_object_get_ex(src, skey, &v) && v != NULL)
		json_object_object_add(dst, dkey, xl_dup(v));
}

void
xl_set_str(struct json_object *o, const char *key, const char *s)
{
	json_object_object_add(o, key, json_object_new_string(s));
}

void
xl_id(char *buf, size_t len, const char *prefix)
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
xl_args_parse(const char *s)
{
	struct json_object	*o;
	size_t			 len = strlen(s);

	/* A call without parameters often comes with no text at all. */
	if (strspn(s, " \t\r\n") == len)
		return json_object_new_object();
	o = json_text_parse(s, len, JSON_DEPTH_MAX);
	if (o != NULL && !xl_is(o, json_type_object)) {
		json_object_put(o);
		o = NULL;
	}
	return o;
}

struct json_object *
xl_args_string(struct json_object *args)
{
	if (args == NULL)
		return json_object_new_string("{}");
	return json_object_new_string(json_object_to_json_string_ext(args,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
}

int
xl_data_url(const char *url, char *mt, size_t mtlen, const char **data)
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
xl_data_url_new(const char *mt, const char *data)
{
	struct json_object	*s;
	size_t			 mlen = strlen(mt), dlen = strlen(data);
	char			*buf;

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
xl_join_text(struct json_object *arr, const char *const *types,
    const char *sep, int *other)
{
	struct json_object	*item, *s;
	struct printbuf		*pb;
	const char		*text;
	size_t			 i, n;
	int			 first = 1;

	*other = 0;
	if (!xl_is(arr, json_type_array) || (pb = printbuf_new()) == NULL)
		return NULL;
	n = json_object_array_length(arr);
	for (i = 0; i < n; i++) {
		item = json_object_array_get_idx(arr, i);
		if (!type_in(xl_str(item, "type"), types) ||
		    (text = xl_str(item, "text")) == NULL) {
			(*other)++;
			continue;
		}
		if (!first)
			printbuf_memappend(pb, sep, strlen(sep));
		printbuf_memappend(pb, text,
		    json_object_get_string_len(xl_get(item, "text")));
		first = 0;
	}
	s = json_object_new_string_len(pb->buf, pb->bpos);
	printbuf_free(pb);
	return s;
}

struct json_object *
xl_part(const char *type, const char *key, struct json_object *val)
{
	struct json_object	*p = json_object_new_object();

	xl_set_str(p, "type", type);
	json_object_object_add(p, key, val);
	return p;
}

struct json_object *
xl_chat_msg(const char *role, struct json_object *content)
{
	struct json_object	*m = json_object_new_object();

	xl_set_str(m, "role", role);
	json_object_object_add(m, "content", content);
	return m;
}

static struct json_object *
error_text(struct json_object *content)
{
	static const char	 mark[] = "[tool error] ";
	struct printbuf		*pb;
	struct json_object	*s;

	if ((pb = printbuf_new()) == NULL)
		return content;
	printbuf_memappend(pb, mark, sizeof(mark) - 1);
	printbuf_memappend(pb, json_object_get_string(content),
	    json_object_get_string_len(content));
	s = json_object_new_string_len(pb->buf, pb->bpos);
	printbuf_free(pb);
	json_object_put(content);
	return s;
}

int
xl_chat_tool(struct xl *x, struct json_object *msgs, const char *call_id,
    struct json_object *parts, int is_error, struct json_object *user_parts)
{
	static const char *const text_types[] = { "text", NULL };
	struct json_object	*content, *m, *p;
	size_t			 i, n;
	int			 other;
	const char		*type;

	if (xl_is(parts, json_type_string))
		content = xl_dup(parts);
	else if (parts == NULL)
		content = json_object_new_string("");
	else if ((content = xl_join_text(parts, text_types, "\n",
	    &other)) == NULL)
		return xl_fail(x, "a tool result's content is malformed");
	else if (other > 0) {
		n = json_object_array_length(parts);
		for (i = 0; i < n; i++) {
			p = json_object_array_get_idx(parts, i);
			type = xl_str(p, "type");
			if (type == NULL || strcmp(type, "text") != 0)
				json_object_array_add(user_parts, xl_dup(p));
		}
	}
	/* Chat has no error flag on a tool result: say so in the text. */
	if (is_error)
		content = error_text(content);
	m = xl_chat_msg("tool", content);
	xl_set_str(m, "tool_call_id", call_id);
	json_object_array_add(msgs, m);
	return 0;
}

struct json_object *
xl_chat_function(struct xl *x, struct json_object *t, const char *schema)
{
	struct json_object	*fn;

	if (xl_str(t, "name") == NULL) {
		xl_fail(x, "a tool has no name");
		return NULL;
	}
	fn = json_object_new_object();
	xl_copy(fn, "name", t, "name");
	xl_copy(fn, "description", t, "description");
	xl_copy(fn, "parameters", t, schema);
	return xl_part("function", "function", fn);
}

int
xl_tools(struct xl *x, struct json_object *req, struct json_object *out,
    struct json_object *(*conv)(struct xl *, struct json_object *))
{
	struct json_object	*tools = xl_get(req, "tools"), *arr, *t;
	size_t			 i;

	if (tools == NULL)
		return 0;
	if (!xl_is(tools, json_type_array))
		return xl_fail(x, "tools must be an array");
	/* OpenAI refuses an empty list; none is the same. */
	if (json_object_array_length(tools) == 0)
		return 0;
	arr = json_object_new_array();
	json_object_object_add(out, "tools", arr);
	for (i = 0; i < json_object_array_length(tools); i++) {
		if ((t = conv(x, json_object_array_get_idx(tools, i))) == NULL)
			return xl_where(x, "tools[%zu]", i);
		json_object_array_add(arr, t);
	}
	return 0;
}

void
xl_chat_stream(struct json_object *chat, struct json_object *req)
{
	struct json_object	*so, *stream = xl_get(req, "stream");

	if (stream == NULL)
		return;
	json_object_object_add(chat, "stream", xl_dup(stream));
	if (json_object_get_boolean(stream)) {
		so = json_object_new_object();
		json_object_object_add(so, "include_usage",
		    json_object_new_boolean(1));
		json_object_object_add(chat, "stream_options", so);
	}
}
