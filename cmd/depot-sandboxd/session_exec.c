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
 * session_exec.c: a session's calls: their queue, the walk of the
 * workspace before and after each, the runner's reply, the wall-clock
 * timeout and the quota's checks while it runs, and the freeze after
 * it (runner.c: the interpreter process; session.c: the sessions).
 *
 * Calls on a session run one at a time in arrival order.  The
 * wall-clock timeout of a call is enforced here by killing the jail,
 * which takes every process in it along (the jail's pid 1 dies with
 * bwrap, and the kernel then kills the rest of its pid namespace); a
 * fresh runner is started at once.  Between calls the session's cgroup
 * is frozen (runner.c), and the walk that ends a call, and checks its
 * quota, is made after the freeze.  runner.c calls back into this file
 * only through the session's runner_calls, set by session_exec_setup.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "log.h"
#include "session.h"

#define SESSION_MAX_QUEUE	16
#define RUNNER_MAX_REPLY	(32 * 1024 * 1024)
#define QUOTA_CHECK_SEC		1

static void	session_exec_start_next(struct session *);
static void	session_exec_finish(struct session *, struct json_object *reply,
		    int status, const char *error);
static void	session_exec_complete(struct exec_call *,
		    struct ws_listing *after);
static void	session_exec_listed(struct ws_listing *, void *);
static void	session_exec_listed_after(struct ws_listing *, void *);
static void	session_exec_channel_read(struct bufferevent *, void *);
static void	session_exec_channel_event(struct bufferevent *, short, void *);
static void	session_exec_paused(struct session *, int);

/* What runner.c calls back, up the stack. */
static const struct runner_calls session_exec_runner_calls = {
	session_exec_channel_read,
	session_exec_channel_event,
	session_exec_paused,
};

static struct json_object *
session_exec_failed_reply(const char *stderr_text)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "stdout", json_object_new_string(""));
	json_object_object_add(o, "stderr",
	    json_object_new_string(stderr_text));
	json_object_object_add(o, "return_code", json_object_new_int(-1));
	return o;
}

/*
 * The call the runner is at work on, if any: not one whose workspace is
 * still being listed, before or after.
 */
static struct exec_call *
session_exec_running(struct session *s)
{
	if (s->running == NULL || s->running->phase != CALL_RUNNING)
		return NULL;
	return s->running;
}

/* A reply to another call (or none) is dropped; a malformed one is not. */
static int
session_exec_reply_matches(struct json_object *reply, int64_t seq)
{
	struct json_object	*v;

	if (reply == NULL || !json_object_is_type(reply, json_type_object))
		return 1;
	return json_object_object_get_ex(reply, "seq", &v) &&
	    json_object_is_type(v, json_type_int) &&
	    json_object_get_int64(v) == seq;
}

static void
session_exec_channel_read(struct bufferevent *bev, void *arg)
{
	struct session		*s = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	struct json_object	*reply;
	char			*line;
	size_t			 len;

	while ((line = evbuffer_readln(in, &len, EVBUFFER_EOL_LF)) != NULL) {
		reply = json_tokener_parse(line);
		free(line);
		if (session_exec_running(s) == NULL ||
		    !session_exec_reply_matches(reply, s->running->seq)) {
			/* Code can write to the channel; nobody asked. */
			log_debug("%s: a reply nobody asked for", s->id);
			json_object_put(reply);
			continue;
		}
		if (reply == NULL ||
		    !json_object_is_type(reply, json_type_object)) {
			json_object_put(reply);
			reply = session_exec_failed_reply("the interpreter "
			    "sent a malformed reply\n");
		}
		session_exec_finish(s, reply, 200, NULL);
		if (s->bev == NULL)
			return;
	}
	if (evbuffer_get_length(in) > RUNNER_MAX_REPLY) {
		runner_restart(s, "reply too long");
		if (session_exec_running(s) != NULL)
			session_exec_finish(s, session_exec_failed_reply("the "
			    "interpreter's reply was too long; it was "
			    "restarted\n"), 200, NULL);
	}
}

static void
session_exec_channel_event(struct bufferevent *bev, short what, void *arg)
{
	struct session	*s = arg;

	runner_restart(s, (what & BEV_EVENT_EOF) ? "it exited" : "i/o error");
	if (session_exec_running(s) != NULL)
		session_exec_finish(s, session_exec_failed_reply("The "
		    "interpreter exited unexpectedly (killed, or out of memory "
		    "or processes). It was restarted; variables and imports "
		    "are lost.\n"), 200, NULL);
}

static void
session_exec_timeout(int fd, short ev, void *arg)
{
	struct session	*s = arg;
	char		 msg[256];
	int		 timeout;

	if (session_exec_running(s) == NULL)
		return;
	timeout = s->running->timeout;
	runner_restart(s, "timeout");
	snprintf(msg, sizeof(msg), "Execution timed out after %d s and was "
	    "killed. The interpreter was restarted; variables and imports "
	    "are lost.\n", timeout);
	session_exec_finish(s, session_exec_failed_reply(msg), 200, NULL);
}

static void
session_exec_quota_message(const struct ws_listing *l, char *buf, size_t len)
{
	snprintf(buf, len, "The workspace is over its quota (%lld%s entries "
	    "of %lld, %lld bytes of %lld): remove files before writing "
	    "more.\n", (long long)l->nentries, l->cut ? "+" : "",
	    (long long)sbx_conf->limits.ws_entries, (long long)l->bytes,
	    (long long)sbx_conf->limits.ws_bytes);
}

/* Adds msg to the end of the call's stderr. */
static void
session_exec_stderr_note(struct json_object *reply, const char *msg)
{
	struct json_object	*v;
	char			*text;

	if (reply == NULL || !json_object_object_get_ex(reply, "stderr", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    asprintf(&text, "%s%s", json_object_get_string(v), msg) == -1)
		return;
	json_object_object_add(reply, "stderr", json_object_new_string(text));
	free(text);
}

/* Says so on the call's stderr. */
static void
session_exec_quota_note(struct session *s, struct json_object *reply,
    const struct ws_listing *l)
{
	char	 msg[256];

	session_exec_quota_message(l, msg, sizeof(msg));
	log_info("%s: %s", s->id, msg);
	session_exec_stderr_note(reply, msg);
}

/*
 * While a call runs, its workspace is walked every second (off the
 * loop): a call that grows a workspace past its quota is stopped like
 * one that times out.  One that only shrinks an over-quota workspace
 * (cleaning up) runs on.
 */
static void
session_exec_quota_checked(struct ws_listing *now, void *arg)
{
	struct exec_call	*c = arg;
	struct session		*s = c->s;
	struct timeval		 tv = { QUOTA_CHECK_SEC, 0 };
	char			 msg[320];
	int			 grew;

	c->quota_walker = NULL;
	if (now == NULL) {
		evtimer_add(s->quota_timer, &tv);
		return;
	}
	grew = !c->listed || now->nentries > c->before.nentries ||
	    now->bytes > c->before.bytes;
	if (!ws_over_quota(now) || !grew) {
		ws_listing_free(now);
		evtimer_add(s->quota_timer, &tv);
		return;
	}
	session_exec_quota_message(now, msg, sizeof(msg));
	ws_listing_free(now);
	strlcat(msg, "The call was stopped and the interpreter restarted; "
	    "variables and imports are lost.\n", sizeof(msg));
	runner_restart(s, "workspace quota");
	session_exec_finish(s, session_exec_failed_reply(msg), 200, NULL);
}

static void
session_exec_quota_check(int fd, short ev, void *arg)
{
	struct session		*s = arg;
	struct exec_call	*c = session_exec_running(s);

	if (c != NULL && c->quota_walker == NULL)
		c->quota_walker = ws_walker_start(session_base, s->rootfd,
		    session_exec_quota_checked, c);
}

static void
session_exec_call_free(struct exec_call *c)
{
	/* A walk still running frees itself; it is only not waited for. */
	ws_walker_cancel(c->walker);
	ws_walker_cancel(c->quota_walker);
	if (c->listed)
		ws_listing_free(&c->before);
	json_object_put(c->reply);
	json_object_put(c->request);
	free(c);
}

/*
 * The call is over: the session is frozen (runner.c), so that what the
 * code left running writes nothing more; then what it produced is found
 * by a walk of its workspace (off the loop), which is also the quota's
 * check until the next call, and the reply goes when that is done.
 */
static void
session_exec_finish(struct session *s, struct json_object *reply, int status,
    const char *error)
{
	struct exec_call	*c = s->running;
	int			 rv;

	evtimer_del(s->timer);
	evtimer_del(s->quota_timer);
	ws_walker_cancel(c->quota_walker);
	c->quota_walker = NULL;
	c->reply = reply;
	c->status = status;
	c->error = error;
	c->elapsed_ms = (now_usec() - c->start) / 1000;
	c->phase = CALL_PAUSING;
	if ((rv = runner_pause(s)) != 0)
		session_exec_paused(s, rv);
}

static void
session_exec_paused(struct session *s, int rv)
{
	struct exec_call	*c = s->running;

	if (c == NULL || c->phase != CALL_PAUSING)
		return;
	if (rv == -1) {
		/* What cannot be stopped goes, threads and all. */
		runner_restart(s, "it could not be frozen after the call");
		session_exec_stderr_note(c->reply, "The interpreter could "
		    "not be paused after the call and was restarted; variables "
		    "and imports are lost.\n");
	}
	if (c->status == 200 && c->listed) {
		c->phase = CALL_LISTING_AFTER;
		c->walker = ws_walker_start(session_base, s->rootfd,
		    session_exec_listed_after, c);
	} else
		session_exec_complete(c, NULL);
}

static void
session_exec_listed_after(struct ws_listing *after, void *arg)
{
	struct exec_call	*c = arg;

	c->walker = NULL;
	session_exec_complete(c, after);
}

static void
session_exec_complete(struct exec_call *c, struct ws_listing *after)
{
	struct session		*s = c->s;
	struct exec_result	 r;

	s->running = NULL;
	memset(&r, 0, sizeof(r));
	r.status = c->status;
	r.error = c->error;
	r.reply = c->reply;
	c->reply = NULL;
	r.elapsed_ms = c->elapsed_ms;
	if (after != NULL) {
		r.produced = ws_produced(&c->before, after);
		if (ws_over_quota(after))
			session_exec_quota_note(s, r.reply, after);
		ws_listing_free(after);
	} else
		r.produced = json_object_new_array();
	s->last_activity = now_usec();
	if (!c->cancelled)
		c->done(&r, c->arg);
	json_object_put(r.reply);
	json_object_put(r.produced);
	session_exec_call_free(c);
	session_exec_start_next(s);
}

/*
 * One request line to the runner.  Written at once when nothing waits
 * before it (the usual case): going through the loop first would cost
 * every Execute a round of epoll calls.
 */
static void
session_exec_send(struct session *s, const char *line)
{
	struct evbuffer	*out = bufferevent_get_output(s->bev);
	char		*buf;
	size_t		 len;
	ssize_t		 n = 0;

	if (asprintf(&buf, "%s\n", line) == -1)
		fatal("asprintf");
	len = strlen(buf);
	if (evbuffer_get_length(out) == 0)
		n = write(bufferevent_getfd(s->bev), buf, len);
	if (n < 0)
		n = 0;
	if ((size_t)n < len)
		bufferevent_write(s->bev, buf + n, len - n);
	free(buf);
}

/*
 * The workspace as it was before the call is listed (off the loop)
 * before the runner is given the call.
 */
static void
session_exec_start_next(struct session *s)
{
	struct exec_call	*c;

	while (s->running == NULL && (c = TAILQ_FIRST(&s->calls)) != NULL) {
		TAILQ_REMOVE(&s->calls, c, entry);
		if (c->cancelled) {
			session_exec_call_free(c);
			continue;
		}
		s->running = c;
		c->start = now_usec();
		c->phase = CALL_LISTING;
		c->walker = ws_walker_start(session_base, s->rootfd,
		    session_exec_listed, c);
	}
}

static void
session_exec_listed(struct ws_listing *before, void *arg)
{
	struct exec_call	*c = arg;
	struct session		*s = c->s;
	struct timeval		 tv;
	const char		*line;

	c->walker = NULL;
	if (before != NULL) {
		c->before = *before;
		memset(before, 0, sizeof(*before));
		c->listed = 1;
	}
	c->phase = CALL_RUNNING;
	/* Before a new runner too: one started frozen would stay so. */
	runner_resume(s);
	if (s->bev == NULL && runner_spawn(s) == -1) {
		session_exec_finish(s, NULL, 503, "the interpreter could not "
		    "be started");
		return;
	}
	c->seq = ++s->seq;
	json_object_object_add(c->request, "seq",
	    json_object_new_int64(c->seq));
	line = json_object_to_json_string_ext(c->request,
	    JSON_C_TO_STRING_PLAIN);
	session_exec_send(s, line);
	tv.tv_sec = c->timeout;
	tv.tv_usec = 0;
	evtimer_add(s->timer, &tv);
	tv.tv_sec = QUOTA_CHECK_SEC;
	evtimer_add(s->quota_timer, &tv);
}

void *
session_exec(struct session *s, struct json_object *request, int timeout,
    exec_done_cb done, void *arg)
{
	struct exec_call	*c;
	struct exec_result	 r;
	int			 queued = 0;

	TAILQ_FOREACH(c, &s->calls, entry)
		queued++;
	if (queued >= SESSION_MAX_QUEUE) {
		memset(&r, 0, sizeof(r));
		r.status = 503;
		r.error = "too many calls queued on this session";
		done(&r, arg);
		return NULL;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL)
		fatal("calloc");
	c->s = s;
	c->request = json_object_get(request);
	c->timeout = timeout;
	c->done = done;
	c->arg = arg;
	TAILQ_INSERT_TAIL(&s->calls, c, entry);
	/* As session_touch (session.c, above this file) does. */
	s->last_activity = now_usec();
	session_exec_start_next(s);
	return c;
}

void
session_exec_cancel(void *handle)
{
	struct exec_call	*c = handle;

	if (c != NULL)
		c->cancelled = 1;
}

void
session_exec_setup(struct session *s)
{
	s->runner_calls = &session_exec_runner_calls;
	if ((s->timer = evtimer_new(session_base, session_exec_timeout,
	    s)) == NULL ||
	    (s->quota_timer = evtimer_new(session_base,
	    session_exec_quota_check, s)) == NULL)
		fatalx("evtimer_new");
}

void
session_exec_drop_all(struct session *s)
{
	struct exec_call	*c;
	struct exec_result	 r;

	memset(&r, 0, sizeof(r));
	r.status = 404;
	r.error = "the session was destroyed";
	if (s->running != NULL) {
		TAILQ_INSERT_HEAD(&s->calls, s->running, entry);
		s->running = NULL;
	}
	while ((c = TAILQ_FIRST(&s->calls)) != NULL) {
		TAILQ_REMOVE(&s->calls, c, entry);
		if (!c->cancelled)
			c->done(&r, c->arg);
		session_exec_call_free(c);
	}
}
