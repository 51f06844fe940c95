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
 * fe_coderun_native.c: a caller that declared a provider's own
 * code-execution tool gets the provider's own blocks for the runs the
 * gateway made: Anthropic's server_tool_use and
 * code_execution_tool_result, the Responses API's code_interpreter_call,
 * carrying depotd's file ids.  A whole answer gets them before the
 * model's own blocks (native_prepend); a streamed one gets the same
 * list (native_blocks) sent whole ahead of the model's streamed words,
 * as the provider streams its own server tools (xstream_prepend).
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "util.h"
#include "fe_model.h"
#include "fe_coderun.h"

static struct json_object *
native_get(struct json_object *o, const char *key)
{
	struct json_object	*v;

	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* One run: the call's id and code, and what the broker said. */
void
native_record(struct json_object *runs, struct json_object *call,
    struct json_object *result, const char *container)
{
	struct json_object	*r = json_object_new_object();

	if (container != NULL)
		json_object_object_add(r, "container_id",
		    json_object_new_string(container));
	json_object_object_add(r, "id",
	    json_object_get(native_get(call, "id")));
	json_object_object_add(r, "code",
	    json_object_get(native_get(call, "code")));
	json_object_object_add(r, "result", json_object_get(result));
	json_object_array_add(runs, r);
}

static struct json_object *
native_string_or_empty(struct json_object *v)
{
	return json_object_is_type(v, json_type_string) ?
	    json_object_get(v) : json_object_new_string("");
}

/* The model's text from a round that also called code_execution. */
void
native_text(struct json_object *runs, const char *text, const char *id)
{
	struct json_object	*r;

	if (text == NULL || text[0] == '\0')
		return;
	r = json_object_new_object();
	json_object_object_add(r, "id", json_object_new_string(id != NULL ?
	    id : "0"));
	json_object_object_add(r, "text", json_object_new_string(text));
	json_object_array_add(runs, r);
}

/* That text as the caller's block or item. */
static void
native_text_block(enum wire caller, struct json_object *list,
    struct json_object *run)
{
	struct json_object	*b, *part, *content;
	char			 id[160];

	b = json_object_new_object();
	if (caller == WIRE_MESSAGES) {
		json_object_object_add(b, "type", json_object_new_string(
		    "text"));
		json_object_object_add(b, "text", json_object_get(
		    native_get(run, "text")));
		json_object_array_add(list, b);
		return;
	}
	snprintf(id, sizeof(id), "msg_%s",
	    json_object_get_string(native_get(run, "id")));
	json_object_object_add(b, "type", json_object_new_string("message"));
	json_object_object_add(b, "id", json_object_new_string(id));
	json_object_object_add(b, "status",
	    json_object_new_string("completed"));
	json_object_object_add(b, "role", json_object_new_string("assistant"));
	part = json_object_new_object();
	json_object_object_add(part, "type",
	    json_object_new_string("output_text"));
	json_object_object_add(part, "text", json_object_get(
	    native_get(run, "text")));
	json_object_object_add(part, "annotations", json_object_new_array());
	content = json_object_new_array();
	json_object_array_add(content, part);
	json_object_object_add(b, "content", content);
	json_object_array_add(list, b);
}

/* Anthropic's pair of blocks for one run. */
static void
native_messages_blocks(struct json_object *list, struct json_object *run)
{
	struct json_object	*use, *res, *c, *files, *out, *f, *o;
	struct json_object	*result = native_get(run, "result");
	struct json_object	*rc = native_get(native_get(native_get(result,
				    "result_block"), "content"), "return_code");
	char			 id[160];
	size_t			 i;

	snprintf(id, sizeof(id), "srvtoolu_%s",
	    json_object_get_string(native_get(run, "id")));
	use = json_object_new_object();
	json_object_object_add(use, "type",
	    json_object_new_string("server_tool_use"));
	json_object_object_add(use, "id", json_object_new_string(id));
	json_object_object_add(use, "name",
	    json_object_new_string("code_execution"));
	c = json_object_new_object();
	json_object_object_add(c, "code",
	    native_string_or_empty(native_get(run, "code")));
	json_object_object_add(use, "input", c);
	json_object_array_add(list, use);

	c = native_get(native_get(result, "result_block"), "content");
	res = json_object_new_object();
	json_object_object_add(res, "type",
	    json_object_new_string("code_execution_result"));
	json_object_object_add(res, "stdout",
	    native_string_or_empty(native_get(c, "stdout")));
	json_object_object_add(res, "stderr",
	    native_string_or_empty(native_get(c, "stderr")));
	json_object_object_add(res, "return_code", json_object_new_int(
	    rc != NULL ? json_object_get_int(rc) : -1));
	files = json_object_new_array();
	out = native_get(result, "outputs");
	for (i = 0; out != NULL && i < json_object_array_length(out); i++) {
		o = json_object_array_get_idx(out, i);
		f = json_object_new_object();
		json_object_object_add(f, "type",
		    json_object_new_string("code_execution_output"));
		json_object_object_add(f, "file_id",
		    json_object_get(native_get(o, "file_id")));
		json_object_array_add(files, f);
	}
	json_object_object_add(res, "content", files);
	c = json_object_new_object();
	json_object_object_add(c, "type",
	    json_object_new_string("code_execution_tool_result"));
	json_object_object_add(c, "tool_use_id", json_object_new_string(id));
	json_object_object_add(c, "content", res);
	json_object_array_add(list, c);
}

/* The Responses API's item for one run; files named in its logs. */
static void
native_responses_item(struct json_object *list, struct json_object *run,
    char *text)
{
	struct json_object	*item, *outs, *log;
	char			 id[160];

	snprintf(id, sizeof(id), "ci_%s",
	    json_object_get_string(native_get(run, "id")));
	item = json_object_new_object();
	json_object_object_add(item, "type",
	    json_object_new_string("code_interpreter_call"));
	json_object_object_add(item, "id", json_object_new_string(id));
	json_object_object_add(item, "status",
	    json_object_new_string("completed"));
	json_object_object_add(item, "code",
	    native_string_or_empty(native_get(run, "code")));
	json_object_object_add(item, "container_id",
	    json_object_get(native_get(run, "container_id")));
	outs = json_object_new_array();
	log = json_object_new_object();
	json_object_object_add(log, "type", json_object_new_string("logs"));
	json_object_object_add(log, "logs", json_object_new_string(
	    text != NULL ? text : ""));
	json_object_array_add(outs, log);
	json_object_object_add(item, "outputs", outs);
	json_object_array_add(list, item);
}

/*
 * The blocks (Messages) or items (Responses) of runs[from..]: the
 * model's texts always, the runs only for a native caller; NULL for
 * chat.
 */
struct json_object *
native_blocks(enum wire caller, struct json_object *runs, size_t from,
    int native)
{
	struct json_object	*list, *run;
	char			*text;
	size_t			 i;

	if (caller == WIRE_CHAT)
		return NULL;
	list = json_object_new_array();
	for (i = from; i < json_object_array_length(runs); i++) {
		run = json_object_array_get_idx(runs, i);
		if (native_get(run, "text") != NULL)
			native_text_block(caller, list, run);
		else if (!native)
			continue;
		else if (caller == WIRE_MESSAGES)
			native_messages_blocks(list, run);
		else {
			text = tools_render(native_get(run, "result"), NULL);
			native_responses_item(list, run, text);
			free(text);
		}
	}
	return list;
}

/* A Message's container: {id, expires_at, skills: null}. */
struct json_object *
native_container(const struct cntr_rec *c)
{
	struct json_object	*o;
	char			 t[RFC3339_LEN];

	if (c == NULL)
		return NULL;
	/* Whole seconds, as the providers write it. */
	time_rfc3339_usec(c->expires_us / 1000000 * 1000000, t, sizeof(t));
	o = json_object_new_object();
	json_object_object_add(o, "id", json_object_new_string(c->id));
	json_object_object_add(o, "expires_at", json_object_new_string(t));
	json_object_object_add(o, "skills", NULL);
	return o;
}

/* The runs' blocks first, then the answer's own. */
void
native_prepend(enum wire caller, struct json_object *answer,
    struct json_object *runs, int native)
{
	struct json_object	*list, *old;
	const char		*key = caller == WIRE_MESSAGES ? "content" :
				    "output";
	size_t			 i;

	if (caller == WIRE_CHAT || (old = native_get(answer, key)) == NULL ||
	    !json_object_is_type(old, json_type_array))
		return;
	list = native_blocks(caller, runs, 0, native);
	for (i = 0; i < json_object_array_length(old); i++)
		json_object_array_add(list, json_object_get(
		    json_object_array_get_idx(old, i)));
	json_object_object_add(answer, key, list);
}
