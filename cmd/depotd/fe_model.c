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
 * fe_model.c: POST /v1/chat/completions, /v1/responses and
 * /v1/messages.
 *
 * The order: the declared length against max-request-size, the
 * caller's key, the body (bounded as it comes), JSON under a depth
 * limit, the model, the file references (fe_refs.c, which may reply
 * 400 itself and then nothing is sent upstream), the translation to
 * the upstream's wire, and the call (fe_upcall.c), which answers.
 * The route decides the dialect: chat and Responses are OpenAI's,
 * Messages Anthropic's, whatever the headers say.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "jsontext.h"
#include "log.h"
#include "util.h"
#include "frontend.h"
#include "fe_upcall.h"
#include "fe_coderun.h"
#include "fe_discover.h"
#include "fe_count.h"
#include "fe_limits.h"

/* One model request. */
struct model_req {
	struct api_req		*ar;
	enum wire		 caller;
	enum wire		 wire;		/* the upstream's */
	struct evbuffer		*body;
	size_t			 bodylen;	/* what it came to */
	int			 too_large;
	struct json_object	*req;
	struct model_conf	 model;		/* a copy: reloads free */
	char			 asked[128];	/* the caller's model name */
	int			 stream;
	int			 usage;		/* chat: include_usage asked */
	struct upstream_body		*upstream_body;
	struct refs		*refs;
	struct upcall		*upcall;
	int			 runs_code;	/* otari_code_execution */
	int			 native;	/* or the provider's own */
	char			 container[IDLEN];	/* to run in, "" */
	struct coderun		*coderun;
	int64_t			 start_us;		/* monotonic usec */
	int			 logged;
	struct event		*deadline;	/* request-timeout */
	int			 counting;	/* count_tokens */
	struct fe_count		*count;
	struct fe_limit_ticket	 limit;
};

static const char *route_names[] = {
	[WIRE_CHAT] = "chat.completions",
	[WIRE_RESPONSES] = "responses",
	[WIRE_MESSAGES] = "messages",
};

/* --- the end --- */

#define TRIM_AFTER	(1024 * 1024)	/* body bytes */

/* Its usage row: the owner is the handle's (storage_usage.c). */
static void
model_usage(struct model_req *mr, const struct upcall_result *res,
    int status)
{
	const struct principal	*who = &mr->ar->who;
	struct usage_rec	 rec;

	if (who->handle[0] == '\0' || mr->counting)
		return;
	memset(&rec, 0, sizeof(rec));
	strlcpy(rec.handle, who->handle, sizeof(rec.handle));
	strlcpy(rec.model, mr->asked, sizeof(rec.model));
	strlcpy(rec.replica, res->replica, sizeof(rec.replica));
	rec.tokens_in = res->tokens_in;
	rec.tokens_out = res->tokens_out;
	rec.status = status;
	rec.ttfb_us = res->ttfb_us;
	rec.duration_us = mono_usec() - mr->start_us;
	rec.time_us = now_usec();
	/* A handle not cached goes with the request: the record first. */
	fe_usage_add(&rec, who->cached == NULL);
}

/* Its fields for the request's log line, whatever became of it; no key. */
static void
model_log(struct model_req *mr, const struct upcall_result *res,
    int status)
{
	struct http_request	*req = mr->ar->req;
	const struct principal	*who = &mr->ar->who;
	struct model_sample	 ms;
	char			 ttfb[32];

	if (mr->logged)
		return;
	mr->logged = 1;
	if (res->ttfb_us >= 0)
		snprintf(ttfb, sizeof(ttfb), "%.1fms",
		    res->ttfb_us / 1000.0);
	else
		strlcpy(ttfb, "-", sizeof(ttfb));
	http_request_log_more(req, "%s workspace %s model %s upstream %d "
	    "status %d tokens %" PRId64 "/%" PRId64 " sent %" PRId64 " ttfb %s "
	    "duration %.1fms", route_names[mr->caller],
	    who->workspace_name[0] ? who->workspace_name : "-",
	    mr->asked[0] ? mr->asked : "-", res->upstream_status, status,
	    res->tokens_in, res->tokens_out, res->sent, ttfb,
	    (ms.duration_us = mono_usec() - mr->start_us) / 1000.0);
	ms.model = mr->model.name;
	ms.error = status < 200 || status > 299;
	ms.tokens_in = res->tokens_in;
	ms.tokens_out = res->tokens_out;
	ms.ttfb_us = res->ttfb_us;
	fe_metrics_model(&ms);
	fe_limits_done(&mr->limit, res->tokens_in < 0 ? -1 :
	    res->tokens_in + (res->tokens_out > 0 ? res->tokens_out : 0));
	model_usage(mr, res, status);
}

/* An answer given before any upstream call: counted and logged too. */
static void
model_log_early(struct model_req *mr, int status)
{
	struct upcall_result	 res;

	memset(&res, 0, sizeof(res));
	res.tokens_in = res.tokens_out = res.ttfb_us = -1;
	model_log(mr, &res, status);
}

static void
model_answered(struct model_req *mr)
{
	model_log_early(mr, mr->ar->req->status);
}

static void
model_upcall_done(void *arg, const struct upcall_result *res)
{
	model_log(arg, res, res->status);
}

static void
model_free(struct api_req *ar)
{
	struct model_req	*mr = ar->route;
	struct upcall_result	 res;

	if (mr == NULL)
		return;
	/* The caller left first: 499, as nginx says it. */
	if (!mr->logged && mr->upcall != NULL) {
		upcall_result(mr->upcall, &res);
		model_log(mr, &res, 499);
	} else if (!mr->logged && mr->coderun != NULL) {
		coderun_result(mr->coderun, &res);
		model_log(mr, &res, 499);
	} else if (!mr->logged && mr->asked[0] != '\0')
		/* Refused before any upstream: its status, or the caller left. */
		model_log_early(mr, ar->req->replied ? ar->req->status : 499);
	fe_limits_done(&mr->limit, -1);
	if (mr->deadline != NULL)
		event_free(mr->deadline);
	upcall_free(mr->upcall);
	coderun_free(mr->coderun);
	fe_count_free(mr->count);
	if (mr->refs != NULL)
		refs_free(mr->refs);
	if (mr->upstream_body != NULL)
		upstream_body_free(mr->upstream_body);
	json_object_put(mr->req);
	if (mr->body != NULL)
		evbuffer_free(mr->body);
	/*
	 * A large body's tree was many small blocks: give the pages back,
	 * or one request leaves the frontend at its peak for good.  Not
	 * after small ones, where it would only cost time.
	 */
	if (mr->bodylen > TRIM_AFTER)
		malloc_trim(0);
	free(mr);
	ar->route = NULL;
}

/* --- the upstream request --- */

/*
 * include_usage, so that a streamed answer ends with its token count
 * for the log; the caller sees it only if it asked (model_usage_asked).
 */
static int
model_include_usage(struct json_object *req)
{
	struct json_object	*so;

	if (!json_object_object_get_ex(req, "stream_options", &so) ||
	    !json_object_is_type(so, json_type_object)) {
		so = json_object_new_object();
		if (so == NULL || json_object_object_add(req,
		    "stream_options", so) == -1)
			return -1;
	}
	return json_object_object_add(so, "include_usage",
	    json_object_new_boolean(1));
}

/*
 * Code execution: the gateway's rounds go without streaming, and the
 * model sees code_execution(code) among its tools (fe_coderun.c).
 */
static void
model_run_code(struct model_req *mr, struct json_object *up)
{
	struct coderun_params	 p;

	json_object_object_del(up, "stream");
	json_object_object_del(up, "stream_options");
	tools_declare(mr->wire, up);
	memset(&p, 0, sizeof(p));
	p.ar = mr->ar;
	p.caller = mr->caller;
	p.wire = mr->wire;
	p.upstream = mr->model.upstream;
	p.asked = mr->asked;
	p.stream = mr->stream;
	p.usage = mr->usage;
	p.max_rounds = conf_tool_iterations(fe.conf, &mr->model);
	p.upstream_request = up;
	p.body = mr->upstream_body;
	p.files = refs_files(mr->refs);
	p.native = mr->native;
	p.container = mr->container;
	p.done = model_upcall_done;
	p.arg = mr;
	if ((mr->coderun = coderun_start(&p)) == NULL)
		model_answered(mr);
}

static int
model_set_name(struct model_req *mr, struct json_object *up)
{
	struct json_object	*name;

	name = json_object_new_string(mr->model.remote_name[0] ?
	    mr->model.remote_name : mr->model.name);
	if (name == NULL || json_object_object_add(up, "model", name) == -1) {
		json_object_put(name);
		return -1;
	}
	return 0;
}

static void
model_count_done(void *arg, int status, int64_t tokens)
{
	struct model_req	*mr = arg;
	struct upcall_result	 res;

	memset(&res, 0, sizeof(res));
	res.upstream_status = status == 200 ? 200 : 0;
	res.tokens_in = tokens;
	res.tokens_out = res.ttfb_us = -1;
	model_log(mr, &res, status);
}

static void
model_refs_done(void *arg, int ok)
{
	struct model_req	*mr = arg;
	struct api_req		*ar = mr->ar;
	struct upcall_params	 p;
	struct json_object	*up;
	char			 err[256];

	if (!ok) {
		model_answered(mr);	/* refs answered */
		return;
	}
	if (mr->counting) {
		mr->count = fe_count_start(ar, &mr->model, mr->req,
		    model_count_done, mr);
		if (mr->count == NULL)
			model_answered(mr);
		return;
	}
	err[0] = '\0';
	/*
	 * The caller's tree is needed no more: the same wire takes it as
	 * it is, another its translation, and a large body is not held
	 * twice.
	 */
	if (mr->caller == mr->wire) {
		up = mr->req;
		mr->req = NULL;
	} else {
		up = xlate_request(mr->caller, mr->wire, mr->req,
		    mr->model.max_tokens, err, sizeof(err));
		json_object_put(mr->req);
		mr->req = NULL;
	}
	if (up == NULL) {
		/* A refusal always says why; no word is no memory. */
		if (err[0] != '\0')
			fe_reply_error(ar, 400, NULL, "%s", err);
		else
			fe_reply_error(ar, 503, NULL, "out of memory");
		model_answered(mr);
		return;
	}
	/*
	 * A caller's container names a session of this gateway's (the
	 * providers' own are no concern of an upstream's): never
	 * forwarded, in any wire.
	 */
	json_object_object_del(up, "container");
	if (model_set_name(mr, up) == -1) {
		json_object_put(up);
		fe_reply_error(ar, 503, NULL, "out of memory");
		model_answered(mr);
		return;
	}
	if (mr->runs_code) {
		model_run_code(mr, up);
		json_object_put(up);
		return;
	}
	if (mr->wire == WIRE_CHAT && mr->stream &&
	    model_include_usage(up) == -1) {
		json_object_put(up);
		fe_reply_error(ar, 503, NULL, "out of memory");
		model_answered(mr);
		return;
	}
	if (upstream_body_set_json(mr->upstream_body, up) == -1) {
		json_object_put(up);
		/* Out of memory, or a file named twice (fe_upstream_body.c). */
		fe_reply_error(ar, 503, NULL, "the upstream request could not be "
		    "made");
		model_answered(mr);
		return;
	}
	json_object_put(up);
	memset(&p, 0, sizeof(p));
	p.upstream = mr->model.upstream;
	p.caller = mr->caller;
	p.wire = mr->wire;
	p.model = mr->asked;
	p.stream = mr->stream;
	p.usage = mr->usage;
	p.body = mr->upstream_body;
	if ((mr->upcall = upcall_start(ar, &p, model_upcall_done, mr)) == NULL)
		model_answered(mr);
}

/* --- the caller's request --- */

/* conf_new() has the default (http_limits_default). */
static int64_t
model_max_request(void)
{
	return fe.conf->http.max_request_size;
}

static const struct model_conf *
model_find(const char *name)
{
	const struct model_conf	*m;

	TAILQ_FOREACH(m, &fe.conf->models, entry)
		if (strcmp(m->name, name) == 0)
			return m;
	return NULL;
}

static int
model_wire_of(struct model_req *mr)
{
	const struct upstream_conf	*up;

	TAILQ_FOREACH(up, &fe.conf->upstreams, entry)
		if (strcmp(up->name, mr->model.upstream) == 0)
			break;
	if (up == NULL)
		return -1;
	if (up->api == DIALECT_ANTHROPIC)
		mr->wire = WIRE_MESSAGES;
	else if (mr->caller == WIRE_RESPONSES && up->native_responses)
		mr->wire = WIRE_RESPONSES;
	else
		mr->wire = WIRE_CHAT;
	return 0;
}

/*
 * Did a chat caller ask for the usage chunk?  depotd asks its upstream
 * for one in any case (model_include_usage), for its own log; the
 * caller gets it only if it asked, as from OpenAI.
 */
static int
model_usage_asked(struct model_req *mr)
{
	struct json_object	*so, *v;

	if (mr->caller != WIRE_CHAT || !mr->stream ||
	    !json_object_object_get_ex(mr->req, "stream_options", &so) ||
	    !json_object_object_get_ex(so, "include_usage", &v))
		return 0;
	return json_object_get_boolean(v);
}

/* The model named in the body, looked up; 0 or answered. */
static int
model_select(struct model_req *mr)
{
	struct json_object	*v;
	const struct model_conf	*m;

	if (!json_object_object_get_ex(mr->req, "model", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    json_object_get_string_len(v) == 0) {
		fe_reply_error(mr->ar, 400, "model", "model is required");
		return -1;
	}
	strlcpy(mr->asked, json_object_get_string(v), sizeof(mr->asked));
	if ((m = model_find(json_object_get_string(v))) == NULL) {
		fe_catalog_not_found(mr->ar, json_object_get_string(v));
		return -1;
	}
	mr->model = *m;
	fe_discover_apply(&mr->model);
	/*
	 * A count is of text: files become what a text-only model reads,
	 * and an image, which no tokenizer here can count, is refused.
	 */
	if (mr->counting) {
		mr->model.text_only = 1;
		mr->model.pdf_as_text = 0;
		mr->model.refuse_images = REFUSE_IMAGES_COUNT;
	}
	if (model_wire_of(mr) == -1) {
		fe_reply_error(mr->ar, 502, NULL, "the model's upstream is not "
		    "configured");
		return -1;
	}
	mr->stream = json_object_object_get_ex(mr->req, "stream", &v) &&
	    json_object_get_boolean(v);
	mr->usage = model_usage_asked(mr);
	return 0;
}

/* Does the request run code, and can it?  0 or answered. */
static int
model_code_execution(struct model_req *mr)
{
	if (tools_container(mr->caller, mr->req, mr->container,
	    sizeof(mr->container)) == -1) {
		fe_reply_error(mr->ar, 400, mr->caller == WIRE_MESSAGES ?
		    "container" : "tools", "container must be a container's "
		    "id or an object naming one");
		return -1;
	}
	mr->runs_code = tools_take_declaration(mr->caller, mr->req,
	    &mr->native);
	if (mr->runs_code && fe.conf->sandbox == SANDBOX_NONE) {
		fe_reply_error(mr->ar, 400, "tools", "code execution needs a "
		    "sandbox, and this gateway has none");
		return -1;
	}
	return 0;
}

/* The body's tree, within the budget; 0 or answered. */
static int
model_parse(struct model_req *mr)
{
	const struct http_limits	*hl = &fe.conf->http;
	struct json_budget		 b;
	enum json_text_status		 st = JSON_TEXT_INVALID;
	const char			*text;

	b.max_values = hl->max_json_values;
	b.max_bytes = hl->max_json_memory;
	b.depth = JSON_DEPTH_MAX;
	if ((mr->bodylen = evbuffer_get_length(mr->body)) > 0) {
		if ((text = (const char *)evbuffer_pullup(mr->body,
		    -1)) == NULL) {
			fe_reply_error(mr->ar, 503, NULL, "out of memory");
			return -1;
		}
		mr->req = json_text_parse_budget(text, mr->bodylen, &b, &st);
	}
	evbuffer_free(mr->body);
	mr->body = NULL;
	switch (st) {
	case JSON_TEXT_OK:
		break;
	case JSON_TEXT_DEEP:
		fe_reply_error(mr->ar, 400, NULL, "the body nests deeper than %d "
		    "levels", JSON_DEPTH_MAX);
		return -1;
	case JSON_TEXT_VALUES:
		fe_reply_error(mr->ar, 413, NULL, "the body holds more than "
		    "%" PRId64 " JSON values (max-json-values)",
		    b.max_values);
		return -1;
	case JSON_TEXT_BYTES:
		fe_reply_error(mr->ar, 413, NULL, "the body's JSON would take more "
		    "than %" PRId64 " bytes to hold (max-json-memory)",
		    b.max_bytes);
		return -1;
	case JSON_TEXT_NOMEM:
		fe_reply_error(mr->ar, 503, NULL, "out of memory");
		return -1;
	default:
		fe_reply_error(mr->ar, 400, NULL, "the body is not JSON");
		return -1;
	}
	if (!json_object_is_type(mr->req, json_type_object)) {
		fe_reply_error(mr->ar, 400, NULL, "the body must be a JSON object");
		return -1;
	}
	return 0;
}

static void	model_admitted(void *);

static void
model_body_end(struct api_req *ar)
{
	struct model_req	*mr = ar->route;

	if (mr->too_large)
		return;
	if (model_parse(mr) == -1) {
		model_answered(mr);
		return;
	}
	if (model_select(mr) == -1 ||
	    (!mr->counting && model_code_execution(mr) == -1)) {
		model_answered(mr);
		return;
	}
	/* A count costs the caller nothing: it is not limited. */
	if (mr->counting)
		model_admitted(mr);
	else
		fe_limits_check(ar, &mr->limit, (int64_t)(mr->bodylen / 4),
		    model_admitted, mr);
}

/* Within the key's limits: its files, then the upstream. */
static void
model_admitted(void *arg)
{
	struct model_req	*mr = arg;
	struct api_req		*ar = mr->ar;

	if ((mr->upstream_body = upstream_body_new(fe.base)) == NULL) {
		fe_reply_error(ar, 503, NULL, "out of memory");
		model_answered(mr);
		return;
	}
	mr->refs = refs_resolve(ar, mr->caller, mr->req, &mr->model,
	    mr->upstream_body, mr->runs_code, model_refs_done, mr);
	if (mr->refs == NULL && !ar->req->replied) {
		fe_reply_error(ar, 503, NULL, "out of memory");
		model_answered(mr);
	}
}

/* A chunked body is counted as it comes; past the cap, 413. */
static void
model_body(struct api_req *ar, const void *data, size_t len)
{
	struct model_req	*mr = ar->route;
	int64_t			 max = model_max_request();

	if (mr->too_large)
		return;
	if ((int64_t)(evbuffer_get_length(mr->body) + len) > max) {
		mr->too_large = 1;
		/* What came so far is of no use: let it go now. */
		mr->bodylen = evbuffer_get_length(mr->body);
		evbuffer_drain(mr->body, mr->bodylen);
		fe_reply_error(ar, 413, NULL, "the request body is larger than "
		    "%" PRId64 " bytes", max);
		model_answered(mr);
		return;
	}
	if (evbuffer_add(mr->body, data, len) == -1) {
		mr->too_large = 1;
		fe_reply_error(ar, 503, NULL, "out of memory");
		model_answered(mr);
	}
}

/* Our own SSE lines, for the error event that ends a stream early. */
static void
model_emit(void *arg, const char *event, const char *data, size_t len)
{
	http_reply_event(arg, event, data, len);
}

/*
 * request-timeout passed: whatever the request waits for (the storage
 * helper, the broker, a queue, the upstream, a round of code) is
 * cancelled, and the caller is told in its dialect: a 504, or an error
 * event when its stream has begun.
 */
static void
model_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct model_req	*mr = arg;
	struct api_req		*ar = mr->ar;
	struct upcall_result	 res;
	char			 msg[128];

	if (mr->logged || (ar->req->replied && !mr->stream))
		return;		/* answered already */
	mr->too_large = 1;	/* the rest of a body is not read */
	memset(&res, 0, sizeof(res));
	res.tokens_in = res.tokens_out = res.ttfb_us = -1;
	if (mr->upcall != NULL)
		upcall_result(mr->upcall, &res);
	else if (mr->coderun != NULL)
		coderun_result(mr->coderun, &res);
	upcall_free(mr->upcall);
	mr->upcall = NULL;
	coderun_free(mr->coderun);
	mr->coderun = NULL;
	fe_count_free(mr->count);
	mr->count = NULL;
	if (mr->refs != NULL) {
		refs_free(mr->refs);
		mr->refs = NULL;
	}
	snprintf(msg, sizeof(msg), "the request took longer than %d s "
	    "(request-timeout)", fe.conf->request_timeout);
	model_log(mr, &res, 504);
	if (ar->req->replied) {
		xstream_error(mr->caller, 504, msg, model_emit, ar->req);
		http_reply_end(ar->req);
	} else
		fe_reply_error(ar, 504, NULL, "%s", msg);
}

static void
model_authenticated(struct api_req *ar)
{
	struct model_req	*mr = ar->route;
	struct timeval		 tv = { 0, 0 };

	tv.tv_sec = fe.conf->request_timeout;	/* conf_new() has the default */
	if ((mr->deadline = evtimer_new(fe.base, model_deadline,
	    mr)) == NULL) {
		fe_reply_error(ar, 503, NULL, "out of memory");
		return;
	}
	evtimer_add(mr->deadline, &tv);
	ar->on_body = model_body;
	ar->on_body_end = model_body_end;
	http_body_accept(ar->req);
}

static void
model_route(struct api_req *ar, enum wire caller, int counting)
{
	struct model_req	*mr;
	int64_t			 cl = ar->req->content_length;
	int64_t			 max = model_max_request();

	ar->dialect = caller == WIRE_MESSAGES ? DIALECT_ANTHROPIC :
	    DIALECT_OPENAI;
	ar->req->route = counting ? "messages.count_tokens" :
	    route_names[caller];
	if (ar->req->method != HTTP_M_POST) {
		fe_reply_error(ar, 405, NULL, "use POST");
		return;
	}
	if (cl > max) {
		fe_reply_error(ar, 413, NULL, "the request body of %" PRId64
		    " bytes is larger than %" PRId64, cl, max);
		return;
	}
	if ((mr = calloc(1, sizeof(*mr))) == NULL ||
	    (mr->body = evbuffer_new()) == NULL) {
		free(mr);
		fe_reply_error(ar, 503, NULL, "out of memory");
		return;
	}
	mr->ar = ar;
	mr->caller = caller;
	mr->counting = counting;
	mr->start_us = mono_usec();
	ar->route = mr;
	ar->free_route = model_free;
	fe_authenticate(ar, model_authenticated);
}

void
fe_model_route(struct api_req *ar, enum wire caller)
{
	model_route(ar, caller, 0);
}

/* POST /v1/messages/count_tokens: as a Messages request, counted. */
void
fe_model_count_route(struct api_req *ar)
{
	model_route(ar, WIRE_MESSAGES, 1);
}
