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
 * session.h: what session.c (sessions, the reaper), session_exec.c
 * (their calls) and runner.c (a session's jailed interpreter process)
 * share; private to depot-sandboxd's session code.  Each calls only the
 * files after it in that list; runner.c reaches back up through the
 * session's runner_calls, as libevent calls a bufferevent's callbacks.
 */
#ifndef DEPOT_SANDBOXD_SESSION_H
#define DEPOT_SANDBOXD_SESSION_H

#include <sys/queue.h>

#include <event2/bufferevent.h>

#include "util.h"
#include "sandboxd.h"

/* What a call is waiting for. */
enum call_phase {
	CALL_QUEUED,
	CALL_LISTING,		/* the walk before it */
	CALL_RUNNING,		/* the runner */
	CALL_PAUSING,		/* the session's group, freezing */
	CALL_LISTING_AFTER	/* the walk after it: then the reply */
};

struct exec_call {
	TAILQ_ENTRY(exec_call)	 entry;
	enum call_phase		 phase;
	struct session		*s;
	struct json_object	*request;
	int			 timeout;
	exec_done_cb		 done;
	void			*arg;
	int			 cancelled;
	int			 listed;
	int64_t			 seq;
	struct ws_listing	 before;
	int64_t			 start;
	int64_t			 elapsed_ms;
	struct ws_walker	*walker;	/* before or after the call */
	struct ws_walker	*quota_walker;
	/* The outcome, kept while the walk after the call runs. */
	struct json_object	*reply;
	int			 status;
	const char		*error;
};
TAILQ_HEAD(exec_queue, exec_call);

/* What runner.c calls in the file above it, set by session_exec_setup. */
struct runner_calls {
	/* The runner's protocol channel: a reply line, or its end. */
	bufferevent_data_cb	 read;
	bufferevent_event_cb	 event;
	/* The session's processes are all frozen (1), or cannot be (-1). */
	void			(*paused)(struct session *, int);
};

struct session {
	TAILQ_ENTRY(session)	 entry;
	char			 id[ID_BUFSIZE];
	char			 path[1200];
	int			 rootfd;
	int64_t			 created;
	int64_t			 last_activity;
	int			 idle;
	int			 life;
	pid_t			 pid;		/* bwrap, our child */
	struct bufferevent	*bev;
	const struct runner_calls *runner_calls;
	int			 info_fd;	/* bwrap's --info-fd */
	struct event		*info_ev;
	int			 jail_pidfd;	/* the jail's pid 1 */
	struct event		*burial;	/* waits on jail_pidfd */
	int64_t			 seq;
	struct exec_queue	 calls;
	struct exec_call	*running;
	struct event		*timer;
	struct event		*quota_timer;
	int			 frozen;	/* told to freeze, not thawed */
	struct event		*pause_timer;	/* waits for the freeze */
	int64_t			 pause_start;
};
TAILQ_HEAD(session_list, session);

extern struct event_base	*session_base;

/* session_exec.c */
/* The timers of a new session's calls, and its runner_calls. */
void	session_exec_setup(struct session *);
/* Every call of a destroyed session is answered 404 and freed. */
void	session_exec_drop_all(struct session *);

/* runner.c */
int	runner_spawn(struct session *);
/* bwrap's --info-fd: the jail's pid 1, for a pidfd. */
void	runner_info(int, short, void *);
void	runner_info_close(struct session *);
/* Forgets the jail's pid 1, which may still be dying. */
void	runner_forget(struct session *);
/* Kills bwrap and its process group, and waits for bwrap. */
void	runner_kill(struct session *);
void	runner_restart(struct session *, const char *why);
/*
 * Between calls: freezes every process of the session (its cgroup).
 * 1: frozen, or no freezer; -1: it cannot be; 0: under way, and
 * runner_calls->paused is called when it is done.
 */
int	runner_pause(struct session *);
/* Thaws the session, if frozen, before a call. */
void	runner_resume(struct session *);

#endif
