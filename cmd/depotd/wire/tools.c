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
 * tools.c: the code-execution tool as each wire format spells it.
 *
 * The gateway runs the model's code itself, so the tool the model sees
 * is a plain function, code_execution(code), whatever the caller
 * declared; its calls and their results are written into the
 * transcript in the upstream's own format, round after round.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "jsontext.h"
#include "util.h"
#include "wire.h"

#define TOOL_DESCRIPTION						\
	"Runs Python code in a sandbox and returns its stdout, stderr "	\
	"and return code.  The interpreter's state persists between "	\
	"calls.  The request's files are in the working directory; "	\
	"files the code writes there are returned to the user."

static const char *
str_of(struct json_object *o, const char *key)
{
	struct json_object	*v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* Provider-native code execution: Anthropic's and Responses' types. */
static int
native_declaration(enum wire w, const char *type)
{
	if (w == WIRE_MESSAGES)
		return strncmp(type, "code_execution_", 15) == 0;
	if (w == WIRE_RESPONSES)
		return strcmp(type, "code_interpreter") == 0;
	return 0;
}

/* A container parameter's id into id; -1 when it has no shape we take. */
static int
container_id(struct json_object *c, char *id, size_t len)
{
	const char	*s = NULL;

	if (json_object_is_type(c, json_type_string))
		s = json_object_get_string(c);
	else if (json_object_is_type(c, json_type_object)) {
		if (json_object_object_get(c, "id") == NULL)
			return 0;	/* {type: "auto"}: a new one */
		if ((s = str_of(c, "id")) == NULL)
			return -1;
	} else if (c != NULL && !json_object_is_type(c, json_type_null))
		return -1;
	if (s != NULL && strlcpy(id, s, len) >= len)
		strlcpy(id, "-", len);
	return 0;
}

int
tools_container(enum wire w, struct json_object *req, char *id, size_t len)
{
	struct json_object	*tools, *t;
	const char		*type;
	size_t			 i, n;

	id[0] = '\0';
	if (w == WIRE_MESSAGES)
		return container_id(json_object_object_get(req, "container"),
		    id, len);
	if (w != WIRE_RESPONSES || !json_object_object_get_ex(req, "tools",
	    &tools) || !json_object_is_type(tools, json_type_array))
		return 0;
	n = json_object_array_length(tools);
	for (i = 0; i < n; i++) {
		t = json_object_array_get_idx(tools, i);
		if ((type = str_of(t, "type")) != NULL &&
		    strcmp(type, "code_interpreter") == 0)
			return container_id(json_object_object_get(t,
			    "container"), id, len);
	}
	return 0;
}

int
tools_take_declaration(enum wire w, struct json_object *req, int *native)
{
	struct json_object	*tools, *kept, *t;
	const char		*type;
	size_t			 i, n;
	int			 found = 0;

	*native = 0;
	if (!json_object_object_get_ex(req, "tools", &tools) ||
	    !json_object_is_type(tools, json_type_array))
		return 0;
	kept = json_object_new_array();
	n = json_object_array_length(tools);
	for (i = 0; i < n; i++) {
		t = json_object_array_get_idx(tools, i);
		type = str_of(t, "type");
		if (type != NULL && strcmp(type, "otari_code_execution") == 0)
			found = 1;
		else if (type != NULL && native_declaration(w, type))
			found = *native = 1;
		else
			json_object_array_add(kept, json_object_get(t));
	}
	if (json_object_array_length(kept) == 0) {
		json_object_put(kept);
		json_object_object_del(req, "tools");
		/* No tools left: a choice among them means nothing. */
		json_object_object_del(req, "tool_choice");
	} else
		json_object_object_add(req, "tools", kept);
	return found;
}

static struct json_object *
code_schema(void)
{
	struct json_object	*schema, *props, *code, *req;

	schema = json_object_new_object();
	props = json_object_new_object();
	code = json_object_new_object();
	req = json_object_new_array();
	json_object_object_add(code, "type", json_object_new_string("string"));
	json_object_object_add(code, "description",
	    json_object_new_string("The Python code to run."));
	json_object_object_add(props, "code", code);
	json_object_array_add(req, json_object_new_string("code"));
	json_object_object_add(schema, "type",
	    json_object_new_string("object"));
	json_object_object_add(schema, "properties", props);
	json_object_object_add(schema, "required", req);
	return schema;
}

void
tools_declare(enum wire w, struct json_object *req)
{
	struct json_object	*tools, *t, *fn;

	if (!json_object_object_get_ex(req, "tools", &tools) ||
	    !json_object_is_type(tools, json_type_array)) {
		tools = json_object_new_array();
		json_object_object_add(req, "tools", tools);
	}
	t = json_object_new_object();
	fn = w == WIRE_CHAT ? json_object_new_object() : t;
	if (w != WIRE_MESSAGES)
		json_object_object_add(t, "type",
		    json_object_new_string("function"));
	json_object_object_add(fn, "name",
	    json_object_new_string(TOOL_CODE_EXECUTION));
	json_object_object_add(fn, "description",
	    json_object_new_string(TOOL_DESCRIPTION));
	json_object_object_add(fn, w == WIRE_MESSAGES ? "input_schema" :
	    "parameters", code_schema());
	if (w == WIRE_CHAT)
		json_object_object_add(t, "function", fn);
	json_object_array_add(tools, t);
}

/* {id, code} for a call whose arguments are a JSON string or object. */
static void
add_call(struct json_object *calls, const char *id, struct json_object *args)
{
	struct json_object	*parsed = NULL, *code, *c;

	if (json_object_is_type(args, json_type_string))
		args = parsed = json_text_parse(json_object_get_string(args),
		    json_object_get_string_len(args), JSON_DEPTH_MAX);
	c = json_object_new_object();
	json_object_object_add(c, "id", json_object_new_string(id ? id : ""));
	if (args != NULL && json_object_object_get_ex(args, "code", &code) &&
	    json_object_is_type(code, json_type_string))
		json_object_object_add(c, "code", json_object_get(code));
	else	/* the model's mistake: it hears of it in the result */
		json_object_object_add(c, "code", NULL);
	json_object_array_add(calls, c);
	json_object_put(parsed);
}

/* The list of an answer that holds its calls, per wire. */
static struct json_object *
call_list(enum wire w, struct json_object *answer)
{
	struct json_object	*v, *msg;

	switch (w) {
	case WIRE_CHAT:
		if (!json_object_object_get_ex(answer, "choices", &v) ||
		    json_object_array_length(v) == 0 ||
		    !json_object_object_get_ex(json_object_array_get_idx(v, 0),
		    "message", &msg))
			return NULL;
		if (!json_object_object_get_ex(msg, "tool_calls", &v) ||
		    !json_object_is_type(v, json_type_array))
			return json_object_new_array();	/* none */
		return json_object_get(v);
	case WIRE_MESSAGES:
		if (!json_object_object_get_ex(answer, "content", &v))
			return NULL;
		break;
	case WIRE_RESPONSES:
		if (!json_object_object_get_ex(answer, "output", &v))
			return NULL;
		break;
	}
	return json_object_is_type(v, json_type_array) ?
	    json_object_get(v) : NULL;
}

/* Is item a call, and of which tool?  NULL: not a call. */
static const char *
call_name(enum wire w, struct json_object *item, const char **id,
    struct json_object **args)
{
	struct json_object	*fn;
	const char		*type;

	type = str_of(item, "type");
	*args = NULL;
	switch (w) {
	case WIRE_CHAT:
		if (!json_object_object_get_ex(item, "function", &fn))
			return NULL;
		*id = str_of(item, "id");
		json_object_object_get_ex(fn, "arguments", args);
		return str_of(fn, "name");
	case WIRE_MESSAGES:
		if (type == NULL || strcmp(type, "tool_use") != 0)
			return NULL;
		*id = str_of(item, "id");
		json_object_object_get_ex(item, "input", args);
		return str_of(item, "name");
	case WIRE_RESPONSES:
		if (type == NULL || strcmp(type, "function_call") != 0)
			return NULL;
		*id = str_of(item, "call_id");
		json_object_object_get_ex(item, "arguments", args);
		return str_of(item, "name");
	}
	return NULL;
}

struct json_object *
tools_calls(enum wire w, struct json_object *answer, int *foreign)
{
	struct json_object	*list, *calls, *args;
	const char		*name, *id = NULL;
	size_t			 i, n;

	*foreign = 0;
	if ((list = call_list(w, answer)) == NULL)
		return NULL;
	calls = json_object_new_array();
	n = json_object_array_length(list);
	for (i = 0; i < n; i++) {
		name = call_name(w, json_object_array_get_idx(list, i), &id,
		    &args);
		if (name == NULL)
			continue;
		if (strcmp(name, TOOL_CODE_EXECUTION) == 0)
			add_call(calls, id, args);
		else
			(*foreign)++;
	}
	json_object_put(list);
	return calls;
}

void
tools_strip(enum wire w, struct json_object *answer)
{
	struct json_object	*list, *kept, *item, *args, *msg;
	const char		*name, *id;
	size_t			 i, n;

	if ((list = call_list(w, answer)) == NULL)
		return;
	kept = json_object_new_array();
	n = json_object_array_length(list);
	for (i = 0; i < n; i++) {
		item = json_object_array_get_idx(list, i);
		name = call_name(w, item, &id, &args);
		if (name == NULL || strcmp(name, TOOL_CODE_EXECUTION) != 0)
			json_object_array_add(kept, json_object_get(item));
	}
	json_object_put(list);
	if (w == WIRE_CHAT) {
		msg = json_object_object_get(json_object_array_get_idx(
		    json_object_object_get(answer, "choices"), 0), "message");
		json_object_object_add(msg, "tool_calls", kept);
	} else
		json_object_object_add(answer, w == WIRE_MESSAGES ?
		    "content" : "output", kept);
}

/* The list a request's turns are in, made an array if need be. */
static struct json_object *
turns_of(enum wire w, struct json_object *req)
{
	struct json_object	*v, *a, *m;
	const char		*key = w == WIRE_RESPONSES ? "input" :
				    "messages";

	if (json_object_object_get_ex(req, key, &v) &&
	    json_object_is_type(v, json_type_array))
		return v;
	if (w != WIRE_RESPONSES || v == NULL ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	/* A bare string input is the user's one message. */
	a = json_object_new_array();
	m = json_object_new_object();
	json_object_object_add(m, "role", json_object_new_string("user"));
	json_object_object_add(m, "content", json_object_get(v));
	json_object_array_add(a, m);
	json_object_object_add(req, key, a);
	return a;
}

static struct json_object *
result_turn(enum wire w, const char *id, const char *text)
{
	struct json_object	*t;

	t = json_object_new_object();
	switch (w) {
	case WIRE_CHAT:
		json_object_object_add(t, "role",
		    json_object_new_string("tool"));
		json_object_object_add(t, "tool_call_id",
		    json_object_new_string(id));
		json_object_object_add(t, "content",
		    json_object_new_string(text));
		break;
	case WIRE_MESSAGES:
		json_object_object_add(t, "type",
		    json_object_new_string("tool_result"));
		json_object_object_add(t, "tool_use_id",
		    json_object_new_string(id));
		json_object_object_add(t, "content",
		    json_object_new_string(text));
		break;
	case WIRE_RESPONSES:
		json_object_object_add(t, "type",
		    json_object_new_string("function_call_output"));
		json_object_object_add(t, "call_id",
		    json_object_new_string(id));
		json_object_object_add(t, "output",
		    json_object_new_string(text));
		break;
	}
	return t;
}

/* The answer as the assistant's turn(s) of the transcript. */
static int
append_answer(enum wire w, struct json_object *turns, struct json_object *ans)
{
	struct json_object	*v, *t;
	size_t			 i;

	switch (w) {
	case WIRE_CHAT:
		v = json_object_object_get(json_object_array_get_idx(
		    json_object_object_get(ans, "choices"), 0), "message");
		if (v == NULL)
			return -1;
		json_object_array_add(turns, json_object_get(v));
		return 0;
	case WIRE_MESSAGES:
		if ((v = json_object_object_get(ans, "content")) == NULL)
			return -1;
		t = json_object_new_object();
		json_object_object_add(t, "role",
		    json_object_new_string("assistant"));
		json_object_object_add(t, "content", json_object_get(v));
		json_object_array_add(turns, t);
		return 0;
	case WIRE_RESPONSES:
		if ((v = json_object_object_get(ans, "output")) == NULL ||
		    !json_object_is_type(v, json_type_array))
			return -1;
		for (i = 0; i < json_object_array_length(v); i++)
			json_object_array_add(turns, json_object_get(
			    json_object_array_get_idx(v, i)));
		return 0;
	}
	return -1;
}

int
tools_append_round(enum wire w, struct json_object *req,
    struct json_object *answer, struct json_object *results)
{
	struct json_object	*turns, *r, *user = NULL, *blocks = NULL;
	size_t			 i;

	if ((turns = turns_of(w, req)) == NULL ||
	    append_answer(w, turns, answer) == -1)
		return -1;
	if (w == WIRE_MESSAGES) {	/* every result in one user turn */
		user = json_object_new_object();
		blocks = json_object_new_array();
		json_object_object_add(user, "role",
		    json_object_new_string("user"));
		json_object_object_add(user, "content", blocks);
		json_object_array_add(turns, user);
	}
	for (i = 0; i < json_object_array_length(results); i++) {
		r = json_object_array_get_idx(results, i);
		json_object_array_add(w == WIRE_MESSAGES ? blocks : turns,
		    result_turn(w, str_of(r, "id") ? str_of(r, "id") : "",
		    str_of(r, "text") ? str_of(r, "text") : ""));
	}
	return 0;
}

/* A growing string; an allocation failure leaves it NULL for good. */
struct text {
	char	*s;
	size_t	 len;
};

static void
text_add(struct text *t, const char *a, const char *b, const char *c)
{
	size_t	 n;
	char	*p;

	n = strlen(a) + strlen(b) + strlen(c);
	if (t->s == NULL && t->len != 0)
		return;
	if ((p = realloc(t->s, t->len + n + 1)) == NULL) {
		free(t->s);
		t->s = NULL;
		t->len = 1;
		return;
	}
	t->s = p;
	snprintf(t->s + t->len, n + 1, "%s%s%s", a, b, c);
	t->len += n;
}

static void
render_files(struct text *t, struct json_object *result)
{
	struct json_object	*outs, *f;
	size_t			 i, n;
	char			 line[512];

	if (!json_object_object_get_ex(result, "outputs", &outs) ||
	    (n = json_object_array_length(outs)) == 0)
		return;
	text_add(t, "files:\n", "", "");
	for (i = 0; i < n; i++) {
		f = json_object_array_get_idx(outs, i);
		snprintf(line, sizeof(line), "%s (file_id: %s)\n",
		    str_of(f, "path") ? str_of(f, "path") : "?",
		    str_of(f, "file_id") ? str_of(f, "file_id") : "?");
		text_add(t, line, "", "");
	}
}

/*
 * stdout, stderr, the return code and the files, each under its label;
 * "[tool error] " in front when the program failed or could not run.
 */
char *
tools_render(struct json_object *result, const char *error)
{
	struct json_object	*c;
	struct text		 t = { NULL, 0 };
	const char		*out, *err;
	char			 rc[64];
	int			 code;

	if (error != NULL) {
		text_add(&t, "[tool error] ", error, "");
		return t.s;
	}
	c = json_object_object_get(json_object_object_get(result,
	    "result_block"), "content");
	out = str_of(c, "stdout");
	err = str_of(c, "stderr");
	code = json_object_get_int(json_object_object_get(c, "return_code"));
	if (code != 0 || ((out == NULL || *out == '\0') && err != NULL &&
	    *err != '\0'))
		text_add(&t, "[tool error] ", "", "");
	if (out != NULL && *out != '\0')
		text_add(&t, "stdout:\n", out, out[strlen(out) - 1] == '\n' ?
		    "" : "\n");
	if (err != NULL && *err != '\0')
		text_add(&t, "stderr:\n", err, err[strlen(err) - 1] == '\n' ?
		    "" : "\n");
	snprintf(rc, sizeof(rc), "return_code: %d\n", code);
	text_add(&t, rc, "", "");
	render_files(&t, result);
	return t.s;
}
