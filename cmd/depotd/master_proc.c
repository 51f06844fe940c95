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
 * master_proc.c: the master's roster of children.
 *
 * Each child is this same binary re-executed with a role flag, so that
 * it starts from a clean address space (no copy of the master's
 * configuration, secrets or environment) with its channel to the
 * master on fd 3.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "depotd.h"
#include "master.h"
#include "master_proc.h"

char *const master_proc_env[] = {
	"PATH=/usr/sbin:/usr/bin:/sbin:/bin",
	NULL,
};

static void
exec_child(const char *self, enum proc_role role, int instance, int fd,
    int debug, int verbose)
{
	char	 inst[16], *argv[16];
	int	 argc = 0, i;

	if (fd != PARENT_SOCK_FILENO) {
		if (dup2(fd, PARENT_SOCK_FILENO) == -1)
			fatal("dup2");
	} else if (fcntl(fd, F_SETFD, 0) == -1)
		fatal("fcntl");
	closefrom(PARENT_SOCK_FILENO + 1);

	snprintf(inst, sizeof(inst), "%d", instance);
	argv[argc++] = (char *)self;
	argv[argc++] = "-P";
	argv[argc++] = (char *)role_name(role);
	argv[argc++] = "-I";
	argv[argc++] = inst;
	if (debug)
		argv[argc++] = "-d";
	for (i = 0; i < verbose && i < 4; i++)
		argv[argc++] = "-v";
	argv[argc] = NULL;
	execve(self, argv, master_proc_env);
	fatal("execve %s", self);
}

/* Forks and re-executes a child; cp gets its pid and channel. */
void
master_proc_spawn(struct child_proc *cp)
{
	pid_t	 pid;
	int	 sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		fatal("socketpair");
	switch (pid = fork()) {
	case -1:
		fatal("fork");
	case 0:
		close(sv[0]);
		/*
		 * Until execve, a SIGCHLD would run libevent's handler,
		 * which writes to the master's own signal socket.
		 */
		signal(SIGCHLD, SIG_DFL);
		exec_child(master.self, cp->role, cp->instance, sv[1],
		    master.debug, master.verbose);
		/* NOTREACHED */
	}
	close(sv[1]);
	cp->pid = pid;
	cp->fd = sv[0];
}

/*
 * A socket bound to lc.  shared: with SO_REUSEPORT, so that each
 * frontend has its own socket and the kernel spreads the load.
 */
int
master_bound_socket(const struct listen_conf *lc, int shared, const char *taken)
{
	int	 fd, on = 1;

	fd = socket(lc->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0);
	if (fd == -1)
		fatal("socket");
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) == -1 ||
	    (shared && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on,
	    sizeof(on)) == -1))
		fatal("setsockopt");
	if (lc->ss.ss_family == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on)) == -1)
		fatal("setsockopt IPV6_V6ONLY");
	if (bind(fd, (const struct sockaddr *)&lc->ss, lc->sslen) == -1)
		fatal("%s port %u%s", lc->host, lc->port, taken);
	return fd;
}

static int
bind_listener(const struct listen_conf *lc)
{
	int	 fd;

	fd = master_bound_socket(lc, 1, "");
	if (listen(fd, 1024) == -1)
		fatal("listen");
	return fd;
}

void
master_send_listeners(struct child_proc *cp)
{
	struct listen_conf	*lc;
	int			 fd;

	TAILQ_FOREACH(lc, &master.conf->listens, entry) {
		fd = bind_listener(lc);
		if (imsgev_compose(&cp->iev, IMSG_LISTEN_FD, 0, 0, fd,
		    NULL, 0) == -1)
			fatal("imsg_compose");
	}
}

/*
 * Gives each of the two children one end of a fresh socketpair, telling
 * each who is at the other end.
 */
int
master_proc_connect_pair(struct child_proc *a, struct child_proc *b)
{
	struct peer_msg	 pm;
	int		 sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		return -1;
	pm.role = b->role;
	pm.instance = b->instance;
	if (imsgev_compose(&a->iev, IMSG_PEER_FD, 0, 0, sv[0], &pm,
	    sizeof(pm)) == -1)
		fatal("imsg_compose");
	pm.role = a->role;
	pm.instance = a->instance;
	if (imsgev_compose(&b->iev, IMSG_PEER_FD, 0, 0, sv[1], &pm,
	    sizeof(pm)) == -1)
		fatal("imsg_compose");
	return 0;
}

/*
 * Sends a child its configuration: who it runs as and where, then only
 * the parts and secrets its roster row names.
 */
void
master_proc_send_conf(struct child_proc *cp, const struct depotd_conf *conf,
    uint32_t generation)
{
	const struct role	*r = roster_role(cp->role);
	struct proc_conf_msg	 pc;

	memset(&pc, 0, sizeof(pc));
	strlcpy(pc.user, master.users[r->user].name, sizeof(pc.user));
	pc.uid = master.users[r->user].uid;
	pc.gid = master.users[r->user].gid;
	if (r->chroot == CHROOT_CONF)
		strlcpy(pc.chroot, conf->chroot, sizeof(pc.chroot));
	/* The socket is the sandbox user's; its group lets the broker in. */
	if (r->chroot == CHROOT_SANDBOX && conf->sandbox == SANDBOX_LOCAL) {
		strlcpy(pc.chroot, master_sandbox_dir(), sizeof(pc.chroot));
		pc.sgid = master.users[RUN_AS_SANDBOX].gid;
	}
	if (imsgev_compose(&cp->iev, IMSG_CONF_BEGIN, 0, 0, -1, &generation,
	    sizeof(generation)) == -1 ||
	    imsgev_compose(&cp->iev, IMSG_CONF_PROC, 0, 0, -1, &pc,
	    sizeof(pc)) == -1)
		fatal("imsg_compose");
	conf_send(&cp->iev, conf, r->parts, r->secrets);
	if (imsgev_compose(&cp->iev, IMSG_CONF_END, 0, 0, -1, NULL, 0) == -1)
		fatal("imsg_compose");
}

/*
 * The one place the master signals a child.  kill() with 0 or -1 would
 * reach the master's process group or, as root, every process on the
 * machine, so only a real child's pid (> 1, not our own) is signalled.
 */
int
master_proc_signal(const struct child_proc *cp, int sig)
{
	if (cp->pid <= 1 || cp->pid == getpid()) {
		log_warnx("%s %d: not signalling pid %d", role_name(cp->role),
		    cp->instance, (int)cp->pid);
		return -1;
	}
	return kill(cp->pid, sig);
}

/* Signals every child and waits up to a few seconds before SIGKILL. */
void
master_proc_kill_all(struct child_list *children)
{
	struct child_proc	*cp;
	int			 i, left, status;
	pid_t			 pid;

	TAILQ_FOREACH(cp, children, entry)
		if (cp->pid > 0)
			master_proc_signal(cp, SIGTERM);
	for (i = 0; i < 100; i++) {
		left = 0;
		TAILQ_FOREACH(cp, children, entry) {
			if (cp->pid <= 0)
				continue;
			pid = waitpid(cp->pid, &status, WNOHANG);
			if (pid == cp->pid || (pid == -1 && errno == ECHILD))
				cp->pid = 0;
			else
				left++;
		}
		if (left == 0)
			return;
		usleep(50000);
	}
	TAILQ_FOREACH(cp, children, entry)
		if (cp->pid > 0) {
			log_warnx("%s %d did not stop; killing it",
			    role_name(cp->role), cp->instance);
			if (master_proc_signal(cp, SIGKILL) == 0)
				waitpid(cp->pid, &status, 0);
			cp->pid = 0;
		}
}

/* The storage helper's slot, or NULL before it is started. */
struct child_proc *
master_storage(void)
{
	struct child_proc	*cp;

	TAILQ_FOREACH(cp, &master.children, entry)
		if (cp->role == ROLE_STORAGE)
			return cp;
	return NULL;
}

/* The log level, for the master and every child with a channel. */
void
master_set_verbose(int v)
{
	struct child_proc	*cp;

	log_setverbose(v);
	TAILQ_FOREACH(cp, &master.children, entry)
		if (cp->fd != -1)
			imsgev_compose(&cp->iev, IMSG_LOG_VERBOSE, 0, 0, -1,
			    &v, sizeof(v));
}
