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
 * xstream.c: streamed answers, event by event, from an upstream's wire
 * to the caller's.  This file parses each event and picks the reader
 * and the writer (or the pass-through) of xstream_chat.c,
 * xstream_messages.c and xstream_responses.c; what they share is
 * below them, in xstream_hub.c and xstream_emit.c.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "jsontext.h"
#include "wire.h"
#include "xstream.h"

struct xstream *
xstream_new(enum wire from, enum wire to, const char *model,
    xstream_emit_cb emit, void *arg)
{
	static const struct xstream_writer *writers[] = {
		[WIRE_CHAT] = &xstream_chat_writer,
		[WIRE_RESPONSES] = &xstream_responses_writer,
		[WIRE_MESSAGES] = &xstream_messages_writer,
	};
	static const xstream_passer passers[] = {
		[WIRE_CHAT] = xstream_chat_pass,
		[WIRE_RESPONSES] = xstream_responses_pass,
		[WIRE_MESSAGES] = xstream_messages_pass,
	};
	struct xstream	*xs;

	/* A Responses upstream serves Responses callers only. */
	if (from != to && from == WIRE_RESPONSES)
		return NULL;
	if ((xs = calloc(1, sizeof(*xs))) == NULL)
		return NULL;
	if ((xs->model = strdup(model)) == NULL) {
		free(xs);
		return NULL;
	}
	xs->from = from;
	xs->to = to;
	xs->emit = emit;
	xs->arg = arg;
	wire_usage_init(&xs->usage);
	xs->max_tools = XSTREAM_TOOLS_MAX;
	xs->created = time(NULL);
	if (from == to)
		xs->passer = passers[from];
	else {
		xs->w = writers[to];
		xs->reader = from == WIRE_CHAT ? xstream_chat_read :
		    xstream_messages_read;
	}
	return xs;
}

void
xstream_free(struct xstream *xs)
{
	if (xs == NULL)
		return;
	if (xs->w != NULL)
		xs->w->free(xs);
	free(xs->blocks);
	free(xs->stop_seq);
	free(xs->model);
	json_object_put(xs->container);
	free(xs);
}

void
xstream_usage(const struct xstream *xs, int64_t *in, int64_t *out)
{
	*in = wire_usage_in(&xs->usage);
	*out = xs->usage.output;
}

void
xstream_caller_usage(struct xstream *xs, int asked)
{
	xs->want_usage = asked;
}

void
xstream_container(struct xstream *xs, struct json_object *container)
{
	json_object_put(xs->container);
	xs->container = json_object_get(container);
}

/* An event's data as a JSON object, NULL when it is anything else. */
static struct json_object *
event_parse(const char *data, size_t len)
{
	struct json_object	*obj;

	obj = json_text_parse(data, len, JSON_DEPTH_MAX);
	if (obj != NULL && !json_object_is_type(obj, json_type_object)) {
		json_object_put(obj);
		obj = NULL;
	}
	return obj;
}

static int
stream_fail(struct xstream *xs)
{
	xs->failed = 1;
	return -1;
}

/* The writer's opening events, before anything else it writes. */
static int
writer_start(struct xstream *xs)
{
	if (!xs->started) {
		xs->started = 1;
		xs->w->start(xs);
	}
	return xs->failed ? -1 : 0;
}

/* The upstream's terminator: the caller's stream is closed too. */
static int
stream_done(struct xstream *xs)
{
	xs->ended = 1;
	if (xs->w != NULL) {
		if (writer_start(xs) == -1)
			return stream_fail(xs);
		xs->w->end(xs);
	}
	return xs->failed ? -1 : 0;
}

void
xstream_limits(struct xstream *xs, int64_t max_bytes, int max_tools)
{
	if (max_bytes > 0)
		xs->max_bytes = max_bytes;
	if (max_tools > 0)
		xs->max_tools = max_tools < XSTREAM_TOOLS_MAX ? max_tools :
		    XSTREAM_TOOLS_MAX;
}

int
xstream_limit(const struct xstream *xs)
{
	return xs->over;
}

/* A passed-through event's tool calls, counted before it goes on. */
static int
pass_count(struct xstream *xs, const char *event,
    struct json_object *data)
{
	struct json_object	*list;
	const char		*type, *kind = NULL;
	size_t			 i, n;
	int64_t			 index;

	if (xs->from == WIRE_CHAT) {
		list = xstream_get(data, "choices.0.delta.tool_calls");
		if (!json_object_is_type(list, json_type_array))
			return 0;
		n = json_object_array_length(list);
		for (i = 0; i < n; i++) {
			index = xstream_int(json_object_array_get_idx(list, i),
			    "index");
			if (xstream_hub_tools_over(xs, index >= 0 ? index :
			    (int64_t)i))
				return -1;
		}
		return 0;
	}
	if ((type = xstream_str(data, "type")) == NULL)
		type = event;
	if (xs->from == WIRE_MESSAGES &&
	    strcmp(type, "content_block_start") == 0)
		kind = xstream_str(data, "content_block.type");
	else if (xs->from == WIRE_RESPONSES &&
	    strcmp(type, "response.output_item.added") == 0)
		kind = xstream_str(data, "item.type");
	if (kind != NULL && (strcmp(kind, "tool_use") == 0 ||
	    strcmp(kind, "function_call") == 0) &&
	    xstream_hub_tools_over(xs, xs->npassed++))
		return -1;
	return 0;
}

int
xstream_event(struct xstream *xs, const char *event, const char *data,
    size_t len)
{
	struct json_object	*obj;
	int			 rc;

	if (xs->failed)
		return -1;
	if (xs->ended)		/* nothing counts after the terminator */
		return 0;
	xs->bytes += len;
	if (xs->max_bytes > 0 && xs->bytes > xs->max_bytes) {
		xs->over = XSTREAM_OVER_SIZE;
		return stream_fail(xs);
	}
	if (strcmp(event, "error") == 0)
		return stream_fail(xs);
	if (xs->from == WIRE_CHAT && len == 6 && memcmp(data, "[DONE]", 6)
	    == 0) {
		if (xs->w == NULL) {
			xstream_chat_pass_end(xs);
			xstream_emit_raw(xs, NULL, "[DONE]");
		}
		return stream_done(xs);
	}
	if ((obj = event_parse(data, len)) == NULL)
		return stream_fail(xs);
	if (xs->w == NULL)
		rc = pass_count(xs, event, obj) == -1 ? -1 :
		    xs->passer(xs, event, obj);
	else if ((rc = writer_start(xs)) == 0)
		rc = xs->reader(xs, event, obj);
	json_object_put(obj);
	if (rc == -1 || xs->failed)
		return stream_fail(xs);
	return rc == 1 ? stream_done(xs) : 0;
}

int
xstream_prepend(struct xstream *xs, struct json_object *list)
{
	size_t	 i, n;

	if (xs->w == NULL || xs->w->whole == NULL || xs->ended ||
	    !json_object_is_type(list, json_type_array))
		return -1;
	if ((n = json_object_array_length(list)) == 0)
		return 0;
	if (writer_start(xs) == -1)
		return stream_fail(xs);
	for (i = 0; i < n && !xs->failed; i++)
		xs->w->whole(xs, json_object_array_get_idx(list, i));
	return xs->failed ? -1 : 0;
}

int
xstream_end(struct xstream *xs)
{
	return xs->failed || !xs->ended ? -1 : 0;
}

void
xstream_error(enum wire to, int status, const char *message,
    xstream_emit_cb emit, void *arg)
{
	switch (to) {
	case WIRE_CHAT:
		xstream_chat_error(status, message, emit, arg);
		break;
	case WIRE_RESPONSES:
		xstream_responses_error(status, message, emit, arg);
		break;
	case WIRE_MESSAGES:
		xstream_messages_error(status, message, emit, arg);
		break;
	}
}
