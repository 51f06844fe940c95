/*
 * master.c: what the master does once its children run: reap them,
 * reload, relay control replies, and shut everything down together.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "depotd.h"
#include "master.h"

static struct event	*ev_sigterm, *ev_sigint, *ev_sighup, *ev_sigchld;

struct child_proc *
master_storage(void)
{
	struct child_proc	*cp;

	TAILQ_FOREACH(cp, &master.children, entry)
		if (cp->role == ROLE_STORAGE)
			return cp;
	return NULL;
}

void
master_shutdown(int status)
{
	master.shutting_down = 1;
	proc_kill_all(&master.children);
	control_cleanup();
	sandbox_local_cleanup();
	if (master.pidfile != NULL)
		unlink(master.pidfile);
	log_info("exiting");
	exit(status);
}

/*
 * Logs every child that has already exited, so that the line names the
 * child that died first and not only a sibling that followed it.
 * Returns how many there were.
 */
static int
reap_exited(void)
{
	struct child_proc	*cp;
	char			 how[64];
	pid_t			 pid;
	int			 status, n = 0;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		TAILQ_FOREACH(cp, &master.children, entry)
			if (cp->pid == pid)
				break;
		if (cp == NULL)
			continue;
		if (WIFSIGNALED(status))
			snprintf(how, sizeof(how), "killed by signal %d",
			    WTERMSIG(status));
		else
			snprintf(how, sizeof(how), "exited with status %d",
			    WEXITSTATUS(status));
		if (!master.shutting_down)
			log_warnx("lost child: %s %d (pid %d) %s",
			    role_name(cp->role), cp->instance, (int)pid, how);
		cp->pid = 0;
		n++;
	}
	return n;
}

static void
lost_child(struct child_proc *cp, const char *how)
{
	if (master.shutting_down)
		return;
	/* A dead peer closes its siblings' channels too: name it first. */
	usleep(100000);
	if (reap_exited() == 0)
		log_warnx("lost child: %s %d (pid %d) %s", role_name(cp->role),
		    cp->instance, (int)cp->pid, how);
	master_shutdown(1);
}

static void
on_sigchld(evutil_socket_t sig, short what, void *arg)
{
	if (master.shutting_down)
		return;
	if (reap_exited() > 0)
		master_shutdown(1);
}

static void
on_sigterm(evutil_socket_t sig, short what, void *arg)
{
	log_info("received signal %d, shutting down", (int)sig);
	master_shutdown(0);
}

static void
on_sighup(evutil_socket_t sig, short what, void *arg)
{
	char	 why[256];

	log_info("reloading %s", master.conffile);
	master_reload(why, sizeof(why));
}

void
master_signals(void)
{
	signal(SIGPIPE, SIG_IGN);
	ev_sigterm = evsignal_new(master.base, SIGTERM, on_sigterm, NULL);
	ev_sigint = evsignal_new(master.base, SIGINT, on_sigterm, NULL);
	ev_sighup = evsignal_new(master.base, SIGHUP, on_sighup, NULL);
	ev_sigchld = evsignal_new(master.base, SIGCHLD, on_sigchld, NULL);
	evsignal_add(ev_sigterm, NULL);
	evsignal_add(ev_sigint, NULL);
	evsignal_add(ev_sighup, NULL);
	evsignal_add(ev_sigchld, NULL);
}

static int
listens_differ(const struct depotd_conf *a, const struct depotd_conf *b)
{
	const struct listen_conf	*la, *lb;

	lb = TAILQ_FIRST(&b->listens);
	TAILQ_FOREACH(la, &a->listens, entry) {
		if (lb == NULL || la->sslen != lb->sslen ||
		    memcmp(&la->ss, &lb->ss, la->sslen) != 0)
			return 1;
		lb = TAILQ_NEXT(lb, entry);
	}
	return lb != NULL;
}

/*
 * Parses the file into a new configuration and applies it only when it
 * parsed.  Listening sockets and the number of frontends stay as they
 * were: they change at restart.
 */
int
master_reload(char *why, size_t whylen)
{
	struct depotd_conf	*conf;
	struct child_proc	*cp;

	if ((conf = parse_config(master.conffile, master.verbose)) == NULL) {
		snprintf(why, whylen, "%s has errors; keeping the running "
		    "configuration", master.conffile);
		log_warnx("reload failed: %s", why);
		return -1;
	}
	if (conf->prefork != master.conf->prefork ||
	    listens_differ(conf, master.conf))
		log_warnx("reload: listen and prefork changes take effect "
		    "at restart");
	/* The running sandbox stays; its URL and token carry over. */
	if (master.conf->sandbox == SANDBOX_LOCAL &&
	    conf->sandbox == SANDBOX_LOCAL) {
		strlcpy(conf->sandbox_url, master.conf->sandbox_url,
		    sizeof(conf->sandbox_url));
		free(conf->sandbox_token);
		conf->sandbox_token = master.conf->sandbox_token;
		master.conf->sandbox_token = NULL;
	}
	conf_free(master.conf);
	master.conf = conf;
	TAILQ_FOREACH(cp, &master.children, entry)
		if (cp->role != ROLE_SANDBOXD)
			proc_send_conf(cp, conf);
	snprintf(why, whylen, "reloaded %s", master.conffile);
	log_info("%s", why);
	return 0;
}

void
master_set_verbose(int v)
{
	struct child_proc	*cp;

	log_setverbose(v);
	TAILQ_FOREACH(cp, &master.children, entry)
		if (cp->role != ROLE_SANDBOXD)
			imsgev_compose(&cp->iev, IMSG_LOG_VERBOSE, 0, 0, -1,
			    &v, sizeof(v));
}

static void
child_ready(struct child_proc *cp)
{
	struct child_proc	*c;

	cp->ready = 1;
	TAILQ_FOREACH(c, &master.children, entry)
		if (!c->ready)
			return;
	log_info("ready");
}

void
master_dispatch(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	struct child_proc	*cp = arg;

	switch (imsg->hdr.type) {
	case IMSG_READY:
		child_ready(cp);
		break;
	case IMSG_CTL_LINE:
	case IMSG_CTL_END:
		if (cp->role != ROLE_STORAGE)
			fatalx("control reply from %s", role_name(cp->role));
		control_relay(imsg);
		break;
	default:
		fatalx("unexpected message %u from %s %d", imsg->hdr.type,
		    role_name(cp->role), cp->instance);
	}
}

void
master_child_closed(struct imsgev *iev, const char *why, void *arg)
{
	struct child_proc	*cp = arg;

	lost_child(cp, why);
}
