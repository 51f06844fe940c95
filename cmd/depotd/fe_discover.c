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
 * fe_discover.c: capability discovery.  At start and at each reload,
 * for every upstream marked discover, the frontend asks the model
 * server what it is, in the order that tells the servers apart:
 * llama.cpp's GET /props (modalities, n_ctx, chat template), then
 * vLLM's GET /v1/models (max_model_len), then Ollama's POST /api/show
 * per model (capabilities, context length).  The first that answers
 * in its own shape wins; a server that answers none keeps today's
 * behaviour.  Each frontend asks for itself: only frontends reach
 * upstreams (DESIGN.md 2), the answers are small and the same for
 * every frontend, and no frontend then waits on another.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "log.h"
#include "util.h"
#include "frontend.h"
#include "fe_discover.h"
#include "fe_fetch.h"

enum disc_step {
	STEP_PROPS,
	STEP_MODELS,
	STEP_SHOW,
};

struct disc_rec {
	TAILQ_ENTRY(disc_rec)	 entry;
	char			 upstream[64];
	char			 model[128];	/* the remote name */
	struct disc_caps	 caps;
};

struct disc_job {
	TAILQ_ENTRY(disc_job)	 entry;
	char			 upstream[64];
	enum disc_step		 step;
	int			 nth;		/* STEP_SHOW: the model */
	struct fe_fetch		*fetch;
	int64_t			 start_us;
};

static TAILQ_HEAD(, disc_rec)	 recs = TAILQ_HEAD_INITIALIZER(recs);
static TAILQ_HEAD(, disc_job)	 jobs = TAILQ_HEAD_INITIALIZER(jobs);

static void	disc_step(struct disc_job *);

const char *
fe_discover_server_name(enum disc_server s)
{
	switch (s) {
	case DISC_LLAMACPP:
		return "llama.cpp";
	case DISC_VLLM:
		return "vllm";
	case DISC_OLLAMA:
		return "ollama";
	default:
		return "unknown";
	}
}

static const char *
disc_remote(const struct model_conf *m)
{
	return m->remote_name[0] != '\0' ? m->remote_name : m->name;
}

static const struct upstream_conf *
disc_upstream(const char *name)
{
	const struct upstream_conf	*up;

	TAILQ_FOREACH(up, &fe.conf->upstreams, entry)
		if (strcmp(up->name, name) == 0)
			return up;
	return NULL;
}

/* The nth configured model on the upstream, NULL past the last. */
static const struct model_conf *
disc_nth_model(const char *upstream, int nth)
{
	const struct model_conf	*m;

	TAILQ_FOREACH(m, &fe.conf->models, entry)
		if (strcmp(m->upstream, upstream) == 0 && nth-- == 0)
			return m;
	return NULL;
}

static void
disc_record(const char *upstream, const char *model,
    const struct disc_caps *caps)
{
	struct disc_rec	*r;

	TAILQ_FOREACH(r, &recs, entry)
		if (strcmp(r->upstream, upstream) == 0 &&
		    strcmp(r->model, model) == 0)
			break;
	if (r == NULL) {
		if ((r = calloc(1, sizeof(*r))) == NULL) {
			log_warnx("discovery: out of memory");
			return;
		}
		strlcpy(r->upstream, upstream, sizeof(r->upstream));
		strlcpy(r->model, model, sizeof(r->model));
		TAILQ_INSERT_TAIL(&recs, r, entry);
	}
	r->caps = *caps;
}

/* The same answer for every model on the upstream (one model served). */
static void
disc_record_all(const char *upstream, const struct disc_caps *caps)
{
	const struct model_conf	*m;
	int			 i;

	for (i = 0; (m = disc_nth_model(upstream, i)) != NULL; i++)
		disc_record(upstream, disc_remote(m), caps);
}

static void
disc_job_end(struct disc_job *j, enum disc_server s)
{
	log_info("discovery: upstream %s: %s (%.1f ms)", j->upstream,
	    fe_discover_server_name(s),
	    (mono_usec() - j->start_us) / 1000.0);
	TAILQ_REMOVE(&jobs, j, entry);
	free(j);
}

static int64_t
disc_int(struct json_object *o, const char *key)
{
	struct json_object	*v;

	if (o == NULL || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_int))
		return 0;
	return json_object_get_int64(v);
}

/* llama.cpp: {default_generation_settings: {n_ctx}, modalities: {vision}}. */
static int
disc_props(struct disc_job *j, struct json_object *a, const char *url)
{
	struct json_object	*dgs = NULL, *mod = NULL, *v;
	struct disc_caps	 c;

	if (a == NULL || !json_object_is_type(a, json_type_object))
		return 0;
	json_object_object_get_ex(a, "default_generation_settings", &dgs);
	json_object_object_get_ex(a, "modalities", &mod);
	if (!json_object_is_type(dgs, json_type_object) &&
	    !json_object_is_type(mod, json_type_object))
		return 0;
	memset(&c, 0, sizeof(c));
	c.server = DISC_LLAMACPP;
	/* Before "modalities" the server took text only. */
	c.vision = json_object_object_get_ex(mod, "vision", &v) &&
	    json_object_get_boolean(v);
	c.pdf = 0;		/* no document input at all */
	c.n_ctx = disc_int(dgs, "n_ctx");
	c.template = json_object_object_get_ex(a, "chat_template", &v) &&
	    json_object_get_string_len(v) > 0;
	snprintf(c.source, sizeof(c.source), "GET %s", url);
	disc_record_all(j->upstream, &c);
	return 1;
}

/* vLLM: {data: [{id, max_model_len}]}. */
static int
disc_models(struct disc_job *j, struct json_object *a, const char *url)
{
	struct json_object	*data, *it, *id, *len;
	struct disc_caps	 c, base;
	const struct model_conf	*m;
	size_t			 i, n;
	int			 k, vllm = 0;

	if (a == NULL || !json_object_object_get_ex(a, "data", &data) ||
	    !json_object_is_type(data, json_type_array))
		return 0;
	n = json_object_array_length(data);
	memset(&base, 0, sizeof(base));
	base.server = DISC_VLLM;
	base.vision = -1;	/* /v1/models does not say */
	base.pdf = 0;
	snprintf(base.source, sizeof(base.source), "GET %s", url);
	for (i = 0; i < n; i++)
		if (json_object_object_get_ex(json_object_array_get_idx(data,
		    i), "max_model_len", &len))
			vllm = 1;
	if (!vllm)
		return 0;
	for (k = 0; (m = disc_nth_model(j->upstream, k)) != NULL; k++) {
		c = base;
		for (i = 0; i < n; i++) {
			it = json_object_array_get_idx(data, i);
			if (json_object_object_get_ex(it, "id", &id) &&
			    strcmp(json_object_get_string(id),
			    disc_remote(m)) == 0)
				c.n_ctx = disc_int(it, "max_model_len");
		}
		disc_record(j->upstream, disc_remote(m), &c);
	}
	return 1;
}

/* Ollama: {capabilities: ["completion", "vision"], model_info: {...}}. */
static int
disc_show(struct disc_job *j, struct json_object *a, const char *url)
{
	struct json_object	*caps, *info, *v;
	struct disc_caps	 c;
	const struct model_conf	*m;
	size_t			 i, n, kl;
	const char		*s;

	if ((m = disc_nth_model(j->upstream, j->nth)) == NULL || a == NULL ||
	    !json_object_object_get_ex(a, "capabilities", &caps) ||
	    !json_object_is_type(caps, json_type_array))
		return 0;
	memset(&c, 0, sizeof(c));
	c.server = DISC_OLLAMA;
	c.pdf = 0;
	n = json_object_array_length(caps);
	for (i = 0; i < n; i++) {
		s = json_object_get_string(json_object_array_get_idx(caps, i));
		if (s != NULL && strcmp(s, "vision") == 0)
			c.vision = 1;
	}
	if (json_object_object_get_ex(a, "model_info", &info) &&
	    json_object_is_type(info, json_type_object)) {
		json_object_object_foreach(info, key, val) {
			kl = strlen(key);
			if (kl > 15 && strcmp(key + kl - 15,
			    ".context_length") == 0 &&
			    json_object_is_type(val, json_type_int))
				c.n_ctx = json_object_get_int64(val);
		}
	}
	c.template = json_object_object_get_ex(a, "template", &v) &&
	    json_object_get_string_len(v) > 0;
	snprintf(c.source, sizeof(c.source), "POST %s", url);
	disc_record(j->upstream, disc_remote(m), &c);
	return 1;
}

static void
disc_answer(void *arg, int status, struct json_object *a, const char *url)
{
	struct disc_job	*j = arg;

	j->fetch = NULL;
	if (status != 200)
		a = NULL;
	switch (j->step) {
	case STEP_PROPS:
		if (disc_props(j, a, url)) {
			disc_job_end(j, DISC_LLAMACPP);
			return;
		}
		j->step = STEP_MODELS;
		break;
	case STEP_MODELS:
		if (disc_models(j, a, url)) {
			disc_job_end(j, DISC_VLLM);
			return;
		}
		j->step = STEP_SHOW;
		break;
	case STEP_SHOW:
		if (!disc_show(j, a, url)) {
			disc_job_end(j, j->nth > 0 ? DISC_OLLAMA : DISC_NONE);
			return;
		}
		j->nth++;
		break;
	}
	disc_step(j);
}

static void
disc_step(struct disc_job *j)
{
	const struct upstream_conf	*up;
	const struct model_conf		*m = NULL;
	struct json_object		*body = NULL;

	if ((up = disc_upstream(j->upstream)) == NULL) {
		disc_job_end(j, DISC_NONE);
		return;
	}
	switch (j->step) {
	case STEP_PROPS:
		j->fetch = fe_fetch(up, 1, "/props", NULL, disc_answer, j);
		break;
	case STEP_MODELS:
		j->fetch = fe_fetch(up, 0, "/models", NULL, disc_answer, j);
		break;
	case STEP_SHOW:
		if ((m = disc_nth_model(j->upstream, j->nth)) == NULL) {
			disc_job_end(j, j->nth > 0 ? DISC_OLLAMA : DISC_NONE);
			return;
		}
		if ((body = json_object_new_object()) == NULL ||
		    json_object_object_add(body, "model",
		    json_object_new_string(disc_remote(m))) == -1) {
			json_object_put(body);
			break;
		}
		j->fetch = fe_fetch(up, 1, "/api/show", body, disc_answer, j);
		json_object_put(body);
		break;
	}
	if (j->fetch == NULL) {
		log_warnx("discovery: upstream %s: the call could not start",
		    j->upstream);
		disc_job_end(j, DISC_NONE);
	}
}

void
fe_discover_start(void)
{
	const struct upstream_conf	*up;
	struct disc_job			*j;
	struct disc_rec			*r;

	while ((j = TAILQ_FIRST(&jobs)) != NULL) {
		fe_fetch_cancel(j->fetch);
		TAILQ_REMOVE(&jobs, j, entry);
		free(j);
	}
	while ((r = TAILQ_FIRST(&recs)) != NULL) {
		TAILQ_REMOVE(&recs, r, entry);
		free(r);
	}
	TAILQ_FOREACH(up, &fe.conf->upstreams, entry) {
		if (!up->discover)
			continue;
		if ((j = calloc(1, sizeof(*j))) == NULL) {
			log_warnx("discovery: out of memory");
			return;
		}
		strlcpy(j->upstream, up->name, sizeof(j->upstream));
		j->start_us = mono_usec();
		TAILQ_INSERT_TAIL(&jobs, j, entry);
		disc_step(j);
	}
}

const struct disc_caps *
fe_discover_caps(const struct model_conf *m)
{
	struct disc_rec	*r;

	TAILQ_FOREACH(r, &recs, entry)
		if (strcmp(r->upstream, m->upstream) == 0 &&
		    strcmp(r->model, disc_remote(m)) == 0)
			return &r->caps;
	return NULL;
}

void
fe_discover_apply(struct model_conf *m)
{
	const struct disc_caps	*c;

	/* The configuration's word, where it gives one, stands. */
	if (m->text_only || m->pdf_as_text ||
	    (c = fe_discover_caps(m)) == NULL)
		return;
	if (c->vision == 0) {
		m->text_only = 1;
		m->refuse_images = REFUSE_IMAGES_VISION;
	} else if (c->pdf == 0)
		m->pdf_as_text = 1;
}

static const char *
disc_yesno(int v)
{
	return v < 0 ? "unknown" : v ? "yes" : "no";
}

void
fe_discover_lines(void (*cb)(void *, const char *), void *arg)
{
	const struct model_conf	*m;
	const struct disc_caps	*c;
	struct model_conf	 eff;
	char			 line[512], ctx[32];

	TAILQ_FOREACH(m, &fe.conf->models, entry) {
		eff = *m;
		fe_discover_apply(&eff);
		if ((c = fe_discover_caps(m)) == NULL) {
			snprintf(line, sizeof(line), "model %s upstream %s: "
			    "nothing discovered; %s", m->name, m->upstream,
			    m->text_only ? "text-only (configured)" :
			    m->pdf_as_text ? "pdf-as-text (configured)" :
			    "files native (configured)");
			cb(arg, line);
			continue;
		}
		if (c->n_ctx > 0)
			snprintf(ctx, sizeof(ctx), "%" PRId64, c->n_ctx);
		else
			strlcpy(ctx, "unknown", sizeof(ctx));
		snprintf(line, sizeof(line), "model %s upstream %s: server %s "
		    "vision %s pdf %s context %s template %s; %s%s; from %s",
		    m->name, m->upstream, fe_discover_server_name(c->server),
		    disc_yesno(c->vision), disc_yesno(c->pdf), ctx,
		    c->template ? "yes" : "no",
		    eff.text_only ? "text-only" : eff.pdf_as_text ?
		    "pdf-as-text" : "files native",
		    m->text_only || m->pdf_as_text ? " (configured)" :
		    " (discovered)", c->source);
		cb(arg, line);
	}
}
