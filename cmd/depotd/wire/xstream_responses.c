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
 * xstream_responses.c: OpenAI Responses events for a Responses caller.
 * Items go out one at a time (a message with one output_text part, or
 * a function_call), each announced, filled and closed; the closing
 * response.completed carries the same items with the same ids, which
 * the openai SDK's responses.stream() checks.  That final object needs
 * each item's whole text, so the items are kept until then.  Whole
 * items built beforehand (the gateway's code_interpreter_call items)
 * may go first: each is told as the API tells its own, and the
 * model's items follow them in the output.
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <json-c/printbuf.h>

#include "util.h"
#include "xstream.h"

#define RS_ITEMS_MAX	(2 * XSTREAM_TOOLS_MAX + 1)	/* text between calls */

struct responses_item {
	char		 id[ID_BUFSIZE];
	int		 tool;		/* hub tool number; -1: a message */
	struct json_object *item;	/* as announced */
	struct printbuf	*acc;		/* text or arguments so far */
};

struct responses_writer {
	char		 id[ID_BUFSIZE];
	int64_t		 seq;
	int		 base;		/* whole items, output first */
	struct responses_item	 items[RS_ITEMS_MAX];
	int		 nitems;
	int		 open;		/* the open item, or -1 */
	int		 tool[XSTREAM_TOOLS_MAX]; /* hub tool -> item + 1 */
	const char	*reason;
	struct json_object *output;	/* the items closed */
};

/* Sends obj with its type and sequence number first. */
static void
responses_emit(struct xstream *xs, const char *type, struct json_object *obj)
{
	struct responses_writer		*wr = xs->wr;
	struct json_object	*ev;

	ev = xstream_object("type", XSTREAM_STR(type),
	    "sequence_number", XSTREAM_INT(wr->seq++), NULL);
	json_object_object_foreach(obj, key, val)
		json_object_object_add(ev, key, json_object_get(val));
	json_object_put(obj);
	xstream_emit_json(xs, type, ev);
}

static struct json_object *
responses_usage(struct xstream *xs)
{
	if (!wire_usage_known(&xs->usage))
		return NULL;
	return wire_usage_json(WIRE_RESPONSES, &xs->usage);
}

/* The response object; output NULL: an empty list. */
static struct json_object *
responses_response(struct xstream *xs, const char *status,
    struct json_object *incomplete, struct json_object *output)
{
	struct responses_writer	*wr = xs->wr;
	int		 done;

	done = strcmp(status, "in_progress") != 0;
	return xstream_object(
	    "id", XSTREAM_STR(wr->id),
	    "object", XSTREAM_STR("response"),
	    "created_at", XSTREAM_INT(xs->created),
	    "status", XSTREAM_STR(status),
	    "error", NULL,
	    "incomplete_details", incomplete,
	    "model", XSTREAM_STR(xs->model),
	    "output", output ? output : json_object_new_array(),
	    "parallel_tool_calls", json_object_new_boolean(1),
	    "tool_choice", XSTREAM_STR("auto"),
	    "tools", json_object_new_array(),
	    "usage", done ? responses_usage(xs) : NULL, NULL);
}

static void
responses_start(struct xstream *xs)
{
	struct responses_writer	*wr;

	if ((wr = calloc(1, sizeof(*wr))) == NULL) {
		xs->failed = 1;
		return;
	}
	xs->wr = wr;
	wr->open = -1;
	wr->output = json_object_new_array();
	id_new(wr->id, sizeof(wr->id), "resp_");
	responses_emit(xs, "response.created", xstream_object("response",
	    responses_response(xs, "in_progress", NULL, NULL), NULL));
	responses_emit(xs, "response.in_progress", xstream_object("response",
	    responses_response(xs, "in_progress", NULL, NULL), NULL));
}

static struct json_object *
responses_accumulate_string(struct responses_item *it)
{
	return json_object_new_string_len(it->acc->buf, it->acc->bpos);
}

/* The closed form of item it: its whole text or arguments. */
static struct json_object *
responses_closed_item(struct responses_item *it)
{
	struct json_object	*item, *part;

	item = xstream_object("id", XSTREAM_STR(it->id), NULL);
	json_object_object_foreach(it->item, key, val)
		if (strcmp(key, "id") != 0)
			json_object_object_add(item, key,
			    json_object_get(val));
	json_object_object_add(item, "status", XSTREAM_STR("completed"));
	if (it->tool >= 0) {
		json_object_object_add(item, "arguments",
		    responses_accumulate_string(it));
		return item;
	}
	part = xstream_object("type", XSTREAM_STR("output_text"),
	    "annotations", json_object_new_array(),
	    "logprobs", json_object_new_array(),
	    "text", responses_accumulate_string(it), NULL);
	json_object_object_add(item, "content", json_object_new_array());
	json_object_array_add(xstream_get(item, "content"), part);
	return item;
}

static void
responses_close(struct xstream *xs)
{
	struct responses_writer	*wr = xs->wr;
	struct responses_item	*it;
	struct json_object *item, *part;
	int		 i = wr->open;

	if (i < 0)
		return;
	wr->open = -1;
	it = &wr->items[i];
	item = responses_closed_item(it);
	if (it->tool >= 0)
		responses_emit(xs, "response.function_call_arguments.done",
		    xstream_object(
		    "item_id", XSTREAM_STR(it->id),
		    "output_index", XSTREAM_INT(wr->base + i),
		    "name", json_object_get(xstream_get(item, "name")),
		    "arguments",
		    json_object_get(xstream_get(item, "arguments")),
		    NULL));
	else {
		part = json_object_array_get_idx(xstream_get(item, "content"),
		    0);
		responses_emit(xs, "response.output_text.done", xstream_object(
		    "item_id", XSTREAM_STR(it->id),
		    "output_index", XSTREAM_INT(wr->base + i),
		    "content_index", XSTREAM_INT(0),
		    "text", json_object_get(xstream_get(part, "text")),
		    "logprobs", json_object_new_array(), NULL));
		responses_emit(xs, "response.content_part.done", xstream_object(
		    "item_id", XSTREAM_STR(it->id),
		    "output_index", XSTREAM_INT(wr->base + i),
		    "content_index", XSTREAM_INT(0),
		    "part", json_object_get(part), NULL));
	}
	responses_emit(xs, "response.output_item.done", xstream_object(
	    "output_index", XSTREAM_INT(wr->base + i),
	    "item", json_object_get(item), NULL));
	json_object_array_add(wr->output, item);
}

/* A new item, announced; NULL past the bound (the answer fails). */
static struct responses_item *
responses_open(struct xstream *xs, int tool, const char *prefix,
    struct json_object *item)
{
	struct responses_writer	*wr = xs->wr;
	struct responses_item	*it;

	responses_close(xs);
	if (wr->nitems >= RS_ITEMS_MAX) {
		json_object_put(item);
		xs->failed = 1;
		return NULL;
	}
	wr->open = wr->nitems++;
	it = &wr->items[wr->open];
	it->tool = tool;
	id_new(it->id, sizeof(it->id), prefix);
	it->item = item;
	if ((it->acc = printbuf_new()) == NULL)
		abort();
	json_object_object_add(item, "id", XSTREAM_STR(it->id));
	responses_emit(xs, "response.output_item.added", xstream_object(
	    "output_index", XSTREAM_INT(wr->base + wr->open),
	    "item", json_object_get(item), NULL));
	return it;
}

/* Appends to the item's text or arguments. */
static void
responses_accumulate(struct responses_item *it, const char *s, size_t len)
{
	if (len > INT32_MAX || printbuf_memappend(it->acc, s, len) < 0)
		abort();
}

static void
responses_text(struct xstream *xs, const char *s, size_t len)
{
	struct responses_writer	*wr = xs->wr;
	struct responses_item	*it;

	if (wr->open >= 0 && wr->items[wr->open].tool < 0)
		it = &wr->items[wr->open];
	else {
		if ((it = responses_open(xs, -1, "msg_", xstream_object(
		    "type", XSTREAM_STR("message"),
		    "status", XSTREAM_STR("in_progress"),
		    "role", XSTREAM_STR("assistant"),
		    "content", json_object_new_array(), NULL))) == NULL)
			return;
		responses_emit(xs, "response.content_part.added",
		    xstream_object(
		    "item_id", XSTREAM_STR(it->id),
		    "output_index", XSTREAM_INT(wr->base + wr->open),
		    "content_index", XSTREAM_INT(0),
		    "part", xstream_object("type", XSTREAM_STR("output_text"),
			"annotations", json_object_new_array(),
			"logprobs", json_object_new_array(),
			"text", XSTREAM_STR(""), NULL), NULL));
	}
	responses_accumulate(it, s, len);
	responses_emit(xs, "response.output_text.delta", xstream_object(
	    "item_id", XSTREAM_STR(it->id),
	    "output_index", XSTREAM_INT(wr->base + wr->open),
	    "content_index", XSTREAM_INT(0),
	    "delta", json_object_new_string_len(s, len),
	    "logprobs", json_object_new_array(), NULL));
}

static void
responses_tool_start(struct xstream *xs, int index, const char *id,
    const char *name)
{
	struct responses_writer	*wr = xs->wr;

	if (responses_open(xs, index, "fc_", xstream_object(
	    "type", XSTREAM_STR("function_call"),
	    "status", XSTREAM_STR("in_progress"),
	    "arguments", XSTREAM_STR(""),
	    "call_id", XSTREAM_STR(id),
	    "name", XSTREAM_STR(name), NULL)) != NULL)
		wr->tool[index] = wr->open + 1;
}

/*
 * Items go out one after the other, so a fragment for a call already
 * closed cannot be sent; no upstream known interleaves them.
 */
static void
responses_tool_args(struct xstream *xs, int index, const char *s, size_t len)
{
	struct responses_writer	*wr = xs->wr;
	struct responses_item	*it;
	int		 i = wr->tool[index] - 1;

	if (i < 0)
		return;
	if (i != wr->open) {
		xs->failed = 1;
		return;
	}
	it = &wr->items[i];
	responses_accumulate(it, s, len);
	responses_emit(xs, "response.function_call_arguments.delta",
	    xstream_object(
	    "item_id", XSTREAM_STR(it->id),
	    "output_index", XSTREAM_INT(wr->base + i),
	    "delta", json_object_new_string_len(s, len), NULL));
}

/* The events between a code_interpreter_call's announcement and end. */
static void
responses_code_events(struct xstream *xs, struct json_object *item,
    int64_t index)
{
	static const char *const steps[] = {
		"response.code_interpreter_call.in_progress",
		"response.code_interpreter_call_code.delta",
		"response.code_interpreter_call_code.done",
		"response.code_interpreter_call.interpreting",
		"response.code_interpreter_call.completed",
	};
	struct json_object	*ev, *code;
	size_t			 i;

	code = xstream_get(item, "code");
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		ev = xstream_object("item_id",
		    json_object_get(xstream_get(item, "id")),
		    "output_index", XSTREAM_INT(index), NULL);
		if (i == 1)
			json_object_object_add(ev, "delta",
			    json_object_get(code));
		else if (i == 2)
			json_object_object_add(ev, "code",
			    json_object_get(code));
		responses_emit(xs, steps[i], ev);
	}
}

/*
 * A whole message's text told as the API tells text: its part added,
 * one output_text.delta, the text done, the part done (the SDK's text
 * events see it).
 */
static void
responses_message_events(struct xstream *xs, struct json_object *item,
    int64_t index)
{
	static const char *const steps[] = {
		"response.content_part.added",
		"response.output_text.delta",
		"response.output_text.done",
		"response.content_part.done",
	};
	struct json_object	*ev, *part, *text;
	size_t			 i;

	part = xstream_get(item, "content.0");
	text = xstream_get(part, "text");
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		ev = xstream_object("item_id",
		    json_object_get(xstream_get(item, "id")),
		    "output_index", XSTREAM_INT(index),
		    "content_index", XSTREAM_INT(0), NULL);
		if (i == 0)
			json_object_object_add(ev, "part", xstream_object(
			    "type", XSTREAM_STR("output_text"),
			    "text", XSTREAM_STR(""),
			    "annotations", json_object_new_array(), NULL));
		else if (i == 1)
			json_object_object_add(ev, "delta",
			    json_object_get(text));
		else if (i == 2)
			json_object_object_add(ev, "text",
			    json_object_get(text));
		else
			json_object_object_add(ev, "part",
			    json_object_get(part));
		responses_emit(xs, steps[i], ev);
	}
}

/*
 * A whole item, before the model's: announced in progress (a code
 * call without its code yet, a message without its text), its code
 * and run or its text told, then done whole; response.completed lists
 * it at the same index.
 */
static void
responses_whole(struct xstream *xs, struct json_object *item)
{
	struct responses_writer		*wr = xs->wr;
	struct json_object	*added, *v;
	const char		*type;
	int			 code, text;

	type = xstream_str(item, "type");
	if (wr->nitems > 0 || xstream_str(item, "id") == NULL || type == NULL) {
		xs->failed = 1;
		return;
	}
	code = strcmp(type, "code_interpreter_call") == 0;
	text = strcmp(type, "message") == 0 &&
	    xstream_str(item, "content.0.text") != NULL;
	added = json_object_new_object();
	json_object_object_foreach(item, key, val) {
		if (strcmp(key, "status") == 0)
			v = XSTREAM_STR("in_progress");
		else if (code && strcmp(key, "code") == 0)
			v = XSTREAM_STR("");
		else if (code && strcmp(key, "outputs") == 0)
			v = NULL;
		else if (text && strcmp(key, "content") == 0)
			v = json_object_new_array();
		else
			v = json_object_get(val);
		json_object_object_add(added, key, v);
	}
	responses_emit(xs, "response.output_item.added", xstream_object(
	    "output_index", XSTREAM_INT(wr->base), "item", added, NULL));
	if (code)
		responses_code_events(xs, item, wr->base);
	else if (text)
		responses_message_events(xs, item, wr->base);
	responses_emit(xs, "response.output_item.done", xstream_object(
	    "output_index", XSTREAM_INT(wr->base),
	    "item", json_object_get(item), NULL));
	json_object_array_add(wr->output, json_object_get(item));
	wr->base++;
}

static void
responses_finish(struct xstream *xs, const char *reason)
{
	struct responses_writer	*wr = xs->wr;

	responses_close(xs);
	if (strcmp(reason, "length") == 0)
		wr->reason = "max_output_tokens";
	else if (strcmp(reason, "content_filter") == 0)
		wr->reason = "content_filter";
}

static void
responses_end(struct xstream *xs)
{
	struct responses_writer	*wr = xs->wr;
	struct json_object	*output;

	output = json_object_get(wr->output);
	responses_close(xs);
	if (wr->reason != NULL)
		responses_emit(xs, "response.incomplete",
		    xstream_object("response",
		    responses_response(xs, "incomplete",
		    xstream_object("reason",
		    XSTREAM_STR(wr->reason), NULL), output), NULL));
	else
		responses_emit(xs, "response.completed",
		    xstream_object("response",
		    responses_response(xs, "completed", NULL, output), NULL));
}

static void
responses_free(struct xstream *xs)
{
	struct responses_writer	*wr = xs->wr;
	int		 i;

	if (wr == NULL)
		return;
	for (i = 0; i < wr->nitems; i++) {
		json_object_put(wr->items[i].item);
		printbuf_free(wr->items[i].acc);
	}
	json_object_put(wr->output);
	free(wr);
}

const struct xstream_writer xstream_responses_writer = {
	.start = responses_start,
	.text = responses_text,
	.tool_start = responses_tool_start,
	.tool_args = responses_tool_args,
	.whole = responses_whole,
	.finish = responses_finish,
	.end = responses_end,
	.free = responses_free,
};

static int
responses_terminal(const char *type)
{
	return strcmp(type, "response.completed") == 0 ||
	    strcmp(type, "response.incomplete") == 0 ||
	    strcmp(type, "response.failed") == 0;
}

int
xstream_responses_pass(struct xstream *xs, const char *event,
    struct json_object *data)
{
	struct json_object	*resp;
	const char		*type, *name;

	if ((type = xstream_str(data, "type")) == NULL)
		type = event;
	if (strcmp(type, "error") == 0 ||
	    (name = xstream_event_name(event, type)) == NULL)
		return -1;
	if ((resp = xstream_get(data, "response")) != NULL) {
		xstream_set_model(xs, resp);
		xstream_set_id(xs, resp);
		xstream_hub_usage(xs, WIRE_RESPONSES, xstream_get(resp,
		    "usage"));
	}
	xstream_emit_json(xs, name, json_object_get(data));
	return responses_terminal(type);
}

/*
 * The flat fields the Responses reference documents, and the same
 * nested under "error" as OpenAI's own servers send: openai 6 raises
 * APIError only for a data.error, and passes a flat one on as a plain
 * object.  The sequence number is not known here; no SDK checks it.
 */
void
xstream_responses_error(int status, const char *message, xstream_emit_cb emit,
    void *arg)
{
	const char	*code;

	code = wire_error_code_responses(status);

	xstream_send(emit, arg, "error", xstream_object(
	    "type", XSTREAM_STR("error"),
	    "code", XSTREAM_STR(code),
	    "message", XSTREAM_STR(message),
	    "param", NULL,
	    "sequence_number", XSTREAM_INT(0),
	    "error", xstream_object(
		"type", XSTREAM_STR(wire_error_type_openai(status)),
		"code", XSTREAM_STR(code),
		"message", XSTREAM_STR(message),
		"param", NULL, NULL), NULL));
}
