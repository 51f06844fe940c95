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
 * xstream_messages.c: Anthropic Messages events, read into the hub and
 * written for a Messages caller.  Every event goes out with its
 * "event:" line: the Anthropic SDK drops those without one.
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "util.h"
#include "xstream.h"

struct messages_writer {
	char		 id[ID_BUFSIZE];
	int		 nblocks;	/* content blocks started */
	int		 nwhole;	/* of them whole, before the rest */
	int		 open;		/* the open block, or -1 */
	int		 open_text;	/* and it is text */
	int		 tool[XSTREAM_TOOLS_MAX]; /* hub tool -> block + 1 */
	const char	*stop;		/* stop_reason, once finished */
	int		 named;		/* and it is the stop sequence's */
};

/* Cached input apart, as Anthropic counts it (wire_usage.c). */
static void
messages_read_usage(struct xstream *xs, struct json_object *u)
{
	xstream_hub_usage(xs, WIRE_MESSAGES, u);
}

/*
 * The kind of block index: a hub tool number, XSTREAM_BLOCK_*, or -3
 * unknown.
 */
static int
messages_block(struct xstream *xs, struct json_object *data)
{
	int64_t	 index;

	index = xstream_int(data, "index");
	if (index < 0 || (size_t)index >= xs->nblocks)
		return -3;
	return xs->blocks[index];
}

static int
messages_read_start(struct xstream *xs, struct json_object *data)
{
	const char	*type, *text;
	int64_t		 index;
	short		*nb;
	size_t		 n;

	if ((index = xstream_int(data, "index")) < 0 ||
	    index >= XSTREAM_BLOCKS_MAX)
		return -1;
	if ((size_t)index >= xs->nblocks) {
		n = index + 1;
		if ((nb = reallocarray(xs->blocks, n, sizeof(*nb))) == NULL)
			return -1;
		while (xs->nblocks < n)
			nb[xs->nblocks++] = XSTREAM_BLOCK_OTHER;
		xs->blocks = nb;
	}
	type = xstream_str(data, "content_block.type");
	if (type != NULL && strcmp(type, "text") == 0) {
		xs->blocks[index] = XSTREAM_BLOCK_TEXT;
		if ((text = xstream_str(data, "content_block.text")) != NULL)
			xstream_hub_text(xs, text, strlen(text));
	} else if (type != NULL && strcmp(type, "tool_use") == 0) {
		if (xstream_hub_tools_over(xs, xs->ntools))
			return -1;
		xs->blocks[index] = xs->ntools;
		return xstream_hub_tool_start(xs, xs->ntools++,
		    xstream_str(data, "content_block.id"),
		    xstream_str(data, "content_block.name"));
	} else
		xs->blocks[index] = XSTREAM_BLOCK_OTHER;
	return 0;
}

static int
messages_read_delta(struct xstream *xs, struct json_object *data)
{
	const char	*type, *s;
	int		 kind;

	if ((kind = messages_block(xs, data)) == -3)
		return -1;
	type = xstream_str(data, "delta.type");
	if (type == NULL)
		return -1;
	if (kind == XSTREAM_BLOCK_TEXT && strcmp(type, "text_delta") == 0 &&
	    (s = xstream_str(data, "delta.text")) != NULL)
		xstream_hub_text(xs, s, strlen(s));
	else if (kind >= 0 && strcmp(type, "input_json_delta") == 0 &&
	    (s = xstream_str(data, "delta.partial_json")) != NULL)
		return xstream_hub_tool_args(xs, kind, s, strlen(s));
	return 0;
}

/* The type in the data, which Anthropic always sends, else the event. */
static const char *
messages_type(const char *event, struct json_object *data)
{
	const char	*type;

	type = xstream_str(data, "type");
	return type != NULL ? type : event;
}

int
xstream_messages_read(struct xstream *xs, const char *event,
    struct json_object *data)
{
	const char	*type, *stop;

	type = messages_type(event, data);
	if (strcmp(type, "message_start") == 0)
		messages_read_usage(xs, xstream_get(data, "message.usage"));
	else if (strcmp(type, "content_block_start") == 0)
		return messages_read_start(xs, data);
	else if (strcmp(type, "content_block_delta") == 0)
		return messages_read_delta(xs, data);
	else if (strcmp(type, "message_delta") == 0) {
		messages_read_usage(xs, xstream_get(data, "usage"));
		if ((stop = wire_stop_to_chat(xstream_str(data,
		    "delta.stop_reason"))) != NULL)
			xstream_hub_finish(xs, stop, xstream_str(data,
			    "delta.stop_sequence"));
	} else if (strcmp(type, "message_stop") == 0)
		return 1;
	else if (strcmp(type, "error") == 0)
		return -1;
	return 0;
}

int
xstream_messages_pass(struct xstream *xs, const char *event,
    struct json_object *data)
{
	const char	*type, *name;

	type = messages_type(event, data);
	if (strcmp(type, "error") == 0 ||
	    (name = xstream_event_name(event, type)) == NULL)
		return -1;
	if (strcmp(type, "message_start") == 0) {
		messages_read_usage(xs, xstream_get(data, "message.usage"));
		xstream_set_model(xs, xstream_get(data, "message"));
		xstream_set_id(xs, xstream_get(data, "message"));
	} else if (strcmp(type, "message_delta") == 0) {
		messages_read_usage(xs, xstream_get(data, "usage"));
		wire_stop_named(xstream_get(data, "delta"));
	}
	xstream_emit_json(xs, name, json_object_get(data));
	return strcmp(type, "message_stop") == 0;
}

/* Sends obj with "type" as its first member, as Anthropic does. */
static void
messages_emit(struct xstream *xs, const char *type, struct json_object *obj)
{
	struct json_object	*ev;

	ev = xstream_object("type", XSTREAM_STR(type), NULL);
	json_object_object_foreach(obj, key, val)
		json_object_object_add(ev, key, json_object_get(val));
	json_object_put(obj);
	xstream_emit_json(xs, type, ev);
}

/*
 * The usage as known; at the start with no output yet.  The SDKs take
 * each count message_delta carries over message_start's.
 */
static struct json_object *
messages_usage(struct xstream *xs, int start)
{
	struct wire_usage	 u = xs->usage;

	if (start)
		u.output = 0;
	return wire_usage_json(WIRE_MESSAGES, &u);
}

static void
messages_start(struct xstream *xs)
{
	struct messages_writer	*wr;

	if ((wr = calloc(1, sizeof(*wr))) == NULL) {
		xs->failed = 1;
		return;
	}
	xs->wr = wr;
	wr->open = -1;
	id_new(wr->id, sizeof(wr->id), "msg_");
	messages_emit(xs, "message_start",
	    xstream_object("message", xstream_object(
	    "id", XSTREAM_STR(wr->id),
	    "type", XSTREAM_STR("message"),
	    "role", XSTREAM_STR("assistant"),
	    "model", XSTREAM_STR(xs->model),
	    "content", json_object_new_array(),
	    "stop_reason", NULL,
	    "stop_sequence", NULL,
	    "usage", messages_usage(xs, 1), NULL), NULL));
}

static void
messages_close(struct xstream *xs)
{
	struct messages_writer	*wr = xs->wr;

	if (wr->open < 0)
		return;
	messages_emit(xs, "content_block_stop", xstream_object("index",
	    XSTREAM_INT(wr->open), NULL));
	wr->open = -1;
}

static int
messages_open(struct xstream *xs, struct json_object *block)
{
	struct messages_writer	*wr = xs->wr;

	messages_close(xs);
	wr->open = wr->nblocks++;
	messages_emit(xs, "content_block_start", xstream_object(
	    "index", XSTREAM_INT(wr->open),
	    "content_block", block, NULL));
	return wr->open;
}

static void
messages_delta(struct xstream *xs, int index, struct json_object *delta)
{
	messages_emit(xs, "content_block_delta", xstream_object(
	    "index", XSTREAM_INT(index),
	    "delta", delta, NULL));
}

static void
messages_text(struct xstream *xs, const char *s, size_t len)
{
	struct messages_writer	*wr = xs->wr;

	if (wr->open < 0 || !wr->open_text) {
		messages_open(xs, xstream_object("type", XSTREAM_STR("text"),
		    "text", XSTREAM_STR(""), NULL));
		wr->open_text = 1;
	}
	messages_delta(xs, wr->open,
	    xstream_object("type", XSTREAM_STR("text_delta"),
	    "text", json_object_new_string_len(s, len), NULL));
}

static void
messages_tool_start(struct xstream *xs, int index, const char *id,
    const char *name)
{
	struct messages_writer	*wr = xs->wr;

	wr->tool[index] = 1 + messages_open(xs, xstream_object(
	    "type", XSTREAM_STR("tool_use"),
	    "id", XSTREAM_STR(id),
	    "name", XSTREAM_STR(name),
	    "input", json_object_new_object(), NULL));
	wr->open_text = 0;
}

/* Fragments of a call never started are dropped. */
static void
messages_tool_args(struct xstream *xs, int index, const char *s, size_t len)
{
	struct messages_writer	*wr = xs->wr;

	if (wr->tool[index] == 0)
		return;
	messages_delta(xs, wr->tool[index] - 1, xstream_object(
	    "type", XSTREAM_STR("input_json_delta"),
	    "partial_json", json_object_new_string_len(s, len), NULL));
}

/*
 * A whole block, before the model's: a server tool's use as Anthropic
 * streams it (its start with an empty input, then the input as one
 * fragment, which the SDK's stream parses when the block stops); text
 * as text streams (an empty start, one text_delta: the SDKs' text
 * events see it); any other block starts whole.
 */
static void
messages_whole(struct xstream *xs, struct json_object *block)
{
	struct messages_writer		*wr = xs->wr;
	struct json_object	*start, *input;
	const char		*type;
	int			 index;

	type = xstream_str(block, "type");
	if (wr->nblocks != wr->nwhole) {
		xs->failed = 1;
		return;
	}
	input = xstream_get(block, "input");
	if (type != NULL && strcmp(type, "server_tool_use") == 0 &&
	    input != NULL) {
		start = json_object_new_object();
		json_object_object_foreach(block, key, val)
			json_object_object_add(start, key,
			    strcmp(key, "input") == 0 ?
			    json_object_new_object() : json_object_get(val));
		index = messages_open(xs, start);
		messages_delta(xs, index, xstream_object(
		    "type", XSTREAM_STR("input_json_delta"),
		    "partial_json", XSTREAM_STR(json_object_to_json_string_ext(
			input, JSON_C_TO_STRING_PLAIN)), NULL));
	} else if (type != NULL && strcmp(type, "text") == 0 &&
	    xstream_str(block, "text") != NULL) {
		index = messages_open(xs, xstream_object(
		    "type", XSTREAM_STR("text"), "text", XSTREAM_STR(""), NULL));
		messages_delta(xs, index, xstream_object(
		    "type", XSTREAM_STR("text_delta"),
		    "text", json_object_get(xstream_get(block, "text")), NULL));
	} else
		messages_open(xs, json_object_get(block));
	wr->open_text = 0;
	wr->nwhole++;
	messages_close(xs);
}

static void
messages_finish(struct xstream *xs, const char *reason)
{
	struct messages_writer	*wr = xs->wr;

	messages_close(xs);
	wr->stop = wire_stop_to_messages(reason);
	/* A chat stop with the sequence named (vLLM, llama-server). */
	if (strcmp(wr->stop, "end_turn") == 0 && xs->stop_seq != NULL) {
		wr->stop = "stop_sequence";
		wr->named = 1;
	}
}

static void
messages_end(struct xstream *xs)
{
	struct messages_writer		*wr = xs->wr;
	struct json_object	*usage, *delta;

	messages_close(xs);
	/* Input counts only when known: 0 would undo message_start's. */
	if (xs->usage.input >= 0)
		usage = messages_usage(xs, 0);
	else
		usage = xstream_object("output_tokens", XSTREAM_INT(
		    xs->usage.output >= 0 ? xs->usage.output : 0), NULL);
	delta = xstream_object(
	    "stop_reason", XSTREAM_STR(wr->stop ? wr->stop : "end_turn"),
	    "stop_sequence", wr->named ? XSTREAM_STR(xs->stop_seq) : NULL,
	    NULL);
	/* The SDKs copy it into the final message when it is not null. */
	if (xs->container != NULL && delta != NULL)
		json_object_object_add(delta, "container",
		    json_object_get(xs->container));
	messages_emit(xs, "message_delta", xstream_object(
	    "delta", delta, "usage", usage, NULL));
	messages_emit(xs, "message_stop", json_object_new_object());
}

static void
messages_free(struct xstream *xs)
{
	free(xs->wr);
}

const struct xstream_writer xstream_messages_writer = {
	.start = messages_start,
	.text = messages_text,
	.tool_start = messages_tool_start,
	.tool_args = messages_tool_args,
	.whole = messages_whole,
	.finish = messages_finish,
	.end = messages_end,
	.free = messages_free,
};

void
xstream_messages_error(int status, const char *message, xstream_emit_cb emit,
    void *arg)
{
	xstream_send(emit, arg, "error", xstream_object(
	    "type", XSTREAM_STR("error"),
	    "error", xstream_object(
		"type", XSTREAM_STR(wire_error_type_anthropic(status)),
		"message", XSTREAM_STR(message), NULL), NULL));
}
