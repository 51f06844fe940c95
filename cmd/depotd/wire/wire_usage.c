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
 * wire_usage.c: token counts in one shape for the three dialects.
 * Every translation of a usage object, whole answer or stream, reads
 * it with wire_usage_merge and writes it with wire_usage_json, so that
 * a streamed answer's usage is the plain answer's, field for field,
 * cached-token splits included.
 */
#include <stdint.h>

#include <json-c/json.h>

#include "wire.h"

void
wire_usage_init(struct wire_usage *u)
{
	u->input = u->cache_read = u->cache_write = -1;
	u->output = u->reasoning = -1;
}

static struct json_object *
usage_get(struct json_object *o, const char *key)
{
	struct json_object	*v;

	if (!json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

static int64_t
usage_tokens(struct json_object *o, const char *key)
{
	return wire_tokens(usage_get(o, key));
}

/*
 * OpenAI's input count holds the cached part (a detail); Anthropic's
 * does not.  Here input is the part not read from the cache.
 */
static void
usage_merge_openai(struct json_object *o, const char *in_key,
    const char *in_details, const char *out_key, const char *out_details,
    struct wire_usage *u)
{
	int64_t	 in, cached, n;

	if ((in = usage_tokens(o, in_key)) >= 0) {
		cached = usage_tokens(usage_get(o, in_details),
		    "cached_tokens");
		if (cached < 0 || cached > in)
			cached = 0;
		u->input = in - cached;
		u->cache_read = cached;
		u->cache_write = 0;
	}
	if ((n = usage_tokens(o, out_key)) >= 0)
		u->output = n;
	if ((n = usage_tokens(usage_get(o, out_details),
	    "reasoning_tokens")) >= 0)
		u->reasoning = n;
}

void
wire_usage_merge(enum wire w, struct json_object *o, struct wire_usage *u)
{
	int64_t	 n;

	if (!json_object_is_type(o, json_type_object))
		return;
	switch (w) {
	case WIRE_CHAT:
		usage_merge_openai(o, "prompt_tokens", "prompt_tokens_details",
		    "completion_tokens", "completion_tokens_details", u);
		break;
	case WIRE_RESPONSES:
		usage_merge_openai(o, "input_tokens", "input_tokens_details",
		    "output_tokens", "output_tokens_details", u);
		break;
	case WIRE_MESSAGES:
		if ((n = usage_tokens(o, "input_tokens")) >= 0)
			u->input = n;
		if ((n = usage_tokens(o, "cache_read_input_tokens")) >= 0)
			u->cache_read = n;
		if ((n = usage_tokens(o, "cache_creation_input_tokens")) >= 0)
			u->cache_write = n;
		if ((n = usage_tokens(o, "output_tokens")) >= 0)
			u->output = n;
		break;
	}
}

int
wire_usage_known(const struct wire_usage *u)
{
	return u->input >= 0 || u->output >= 0;
}

static int64_t
usage_n(int64_t v)
{
	return v > 0 ? v : 0;
}

/* All input, cached or not; -1 unknown. */
int64_t
wire_usage_in(const struct wire_usage *u)
{
	if (u->input < 0)
		return -1;
	return u->input + usage_n(u->cache_read) + usage_n(u->cache_write);
}

static void
usage_add(struct json_object *o, const char *key, int64_t v)
{
	json_object_object_add(o, key, json_object_new_int64(usage_n(v)));
}

static struct json_object *
usage_detail(const char *key, int64_t v)
{
	struct json_object	*d;

	d = json_object_new_object();
	usage_add(d, key, v);
	return d;
}

/*
 * As each dialect's plain answer says it: chat names cached input only
 * when there is some (as Anthropic's own chat layer does), Responses
 * always, Messages in its three disjoint counts.  Unknown counts are 0.
 */
struct json_object *
wire_usage_json(enum wire w, const struct wire_usage *u)
{
	struct json_object	*o;
	int64_t			 in, out;

	o = json_object_new_object();
	in = usage_n(wire_usage_in(u));
	out = usage_n(u->output);
	switch (w) {
	case WIRE_CHAT:
		usage_add(o, "prompt_tokens", in);
		usage_add(o, "completion_tokens", out);
		usage_add(o, "total_tokens", in + out);
		if (u->cache_read > 0)
			json_object_object_add(o, "prompt_tokens_details",
			    usage_detail("cached_tokens", u->cache_read));
		break;
	case WIRE_RESPONSES:
		usage_add(o, "input_tokens", in);
		json_object_object_add(o, "input_tokens_details",
		    usage_detail("cached_tokens", u->cache_read));
		usage_add(o, "output_tokens", out);
		json_object_object_add(o, "output_tokens_details",
		    usage_detail("reasoning_tokens", u->reasoning));
		usage_add(o, "total_tokens", in + out);
		break;
	case WIRE_MESSAGES:
		usage_add(o, "input_tokens", u->input);
		usage_add(o, "cache_creation_input_tokens", u->cache_write);
		usage_add(o, "cache_read_input_tokens", u->cache_read);
		usage_add(o, "output_tokens", out);
		break;
	}
	return o;
}
