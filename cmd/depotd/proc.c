/*
 * proc.c: the master's roster of children.
 *
 * Each child is this same binary re-executed with a role flag, so that
 * it starts from a clean address space (no copy of the master's
 * configuration or secrets) with its channel to the master on fd 3.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "depotd.h"
#include "proc.h"

static const char *role_names[ROLE_MAX] = {
	"master", "frontend", "storage", "broker", "sandboxd",
};

const char *
role_name(enum proc_role role)
{
	if (role < 0 || role >= ROLE_MAX)
		return "unknown";
	return role_names[role];
}

int
role_from_name(const char *name)
{
	int	 i;

	for (i = 0; i < ROLE_MAX; i++)
		if (strcmp(name, role_names[i]) == 0)
			return i;
	return -1;
}

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
	execv(self, argv);
	fatal("execv %s", self);
}

/* Forks and re-executes a child; returns its channel to the master. */
struct child_proc *
proc_spawn(const char *self, enum proc_role role, int instance, int debug,
    int verbose)
{
	struct child_proc	*cp;
	int			 sv[2];

	if ((cp = calloc(1, sizeof(*cp))) == NULL)
		fatal("calloc");
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		fatal("socketpair");
	cp->role = role;
	cp->instance = instance;
	switch (cp->pid = fork()) {
	case -1:
		fatal("fork");
	case 0:
		close(sv[0]);
		/* Do not outlive a master that dies without telling us. */
		signal(SIGCHLD, SIG_DFL);
		exec_child(self, role, instance, sv[1], debug, verbose);
		/* NOTREACHED */
	}
	close(sv[1]);
	cp->fd = sv[0];
	cp->started = time(NULL);
	return cp;
}

/*
 * Gives each of the two children one end of a fresh socketpair, telling
 * each who is at the other end.
 */
int
proc_connect_pair(struct child_proc *a, struct child_proc *b)
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

/* Sends the configuration as JSON chunks; mask limits the secrets. */
void
proc_send_conf(struct child_proc *cp, const struct depotd_conf *conf)
{
	char	*json;
	size_t	 len, off, n;
	int	 mask;

	switch (cp->role) {
	case ROLE_FRONTEND:
		mask = CONF_SECRETS_FRONTEND;
		break;
	case ROLE_STORAGE:
		mask = CONF_SECRETS_STORAGE;
		break;
	case ROLE_BROKER:
		mask = CONF_SECRETS_BROKER;
		break;
	default:
		mask = CONF_SECRETS_NONE;
		break;
	}
	if ((json = conf_to_json(conf, mask)) == NULL)
		fatalx("cannot serialise the configuration");
	len = strlen(json);
	for (off = 0; off < len; off += n) {
		n = len - off;
		if (n > CONF_CHUNK)
			n = CONF_CHUNK;
		if (imsgev_compose(&cp->iev, IMSG_CONF_CHUNK, 0, 0, -1,
		    json + off, n) == -1)
			fatal("imsg_compose");
	}
	if (imsgev_compose(&cp->iev, IMSG_CONF_END, 0, 0, -1, NULL, 0) == -1)
		fatal("imsg_compose");
	freezero(json, len);
}

/* Signals every child and waits up to a few seconds before SIGKILL. */
void
proc_kill_all(struct child_list *children)
{
	struct child_proc	*cp;
	int			 i, left, status;
	pid_t			 pid;

	TAILQ_FOREACH(cp, children, entry)
		if (cp->pid > 0)
			kill(cp->pid, SIGTERM);
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
			kill(cp->pid, SIGKILL);
			waitpid(cp->pid, &status, 0);
			cp->pid = 0;
		}
}
