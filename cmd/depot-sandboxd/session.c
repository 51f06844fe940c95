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
 * session.c: sessions, the spare jail, the burial of a jail and the
 * reaper (session_exec.c: their calls; runner.c: their interpreter
 * processes).
 *
 * A session is a workspace directory and one long-lived runner (python3
 * runner.py in a bubblewrap jail) reached over a socketpair carrying one
 * JSON line per request and per reply.  Calls go down: this file calls
 * session_exec.c and runner.c, session_exec.c calls runner.c, and
 * runner.c calls back up only through the session's runner_calls.
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

static void	session_free(struct session *);
static void	session_bury(struct session *);

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
	session_exec_setup(s);
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
	session_exec_drop_all(s);
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
