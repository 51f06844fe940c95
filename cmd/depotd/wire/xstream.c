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
 * to the caller's.  This file parses each event, picks the reader and
 * the writer (or the pass-through), and holds what they share.
 */
#include <sys/queue.h>

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "jsontext.h"
#include "util.h"
#include "xstream.h"

struct xstream *
xstream_new(enum wire from, enum wire to, const char *model,
    xstream_emit_cb emit, void *arg)
{
	static const struct xs_writer *writers[] = {
		[WIRE_CHAT] = &xs_chat_writer,
		[WIRE_RESPONSES] = &xs_responses_writer,
		[WIRE_MESSAGES] = &xs_messages_writer,
	};
	static const xs_passer passers[] = {
		[WIRE_CHAT] = xs_chat_pass,
		[WIRE_RESPONSES] = xs_responses_pass,
		[WIRE_MESSAGES] = xs_messages_pass,
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
	xs->in = xs->out = -1;
	xs->max_tools = XS_TOOLS_MAX;
	xs->created = time(NULL);
	if (from == to)
		xs->passer = passers[from];
	else {
		xs->w = writers[to];
		xs->reader = from == WIRE_CHAT ? xs_chat_read :
		    xs_messages_read;
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
	free(xs->model);
	free(xs);
}

void
xstream_usage(const struct xstream *xs, int64_t *in, int64_t *out)
{
	*in = xs->in;
	*out = xs->out;
}

/* An event's data as a JSON object, NULL when it is anything else. */
static struct json_object *
xs_parse(const char *data, size_t len)
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
xs_fail(struct xstream *xs)
{
	xs->failed = 1;
	return -1;
}

/* The writer's opening events, before anything else it writes. */
static int
xs_start(struct xstream *xs)
{
	if (!xs->started) {
		xs->started = 1;
		xs->w->start(xs);
	}
	return xs->failed ? -1 : 0;
}

/* The upstream's terminator: the caller's stream is closed too. */
static int
xs_done(struct xstream *xs)
{
	xs->ended = 1;
	if (xs->w != NULL) {
		if (xs_start(xs) == -1)
			return xs_fail(xs);
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
		xs->max_tools = max_tools < XS_TOOLS_MAX ? max_tools :
		    XS_TOOLS_MAX;
}

int
xstream_limit(const struct xstream *xs)
{
	return xs->over;
}

/*
 * A tool call numbered index (from 0) is one too many: the answer
 * fails, as the caller could not be given the calls past the bound
 * and answering some of them would lose the rest.
 */
int
xs_tools_over(struct xstream *xs, int64_t index)
{
	if (index >= 0 && index < xs->max_tools)
		return 0;
	xs->over = XSTREAM_OVER_TOOLS;
	xs->failed = 1;
	return 1;
}

/* A passed-through event's tool calls, counted before it goes on. */
static int
xs_pass_count(struct xstream *xs, const char *event,
    struct json_object *data)
{
	struct json_object	*list;
	const char		*type, *kind = NULL;
	size_t			 i, n;
	int64_t			 index;

	if (xs->from == WIRE_CHAT) {
		list = xs_get(data, "choices.0.delta.tool_calls");
		if (!json_object_is_type(list, json_type_array))
			return 0;
		n = json_object_array_length(list);
		for (i = 0; i < n; i++) {
			index = xs_int(json_object_array_get_idx(list, i),
			    "index");
			if (xs_tools_over(xs, index >= 0 ? index :
			    (int64_t)i))
				return -1;
		}
		return 0;
	}
	if ((type = xs_str(data, "type")) == NULL)
		type = event;
	if (xs->from == WIRE_MESSAGES &&
	    strcmp(type, "content_block_start") == 0)
		kind = xs_str(data, "content_block.type");
	else if (xs->from == WIRE_RESPONSES &&
	    strcmp(type, "response.output_item.added") == 0)
		kind = xs_str(data, "item.type");
	if (kind != NULL && (strcmp(kind, "tool_use") == 0 ||
	    strcmp(kind, "function_call") == 0) &&
	    xs_tools_over(xs, xs->npassed++))
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
		return xs_fail(xs);
	}
	if (strcmp(event, "error") == 0)
		return xs_fail(xs);
	if (xs->from == WIRE_CHAT && len == 6 && memcmp(data, "[DONE]", 6)
	    == 0) {
		if (xs->w == NULL)
			xs_emit_raw(xs, NULL, "[DONE]");
		return xs_done(xs);
	}
	if ((obj = xs_parse(data, len)) == NULL)
		return xs_fail(xs);
	if (xs->w == NULL)
		rc = xs_pass_count(xs, event, obj) == -1 ? -1 :
		    xs->passer(xs, event, obj);
	else if ((rc = xs_start(xs)) == 0)
		rc = xs->reader(xs, event, obj);
	json_object_put(obj);
	if (rc == -1 || xs->failed)
		return xs_fail(xs);
	return rc == 1 ? xs_done(xs) : 0;
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
	if (xs_start(xs) == -1)
		return xs_fail(xs);
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
		xs_chat_error(status, message, emit, arg);
		break;
	case WIRE_RESPONSES:
		xs_responses_error(status, message, emit, arg);
		break;
	case WIRE_MESSAGES:
		xs_messages_error(status, message, emit, arg);
		break;
	}
}

/* Sends obj as one event's data, and drops it. */
void
xs_send(xstream_emit_cb emit, void *arg, const char *event,
    struct json_object *obj)
{
	const char	*text;
	size_t		 len;

	text = json_object_to_json_string_length(obj,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	emit(arg, event, text, len);
	json_object_put(obj);
}

void
xs_emit_json(struct xstream *xs, const char *event, struct json_object *obj)
{
	xs_send(xs->emit, xs->arg, event, obj);
}

void
xs_emit_raw(struct xstream *xs, const char *event, const char *text)
{
	xs->emit(xs->arg, event, text, strlen(text));
}

/* An object of key, value pairs up to a NULL key; takes the values. */
struct json_object *
xs_obj(const char *key, ...)
{
	struct json_object	*obj;
	va_list			 ap;

	obj = json_object_new_object();
	va_start(ap, key);
	for (; key != NULL; key = va_arg(ap, const char *))
		json_object_object_add(obj, key,
		    va_arg(ap, struct json_object *));
	va_end(ap);
	return obj;
}

/* obj's member at a dotted path ("message.usage", "output.0.id"). */
struct json_object *
xs_get(struct json_object *obj, const char *path)
{
	char	 key[64];
	size_t	 n;

	while (obj != NULL && *path != '\0') {
		n = strcspn(path, ".");
		if (n >= sizeof(key))
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		if (json_object_is_type(obj, json_type_array) && n > 0 &&
		    strspn(key, "0123456789") == n && n < 9)
			obj = json_object_array_get_idx(obj, atoi(key));
		else if (!json_object_is_type(obj, json_type_object) ||
		    !json_object_object_get_ex(obj, key, &obj))
			return NULL;
		path += n + (path[n] == '.');
	}
	return obj;
}

const char *
xs_str(struct json_object *obj, const char *path)
{
	obj = xs_get(obj, path);
	return json_object_is_type(obj, json_type_string) ?
	    json_object_get_string(obj) : NULL;
}

/* A non-negative integer, or -1. */
int64_t
xs_int(struct json_object *obj, const char *path)
{
	int64_t	 v;

	obj = xs_get(obj, path);
	if (!json_object_is_type(obj, json_type_int))
		return -1;
	v = json_object_get_int64(obj);
	return v < 0 ? -1 : v;
}

/*
 * The name a passed-through event goes out under: the upstream's event
 * line, else its data's type.  NULL when neither is a plain word, as
 * an event line with a line break in it would forge events.
 */
const char *
xs_event_name(const char *event, const char *type)
{
	const char	*name = *event != '\0' ? event : type;

	if (name == NULL || *name == '\0' || strspn(name,
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789._-") != strlen(name))
		return NULL;
	return name;
}

/* The upstream saw the remote name; the caller sees its own. */
void
xs_set_model(struct xstream *xs, struct json_object *obj)
{
	if (json_object_is_type(obj, json_type_object) &&
	    json_object_object_get_ex(obj, "model", NULL))
		json_object_object_add(obj, "model",
		    json_object_new_string(xs->model));
}

void
xs_hub_text(struct xstream *xs, const char *s, size_t len)
{
	if (len > 0 && !xs->finished)
		xs->w->text(xs, s, len);
}

int
xs_hub_tool_start(struct xstream *xs, int index, const char *id,
    const char *name)
{
	char	 made[ID_BUFSIZE];

	if (xs_tools_over(xs, index))
		return -1;
	if (id == NULL) {	/* some servers leave it out */
		id_new(made, sizeof(made), "call_");
		id = made;
	}
	if (!xs->finished)
		xs->w->tool_start(xs, index, id, name != NULL ? name : "");
	return 0;
}

int
xs_hub_tool_args(struct xstream *xs, int index, const char *s, size_t len)
{
	if (index < 0 || index >= XS_TOOLS_MAX)
		return -1;
	if (len > 0 && !xs->finished)
		xs->w->tool_args(xs, index, s, len);
	return 0;
}

void
xs_hub_finish(struct xstream *xs, const char *reason)
{
	if (xs->finished)
		return;
	xs->finished = 1;
	xs->w->finish(xs, reason);
}

/* Either may be -1: not in this event. */
void
xs_hub_usage(struct xstream *xs, int64_t in, int64_t out)
{
	if (in >= 0)
		xs->in = in;
	if (out >= 0)
		xs->out = out;
}
