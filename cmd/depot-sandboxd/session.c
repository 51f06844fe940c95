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
 * session.c: sessions, their calls and the reaper (runner.c: their
 * interpreter processes).
 *
 * A session is a workspace directory and one long-lived runner (python3
 * runner.py in a bubblewrap jail) reached over a socketpair carrying one
 * JSON line per request and per reply.  Calls on a session run one at a
 * time in arrival order.  The wall-clock timeout of a call is enforced
 * here by killing the jail, which takes every process in it along (the
 * jail's pid 1 dies with bwrap, and the kernel then kills the rest of
 * its pid namespace); a fresh runner is started at once.  Between
 * calls the session's cgroup is frozen (runner.c), and the walk that
 * ends a call, and checks its quota, is made after the freeze.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <signal.h>
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
#define BURIAL_TIMEOUT_SEC	10

static struct session_list	 sessions = TAILQ_HEAD_INITIALIZER(sessions);
static int			 nsessions;
struct event_base		*session_base;
static struct event		*reaper_ev;
static struct event		*sigchld_ev;
static struct event		*spare_ev;
static struct session		*spare;
static int			 shutting_down;
static int			 nburials;

static void	exec_start_next(struct session *);
static void	exec_finish(struct session *, struct json_object *reply,
		    int status, const char *error);
static void	exec_complete(struct exec_call *, struct ws_listing *after);
static void	exec_listed(struct ws_listing *, void *);
static void	exec_listed_after(struct ws_listing *, void *);
static void	quota_check(int, short, void *);
static void	session_free(struct session *);
static void	session_bury(struct session *);

static struct json_object *
failed_reply(const char *stderr_text)
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
call_running(struct session *s)
{
	if (s->running == NULL || s->running->phase != CALL_RUNNING)
		return NULL;
	return s->running;
}

/* A reply to another call (or none) is dropped; a malformed one is not. */
static int
reply_matches(struct json_object *reply, int64_t seq)
{
	struct json_object	*v;

	if (reply == NULL || !json_object_is_type(reply, json_type_object))
		return 1;
	return json_object_object_get_ex(reply, "seq", &v) &&
	    json_object_is_type(v, json_type_int) &&
	    json_object_get_int64(v) == seq;
}

void
runner_read(struct bufferevent *bev, void *arg)
{
	struct session		*s = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	struct json_object	*reply;
	char			*line;
	size_t			 len;

	while ((line = evbuffer_readln(in, &len, EVBUFFER_EOL_LF)) != NULL) {
		reply = json_tokener_parse(line);
		free(line);
		if (call_running(s) == NULL || !reply_matches(reply,
		    s->running->seq)) {
			/* Code can write to the channel; nobody asked. */
			log_debug("%s: a reply nobody asked for", s->id);
			json_object_put(reply);
			continue;
		}
		if (reply == NULL ||
		    !json_object_is_type(reply, json_type_object)) {
			json_object_put(reply);
			reply = failed_reply("the interpreter sent a "
			    "malformed reply\n");
		}
		exec_finish(s, reply, 200, NULL);
		if (s->bev == NULL)
			return;
	}
	if (evbuffer_get_length(in) > RUNNER_MAX_REPLY) {
		runner_restart(s, "reply too long");
		if (call_running(s) != NULL)
			exec_finish(s, failed_reply("the interpreter's reply "
			    "was too long; it was restarted\n"), 200, NULL);
	}
}

void
runner_event(struct bufferevent *bev, short what, void *arg)
{
	struct session	*s = arg;

	runner_restart(s, (what & BEV_EVENT_EOF) ? "it exited" : "i/o error");
	if (call_running(s) != NULL)
		exec_finish(s, failed_reply("The interpreter exited "
		    "unexpectedly (killed, or out of memory or processes). "
		    "It was restarted; variables and imports are lost.\n"),
		    200, NULL);
}

static void
exec_timeout(int fd, short ev, void *arg)
{
	struct session	*s = arg;
	char		 msg[256];
	int		 timeout;

	if (call_running(s) == NULL)
		return;
	timeout = s->running->timeout;
	runner_restart(s, "timeout");
	snprintf(msg, sizeof(msg), "Execution timed out after %d s and was "
	    "killed. The interpreter was restarted; variables and imports "
	    "are lost.\n", timeout);
	exec_finish(s, failed_reply(msg), 200, NULL);
}

static void
quota_message(const struct ws_listing *l, char *buf, size_t len)
{
	snprintf(buf, len, "The workspace is over its quota (%lld%s entries "
	    "of %lld, %lld bytes of %lld): remove files before writing "
	    "more.\n", (long long)l->nentries, l->cut ? "+" : "",
	    (long long)sbx_conf->limits.ws_entries, (long long)l->bytes,
	    (long long)sbx_conf->limits.ws_bytes);
}

/* Adds msg to the end of the call's stderr. */
static void
stderr_note(struct json_object *reply, const char *msg)
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
quota_note(struct session *s, struct json_object *reply,
    const struct ws_listing *l)
{
	char	 msg[256];

	quota_message(l, msg, sizeof(msg));
	log_info("%s: %s", s->id, msg);
	stderr_note(reply, msg);
}

/*
 * While a call runs, its workspace is walked every second (off the
 * loop): a call that grows a workspace past its quota is stopped like
 * one that times out.  One that only shrinks an over-quota workspace
 * (cleaning up) runs on.
 */
static void
quota_checked(struct ws_listing *now, void *arg)
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
	quota_message(now, msg, sizeof(msg));
	ws_listing_free(now);
	strlcat(msg, "The call was stopped and the interpreter restarted; "
	    "variables and imports are lost.\n", sizeof(msg));
	runner_restart(s, "workspace quota");
	exec_finish(s, failed_reply(msg), 200, NULL);
}

static void
quota_check(int fd, short ev, void *arg)
{
	struct session		*s = arg;
	struct exec_call	*c = call_running(s);

	if (c != NULL && c->quota_walker == NULL)
		c->quota_walker = ws_walker_start(session_base, s->rootfd,
		    quota_checked, c);
}

static void
exec_call_free(struct exec_call *c)
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
exec_finish(struct session *s, struct json_object *reply, int status,
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
		exec_paused(s, rv);
}

void
exec_paused(struct session *s, int rv)
{
	struct exec_call	*c = s->running;

	if (c == NULL || c->phase != CALL_PAUSING)
		return;
	if (rv == -1) {
		/* What cannot be stopped goes, threads and all. */
		runner_restart(s, "it could not be frozen after the call");
		stderr_note(c->reply, "The interpreter could not be paused "
		    "after the call and was restarted; variables and imports "
		    "are lost.\n");
	}
	if (c->status == 200 && c->listed) {
		c->phase = CALL_LISTING_AFTER;
		c->walker = ws_walker_start(session_base, s->rootfd,
		    exec_listed_after, c);
	} else
		exec_complete(c, NULL);
}

static void
exec_listed_after(struct ws_listing *after, void *arg)
{
	struct exec_call	*c = arg;

	c->walker = NULL;
	exec_complete(c, after);
}

static void
exec_complete(struct exec_call *c, struct ws_listing *after)
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
			quota_note(s, r.reply, after);
		ws_listing_free(after);
	} else
		r.produced = json_object_new_array();
	s->last_activity = now_usec();
	if (!c->cancelled)
		c->done(&r, c->arg);
	json_object_put(r.reply);
	json_object_put(r.produced);
	exec_call_free(c);
	exec_start_next(s);
}

/*
 * One request line to the runner.  Written at once when nothing waits
 * before it (the usual case): going through the loop first would cost
 * every Execute a round of epoll calls.
 */
static void
runner_send(struct session *s, const char *line)
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
exec_start_next(struct session *s)
{
	struct exec_call	*c;

	while (s->running == NULL && (c = TAILQ_FIRST(&s->calls)) != NULL) {
		TAILQ_REMOVE(&s->calls, c, entry);
		if (c->cancelled) {
			exec_call_free(c);
			continue;
		}
		s->running = c;
		c->start = now_usec();
		c->phase = CALL_LISTING;
		c->walker = ws_walker_start(session_base, s->rootfd,
		    exec_listed, c);
	}
}

static void
exec_listed(struct ws_listing *before, void *arg)
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
		exec_finish(s, NULL, 503, "the interpreter could not "
		    "be started");
		return;
	}
	c->seq = ++s->seq;
	json_object_object_add(c->request, "seq",
	    json_object_new_int64(c->seq));
	line = json_object_to_json_string_ext(c->request,
	    JSON_C_TO_STRING_PLAIN);
	runner_send(s, line);
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
	session_touch(s);
	exec_start_next(s);
	return c;
}

void
session_exec_cancel(void *handle)
{
	struct exec_call	*c = handle;

	if (c != NULL)
		c->cancelled = 1;
}

/* A workspace and a running interpreter, not yet anyone's session. */
static struct session *
session_new(const char **why)
{
	struct session	*s;
	int		 n;

	if ((s = calloc(1, sizeof(*s))) == NULL) {
		*why = "out of memory";
		return NULL;
	}
	id_new(s->id, sizeof(s->id), SBX_SESSION_ID_PREFIX);
	TAILQ_INIT(&s->calls);
	s->info_fd = s->jail_pidfd = -1;
	n = snprintf(s->path, sizeof(s->path), "%s/sessions/%s",
	    sbx_conf->workdir, s->id);
	if (n < 0 || (size_t)n >= sizeof(s->path)) {
		*why = "workspace path too long";
		free(s);
		return NULL;
	}
	if (mkdirat(sbx_conf->sessions_fd, s->id, 0700) == -1 ||
	    (s->rootfd = openat(sbx_conf->sessions_fd, s->id,
	    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		log_warn("%s: workspace", s->id);
		*why = "cannot create the workspace";
		free(s);
		return NULL;
	}
	if ((s->timer = evtimer_new(session_base, exec_timeout, s)) == NULL ||
	    (s->quota_timer = evtimer_new(session_base, quota_check, s)) ==
	    NULL)
		fatalx("evtimer_new");
	if (cgroup_session_create(s->id) == -1) {
		*why = "cannot set the session's resource limits";
		session_free(s);
		return NULL;
	}
	if (runner_spawn(s) == -1) {
		*why = "cannot start the interpreter";
		session_free(s);
		return NULL;
	}
	return s;
}

/*
 * One spare jail is kept started, so that CreateSession does not wait
 * for bwrap and python3 to come up: the cost of a cold session moves
 * off the caller's path.  It is refilled after the reply has gone.
 */
static void
spare_fill(int fd, short ev, void *arg)
{
	const char	*why;

	if (spare != NULL || shutting_down ||
	    nsessions >= sbx_conf->limits.max_sessions)
		return;
	if ((spare = session_new(&why)) == NULL)
		log_warnx("spare session: %s", why);
}

static void
spare_schedule(void)
{
	struct timeval	 tv = { 0, 0 };

	if (!shutting_down)
		evtimer_add(spare_ev, &tv);
}

struct session *
session_create(int idle, int life, const char **why)
{
	struct session	*s;

	if (spare != NULL) {
		s = spare;
		spare = NULL;
	} else if ((s = session_new(why)) == NULL)
		return NULL;
	s->idle = idle;
	s->life = life;
	s->created = s->last_activity = now_usec();
	TAILQ_INSERT_TAIL(&sessions, s, entry);
	nsessions++;
	spare_schedule();
	return s;
}

void
session_destroy(struct session *s, const char *why)
{
	struct exec_call	*c;
	struct exec_result	 r;

	if (s == spare)
		spare = NULL;
	else {
		TAILQ_REMOVE(&sessions, s, entry);
		nsessions--;
		spare_schedule();
	}
	runner_kill(s);
	evtimer_del(s->timer);
	evtimer_del(s->quota_timer);
	if (s->pause_timer != NULL)
		evtimer_del(s->pause_timer);
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
		exec_call_free(c);
	}
	log_info("%s: destroyed (%s)", s->id, why);
	session_bury(s);
}

/* The jail is gone, or given up on: its workspace and groups go. */
static void
session_free(struct session *s)
{
	runner_forget(s);
	if (s->burial != NULL) {
		event_free(s->burial);
		nburials--;
	}
	event_free(s->timer);
	event_free(s->quota_timer);
	if (s->pause_timer != NULL)
		event_free(s->pause_timer);
	close(s->rootfd);
	cgroup_session_kill(s->id);
	if (ws_remove_tree(sbx_conf->sessions_fd, s->id) == -1)
		log_warn("%s: removing the workspace", s->id);
	cgroup_session_remove(s->id);
	free(s);
}

static void
session_buried(int fd, short ev, void *arg)
{
	struct session	*s = arg;

	if (ev & EV_TIMEOUT)
		log_warnx("%s: the jail's processes outlived %d s; removing "
		    "the workspace anyway", s->id, BURIAL_TIMEOUT_SEC);
	session_free(s);
}

/*
 * The workspace is removed only once every process of the jail is
 * gone: one still dying could otherwise swap a directory for a
 * symbolic link under the removal.  bwrap is dead already; its jail's
 * pid 1 is waited for on its pidfd, without blocking the loop.
 */
static void
session_bury(struct session *s)
{
	struct timeval	 tv = { BURIAL_TIMEOUT_SEC, 0 };
	struct pollfd	 pfd;

	runner_kill(s);
	evtimer_del(s->timer);
	evtimer_del(s->quota_timer);
	if (s->pause_timer != NULL)
		evtimer_del(s->pause_timer);
	/* Killed before its info was read: it is written, or never. */
	while (s->jail_pidfd == -1 && s->info_fd != -1) {
		pfd.fd = s->info_fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 1000) != 1)
			break;
		runner_info(s->info_fd, EV_READ, s);
	}
	runner_info_close(s);
	/* Whatever escaped the pid namespace's end is in the group. */
	cgroup_session_kill(s->id);
	if (s->jail_pidfd == -1) {
		session_free(s);
		return;
	}
	s->burial = event_new(session_base, s->jail_pidfd, EV_READ,
	    session_buried, s);
	if (s->burial == NULL || event_add(s->burial, &tv) == -1)
		fatalx("burial event");
	nburials++;
}

int
session_burials(void)
{
	return nburials;
}

void
session_destroy_all(void)
{
	struct session	*s;

	shutting_down = 1;
	evtimer_del(spare_ev);
	if (spare != NULL)
		session_destroy(spare, "shutdown");
	while ((s = TAILQ_FIRST(&sessions)) != NULL)
		session_destroy(s, "shutdown");
}

struct session *
session_find(const char *id)
{
	struct session	*s;

	TAILQ_FOREACH(s, &sessions, entry)
		if (strcmp(s->id, id) == 0)
			return s;
	return NULL;
}

int
session_count(void)
{
	return nsessions;
}

void
session_touch(struct session *s)
{
	s->last_activity = now_usec();
}

const char *
session_id(const struct session *s)
{
	return s->id;
}

int
session_rootfd(const struct session *s)
{
	return s->rootfd;
}

/* Protocol v1 times: POSIX seconds with a fraction, as a JSON number. */
struct json_object *
json_time(int64_t usec)
{
	char	 text[32];

	snprintf(text, sizeof(text), "%lld.%06lld",
	    (long long)(usec / 1000000), (long long)(usec % 1000000));
	/* The text is what is sent; the double is json-c's own copy. */
	return json_object_new_double_s((double)usec / 1e6, text);
}

struct json_object *
session_describe(const struct session *s)
{
	struct json_object	*o = json_object_new_object();

	json_object_object_add(o, "session_id", json_object_new_string(s->id));
	json_object_object_add(o, "idle_timeout_seconds",
	    json_object_new_int(s->idle));
	json_object_object_add(o, "max_lifetime_seconds",
	    json_object_new_int(s->life));
	json_object_object_add(o, "created_at", json_time(s->created));
	json_object_object_add(o, "last_activity_at",
	    json_time(s->last_activity));
	return o;
}

static void
session_reap(int fd, short ev, void *arg)
{
	struct session	*s, *next;
	int64_t		 now = now_usec();

	for (s = TAILQ_FIRST(&sessions); s != NULL; s = next) {
		next = TAILQ_NEXT(s, entry);
		if (now - s->created >= (int64_t)s->life * 1000000)
			session_destroy(s, "maximum lifetime reached");
		else if (s->running == NULL && TAILQ_EMPTY(&s->calls) &&
		    now - s->last_activity >= (int64_t)s->idle * 1000000)
			session_destroy(s, "idle");
	}
}

static void
session_sigchld(int sig, short ev, void *arg)
{
	struct session	*s;
	pid_t		 pid;

	/*
	 * Runners that died on their own are noticed on their socket;
	 * here they are only reaped, and forgotten so that a recycled
	 * pid is never signalled.
	 */
	while ((pid = waitpid(-1, NULL, WNOHANG)) > 0) {
		TAILQ_FOREACH(s, &sessions, entry)
			if (s->pid == pid)
				s->pid = 0;
		if (spare != NULL && spare->pid == pid)
			spare->pid = 0;
	}
}

void
session_init(struct event_base *base)
{
	struct timeval	 tv = { 1, 0 };

	session_base = base;
	reaper_ev = event_new(base, -1, EV_PERSIST, session_reap, NULL);
	if (reaper_ev == NULL || event_add(reaper_ev, &tv) == -1)
		fatalx("reaper event");
	if ((spare_ev = evtimer_new(base, spare_fill, NULL)) == NULL)
		fatalx("spare event");
	spare_schedule();
	sigchld_ev = evsignal_new(base, SIGCHLD, session_sigchld, NULL);
	if (sigchld_ev == NULL || event_add(sigchld_ev, NULL) == -1)
		fatalx("SIGCHLD event");
}
