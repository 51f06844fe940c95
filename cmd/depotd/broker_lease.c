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
 * broker_lease.c: the broker's leases.  A frontend opens one lease per
 * request that runs code; each lease is one session at the backend,
 * created on open and destroyed on close, or when the frontend's
 * channel closes, so that no session outlives its request.  A lease
 * of a container (the storage helper's grant, broker_grant.c) is the
 * exception: its session is the container's, made on its first use
 * and recorded in its row, and outlives the lease; the sweep or the
 * container's deletion destroys it (IMSG_CNTR_DESTROY).  One lease at
 * a time may hold a container: a second is refused with 409, which
 * the SDKs retry.
 *
 * An Execute is followed by a listing of the workspace: what is new or
 * changed since the listing before (and whatever the result block
 * names) is what the run produced.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "log.h"
#include "depotd.h"
#include "broker.h"
#include "broker_sbx.h"
#include "child.h"

#define GRANT_WAIT	5	/* seconds a lease waits for its grant */

static struct broker_lease_list all_leases = TAILQ_HEAD_INITIALIZER(all_leases);
static int nleases;
static int ndeleting;		/* DELETEs still under way */

static void	broker_lease_exec_start(struct broker_lease *);

int
broker_lease_count(void)
{
	return nleases;
}

static void
broker_lease_status(struct broker_lease *l, uint32_t type, int status,
    const char *msg)
{
	struct sbx_status	 st;

	memset(&st, 0, sizeof(st));
	st.status = status;
	if (msg != NULL)
		strlcpy(st.message, msg, sizeof(st.message));
	if (l->peer != NULL)
		imsgev_compose(&l->peer->iev, type, l->peerid, 0, -1, &st,
		    sizeof(st));
}

/* A JSON answer for the frontend, in pieces, then the closing type. */
static void
broker_lease_send_json(struct broker_lease *l, struct json_object *o,
    uint32_t type, int status, const char *msg)
{
	const char	*s;
	size_t		 len, off, n;

	if (l->peer == NULL)
		return;
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	len = strlen(s);
	for (off = 0; off < len && len <= SBX_JSON_MAX; off += n) {
		n = len - off > SBX_DATA_MAX ? SBX_DATA_MAX : len - off;
		imsgev_compose(&l->peer->iev, IMSG_SBX_DATA, l->peerid, 0, -1,
		    s + off, n);
	}
	broker_lease_status(l, type, len > SBX_JSON_MAX ? 502 : status,
	    len > SBX_JSON_MAX ? "result too large" : msg);
}

/* Why the backend refused: its error's message, else err, else what. */
static const char *
broker_lease_why(struct json_object *body, const char *err, const char *what)
{
	struct json_object	*e, *m;

	if (err != NULL)
		return err;
	if (json_object_object_get_ex(body, "error", &e)) {
		if (json_object_is_type(e, json_type_string))
			return json_object_get_string(e);
		if (json_object_object_get_ex(e, "message", &m) &&
		    json_object_is_type(m, json_type_string))
			return json_object_get_string(m);
	}
	return what;
}

static struct broker_lease *
broker_lease_find(struct broker_peer *p, uint32_t peerid)
{
	struct broker_lease	*l;

	TAILQ_FOREACH(l, &p->leases, peer_entry)
		if (l->peerid == peerid)
			return l;
	return NULL;
}

static void
broker_lease_destroyed(void *arg, long status, struct json_object *body,
    int64_t bytes, const char *err)
{
	char	*sid = arg;

	ndeleting--;
	if (status != 204 && status != 404)
		log_warnx("sandbox: destroying session %s: %s", sid,
		    err != NULL ? err : "unexpected status");
	free(sid);
}

/* A DELETE of session at the backend, outliving whoever asked. */
void
broker_lease_destroy_session(const char *session)
{
	char	 path[256], *sid;

	if (!sbx_session_ok(session) || sbx_session_path(path, sizeof(path),
	    session, "") == -1 || (sid = strdup(session)) == NULL)
		return;
	if (sbx_json(&broker.backend, "DELETE", path, NULL, 30,
	    broker_lease_destroyed, sid) == NULL)
		free(sid);
	else
		ndeleting++;
}

/*
 * The lease goes; its session is destroyed at the backend.  The
 * DELETE outlives the lease, which may go with its frontend.
 */
static void
broker_lease_free(struct broker_lease *l)
{
	char	 path[256], *sid;

	sbx_cancel(l->request);
	broker_output_cancel(l);
	broker_output_release(l->handle);
	if (l->grant_wait != NULL)
		event_free(l->grant_wait);
	explicit_bzero(l->grant, sizeof(l->grant));
	if (l->container[0] == '\0' && l->session[0] != '\0' &&
	    sbx_session_path(path, sizeof(path),
	    l->session, "") == 0 && (sid = strdup(l->session)) != NULL) {
		if (sbx_json(&broker.backend, "DELETE", path, NULL, 30,
		    broker_lease_destroyed, sid) == NULL)
			free(sid);
		else
			ndeleting++;
	}
	if (l->peer != NULL)
		TAILQ_REMOVE(&l->peer->leases, l, peer_entry);
	TAILQ_REMOVE(&all_leases, l, entry);
	nleases--;
	json_object_put(l->listing);
	json_object_put(l->produced);
	json_object_put(l->result);
	json_object_put(l->exec_req);
	free(l->input);
	free(l);
}

/* Every lease goes; the number of sessions still being destroyed. */
int
broker_lease_end_all(void)
{
	struct broker_lease	*l;

	while ((l = TAILQ_FIRST(&all_leases)) != NULL)
		broker_lease_free(l);
	return ndeleting;
}

void
broker_lease_peer_gone(struct broker_peer *p)
{
	struct broker_lease	*l;

	while ((l = TAILQ_FIRST(&p->leases)) != NULL)
		broker_lease_free(l);
}

/* The container's new session, for its row. */
static void
broker_lease_bind(struct broker_lease *l)
{
	struct cntr_bound	 b;

	if (l->container[0] == '\0')
		return;
	memset(&b, 0, sizeof(b));
	strlcpy(b.id, l->container, sizeof(b.id));
	strlcpy(b.session, l->session, sizeof(b.session));
	broker_output_tell(IMSG_CNTR_BOUND, &b, sizeof(b));
	log_info("container %s: session %s made", l->container, l->session);
}

static void
broker_lease_created(void *arg, long status, struct json_object *body,
    int64_t bytes, const char *err)
{
	struct broker_lease	*l = arg;
	struct json_object	*id;
	char			 msg[256];

	l->request = NULL;
	if (status == 201 && json_object_object_get_ex(body, "session_id",
	    &id) && json_object_is_type(id, json_type_string) &&
	    sbx_session_ok(json_object_get_string(id)) &&
	    strlcpy(l->session, json_object_get_string(id),
	    sizeof(l->session)) < sizeof(l->session)) {
		broker_lease_bind(l);
		broker_lease_status(l, IMSG_SBX_STATUS, 0, NULL);
		return;
	}
	l->session[0] = '\0';
	/* An id that is no id goes into no path and no log line. */
	snprintf(msg, sizeof(msg), "sandbox backend: %s",
	    status == 503 ? "at capacity" : status == 201 ?
	    "a malformed session id" : broker_lease_why(body, err,
	    "session refused"));
	log_warnx("%s (status %ld)", msg, status);
	broker_lease_status(l, IMSG_SBX_STATUS, status == 503 ? 503 : 502, msg);
}

/* Sessions held or being made for key, by every frontend. */
static int
broker_lease_count_of_key(const char *key)
{
	struct broker_lease	*l;
	int			 n = 0;

	TAILQ_FOREACH(l, &all_leases, entry)
		if (l->admitted && strcmp(l->key_id, key) == 0)
			n++;
	return n;
}

/* Is another lease running in l's container? */
static int
broker_lease_container_busy(struct broker_lease *l)
{
	struct broker_lease	*o;

	TAILQ_FOREACH(o, &all_leases, entry)
		if (o != l && o->admitted && strcmp(o->container,
		    l->container) == 0)
			return 1;
	return 0;
}

/* A refused lease holds no session, and so can reach none. */
static void
broker_lease_refuse(struct broker_lease *l, int status, const char *msg)
{
	explicit_bzero(l->session, sizeof(l->session));
	l->container[0] = '\0';
	broker_lease_status(l, IMSG_SBX_STATUS, status, msg);
}

/* A container's session lives as long as the container may. */
static struct json_object *
broker_lease_hints(struct broker_lease *l)
{
	struct json_object	*o = json_object_new_object();

	if (l->container[0] == '\0')
		return o;
	json_object_object_add(o, "idle_timeout_seconds",
	    json_object_new_int64(l->idle_seconds));
	json_object_object_add(o, "max_lifetime_seconds",
	    json_object_new_int64(l->life_seconds));
	return o;
}

/*
 * Past max-sessions-per-key a key's lease is refused at once (429),
 * not queued: the caller's SDK retries 429 on its own, and nothing a
 * tenant sends piles up here.  So is a second lease of a container
 * (409).
 */
static void
broker_lease_admit(struct broker_lease *l)
{
	struct json_object	*o;
	char			 msg[160];

	if (nleases > broker.conf->max_sessions) {
		broker_lease_refuse(l, 503, "too many code-execution sessions");
		return;
	}
	if (broker_lease_count_of_key(l->key_id) >=
	    conf_sessions_per_key(broker.conf)) {
		snprintf(msg, sizeof(msg), "this key holds %d code-execution "
		    "sessions already (max-sessions-per-key); retry shortly",
		    conf_sessions_per_key(broker.conf));
		broker_lease_refuse(l, 429, msg);
		return;
	}
	if (l->container[0] != '\0' && broker_lease_container_busy(l)) {
		snprintf(msg, sizeof(msg), "container %s is in use by another "
		    "request; retry when it is over", l->container);
		broker_lease_refuse(l, 409, msg);
		return;
	}
	l->admitted = 1;
	if (l->session[0] != '\0') {	/* the container's, made before */
		broker_lease_status(l, IMSG_SBX_STATUS, 0, NULL);
		return;
	}
	o = broker_lease_hints(l);
	l->request = sbx_json(&broker.backend, "POST", "/sessions", o, 30,
	    broker_lease_created, l);
	json_object_put(o);
	if (l->request == NULL)
		broker_lease_status(l, IMSG_SBX_STATUS, 502,
		    "sandbox call failed");
}

/* The grant l presents, taken: 1, or 0 while it is not (yet) here. */
static int
broker_lease_use_grant(struct broker_lease *l)
{
	struct cntr_grant	 g;

	if (!broker_grant_take(l->grant, l->peer->instance, &g))
		return 0;
	strlcpy(l->container, g.id, sizeof(l->container));
	strlcpy(l->session, g.session, sizeof(l->session));
	l->idle_seconds = g.idle_seconds;
	l->life_seconds = g.life_seconds;
	explicit_bzero(&g, sizeof(g));
	explicit_bzero(l->grant, sizeof(l->grant));
	return 1;
}

static void
broker_lease_grant_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct broker_lease	*l = arg;

	explicit_bzero(l->grant, sizeof(l->grant));
	log_warnx("frontend %d presented a container grant never made",
	    l->peer != NULL ? l->peer->instance : -1);
	broker_lease_refuse(l, 403, "no such container grant");
}

/* A grant came: the leases that were waiting for it go on. */
void
broker_lease_grant_arrived(void)
{
	struct broker_lease	*l;

	TAILQ_FOREACH(l, &all_leases, entry) {
		if (l->grant[0] == '\0' || l->peer == NULL ||
		    !broker_lease_use_grant(l))
			continue;
		evtimer_del(l->grant_wait);
		broker_lease_admit(l);
	}
}

static void
broker_lease_open(struct broker_peer *p, struct imsg *imsg)
{
	struct sbx_open		 req;
	struct broker_lease	*l;
	struct timeval		 tv = { GRANT_WAIT, 0 };

	memcpy(&req, imsg->data, sizeof(req));
	req.handle[sizeof(req.handle) - 1] = '\0';
	req.key_id[sizeof(req.key_id) - 1] = '\0';
	req.grant[sizeof(req.grant) - 1] = '\0';
	if (broker_lease_find(p, imsg->hdr.peerid) != NULL)
		fatalx("broker: lease %u opened twice", imsg->hdr.peerid);
	if ((l = calloc(1, sizeof(*l))) == NULL)
		fatal("calloc");
	l->peer = p;
	l->peerid = imsg->hdr.peerid;
	strlcpy(l->handle, req.handle, sizeof(l->handle));
	strlcpy(l->key_id, req.key_id, sizeof(l->key_id));
	strlcpy(l->grant, req.grant, sizeof(l->grant));
	explicit_bzero(&req, sizeof(req));
	TAILQ_INSERT_TAIL(&p->leases, l, peer_entry);
	TAILQ_INSERT_TAIL(&all_leases, l, entry);
	nleases++;
	if (l->grant[0] == '\0' || broker_lease_use_grant(l)) {
		broker_lease_admit(l);
		return;
	}
	if ((l->grant_wait = evtimer_new(child_base(),
	    broker_lease_grant_timeout, l)) == NULL)
		fatal("evtimer_new");
	evtimer_add(l->grant_wait, &tv);
}

static void
broker_lease_seeded(void *arg, long status, struct json_object *body,
    int64_t bytes, const char *err)
{
	struct broker_lease	*l = arg;
	char			 msg[256];

	l->request = NULL;
	if (status == 201) {
		broker_lease_status(l, IMSG_SBX_STATUS, 0, NULL);
		return;
	}
	if (status == SBX_TIMEDOUT)
		snprintf(msg, sizeof(msg), "the sandbox took a file of the "
		    "request for longer than transfer-timeout (%lds)",
		    broker.backend.transfer_timeout);
	else
		snprintf(msg, sizeof(msg), "sandbox refused a file (%s)",
		    status == 413 ? "too large" : broker_lease_why(body, err,
		    "refused"));
	log_warnx("session %s: %s, status %ld", l->session, msg, status);
	broker_lease_status(l, IMSG_SBX_STATUS, status == SBX_TIMEDOUT ?
	    SBX_TIMEDOUT : 502, msg);
}

static void
broker_lease_seed(struct broker_lease *l, struct imsg *imsg)
{
	struct sbx_seed	 req;
	int		 fd = imsg_get_fd(imsg);

	memcpy(&req, imsg->data, sizeof(req));
	req.name[sizeof(req.name) - 1] = '\0';
	if (l->session[0] == '\0' || l->request != NULL || req.size < 0) {
		close(fd);
		broker_lease_status(l, IMSG_SBX_STATUS, 502,
		    "no session to seed");
		return;
	}
	l->request = sbx_put(&broker.backend, l->session, req.name, fd,
	    req.size, broker_lease_seeded, l);
	if (l->request == NULL)
		broker_lease_status(l, IMSG_SBX_STATUS, 502,
		    "sandbox call failed");
}

/* Pieces of the next Execute's input. */
static void
broker_lease_data(struct broker_lease *l, struct imsg *imsg)
{
	size_t	 n = imsg->datalen;
	char	*p;

	if (l->inlen + n > SBX_JSON_MAX)
		fatalx("broker: lease %u: input too large", l->peerid);
	if ((p = realloc(l->input, l->inlen + n + 1)) == NULL)
		fatal("realloc");
	l->input = p;
	memcpy(l->input + l->inlen, imsg->data, n);
	l->inlen += n;
	l->input[l->inlen] = '\0';
}

/* Does the listing before hold path with the same size and time? */
static int
broker_lease_unchanged(struct json_object *before, struct json_object *f)
{
	struct json_object	*b, *v;
	const char		*path, *bp;
	size_t			 i, n;

	if (before == NULL || !json_object_object_get_ex(f, "path", &v))
		return 0;
	path = json_object_get_string(v);
	n = json_object_array_length(before);
	for (i = 0; i < n; i++) {
		b = json_object_array_get_idx(before, i);
		if (!json_object_object_get_ex(b, "path", &v) ||
		    (bp = json_object_get_string(v)) == NULL ||
		    strcmp(bp, path) != 0)
			continue;
		return json_object_equal(
		    json_object_object_get(b, "size_bytes"),
		    json_object_object_get(f, "size_bytes")) &&
		    json_object_equal(
		    json_object_object_get(b, "modified_at"),
		    json_object_object_get(f, "modified_at"));
	}
	return 0;
}

/* Is path named as an output in the result block? */
static int
broker_lease_named(struct json_object *block, const char *path)
{
	struct json_object	*c, *list, *f, *name;
	size_t			 i, n;

	if (!json_object_object_get_ex(block, "content", &c) ||
	    !json_object_object_get_ex(c, "content", &list) ||
	    !json_object_is_type(list, json_type_array))
		return 0;
	n = json_object_array_length(list);
	for (i = 0; i < n; i++) {
		f = json_object_array_get_idx(list, i);
		if (json_object_object_get_ex(f, "filename", &name) &&
		    json_object_is_type(name, json_type_string) &&
		    strcmp(json_object_get_string(name), path) == 0)
			return 1;
	}
	return 0;
}

/*
 * What the run produced: new or changed files, and those the result
 * names, as they are listed now; at most max-output-files of them.
 */
static struct json_object *
broker_lease_produced(struct broker_lease *l, struct json_object *after)
{
	struct json_object	*out, *f, *v;
	size_t			 i, n;
	int			 max = broker.conf->max_output_files;

	out = json_object_new_array();
	n = json_object_array_length(after);
	for (i = 0; i < n; i++) {
		f = json_object_array_get_idx(after, i);
		if (!json_object_object_get_ex(f, "path", &v) ||
		    !json_object_is_type(v, json_type_string))
			continue;
		if (broker_lease_unchanged(l->listing, f) &&
		    !broker_lease_named(l->result, json_object_get_string(v)))
			continue;
		if ((int)json_object_array_length(out) >= max) {
			log_info("session %s: outputs past %d not kept",
			    l->session, max);
			break;
		}
		json_object_array_add(out, json_object_get(f));
	}
	return out;
}

/* The run's result, what it produced, and what of that was stored. */
static void
broker_lease_exec_done(struct broker_lease *l, struct json_object *stored)
{
	struct json_object	*o;

	o = json_object_new_object();
	json_object_object_add(o, "result_block", json_object_get(l->result));
	json_object_object_add(o, "produced", l->produced);
	l->produced = NULL;
	json_object_object_add(o, "outputs", json_object_get(
	    json_object_object_get(stored, "stored")));
	json_object_object_add(o, "skipped", json_object_get(
	    json_object_object_get(stored, "skipped")));
	broker_lease_send_json(l, o, IMSG_SBX_RESULT, 0, NULL);
	json_object_put(o);
	json_object_put(l->result);
	l->result = NULL;
}

static void
broker_lease_fail(struct broker_lease *l, const char *what, long status,
    const char *err)
{
	char	 msg[256];

	snprintf(msg, sizeof(msg), "sandbox %s failed (%s)", what,
	    err != NULL ? err : "unexpected answer");
	log_warnx("session %s: %s, status %ld", l->session, msg, status);
	json_object_put(l->result);
	l->result = NULL;
	broker_lease_status(l, IMSG_SBX_RESULT, 502, msg);
}

static int
broker_lease_files(struct json_object *body, struct json_object **files)
{
	return json_object_object_get_ex(body, "files", files) &&
	    json_object_is_type(*files, json_type_array);
}

static void
broker_lease_listed(void *arg, long status, struct json_object *body,
    int64_t bytes, const char *err)
{
	struct broker_lease	*l = arg;
	struct json_object	*files;

	l->request = NULL;
	if (status != 200 || !broker_lease_files(body, &files)) {
		broker_lease_fail(l, "listing", status,
		    broker_lease_why(body, err, NULL));
		return;
	}
	if (l->result == NULL) {	/* the baseline, before the first run */
		l->listing = json_object_get(files);
		broker_lease_exec_start(l);
		return;
	}
	l->produced = broker_lease_produced(l, files);
	broker_output_store(l, l->produced, broker_lease_exec_done);
	json_object_put(l->listing);
	l->listing = json_object_get(files);
}

static void
broker_lease_exec_list(struct broker_lease *l)
{
	char	 path[256];

	if (sbx_session_path(path, sizeof(path), l->session,
	    "/files/list?path=.") == -1 ||
	    (l->request = sbx_json(&broker.backend, "GET", path, NULL, 30,
	    broker_lease_listed, l)) == NULL)
		broker_lease_fail(l, "listing", 0, "call failed");
}

static void
broker_lease_executed(void *arg, long status, struct json_object *body,
    int64_t bytes, const char *err)
{
	struct broker_lease	*l = arg;
	struct json_object	*block;

	l->request = NULL;
	if (status != 200 || !json_object_object_get_ex(body, "result_block",
	    &block) || !json_object_is_type(block, json_type_object)) {
		broker_lease_fail(l, "execution", status,
		    broker_lease_why(body, err, NULL));
		return;
	}
	l->result = json_object_get(block);
	broker_lease_exec_list(l);
}

static void
broker_lease_exec_start(struct broker_lease *l)
{
	struct json_object	*req, *in = l->exec_req;
	char			 path[256];
	int			 timeout = broker.conf->exec_timeout;

	l->exec_req = NULL;
	req = json_object_new_object();
	json_object_object_add(req, "tool", json_object_get(
	    json_object_object_get(in, "tool")));
	json_object_object_add(req, "input", json_object_get(
	    json_object_object_get(in, "input")));
	if (json_object_object_get(in, "tool_use_id") != NULL)
		json_object_object_add(req, "tool_use_id", json_object_get(
		    json_object_object_get(in, "tool_use_id")));
	json_object_object_add(req, "timeout_seconds",
	    json_object_new_int(timeout));
	json_object_put(in);
	/* The backend has the whole budget; the call a little more. */
	l->request = sbx_session_path(path, sizeof(path), l->session,
	    "/exec") == -1 ? NULL : sbx_json(&broker.backend, "POST", path,
	    req, timeout + 10, broker_lease_executed, l);
	json_object_put(req);
	if (l->request == NULL)
		broker_lease_fail(l, "execution", 0, "call failed");
}

static void
broker_lease_exec(struct broker_lease *l)
{
	struct json_object	*in;

	in = l->input != NULL ? json_tokener_parse(l->input) : NULL;
	free(l->input);
	l->input = NULL;
	l->inlen = 0;
	if (l->session[0] == '\0' || l->request != NULL || l->output != NULL ||
	    in == NULL || !json_object_is_type(in, json_type_object) ||
	    !json_object_is_type(json_object_object_get(in, "tool"),
	    json_type_string)) {
		json_object_put(in);
		broker_lease_status(l, IMSG_SBX_RESULT, 502,
		    "no session, or a bad execution request");
		return;
	}
	l->exec_req = in;
	if (l->listing == NULL)
		broker_lease_exec_list(l);	/* the baseline first */
	else
		broker_lease_exec_start(l);
}

void
broker_dispatch_frontend(struct broker_peer *p, struct imsg *imsg)
{
	struct broker_lease	*l;

	if (imsg->hdr.type == IMSG_SBX_OPEN) {
		broker_lease_open(p, imsg);
		return;
	}
	if ((l = broker_lease_find(p, imsg->hdr.peerid)) == NULL) {
		/* A close may cross the open's failure: nothing to do. */
		if (imsg->hdr.type == IMSG_SBX_CLOSE)
			return;
		fatalx("broker: no lease %u", imsg->hdr.peerid);
	}
	switch (imsg->hdr.type) {
	case IMSG_SBX_SEED:
		broker_lease_seed(l, imsg);
		break;
	case IMSG_SBX_DATA:
		broker_lease_data(l, imsg);
		break;
	case IMSG_SBX_EXEC:
		broker_lease_exec(l);
		break;
	case IMSG_SBX_CLOSE:
		broker_lease_free(l);
		break;
	}
}
