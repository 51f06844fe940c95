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
 * fe_refs_find.c: where a request names stored files (SPEC 6.1), per
 * wire.  A pure walk over the parsed JSON: the caller decides what to
 * do with each reference.
 *
 *   Messages	messages[].content[]: image and document whose source is
 *		{type:"file", file_id}, container_upload {file_id}; the
 *		same inside a tool_result's content
 *   chat	messages[].content[]: {type:"file", file:{file_id}},
 *		{type:"image_url", image_url:{file_id}}
 *   Responses	input[]: input_file and input_image {file_id}, bare or
 *		in a message's content or a function_call_output's output
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <string.h>

#include <json-c/json.h>

#include "fe_refs.h"

struct walk {
	refs_find_cb	 cb;
	void		*arg;
	int		 count;
	int		 stopped;
};

static const char *
str_of(struct json_object *o, const char *key)
{
	struct json_object	*v;

	if (!json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static struct json_object *
child_of(struct json_object *o, const char *key, enum json_type type)
{
	struct json_object	*v;

	if (!json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, type))
		return NULL;
	return v;
}

/* An id worth resolving: a non-empty string. */
static const char *
id_of(struct json_object *o)
{
	const char	*id = str_of(o, "file_id");

	return id != NULL && id[0] != '\0' ? id : NULL;
}

static void
found(struct walk *w, enum ref_kind kind, const char *id,
    struct json_object *array, size_t i, int bare)
{
	struct ref_site	 s;

	if (w->stopped)
		return;
	memset(&s, 0, sizeof(s));
	s.kind = kind;
	s.file_id = id;
	s.block = json_object_array_get_idx(array, i);
	s.array = array;
	s.index = i;
	s.bare = bare;
	w->count++;
	if (w->cb(w->arg, &s) != 0)
		w->stopped = 1;
}

/* --- Messages --- */

static void
walk_messages_blocks(struct walk *w, struct json_object *arr, int depth)
{
	struct json_object	*b, *sub;
	const char		*type, *id;
	size_t			 i, n = json_object_array_length(arr);

	for (i = 0; i < n && !w->stopped; i++) {
		b = json_object_array_get_idx(arr, i);
		if ((type = str_of(b, "type")) == NULL)
			continue;
		if (strcmp(type, "image") == 0 ||
		    strcmp(type, "document") == 0) {
			sub = child_of(b, "source", json_type_object);
			if (sub == NULL || (id = id_of(sub)) == NULL ||
			    str_of(sub, "type") == NULL ||
			    strcmp(str_of(sub, "type"), "file") != 0)
				continue;
			found(w, type[0] == 'i' ? REF_IMAGE : REF_DOCUMENT,
			    id, arr, i, 0);
		} else if (strcmp(type, "container_upload") == 0) {
			if ((id = id_of(b)) != NULL)
				found(w, REF_CONTAINER_UPLOAD, id, arr, i, 0);
		} else if (strcmp(type, "tool_result") == 0 && depth == 0) {
			/* A tool result holds blocks, not tool results. */
			sub = child_of(b, "content", json_type_array);
			if (sub != NULL)
				walk_messages_blocks(w, sub, depth + 1);
		}
	}
}

/* --- chat completions --- */

static void
walk_chat_parts(struct walk *w, struct json_object *arr)
{
	struct json_object	*p, *sub;
	const char		*type, *id;
	size_t			 i, n = json_object_array_length(arr);

	for (i = 0; i < n && !w->stopped; i++) {
		p = json_object_array_get_idx(arr, i);
		if ((type = str_of(p, "type")) == NULL)
			continue;
		if (strcmp(type, "file") == 0 &&
		    (sub = child_of(p, "file", json_type_object)) != NULL &&
		    (id = id_of(sub)) != NULL)
			found(w, REF_DOCUMENT, id, arr, i, 0);
		else if (strcmp(type, "image_url") == 0 &&
		    (sub = child_of(p, "image_url", json_type_object)) !=
		    NULL && (id = id_of(sub)) != NULL)
			found(w, REF_IMAGE, id, arr, i, 0);
	}
}

/* --- Responses --- */

/* An input_file or input_image, bare or in a content list. */
static int
responses_part(struct walk *w, struct json_object *arr, size_t i, int bare)
{
	struct json_object	*p = json_object_array_get_idx(arr, i);
	const char		*type, *id;

	if ((type = str_of(p, "type")) == NULL)
		return 0;
	if (strcmp(type, "input_file") != 0 &&
	    strcmp(type, "input_image") != 0)
		return 0;
	if ((id = id_of(p)) != NULL)
		found(w, strcmp(type, "input_image") == 0 ? REF_IMAGE :
		    REF_DOCUMENT, id, arr, i, bare);
	return 1;
}

static void
walk_responses_parts(struct walk *w, struct json_object *arr)
{
	size_t	 i, n = json_object_array_length(arr);

	for (i = 0; i < n && !w->stopped; i++)
		responses_part(w, arr, i, 0);
}

static void
walk_responses_input(struct walk *w, struct json_object *arr)
{
	struct json_object	*item, *sub;
	const char		*type;
	size_t			 i, n = json_object_array_length(arr);

	for (i = 0; i < n && !w->stopped; i++) {
		if (responses_part(w, arr, i, 1))
			continue;
		item = json_object_array_get_idx(arr, i);
		type = str_of(item, "type");
		/* A message's type is optional: {role, content} is one. */
		if (type == NULL || strcmp(type, "message") == 0)
			sub = child_of(item, "content", json_type_array);
		else if (strcmp(type, "function_call_output") == 0)
			sub = child_of(item, "output", json_type_array);
		else
			sub = NULL;
		if (sub != NULL)
			walk_responses_parts(w, sub);
	}
}

int
refs_find(enum wire wire, struct json_object *req, refs_find_cb cb,
    void *arg)
{
	struct walk		 w;
	struct json_object	*arr, *content;
	size_t			 i, n;

	memset(&w, 0, sizeof(w));
	w.cb = cb;
	w.arg = arg;
	if (wire == WIRE_RESPONSES) {
		if ((arr = child_of(req, "input", json_type_array)) != NULL)
			walk_responses_input(&w, arr);
		return w.stopped ? -1 : w.count;
	}
	if ((arr = child_of(req, "messages", json_type_array)) == NULL)
		return 0;
	n = json_object_array_length(arr);
	for (i = 0; i < n && !w.stopped; i++) {
		content = child_of(json_object_array_get_idx(arr, i),
		    "content", json_type_array);
		if (content == NULL)
			continue;
		if (wire == WIRE_MESSAGES)
			walk_messages_blocks(&w, content, 0);
		else
			walk_chat_parts(&w, content);
	}
	return w.stopped ? -1 : w.count;
}
