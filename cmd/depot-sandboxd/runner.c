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
 * runner.c: a session's interpreter process: python3 runner.py in a
 * bubblewrap jail, in the session's cgroups, under the seccomp filter,
 * its protocol channel on fd 3.  Started, restarted, paused between
 * calls and killed here.
 *
 * Between calls nothing of a session runs: its cgroup is frozen when a
 * call's reply has come, and thawed when the next call is given to the
 * runner.  The interpreter, its variables and whatever threads and
 * processes the code left behind stay, stopped; they go on in the next
 * call.  Killing them instead (the runner's own sweep kills the children
 * it finds at the end of a call) would lose the threads, and with them
 * the state the next call may rely on.
 *
 * What the runner's channel brings, and the end of a freeze, go up to
 * session_exec.c through the session's runner_calls: this file calls
 * no function above it by name.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "log.h"
#include "session.h"

/*
 * A group of a few sleeping processes freezes within microseconds: it
 * is asked again on the loop for up to PAUSE_SPIN * PAUSE_SPIN_NSEC,
 * then every PAUSE_POLL_USEC off it.  One that takes PAUSE_TIMEOUT_SEC
 * (a process stuck in the kernel) is restarted instead.
 */
#define PAUSE_SPIN		20
#define PAUSE_SPIN_NSEC		50000L
#define PAUSE_POLL_USEC		2000
#define PAUSE_TIMEOUT_SEC	2

static char	*jail_env[] = { "PATH=/usr/bin:/bin", NULL };

/* In the child: the fds the jail expects, then exec bwrap. */
static __dead void
runner_exec(struct session *s, char **argv, int channel, int info)
{
	int	 devnull, seccomp, i;
	int	 want[3];

	/* A new session, so that the whole group can be killed. */
	setsid();
	if (cgroup_enabled() && cgroup_session_enter(s->id) == -1)
		_exit(127);
	devnull = open("/dev/null", O_RDWR);
	seccomp = jail_seccomp_fd();
	/* Above the targets first, so that no dup2 lands on a source. */
	want[0] = fcntl(channel, F_DUPFD, 10);
	want[1] = fcntl(seccomp, F_DUPFD, 10);
	want[2] = fcntl(info, F_DUPFD, 10);
	if (devnull == -1 || seccomp == -1 || want[0] == -1 ||
	    want[1] == -1 || want[2] == -1)
		_exit(127);
	for (i = 0; i < 3; i++)
		if (dup2(devnull, i) == -1)
			_exit(127);
	for (i = 0; i < 3; i++)
		if (dup2(want[i], JAIL_FD_CHANNEL + i) == -1)
			_exit(127);
	closefrom(JAIL_FD_INFO + 1);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	if (jail_rlimits(&sbx_conf->limits) == -1)
		_exit(127);
	/* Not even bwrap sees the daemon's environment. */
	execve(argv[0], argv, jail_env);
	_exit(127);
}

int
runner_spawn(struct session *s)
{
	char	**argv;
	int	 sv[2], info[2];
	pid_t	 pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1) {
		log_warn("%s: socketpair", s->id);
		return -1;
	}
	if (pipe2(info, O_CLOEXEC) == -1) {
		log_warn("%s: pipe", s->id);
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	argv = jail_argv(s->path);
	switch (pid = fork()) {
	case -1:
		log_warn("%s: fork", s->id);
		close(sv[0]);
		close(sv[1]);
		close(info[0]);
		close(info[1]);
		return -1;
	case 0:
		runner_exec(s, argv, sv[1], info[1]);
	}
	close(sv[1]);
	close(info[1]);
	evutil_make_socket_nonblocking(sv[0]);
	s->pid = pid;
	s->bev = bufferevent_socket_new(session_base, sv[0],
	    BEV_OPT_CLOSE_ON_FREE);
	if (s->bev == NULL)
		fatalx("bufferevent_socket_new");
	bufferevent_setcb(s->bev, s->runner_calls->read, NULL,
	    s->runner_calls->event, s);
	bufferevent_enable(s->bev, EV_READ);
	s->info_fd = info[0];
	evutil_make_socket_nonblocking(s->info_fd);
	s->info_ev = event_new(session_base, s->info_fd, EV_READ | EV_PERSIST,
	    runner_info, s);
	if (s->info_ev == NULL || event_add(s->info_ev, NULL) == -1)
		fatalx("info event");
	log_debug("%s: runner pid %d", s->id, (int)pid);
	return 0;
}

/*
 * bwrap names the jail's pid 1 on its info fd.  A pidfd on it tells
 * when every process of the jail is gone: the kernel kills and waits
 * for the rest of a pid namespace before its init's exit completes.
 */
void
runner_info(int fd, short ev, void *arg)
{
	struct session	*s = arg;
	char		 buf[512], *p;
	ssize_t		 n;
	long		 pid;

	/* Read to the end: bwrap dies of SIGPIPE on a closed info pipe. */
	if ((n = read(fd, buf, sizeof(buf) - 1)) > 0) {
		buf[n] = '\0';
		if (s->jail_pidfd == -1 &&
		    (p = strstr(buf, "\"child-pid\"")) != NULL &&
		    (p = strchr(p, ':')) != NULL &&
		    (pid = strtol(p + 1, NULL, 10)) > 0) {
			s->jail_pidfd = syscall(SYS_pidfd_open, (pid_t)pid, 0);
			if (s->jail_pidfd == -1)
				log_warn("%s: pidfd_open %ld", s->id, pid);
		}
		return;
	}
	if (n == -1 && (errno == EINTR || errno == EAGAIN))
		return;
	runner_info_close(s);
}

void
runner_info_close(struct session *s)
{
	if (s->info_ev != NULL) {
		event_free(s->info_ev);
		s->info_ev = NULL;
	}
	if (s->info_fd != -1) {
		close(s->info_fd);
		s->info_fd = -1;
	}
}

void
runner_forget(struct session *s)
{
	runner_info_close(s);
	if (s->jail_pidfd != -1) {
		close(s->jail_pidfd);
		s->jail_pidfd = -1;
	}
}

void
runner_kill(struct session *s)
{
	if (s->bev != NULL) {
		bufferevent_free(s->bev);
		s->bev = NULL;
	}
	if (s->pid > 0) {
		/*
		 * bwrap leads a process group of its own (setsid in
		 * runner_exec).  kill(-1) would be every process we may
		 * signal, kill(-ours) ourselves: neither is ever sent.
		 */
		if (s->pid > 1 && s->pid != getpid() && getpgid(s->pid) ==
		    s->pid && s->pid != getpgrp())
			kill(-s->pid, SIGKILL);
		kill(s->pid, SIGKILL);
	}
	/*
	 * v1's frozen processes die of SIGKILL only once thawed; killed
	 * first, they run no more of their code.
	 */
	if (s->frozen) {
		cgroup_session_kill(s->id);
		runner_resume(s);
	}
	if (s->pid > 0) {
		/* bwrap dies at once on SIGKILL: this does not block long. */
		while (waitpid(s->pid, NULL, 0) == -1 && errno == EINTR)
			;
		s->pid = 0;
	}
}

void
runner_restart(struct session *s, const char *why)
{
	log_info("%s: restarting the interpreter: %s", s->id, why);
	runner_kill(s);
	runner_forget(s);
	if (runner_spawn(s) == -1)
		log_warnx("%s: could not restart the interpreter", s->id);
}

static void
runner_pause_poll(int fd, short ev, void *arg)
{
	struct session	*s = arg;
	struct timeval	 tv = { 0, PAUSE_POLL_USEC };
	int		 rv;

	if (!s->frozen) {
		/* Killed and thawed meanwhile: nothing of it is left. */
		s->runner_calls->paused(s, 1);
		return;
	}
	if ((rv = cgroup_session_frozen(s->id)) == 0 && now_usec() -
	    s->pause_start < PAUSE_TIMEOUT_SEC * 1000000LL) {
		evtimer_add(s->pause_timer, &tv);
		return;
	}
	if (rv != 1)
		log_warnx("%s: not frozen after %d s", s->id,
		    PAUSE_TIMEOUT_SEC);
	else
		log_debug("%s: frozen in %lld us", s->id,
		    (long long)(now_usec() - s->pause_start));
	s->runner_calls->paused(s, rv == 1 ? 1 : -1);
}

int
runner_pause(struct session *s)
{
	struct timespec	 ts = { 0, PAUSE_SPIN_NSEC };
	struct timeval	 tv = { 0, PAUSE_POLL_USEC };
	int		 i, rv;

	if (!cgroup_can_freeze())
		return 1;
	if (cgroup_session_freeze(s->id, 1) == -1) {
		log_warn("%s: freezing", s->id);
		return -1;
	}
	s->frozen = 1;
	s->pause_start = now_usec();
	for (i = 0; i < PAUSE_SPIN; i++) {
		if ((rv = cgroup_session_frozen(s->id)) != 0)
			return rv;
		nanosleep(&ts, NULL);
	}
	if (s->pause_timer == NULL &&
	    (s->pause_timer = evtimer_new(session_base, runner_pause_poll,
	    s)) == NULL)
		fatalx("evtimer_new");
	evtimer_add(s->pause_timer, &tv);
	return 0;
}

void
runner_resume(struct session *s)
{
	if (!s->frozen)
		return;
	/* Still frozen, it is thawed again before it is killed. */
	if (cgroup_session_freeze(s->id, 0) == -1)
		log_warn("%s: thawing", s->id);
	else
		s->frozen = 0;
}
