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
 * from chat (xlate_messages_to_chat.c, xlate_messages_from_chat.c,
 * xlate_responses.c), and this file only picks the ways.  Everything
 * here is a pure function of its arguments.
 */
#include <sys/types.h>

#include <stdint.h>

#include <json-c/json.h>

#include "wire.h"
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
    int max_tokens, char *err, size_t errlen)
{
	struct xlate		 x = { err, errlen };
	struct json_object	*chat, *out;

	if (errlen > 0)
		err[0] = '\0';
	if (!xlate_is(req, json_type_object)) {
		xlate_fail(&x, "the request is not a JSON object");
		return NULL;
	}
	if (from == to)
		return xlate_dup(req);

	switch (from) {
	case WIRE_MESSAGES:
		if (to != WIRE_CHAT)
			break;
		return xlate_messages_request_to_chat(&x, req);
	case WIRE_CHAT:
		if (to != WIRE_MESSAGES)
			break;
		return xlate_messages_request_from_chat(&x, req, max_tokens);
	case WIRE_RESPONSES:
		if ((chat = xlate_responses_request_to_chat(&x, req)) == NULL)
			return NULL;
		if (to == WIRE_CHAT)
			return chat;
		out = xlate_messages_request_from_chat(&x, chat, max_tokens);
		json_object_put(chat);
		return out;
	}
	xlate_fail(&x, "a %s request cannot be sent to a %s upstream",
	    wire_name(from), wire_name(to));
	return NULL;
}

struct json_object *
xlate_response(enum wire from, enum wire to, struct json_object *resp,
    const char *model, char *err, size_t errlen)
{
	struct xlate		 x = { err, errlen };
	struct json_object	*chat, *out;

	if (errlen > 0)
		err[0] = '\0';
	if (!xlate_is(resp, json_type_object)) {
		xlate_fail(&x, "the upstream's answer is not a JSON object");
		return NULL;
	}
	if (model == NULL)
		model = "";
	if (from == to) {
		if ((out = xlate_dup(resp)) == NULL)
			return NULL;
		xlate_set_str(out, "model", model);
		/* The caller's dialect, whatever the upstream says. */
		wire_id_fix(to, out);
		if (to == WIRE_MESSAGES)
			wire_stop_named(out);
		return out;
	}
	switch (from) {
	case WIRE_CHAT:
		if (to == WIRE_MESSAGES)
			return xlate_messages_answer_from_chat(&x, resp, model);
		return xlate_responses_answer_from_chat(&x, resp, model);
	case WIRE_MESSAGES:
		if ((chat = xlate_messages_answer_to_chat(&x, resp,
		    model)) == NULL)
			return NULL;
		if (to == WIRE_CHAT)
			return chat;
		out = xlate_responses_answer_from_chat(&x, chat, model);
		json_object_put(chat);
		return out;
	case WIRE_RESPONSES:
		break;
	}
	xlate_fail(&x, "a %s answer cannot be given as %s", wire_name(from),
	    wire_name(to));
	return NULL;
}

static int64_t
usage_field(struct json_object *usage, const char *key)
{
	return wire_tokens(xlate_get(usage, key));
}

void
xlate_usage(enum wire w, struct json_object *resp, int64_t *in,
    int64_t *out)
{
	struct json_object	*usage;
	int64_t			 n;

	usage = xlate_get(resp, "usage");
	*in = *out = -1;
	if (!xlate_is(usage, json_type_object))
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
