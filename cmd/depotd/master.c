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
 * master.c: what the master does once its children run: reap them,
 * hear what they say (ready, a configuration applied, a heartbeat, a
 * control reply), and shut everything down together.  The reload
 * itself is master_reload.c's.
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

struct master		 master;
static struct event	*ev_sigterm, *ev_sigint, *ev_sighup, *ev_sigchld;

void
master_shutdown(int status)
{
	master.shutting_down = 1;
	master_proc_kill_all(&master.children);
	master_control_cleanup();
	master_sandbox_cleanup();
	if (master.pidfile != NULL)
		unlink(master.pidfile);
	log_info("exiting");
	exit(status);
}

/*
 * Logs every child that has already exited, so that the line names the
 * child that died first and not only a sibling that followed it.
 * Returns how many there were, less depot-sandboxd when it could be
 * started again: it has no channel, the broker reconnects per call,
 * and a sandbox's death is no reason to stop serving files.
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
		/*
		 * A frontend that had started serving is replaced, as in
		 * any prefork server, and so is a replacement; one of the
		 * first that died starting would die again, and ends the
		 * daemon like any other child.
		 */
		if (!master.shutting_down && cp->role == ROLE_FRONTEND &&
		    (cp->beat_ms != 0 || cp->replaced)) {
			log_warnx("frontend %d (pid %d) %s; replacing it",
			    cp->instance, (int)pid, how);
			cp->pid = 0;
			master_respawn_schedule(cp);
			continue;
		}
		if (!master.shutting_down)
			log_warnx("lost child: %s %d (pid %d) %s",
			    role_name(cp->role), cp->instance, (int)pid, how);
		cp->pid = 0;
		if (!master.shutting_down && cp->role == ROLE_SANDBOXD &&
		    master_sandbox_respawn(cp) == 0)
			continue;
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

void
master_reap(void)
{
	if (master.shutting_down)
		return;
	if (reap_exited() > 0)
		master_shutdown(1);
}

static void
on_sigchld(evutil_socket_t sig, short what, void *arg)
{
	master_reap();
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
	/* The log says "reloaded" once every child has acknowledged. */
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

/* A child applied a configuration: is every child at the latest? */
static void
conf_acked(struct child_proc *cp, struct imsg *imsg)
{
	static uint32_t		 logged = 1;
	struct child_proc	*c;
	uint32_t		 gen, oldest = UINT32_MAX;

	memcpy(&gen, imsg->data, sizeof(gen));
	if (gen > master.generation || gen < cp->conf_acked)
		fatalx("%s %d acknowledged configuration %u of %u",
		    role_name(cp->role), cp->instance, gen, master.generation);
	cp->conf_acked = gen;
	TAILQ_FOREACH(c, &master.children, entry)
		if (c->fd != -1 && c->conf_acked < oldest)
			oldest = c->conf_acked;
	/* Once: a frontend started again acknowledges it too. */
	if (oldest == master.generation && oldest > logged) {
		log_info("reloaded %s", master.conffile);
		logged = oldest;
	}
	master_control_reload_acked(oldest);
}

static void
child_ready(struct child_proc *cp)
{
	struct child_proc	*c;

	cp->ready = 1;
	if (cp->replaced) {
		log_info("frontend %d ready again (pid %d)", cp->instance,
		    (int)cp->pid);
		return;
	}
	TAILQ_FOREACH(c, &master.children, entry)
		if (!c->ready)
			return;
	log_info("ready");
}

void
master_dispatch_child(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	struct child_proc	*cp = arg;

	/* proto.c's tables let only these through, at their sizes. */
	switch (imsg->hdr.type) {
	case IMSG_READY:
		child_ready(cp);
		break;
	case IMSG_CONF_ACK:
		conf_acked(cp, imsg);
		break;
	case IMSG_HEARTBEAT:
		master_respawn_heartbeat(cp, imsg);
		break;
	case IMSG_CTL_LINE:
	case IMSG_CTL_END:
		master_control_relay(cp, imsg);
		break;
	}
}

void
master_child_closed(struct imsgev *iev, const char *why, void *arg)
{
	struct child_proc	*cp = arg;

	if (!master.shutting_down && cp->role == ROLE_FRONTEND &&
	    (cp->beat_ms != 0 || cp->replaced))
		master_respawn_channel_closed(cp, why);
	else
		lost_child(cp, why);
}
