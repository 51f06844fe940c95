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
 * fe_coderun.c: a model request that runs code (SPEC 6.2).
 *
 * The route has resolved the request's files and translated it for
 * the upstream; here the broker leases a session before the first
 * upstream call (so an unreachable backend is a 502 before anything
 * else), the files are seeded, and the model is asked, round after
 * round, without streaming: each code_execution call it makes runs in
 * the session, its result (with the files the run produced, stored as
 * the caller's) goes back as the tool's result, until the model
 * answers without one or max-tool-iterations is reached.  The last
 * answer goes to the caller in its own wire; a streaming caller gets
 * it as a stream, with keep-alives while the gateway's rounds run, and
 * never sees those rounds' calls, unless it declared the provider's
 * own code-execution tool: then each run's native blocks come first,
 * whole or streamed alike (fe_coderun_native.c).  The model's text
 * from a round that ran code is kept, before that round's runs, as
 * the providers keep it; a streaming caller gets it, and each run's
 * blocks, as soon as the round or the run is over, not at the end.
 */
#include <sys/types.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "log.h"
#include "frontend.h"
#include "fe_upcall.h"
#include "fe_coderun.h"

#define KEEPALIVE_EVERY		5	/* seconds */
#define TOOL_NO_CODE		"the call has no code argument"

/*
 * Each round resends the transcript with what the rounds before added
 * (the model's answers, the runs' results); that much, in all, is
 * bounded by max-answer-size.
 */
static int64_t
coderun_grow_max(void)
{
	return fe.conf->max_answer_size;	/* conf_new() has the default */
}

static int
coderun_tools_max(void)
{
	return fe.conf->max_tool_calls;
}

struct coderun {
	struct coderun_params	 p;
	struct fe_broker_lease	*lease;
	struct seeding		*seeding;
	struct upcall		*upcall;
	struct upstream_body		*body;		/* this round's */
	struct json_object	*upstream_request; /* grows round by round */
	struct json_object	*answer;	/* the round's, its calls */
	struct json_object	*calls;
	struct json_object	*results;
	struct json_object	*runs;		/* native: every run */
	size_t			 next_call;
	size_t			 next_file;	/* being opened again */
	size_t			 reopened;	/* this round, for the log */
	uint32_t		 open_pending;
	int			 rounds;
	int			 max_rounds;
	int64_t			 grown;		/* bytes the rounds added */
	int			 started;	/* our SSE reply began */
	struct xstream		*xs;		/* the caller's stream */
	size_t			 flushed;	/* runs[] streamed so far */
	struct event		*keepalive;
	struct upcall_result	 res;		/* summed for the log */
};

static void	coderun_round(struct coderun *);

static const struct cntr_rec *
coderun_container(const struct coderun *cr)
{
	return fe_broker_container(cr->lease);
}

/* The answer names the container it ran in (Messages). */
static void
coderun_add_container(struct coderun *cr, struct json_object *answer)
{
	if (cr->p.caller == WIRE_MESSAGES && coderun_container(cr) != NULL)
		json_object_object_add(answer, "container",
		    native_container(coderun_container(cr)));
}

static void
coderun_report(struct coderun *cr, int status)
{
	coderun_done_cb	 done = cr->p.done;

	cr->p.done = NULL;
	cr->res.status = status;
	if (done != NULL)
		done(cr->p.arg, &cr->res);
}

/* Our own SSE lines to the caller. */
static void
coderun_emit(void *arg, const char *event, const char *data, size_t len)
{
	struct coderun	*cr = arg;

	http_reply_event(cr->p.ar->req, event, data, len);
}

/* An error in the caller's terms, whether or not the stream began. */
static void
coderun_fail(struct coderun *cr, int status, const char *msg)
{
	evtimer_del(cr->keepalive);
	if (cr->started) {
		xstream_error(cr->p.caller, status, msg, coderun_emit, cr);
		coderun_report(cr, status);
		http_reply_end(cr->p.ar->req);
		return;
	}
	coderun_report(cr, status);
	fe_reply_error(cr->p.ar, status, NULL, "%s", msg);
}

static void
coderun_keepalive(evutil_socket_t fd, short what, void *arg)
{
	struct coderun	*cr = arg;
	struct timeval	 tv = { KEEPALIVE_EVERY, 0 };

	/* The SDKs skip comments (OpenAI) and pings (Anthropic). */
	if (cr->p.caller == WIRE_MESSAGES)
		coderun_emit(cr, "ping", "{\"type\":\"ping\"}", 15);
	else
		http_reply_data(cr->p.ar->req, ": keepalive\n\n", 13);
	evtimer_add(cr->keepalive, &tv);
}

/* A streaming caller hears from us from the first gateway round on. */
static void
coderun_stream_begin(struct coderun *cr)
{
	struct timeval	 tv = { KEEPALIVE_EVERY, 0 };

	if (!cr->p.stream || cr->started)
		return;
	http_reply_header(cr->p.ar->req, "Cache-Control", "no-cache");
	http_reply_start(cr->p.ar->req, 200,
	    "text/event-stream; charset=utf-8", -1);
	cr->started = 1;
	evtimer_add(cr->keepalive, &tv);
}

/*
 * The caller's stream is one message across the rounds: what the runs
 * and the rounds' texts add goes out whole as soon as it is known,
 * ahead of the last round's words (xstream_prepend); -1 when the
 * stream failed.
 */
static int
coderun_flush(struct coderun *cr)
{
	struct json_object	*list;
	int			 rc;

	if (!cr->p.stream)
		return 0;
	coderun_stream_begin(cr);
	if (cr->xs == NULL) {
		if ((cr->xs = xstream_new(WIRE_CHAT, cr->p.caller, cr->p.asked,
		    coderun_emit, cr)) == NULL)
			return -1;
		xstream_caller_usage(cr->xs, cr->p.usage);
		if (cr->p.caller == WIRE_MESSAGES &&
		    coderun_container(cr) != NULL) {
			list = native_container(coderun_container(cr));
			xstream_container(cr->xs, list);
			json_object_put(list);
		}
	}
	list = native_blocks(cr->p.caller, cr->runs, cr->flushed,
	    cr->p.native);
	cr->flushed = json_object_array_length(cr->runs);
	if (list == NULL)
		return 0;
	rc = xstream_prepend(cr->xs, list);
	json_object_put(list);
	return rc;
}

/* The round's text, as chat reads it, for the round's runs to follow. */
static void
coderun_keep_text(struct coderun *cr)
{
	struct json_object	*chat, *text, *call;
	char			 err[160];

	chat = cr->p.wire == WIRE_CHAT ? json_object_get(cr->answer) :
	    xlate_response(cr->p.wire, WIRE_CHAT, cr->answer, cr->p.asked,
	    err, sizeof(err));
	text = json_object_object_get(json_object_object_get(
	    json_object_array_get_idx(json_object_object_get(chat, "choices"),
	    0), "message"), "content");
	call = json_object_array_get_idx(cr->calls, 0);
	if (json_object_is_type(text, json_type_string))
		native_text(cr->runs, json_object_get_string(text),
		    json_object_get_string(json_object_object_get(call, "id")));
	json_object_put(chat);
}

/* The model is done: its last answer, in the caller's wire. */
static void
coderun_final(struct coderun *cr, struct json_object *answer)
{
	struct json_object	*out, *chat;
	char			 err[160];

	err[0] = '\0';
	if (!cr->p.stream) {
		if ((out = xlate_response(cr->p.wire, cr->p.caller, answer,
		    cr->p.asked, err, sizeof(err))) == NULL) {
			coderun_fail(cr, 502, err[0] ? err :
			    "the upstream's answer is malformed");
			return;
		}
		native_prepend(cr->p.caller, out, cr->runs, cr->p.native);
		coderun_add_container(cr, out);
		coderun_report(cr, 200);
		fe_reply_json(cr->p.ar, 200, out);
		return;
	}
	chat = cr->p.wire == WIRE_CHAT ? json_object_get(answer) :
	    xlate_response(cr->p.wire, WIRE_CHAT, answer, cr->p.asked, err,
	    sizeof(err));
	if (chat == NULL) {
		coderun_fail(cr, 502, err[0] ? err :
		    "the upstream's answer is malformed");
		return;
	}
	if (coderun_flush(cr) == -1 || xstream_replay(cr->xs, chat) == -1 ||
	    xstream_end(cr->xs) == -1) {
		json_object_put(chat);
		coderun_fail(cr, 502, "the answer could not be streamed");
		return;
	}
	evtimer_del(cr->keepalive);
	json_object_put(chat);
	coderun_report(cr, 200);
	http_reply_end(cr->p.ar->req);
}

/* --- running the model's calls --- */

static void	coderun_exec_next(struct coderun *);

/* The result of the call made last, as the model reads it. */
static void
coderun_add_result(struct coderun *cr, struct json_object *result,
    const char *error)
{
	struct json_object	*r, *call;
	char			*text;

	call = json_object_array_get_idx(cr->calls, cr->next_call - 1);
	if (cr->p.native && error == NULL)
		native_record(cr->runs, call, result, coderun_container(cr) ?
		    coderun_container(cr)->id : NULL);
	text = tools_render(result, error);
	r = json_object_new_object();
	json_object_object_add(r, "id", json_object_get(
	    json_object_object_get(call, "id")));
	json_object_object_add(r, "text", json_object_new_string(text != NULL ?
	    text : "[tool error] out of memory"));
	cr->grown += text != NULL ? (int64_t)strlen(text) : 0;
	json_object_array_add(cr->results, r);
	free(text);
}

static void
coderun_executed(void *arg, int status, const char *message,
    struct json_object *result)
{
	struct coderun		*cr = arg;

	/*
	 * The backend failed, not the program (whose failure is a result
	 * with its return code): the session cannot be trusted to hold
	 * what the model expects, so the request ends.
	 */
	if (status != 0 && result == NULL && message != NULL &&
	    strcmp(message, TOOL_NO_CODE) != 0) {
		coderun_fail(cr, status == 503 ? 503 : 502, message[0] ?
		    message : "the sandbox failed");
		return;
	}
	coderun_add_result(cr, result, status == 0 ? NULL : message[0] ?
	    message : "the sandbox failed");
	if (coderun_flush(cr) == -1) {
		coderun_fail(cr, 502, "the answer could not be streamed");
		return;
	}
	coderun_exec_next(cr);
}

/*
 * Calls past max-tool-calls in one turn are not run: each gets an
 * error result the model can read, so that it can carry on with the
 * ones that ran (the gateway answers for its own tool; a caller's
 * tools it cannot answer, and such a turn is a 502, upcall_start).
 */
static void
coderun_refuse_rest(struct coderun *cr)
{
	char	 msg[160];
	size_t	 n = json_object_array_length(cr->calls);

	snprintf(msg, sizeof(msg), "not run: more than %d calls in one "
	    "turn (max-tool-calls)", coderun_tools_max());
	while (cr->next_call >= (size_t)coderun_tools_max() &&
	    cr->next_call < n) {
		cr->next_call++;
		coderun_add_result(cr, NULL, msg);
	}
}

/* One call after the other, in the order the model made them. */
static void
coderun_exec_next(struct coderun *cr)
{
	struct json_object	*call, *req, *in, *code;
	char			 msg[160];

	coderun_refuse_rest(cr);
	if (cr->next_call == json_object_array_length(cr->calls)) {
		if (cr->grown > coderun_grow_max()) {
			snprintf(msg, sizeof(msg), "the code-execution rounds "
			    "added more than %" PRId64 " bytes to the "
			    "transcript (max-answer-size)",
			    coderun_grow_max());
			coderun_fail(cr, 502, msg);
			return;
		}
		if (tools_append_round(cr->p.wire, cr->upstream_request,
		    cr->answer, cr->results) == -1) {
			coderun_fail(cr, 502, "the upstream's answer cannot "
			    "be continued");
			return;
		}
		cr->rounds++;
		coderun_round(cr);
		return;
	}
	call = json_object_array_get_idx(cr->calls, cr->next_call++);
	code = json_object_object_get(call, "code");
	if (code == NULL || !json_object_is_type(code, json_type_string)) {
		coderun_executed(cr, 400, TOOL_NO_CODE, NULL);
		return;
	}
	req = json_object_new_object();
	in = json_object_new_object();
	json_object_object_add(in, "code", json_object_get(code));
	json_object_object_add(req, "tool",
	    json_object_new_string("code_execution"));
	json_object_object_add(req, "input", in);
	json_object_object_add(req, "tool_use_id", json_object_get(
	    json_object_object_get(call, "id")));
	fe_broker_exec(cr->lease, req, coderun_executed, cr);
	json_object_put(req);
}

static void
coderun_sum(struct coderun *cr, const struct upcall_result *res)
{
	cr->res.upstream_status = res->upstream_status;
	if (cr->res.ttfb_us < 0)
		cr->res.ttfb_us = res->ttfb_us;
	cr->res.sent += res->sent;
	if (res->tokens_in >= 0)
		cr->res.tokens_in = (cr->res.tokens_in > 0 ?
		    cr->res.tokens_in : 0) + res->tokens_in;
	if (res->tokens_out >= 0)
		cr->res.tokens_out = (cr->res.tokens_out > 0 ?
		    cr->res.tokens_out : 0) + res->tokens_out;
}

static void
coderun_answered(void *arg, const struct upcall_result *res)
{
	struct coderun	*cr = arg;
	char		 msg[160];
	int		 foreign;

	cr->upcall = NULL;
	coderun_sum(cr, res);
	if (res->status != 200 || res->answer == NULL) {
		if (res->status == 429 && res->retry_after[0] != '\0' &&
		    !cr->started)
			http_reply_header(cr->p.ar->req, "retry-after",
			    res->retry_after);
		coderun_fail(cr, res->status != 200 ? res->status : 502,
		    res->message[0] ? res->message : "the upstream failed");
		return;
	}
	json_object_put(cr->answer);
	json_object_put(cr->calls);
	cr->answer = json_object_get(res->answer);
	cr->calls = tools_calls(cr->p.wire, cr->answer, &foreign);
	if (cr->calls == NULL) {
		coderun_fail(cr, 502, "the upstream's answer is malformed");
		return;
	}
	cr->grown += res->answer_len;
	if (foreign > 0 && json_object_array_length(cr->calls) +
	    (size_t)foreign > (size_t)coderun_tools_max()) {
		snprintf(msg, sizeof(msg), "the upstream's answer makes more "
		    "than %d tool calls (max-tool-calls)", coderun_tools_max());
		coderun_fail(cr, 502, msg);
		return;
	}
	/* Done, or the caller's own tools are called: the caller's turn. */
	if (json_object_array_length(cr->calls) == 0 || foreign > 0) {
		if (foreign > 0)
			tools_strip(cr->p.wire, cr->answer);
		coderun_final(cr, cr->answer);
		return;
	}
	coderun_keep_text(cr);
	if (coderun_flush(cr) == -1) {
		coderun_fail(cr, 502, "the answer could not be streamed");
		return;
	}
	json_object_put(cr->results);
	cr->results = json_object_new_array();
	cr->next_call = 0;
	coderun_exec_next(cr);
}

/* --- the rounds --- */

static void
coderun_upcall(struct coderun *cr)
{
	struct upcall_params	 up;

	if (upstream_body_set_json(cr->body, cr->upstream_request) == -1) {
		coderun_fail(cr, 500, "the upstream request could not be made");
		return;
	}
	memset(&up, 0, sizeof(up));
	up.upstream = cr->p.upstream;
	up.caller = cr->p.caller;
	up.wire = cr->p.wire;
	up.model = cr->p.asked;
	up.body = cr->body;
	up.collect = 1;
	if ((cr->upcall = upcall_start(cr->p.ar, &up, coderun_answered,
	    cr)) == NULL)
		coderun_fail(cr, 502, "the upstream call could not start");
}

static void	coderun_open_next(struct coderun *);

/* A pipe or stream of the request opened again, for this round's body. */
static void
coderun_reopened(void *arg, struct imsg *imsg)
{
	struct coderun	*cr = arg;
	int		 fd;

	cr->open_pending = 0;
	if (imsg->hdr.type != IMSG_FILE_OPENED ||
	    (fd = imsg_get_fd(imsg)) == -1) {
		coderun_fail(cr, 502, "a file of the request could not be "
		    "read again");
		return;
	}
	upstream_body_bind(cr->body, cr->next_file++, fd);
	coderun_open_next(cr);
}

static void
coderun_open_next(struct coderun *cr)
{
	struct file_open	 fo;

	/* A regular file's descriptor came with the body (pread). */
	while (cr->next_file < upstream_body_nfiles(cr->body) &&
	    upstream_body_file_bound(cr->body, cr->next_file))
		cr->next_file++;
	if (cr->next_file == upstream_body_nfiles(cr->body)) {
		log_debug("%s: round %d: %zu of %zu files opened again",
		    cr->p.ar->req->id, cr->rounds + 1, cr->reopened,
		    upstream_body_nfiles(cr->body));
		coderun_upcall(cr);
		return;
	}
	cr->reopened++;
	memset(&fo, 0, sizeof(fo));
	strlcpy(fo.key.handle, cr->p.ar->who.handle, sizeof(fo.key.handle));
	strlcpy(fo.key.id, upstream_body_file_tag(cr->body, cr->next_file),
	    sizeof(fo.key.id));
	fo.range_first = fo.range_last = -1;
	cr->open_pending = fe_storage_request(IMSG_FILE_OPEN, -1, &fo,
	    sizeof(fo), coderun_reopened, cr);
}

/*
 * Each round sends the whole transcript again; a body reads a pipe
 * once, so a later round opens its file afresh, while a regular file
 * is read again with pread from a duplicate (upstream_body_again).
 */
static void
coderun_round(struct coderun *cr)
{
	char	 msg[160];

	if (cr->rounds >= cr->max_rounds) {
		snprintf(msg, sizeof(msg), "the model asked to run code more "
		    "than %d times (max-tool-iterations)", cr->max_rounds);
		coderun_fail(cr, 422, msg);
		return;
	}
	if (cr->rounds == 0) {
		cr->body = cr->p.body;
		coderun_upcall(cr);
		return;
	}
	if (cr->body != cr->p.body)
		upstream_body_free(cr->body);
	if ((cr->body = upstream_body_again(cr->p.body, fe.base)) == NULL) {
		coderun_fail(cr, 503, "out of memory");
		return;
	}
	cr->next_file = cr->reopened = 0;
	coderun_open_next(cr);
}

/* --- the session --- */

static void
coderun_seeded(void *arg, int status, const char *message)
{
	struct coderun	*cr = arg;

	cr->seeding = NULL;
	if (status != 0) {
		/* 504: the broker's transfer-timeout passed. */
		coderun_fail(cr, status == 504 ? 504 : 502, message != NULL &&
		    message[0] ? message :
		    "the sandbox refused a file of the request");
		return;
	}
	coderun_round(cr);
}

/*
 * What a refused lease answers: the caller's own errors about its
 * container (404 missing or another's, 400 expired, 409 in use), the
 * sandbox's capacity (503, 429), else the gateway's 502.
 */
static int
coderun_open_status(int status)
{
	switch (status) {
	case 400:
	case 404:
	case 409:
	case 429:
	case 503:
		return status;
	}
	return 502;
}

static void
coderun_opened(void *arg, int status, const char *message)
{
	struct coderun	*cr = arg;

	if (status != 0) {
		/* 429: the caller's key holds its share of the sessions. */
		if (status == 429 && !cr->started)
			http_reply_header(cr->p.ar->req, "retry-after", "1");
		coderun_fail(cr, coderun_open_status(status), message[0] ?
		    message : "the sandbox could not be reached");
		return;
	}
	if (cr->p.files == NULL || (cr->seeding = fe_seed(cr->p.ar,
	    cr->lease, cr->p.files, coderun_seeded, cr)) == NULL)
		coderun_round(cr);
}

struct coderun *
coderun_start(const struct coderun_params *p)
{
	struct coderun	*cr;

	if ((cr = calloc(1, sizeof(*cr))) == NULL ||
	    (cr->keepalive = evtimer_new(fe.base, coderun_keepalive,
	    cr)) == NULL) {
		free(cr);
		fe_reply_error(p->ar, 503, NULL, "out of memory");
		return NULL;
	}
	cr->p = *p;
	cr->upstream_request = json_object_get(p->upstream_request);
	cr->runs = json_object_new_array();
	cr->max_rounds = p->max_rounds;	/* conf_tool_iterations */
	cr->res.tokens_in = cr->res.tokens_out = cr->res.ttfb_us = -1;
	if ((cr->lease = fe_broker_open(p->ar, p->container,
	    coderun_opened, cr)) == NULL) {
		coderun_free(cr);
		fe_reply_error(p->ar, 502, NULL, "no sandbox broker");
		return NULL;
	}
	return cr;
}

void
coderun_result(const struct coderun *cr, struct upcall_result *res)
{
	*res = cr->res;
}

/* Whatever happened, the session goes with the request. */
void
coderun_free(struct coderun *cr)
{
	if (cr == NULL)
		return;
	upcall_free(cr->upcall);
	if (cr->open_pending != 0)
		fe_storage_cancel(cr->open_pending);
	fe_seed_cancel(cr->seeding);
	fe_broker_close(cr->lease);
	if (cr->body != NULL && cr->body != cr->p.body)
		upstream_body_free(cr->body);
	if (cr->keepalive != NULL)
		event_free(cr->keepalive);
	if (cr->xs != NULL)
		xstream_free(cr->xs);
	json_object_put(cr->upstream_request);
	json_object_put(cr->answer);
	json_object_put(cr->calls);
	json_object_put(cr->results);
	json_object_put(cr->runs);
	free(cr);
}
