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
 * xstream_emit.c: the lowest parts of the stream translators: an event
 * sent to the caller, an object built in one call, members read at a
 * dotted path, an event's name checked, the model's name put back.
 * Calls nothing of the other xstream files.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "wire.h"
#include "xstream.h"

/* Sends obj as one event's data, and drops it. */
void
xstream_send(xstream_emit_cb emit, void *arg, const char *event,
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
xstream_emit_json(struct xstream *xs, const char *event,
    struct json_object *obj)
{
	xstream_send(xs->emit, xs->arg, event, obj);
}

void
xstream_emit_raw(struct xstream *xs, const char *event, const char *text)
{
	xs->emit(xs->arg, event, text, strlen(text));
}

/* An object of key, value pairs up to a NULL key; takes the values. */
struct json_object *
xstream_object(const char *key, ...)
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
xstream_get(struct json_object *obj, const char *path)
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
xstream_str(struct json_object *obj, const char *path)
{
	obj = xstream_get(obj, path);
	return json_object_is_type(obj, json_type_string) ?
	    json_object_get_string(obj) : NULL;
}

/* A non-negative integer, or -1. */
int64_t
xstream_int(struct json_object *obj, const char *path)
{
	int64_t	 v;

	obj = xstream_get(obj, path);
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
xstream_event_name(const char *event, const char *type)
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
xstream_set_model(struct xstream *xs, struct json_object *obj)
{
	if (json_object_is_type(obj, json_type_object) &&
	    json_object_object_get_ex(obj, "model", NULL))
		json_object_object_add(obj, "model",
		    json_object_new_string(xs->model));
}

/*
 * The same wire passed through: the answer's id in the caller's
 * dialect, one for the whole stream, chosen at its first event.
 */
void
xstream_set_id(struct xstream *xs, struct json_object *obj)
{
	struct json_object	*v;

	if (!json_object_is_type(obj, json_type_object) ||
	    !json_object_object_get_ex(obj, "id", &v))
		return;
	if (xs->id[0] == '\0')
		wire_id_choose(xs->to, json_object_is_type(v,
		    json_type_string) ? json_object_get_string(v) : NULL,
		    xs->id, sizeof(xs->id));
	json_object_object_add(obj, "id", json_object_new_string(xs->id));
}
