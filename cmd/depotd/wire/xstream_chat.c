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
 * xstream_chat.c: chat completions chunks, read into the hub and
 * written for a chat caller.  The caller gets what OpenAI sends: a
 * first chunk with the role, content and tool-call fragments (the
 * first of each call with its id and name), a chunk with the finish
 * reason, a usage chunk with no choices if it asked for one
 * (stream_options.include_usage: then every other chunk has "usage":
 * null), then [DONE].  Passed through, the upstream's chunks go as
 * they came but for the model, the id and the usage the caller did
 * not ask for.
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "util.h"
#include "xstream.h"

struct chat_writer {
	char	 id[ID_BUFSIZE];
};

static int
chat_read_tool(struct xstream *xs, struct json_object *tc, size_t pos)
{
	const char	*args;
	int64_t		 index;

	if ((index = xstream_int(tc, "index")) == -1)
		index = pos;
	if (xstream_hub_tools_over(xs, index))
		return -1;
	if (!xs->seen[index]) {
		xs->seen[index] = 1;
		if (xstream_hub_tool_start(xs, index, xstream_str(tc, "id"),
		    xstream_str(tc, "function.name")) == -1)
			return -1;
	}
	if ((args = xstream_str(tc, "function.arguments")) != NULL)
		return xstream_hub_tool_args(xs, index, args, strlen(args));
	return 0;
}

/* Only choice 0 is read: depotd never asks for more. */
static int
chat_read_choice(struct xstream *xs, struct json_object *choice)
{
	struct json_object	*calls;
	const char		*text, *reason;
	size_t			 i;

	if (xstream_int(choice, "index") > 0)
		return 0;
	if ((text = xstream_str(choice, "delta.content")) != NULL)
		xstream_hub_text(xs, text, strlen(text));
	calls = xstream_get(choice, "delta.tool_calls");
	if (json_object_is_type(calls, json_type_array)) {
		for (i = 0; i < json_object_array_length(calls); i++)
			if (chat_read_tool(xs,
			    json_object_array_get_idx(calls, i), i) == -1)
				return -1;
	}
	/* vLLM names the stop string that matched. */
	if ((reason = xstream_str(choice, "finish_reason")) != NULL)
		xstream_hub_finish(xs, reason, xstream_str(choice,
		    "stop_reason"));
	return 0;
}

static void
chat_read_usage(struct xstream *xs, struct json_object *data)
{
	xstream_hub_usage(xs, WIRE_CHAT, xstream_get(data, "usage"));
}

/* OpenAI reports a failure mid-stream as a chunk with "error". */
static int
chat_is_error(struct json_object *data)
{
	struct json_object	*err;

	return json_object_object_get_ex(data, "error", &err) && err != NULL;
}

int
xstream_chat_read(struct xstream *xs, const char *event,
    struct json_object *data)
{
	struct json_object	*choices;
	size_t			 i;

	if (chat_is_error(data))
		return -1;
	chat_read_usage(xs, data);
	choices = xstream_get(data, "choices");
	if (!json_object_is_type(choices, json_type_array))
		return 0;
	for (i = 0; i < json_object_array_length(choices); i++)
		if (chat_read_choice(xs,
		    json_object_array_get_idx(choices, i)) == -1)
			return -1;
	return 0;
}

/* The usage chunk: no choices, and usage. */
static int
chat_usage_only(struct json_object *data)
{
	struct json_object	*choices;

	choices = xstream_get(data, "choices");
	return json_object_is_type(xstream_get(data, "usage"),
	    json_type_object) && (choices == NULL ||
	    (json_object_is_type(choices, json_type_array) &&
	    json_object_array_length(choices) == 0));
}

int
xstream_chat_pass(struct xstream *xs, const char *event,
    struct json_object *data)
{
	if (chat_is_error(data))
		return -1;
	chat_read_usage(xs, data);
	xstream_set_model(xs, data);
	xstream_set_id(xs, data);
	if (chat_usage_only(data)) {
		if (!xs->want_usage || xs->usage_sent)
			return 0;
		xs->usage_sent = 1;
	} else if (!xs->want_usage)
		json_object_object_del(data, "usage");
	xstream_emit_json(xs, NULL, json_object_get(data));
	return 0;
}

static struct json_object *
chat_usage(struct xstream *xs)
{
	return wire_usage_json(WIRE_CHAT, &xs->usage);
}

/*
 * The upstream's [DONE], passed through: a caller that asked for usage
 * and got no usage chunk (the upstream put its counts on another
 * chunk) gets one now.
 */
void
xstream_chat_pass_end(struct xstream *xs)
{
	if (!xs->want_usage || xs->usage_sent ||
	    !wire_usage_known(&xs->usage))
		return;
	xs->usage_sent = 1;
	if (xs->id[0] == '\0')
		wire_id_choose(WIRE_CHAT, NULL, xs->id, sizeof(xs->id));
	xstream_emit_json(xs, NULL, xstream_object(
	    "id", XSTREAM_STR(xs->id),
	    "object", XSTREAM_STR("chat.completion.chunk"),
	    "created", XSTREAM_INT(xs->created),
	    "model", XSTREAM_STR(xs->model),
	    "choices", json_object_new_array(),
	    "usage", chat_usage(xs), NULL));
}

/* A chunk around choices (NULL: the usage chunk's empty list). */
static void
chat_emit(struct xstream *xs, struct json_object *delta, const char *reason)
{
	struct chat_writer		*wr = xs->wr;
	struct json_object	*chunk, *choices, *choice;

	chunk = json_object_new_object();
	json_object_object_add(chunk, "id", json_object_new_string(wr->id));
	json_object_object_add(chunk, "object",
	    json_object_new_string("chat.completion.chunk"));
	json_object_object_add(chunk, "created",
	    json_object_new_int64(xs->created));
	json_object_object_add(chunk, "model",
	    json_object_new_string(xs->model));
	choices = json_object_new_array();
	if (delta != NULL) {
		choice = json_object_new_object();
		json_object_object_add(choice, "index",
		    json_object_new_int(0));
		json_object_object_add(choice, "delta", delta);
		json_object_object_add(choice, "logprobs", NULL);
		json_object_object_add(choice, "finish_reason", reason ?
		    json_object_new_string(reason) : NULL);
		json_object_array_add(choices, choice);
	}
	json_object_object_add(chunk, "choices", choices);
	if (delta == NULL)
		json_object_object_add(chunk, "usage", chat_usage(xs));
	else if (xs->want_usage)
		json_object_object_add(chunk, "usage", NULL);
	xstream_emit_json(xs, NULL, chunk);
}

static void
chat_start(struct xstream *xs)
{
	struct chat_writer		*wr;
	struct json_object	*delta;

	if ((wr = calloc(1, sizeof(*wr))) == NULL) {
		xs->failed = 1;
		return;
	}
	xs->wr = wr;
	id_new(wr->id, sizeof(wr->id), "chatcmpl-");
	delta = json_object_new_object();
	json_object_object_add(delta, "role",
	    json_object_new_string("assistant"));
	json_object_object_add(delta, "content", json_object_new_string(""));
	chat_emit(xs, delta, NULL);
}

static void
chat_text(struct xstream *xs, const char *s, size_t len)
{
	struct json_object	*delta;

	delta = json_object_new_object();
	json_object_object_add(delta, "content",
	    json_object_new_string_len(s, len));
	chat_emit(xs, delta, NULL);
}

/* A delta with one tool-call fragment; id NULL after the first. */
static void
chat_tool(struct xstream *xs, int index, const char *id, const char *name,
    const char *args, size_t len)
{
	struct json_object	*delta, *calls, *call, *fn;

	call = json_object_new_object();
	json_object_object_add(call, "index", json_object_new_int(index));
	fn = json_object_new_object();
	if (id != NULL) {
		json_object_object_add(call, "id", json_object_new_string(id));
		json_object_object_add(call, "type",
		    json_object_new_string("function"));
		json_object_object_add(fn, "name",
		    json_object_new_string(name));
	}
	json_object_object_add(fn, "arguments",
	    json_object_new_string_len(args, len));
	json_object_object_add(call, "function", fn);
	calls = json_object_new_array();
	json_object_array_add(calls, call);
	delta = json_object_new_object();
	json_object_object_add(delta, "tool_calls", calls);
	chat_emit(xs, delta, NULL);
}

static void
chat_tool_start(struct xstream *xs, int index, const char *id,
    const char *name)
{
	chat_tool(xs, index, id, name, "", 0);
}

static void
chat_tool_args(struct xstream *xs, int index, const char *s, size_t len)
{
	chat_tool(xs, index, NULL, NULL, s, len);
}

static void
chat_finish(struct xstream *xs, const char *reason)
{
	chat_emit(xs, json_object_new_object(), reason);
}

static void
chat_end(struct xstream *xs)
{
	if (!xs->finished) {
		xs->finished = 1;
		chat_finish(xs, "stop");
	}
	if (xs->want_usage && !xs->usage_sent &&
	    wire_usage_known(&xs->usage)) {
		xs->usage_sent = 1;
		chat_emit(xs, NULL, NULL);
	}
	xstream_emit_raw(xs, NULL, "[DONE]");
}

static void
chat_free(struct xstream *xs)
{
	free(xs->wr);
}

const struct xstream_writer xstream_chat_writer = {
	.start = chat_start,
	.text = chat_text,
	.tool_start = chat_tool_start,
	.tool_args = chat_tool_args,
	.finish = chat_finish,
	.end = chat_end,
	.free = chat_free,
};

void
xstream_chat_error(int status, const char *message, xstream_emit_cb emit,
    void *arg)
{
	struct json_object	*root, *err;

	err = json_object_new_object();
	json_object_object_add(err, "message",
	    json_object_new_string(message));
	json_object_object_add(err, "type",
	    json_object_new_string(wire_error_type_openai(status)));
	json_object_object_add(err, "param", NULL);
	json_object_object_add(err, "code", NULL);
	root = json_object_new_object();
	json_object_object_add(root, "error", err);
	xstream_send(emit, arg, NULL, root);
}
