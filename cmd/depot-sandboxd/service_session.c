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
 * service_session.c: the session routes of protocol v1: CreateSession,
 * Execute and DestroySession.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "log.h"
#include "util.h"
#include "sandboxd.h"
#include "service.h"

/* An optional integer field; -1 on a wrong type. */
static int
service_session_int_field(struct json_object *o, const char *name, int64_t *v,
    int *present)
{
	struct json_object	*f;
	double			 d;

	*present = 0;
	if (!json_object_object_get_ex(o, name, &f) || f == NULL)
		return 0;
	*present = 1;
	if (json_object_is_type(f, json_type_int)) {
		*v = json_object_get_int64(f);
		return 0;
	}
	if (json_object_is_type(f, json_type_double)) {
		d = json_object_get_double(f);
		if (d != (double)(int64_t)d)
			return -1;
		*v = (int64_t)d;
		return 0;
	}
	return -1;
}

static int
service_session_clamp(int64_t v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : (int)v;
}

void
service_session_create(struct service_req *a)
{
	struct json_object	*body;
	struct session		*s;
	const char		*why;
	int64_t			 idle, life;
	int			 p1, p2;

	if ((body = service_body_json(a)) == NULL) {
		service_error(a->req, 400, "the body is not a JSON object");
		return;
	}
	idle = sbx_conf->limits.idle_default;
	life = sbx_conf->limits.life_default;
	if (service_session_int_field(body, "idle_timeout_seconds", &idle,
	    &p1) == -1 ||
	    service_session_int_field(body, "max_lifetime_seconds", &life,
	    &p2) == -1) {
		json_object_put(body);
		service_error(a->req, 422, "lifetime hints must be integers");
		return;
	}
	json_object_put(body);
	if (session_count() >= sbx_conf->limits.max_sessions) {
		log_warnx("create: at capacity (%d sessions)",
		    session_count());
		service_error(a->req, 503, "at capacity: too many sessions");
		return;
	}
	/* Hints are clamped, not refused; the reply says what was granted. */
	idle = service_session_clamp(idle, 1, sbx_conf->limits.idle_max);
	life = service_session_clamp(life, 1, sbx_conf->limits.life_max);
	if ((s = session_create(idle, life, &why)) == NULL) {
		log_warnx("create: %s", why);
		service_error(a->req, 503, why);
		return;
	}
	log_info("create %s idle %llds lifetime %llds", session_id(s),
	    (long long)idle, (long long)life);
	service_json(a->req, 201, session_describe(s));
}

/* to[key] = from[key] when that is a string, else "". */
static void
service_session_copy_string(struct json_object *to, struct json_object *from,
    const char *key)
{
	struct json_object	*v;

	if (json_object_object_get_ex(from, key, &v) &&
	    json_object_is_type(v, json_type_string))
		json_object_object_add(to, key, json_object_get(v));
	else
		json_object_object_add(to, key, json_object_new_string(""));
}

static void
service_session_exec_done(const struct exec_result *r, void *arg)
{
	struct service_req		*a = arg;
	struct json_object	*o, *block, *content, *v;
	char			 type[96];
	int			 rc = -1;

	a->exec = NULL;
	a->exec_done = 1;
	if (r->status != 200) {
		log_warnx("exec %s: %s", a->sid, r->error);
		service_error(a->req, r->status, r->error);
		return;
	}
	content = json_object_new_object();
	/* Protocol v1: the same constant for every tool kind. */
	json_object_object_add(content, "type",
	    json_object_new_string("code_execution_result"));
	service_session_copy_string(content, r->reply, "stdout");
	service_session_copy_string(content, r->reply, "stderr");
	if (json_object_object_get_ex(r->reply, "return_code", &v) &&
	    json_object_is_type(v, json_type_int))
		rc = json_object_get_int(v);
	json_object_object_add(content, "return_code",
	    json_object_new_int(rc));
	json_object_object_add(content, "content",
	    json_object_get(r->produced));

	block = json_object_new_object();
	snprintf(type, sizeof(type), "%s_tool_result", a->tool);
	json_object_object_add(block, "type", json_object_new_string(type));
	json_object_object_add(block, "tool_use_id",
	    json_object_new_string(a->tool_use_id));
	json_object_object_add(block, "content", content);

	o = json_object_new_object();
	json_object_object_add(o, "tool_use_id",
	    json_object_new_string(a->tool_use_id));
	json_object_object_add(o, "execution_time_ms",
	    json_object_new_int64(r->elapsed_ms));
	json_object_object_add(o, "result_block", block);
	log_info("exec %s %s rc %d %lld ms %zu files", a->sid, a->tool, rc,
	    (long long)r->elapsed_ms, json_object_array_length(r->produced));
	service_json(a->req, 200, o);
}

static size_t
service_session_utf8_chars(const char *s)
{
	size_t	 n = 0;

	for (; *s != '\0'; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

/* Checks input against the tool; NULL when fine, else the message. */
static const char *
service_session_check_input(const char *tool, struct json_object *input)
{
	struct json_object	*f;
	const char		*field;

	if (strcmp(tool, "code_execution") == 0)
		field = "code";
	else if (strcmp(tool, "bash_code_execution") == 0)
		field = "command";
	else if (strcmp(tool, "text_editor_code_execution") == 0)
		field = "command";
	else
		return "unknown tool; expected code_execution, "
		    "bash_code_execution or text_editor_code_execution";
	if (!json_object_is_type(input, json_type_object))
		return "input must be an object";
	if (!json_object_object_get_ex(input, field, &f) ||
	    !json_object_is_type(f, json_type_string))
		return strcmp(field, "code") == 0 ?
		    "input.code must be a string" :
		    "input.command must be a string";
	if (service_session_utf8_chars(json_object_get_string(f)) >
	    SBX_MAX_CODE_CHARS)
		return "code or command longer than 200000 characters";
	return NULL;
}

void
service_session_exec(struct service_req *a)
{
	struct json_object	*body, *tool, *input, *id, *request;
	struct session		*s;
	const char		*why;
	int64_t			 timeout = sbx_conf->limits.exec_timeout;
	int			 present;

	if ((body = service_body_json(a)) == NULL) {
		service_error(a->req, 400, "the body is not a JSON object");
		return;
	}
	if (!json_object_object_get_ex(body, "tool", &tool) ||
	    !json_object_is_type(tool, json_type_string) ||
	    strlcpy(a->tool, json_object_get_string(tool),
	    sizeof(a->tool)) >= sizeof(a->tool)) {
		json_object_put(body);
		service_error(a->req, 422,
		    "tool must be a string naming a tool");
		return;
	}
	if (!json_object_object_get_ex(body, "input", &input))
		input = NULL;
	if ((why = service_session_check_input(a->tool, input)) != NULL) {
		json_object_put(body);
		service_error(a->req, 422, why);
		return;
	}
	if (service_session_int_field(body, "timeout_seconds", &timeout,
	    &present) == -1 ||
	    timeout < 1 || timeout > SBX_EXEC_TIMEOUT_MAX) {
		json_object_put(body);
		service_error(a->req, 422, "timeout_seconds must be an integer "
		    "from 1 to 120");
		return;
	}
	if (json_object_object_get_ex(body, "tool_use_id", &id) &&
	    json_object_is_type(id, json_type_string))
		strlcpy(a->tool_use_id, json_object_get_string(id),
		    sizeof(a->tool_use_id));
	else
		id_new(a->tool_use_id, sizeof(a->tool_use_id), "toolu_");
	if ((s = service_named_session(a)) == NULL) {
		json_object_put(body);
		return;
	}
	request = json_object_new_object();
	json_object_object_add(request, "tool", json_object_get(tool));
	json_object_object_add(request, "input", json_object_get(input));
	json_object_put(body);
	a->exec = session_exec(s, request, (int)timeout,
	    service_session_exec_done, a);
	/* It may have finished already (a runner that could not start). */
	if (a->exec_done)
		a->exec = NULL;
	json_object_put(request);
}

void
service_session_destroy(struct service_req *a)
{
	struct session	*s;

	/* Idempotent: a session already gone is what the caller wanted. */
	if ((s = session_find(a->sid)) != NULL)
		session_destroy(s, "deleted");
	else
		log_info("destroy %s: no such session", a->sid);
	http_reply(a->req, 204, NULL, NULL, 0);
}

