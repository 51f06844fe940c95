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
 * fe_count.c: token counting for POST /v1/messages/count_tokens.  The
 * count is the model server's own, never an estimate: the request is
 * put in chat form (the form the open servers template), then
 *   llama.cpp: POST /apply-template (the model's chat template) and
 *              POST /tokenize on the prompt it gives;
 *   vLLM:      POST /tokenize with the messages (it templates them);
 * which server it is, discovery says (fe_discover.c).  Any other
 * upstream cannot count: a 400 says so.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "log.h"
#include "frontend.h"
#include "fe_model.h"
#include "fe_count.h"
#include "fe_discover.h"
#include "fe_fetch.h"

struct fe_count {
	struct api_req		*ar;
	char			 model[128];
	char			 remote[128];
	char			 upstream[64];
	enum disc_server	 server;
	struct json_object	*chat;		/* the request, chat form */
	struct fe_fetch		*fetch;
	fe_count_done_cb	 done;
	void			*arg;
};

void
fe_count_free(struct fe_count *c)
{
	if (c == NULL)
		return;
	fe_fetch_cancel(c->fetch);
	json_object_put(c->chat);
	free(c);
}

static void
count_end(struct fe_count *c, int status, int64_t tokens)
{
	c->fetch = NULL;
	c->done(c->arg, status, tokens);
}

static void
count_fail(struct fe_count *c, int status, const char *msg)
{
	fe_reply_error(c->ar, status, NULL, "%s", msg);
	count_end(c, status, -1);
}

static void
count_answer(struct fe_count *c, int64_t n)
{
	struct json_object	*o;

	if ((o = json_object_new_object()) == NULL ||
	    json_object_object_add(o, "input_tokens",
	    json_object_new_int64(n)) == -1) {
		json_object_put(o);
		count_fail(c, 503, "out of memory");
		return;
	}
	fe_reply_json(c->ar, 200, o);	/* puts o */
	count_end(c, 200, n);
}

static const struct upstream_conf *
count_upstream(const struct fe_count *c)
{
	const struct upstream_conf	*up;

	TAILQ_FOREACH(up, &fe.conf->upstreams, entry)
		if (strcmp(up->name, c->upstream) == 0)
			return up;
	return NULL;
}

/* The tokenizer's answer: {tokens: [...]} (both) or {count} (vLLM). */
static void
count_tokenized(void *arg, int status, struct json_object *a,
    const char *url)
{
	struct fe_count		*c = arg;
	struct json_object	*v;

	if (status != 200 || a == NULL) {
		log_warnx("count: %s answered %d", url, status);
		count_fail(c, 502, "the upstream's tokenizer failed");
		return;
	}
	if (json_object_object_get_ex(a, "count", &v) &&
	    json_object_is_type(v, json_type_int))
		count_answer(c, json_object_get_int64(v));
	else if (json_object_object_get_ex(a, "tokens", &v) &&
	    json_object_is_type(v, json_type_array))
		count_answer(c, (int64_t)json_object_array_length(v));
	else
		count_fail(c, 502, "the upstream's tokenizer answered no "
		    "tokens");
}

static void
count_post(struct fe_count *c, const char *path, struct json_object *body,
    fe_fetch_cb cb)
{
	const struct upstream_conf	*up;

	if ((up = count_upstream(c)) == NULL) {
		count_fail(c, 502, "the model's upstream is no longer "
		    "configured");
		return;
	}
	if ((c->fetch = fe_fetch(up, 1, path, body, cb, c)) == NULL)
		count_fail(c, 502, "the upstream call could not start");
}

/* llama.cpp: the template applied, {prompt}; now its tokens. */
static void
count_templated(void *arg, int status, struct json_object *a,
    const char *url)
{
	struct fe_count		*c = arg;
	struct json_object	*prompt, *body;

	c->fetch = NULL;
	if (status != 200 || a == NULL ||
	    !json_object_object_get_ex(a, "prompt", &prompt) ||
	    !json_object_is_type(prompt, json_type_string)) {
		log_warnx("count: %s answered %d", url, status);
		count_fail(c, 502, "the upstream could not apply the model's "
		    "chat template");
		return;
	}
	if ((body = json_object_new_object()) == NULL ||
	    json_object_object_add(body, "content",
	    json_object_get(prompt)) == -1) {
		json_object_put(body);
		count_fail(c, 503, "out of memory");
		return;
	}
	count_post(c, "/tokenize", body, count_tokenized);
	json_object_put(body);
}

/* What of the chat request a tokenizer takes: messages, tools. */
static struct json_object *
count_body(struct fe_count *c)
{
	struct json_object	*b, *v;

	if ((b = json_object_new_object()) == NULL)
		return NULL;
	if (c->server == DISC_VLLM)
		json_object_object_add(b, "model",
		    json_object_new_string(c->remote));
	if (json_object_object_get_ex(c->chat, "messages", &v))
		json_object_object_add(b, "messages", json_object_get(v));
	if (json_object_object_get_ex(c->chat, "tools", &v))
		json_object_object_add(b, "tools", json_object_get(v));
	return b;
}

struct fe_count *
fe_count_start(struct api_req *ar, const struct model_conf *m,
    struct json_object *req, fe_count_done_cb done, void *arg)
{
	const struct disc_caps	*caps;
	struct fe_count		*c;
	struct json_object	*body;
	char			 err[256];

	caps = fe_discover_caps(m);
	if (caps == NULL || (caps->server != DISC_LLAMACPP &&
	    caps->server != DISC_VLLM)) {
		fe_reply_error(ar, 400, "model", "model %s cannot count tokens: "
		    "its upstream exposes no tokenizer depotd knows (%s)",
		    m->name, caps == NULL ? "nothing discovered" :
		    fe_discover_server_name(caps->server));
		return NULL;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		fe_reply_error(ar, 503, NULL, "out of memory");
		return NULL;
	}
	c->ar = ar;
	c->done = done;
	c->arg = arg;
	c->server = caps->server;
	strlcpy(c->model, m->name, sizeof(c->model));
	strlcpy(c->remote, m->remote_name[0] ? m->remote_name : m->name,
	    sizeof(c->remote));
	strlcpy(c->upstream, m->upstream, sizeof(c->upstream));
	err[0] = '\0';
	if ((c->chat = xlate_request(WIRE_MESSAGES, WIRE_CHAT, req,
	    m->max_tokens, err, sizeof(err))) == NULL) {
		fe_reply_error(ar, err[0] ? 400 : 503, NULL, "%s",
		    err[0] ? err : "out of memory");
		fe_count_free(c);
		return NULL;
	}
	if ((body = count_body(c)) == NULL) {
		fe_reply_error(ar, 503, NULL, "out of memory");
		fe_count_free(c);
		return NULL;
	}
	/* From here every end goes through done, as the header says. */
	count_post(c, c->server == DISC_VLLM ? "/tokenize" :
	    "/apply-template", body, c->server == DISC_VLLM ?
	    count_tokenized : count_templated);
	json_object_put(body);
	return c;
}
