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
 * child.c: the start-up sequence shared by frontends, the storage
 * helper and the broker.
 *
 * A child starts as root with nothing but its channel to the master
 * and a minimal environment.  The master sends the configuration (only
 * the parts and secrets this role's roster row names), listening
 * sockets and peer channels, then IMSG_START.  The child then drops
 * privileges, locks down its filesystem view, and serves until the
 * master goes away or tells it to stop.
 */
#include <sys/types.h>
#include <sys/prctl.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "lockdown.h"
#include "roster.h"
#include "confine.h"
#include "child.h"

static struct {
	enum proc_role		 role;
	int			 instance;
	struct event_base	*base;
	struct imsgev		 parent;
	struct depotd_conf	*conf;
	struct depotd_conf	*next;		/* being received */
	uint32_t		 generation;	/* of next */
	struct proc_conf_msg	 proc;		/* as the master sent it */
	const struct child_ops	*ops;
	int			 running;
	struct event		*ev_term;
} child;

struct event_base *
child_base(void)
{
	return child.base;
}

/* SIGTERM when the master dies, even if it cannot tell us. */
static void
child_watch_master(void)
{
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) == -1)
		fatal("prctl(PR_SET_PDEATHSIG)");
	if (getppid() == 1)
		fatalx("the master is already gone");
}

/*
 * A channel to a sibling, checked against what that sibling may send
 * this role (proto.c).
 */
void
child_peer_init(struct imsgev *iev, enum proc_role peer, int fd,
    imsgev_dispatch_cb dispatch, imsgev_closed_cb closed, void *arg)
{
	if (imsgev_init(iev, child.base, fd, dispatch, closed, arg) == -1)
		fatal("imsgev_init");
	imsgev_set_channel(iev, proto_channel(child.role, peer));
}

int
child_send_parent(uint32_t type, uint32_t peerid, int fd, const void *data,
    size_t len)
{
	return imsgev_compose(&child.parent, type, peerid, getpid(), fd, data,
	    len);
}

static void
child_conf_begin(struct imsg *imsg)
{
	if (child.next != NULL)
		fatalx("configuration begun twice");
	memcpy(&child.generation, imsg->data, sizeof(child.generation));
	if ((child.next = conf_new()) == NULL)
		fatal("conf_new");
}

const char *
child_root(void)
{
	return child.proc.chroot;
}

/* Who we run as is fixed at start: a reload cannot move a process. */
static void
child_conf_proc(struct imsg *imsg)
{
	if (child.next == NULL)
		fatalx("configuration part outside a configuration");
	if (child.running)
		return;
	memcpy(&child.proc, imsg->data, sizeof(child.proc));
	child.proc.user[sizeof(child.proc.user) - 1] = '\0';
	child.proc.chroot[sizeof(child.proc.chroot) - 1] = '\0';
}

static void
child_conf_part(struct imsg *imsg)
{
	if (child.next == NULL || conf_recv(child.next, imsg) == -1)
		fatalx("bad configuration part %u from the master",
		    imsg->hdr.type);
}

static void
child_conf_end(void)
{
	int	 reload = child.conf != NULL;

	if (child.next == NULL)
		fatalx("configuration ended before it began");
	if (child.conf != NULL)
		conf_free(child.conf);
	child.conf = child.next;
	child.next = NULL;
	if (child.ops->conf != NULL)
		child.ops->conf(child.conf, reload);
	if (reload)
		log_info("configuration reloaded");
	child_send_parent(IMSG_CONF_ACK, 0, -1, &child.generation,
	    sizeof(child.generation));
}

/*
 * Confines this child for good (lockdown.c): the user the master looked
 * up, the roster's root (an empty one for a role without files), its
 * paths, network and system calls.  The drop sets the parent-death
 * signal again after setresuid cleared it.
 */
static void
child_start(void)
{
	const struct lockdown_rules	*rules;
	struct privuser			 pu;

	if (child.conf == NULL || child.proc.user[0] == '\0')
		fatalx("start without a configuration");
	/* The ports are those of the configuration at lockdown. */
	if ((rules = confine_rules(child.role, child.conf)) == NULL)
		fatalx("no lockdown rules for %s", role_name(child.role));
	memset(&pu, 0, sizeof(pu));
	strlcpy(pu.name, child.proc.user, sizeof(pu.name));
	pu.uid = child.proc.uid;
	pu.gid = child.proc.gid;
	pu.sgid = child.proc.sgid;
	if (child.ops->prepare != NULL)
		child.ops->prepare();
	lockdown_role(rules, &pu, child.proc.chroot,
	    child.ops->ro_paths ? child.ops->ro_paths() : NULL,
	    child.ops->rw_paths ? child.ops->rw_paths() : NULL);
	child.running = 1;
	if (child.ops->start != NULL)
		child.ops->start();
	log_debug("%s %d started", role_name(child.role), child.instance);
}

static void
child_dispatch_master(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	struct peer_msg	 pm;
	int		 v;

	/* proto.c's table for this role has checked type, size and fd. */
	switch (imsg->hdr.type) {
	case IMSG_CONF_BEGIN:
		child_conf_begin(imsg);
		break;
	case IMSG_CONF_PROC:
		child_conf_proc(imsg);
		break;
	case IMSG_CONF_END:
		child_conf_end();
		break;
	case IMSG_CONF_SECRET:
	case IMSG_CONF_STORE:
	case IMSG_CONF_FILES:
	case IMSG_CONF_LIMITS:
	case IMSG_CONF_HTTP:
	case IMSG_CONF_UPSTREAM:
	case IMSG_CONF_REPLICA:
	case IMSG_CONF_MODEL:
	case IMSG_CONF_SANDBOX:
	case IMSG_CONF_CA:
		child_conf_part(imsg);
		break;
	case IMSG_LISTEN_FD:
		child.ops->listen_fd(imsg_get_fd(imsg));
		break;
	case IMSG_PEER_FD:
		memcpy(&pm, imsg->data, sizeof(pm));
		if (pm.role <= ROLE_MASTER || pm.role >= ROLE_MAX ||
		    (roster_role(child.role)->peers & ROLE_BIT(pm.role)) == 0)
			fatalx("a channel to %s, which is no peer",
			    role_name(pm.role));
		child.ops->peer(pm.role, pm.instance, imsg_get_fd(imsg));
		break;
	case IMSG_START:
		child_start();
		child_send_parent(IMSG_READY, 0, -1, NULL, 0);
		break;
	case IMSG_LOG_VERBOSE:
		memcpy(&v, imsg->data, sizeof(v));
		log_setverbose(v);
		break;
	default:
		child.ops->parent_msg(imsg);
		break;
	}
}

static void
child_parent_closed(struct imsgev *iev, const char *why, void *arg)
{
	/* The master is gone; so is our reason to exist. */
	if (child.ops->shutdown != NULL)
		child.ops->shutdown();
	exit(0);
}

static void
child_sigterm(evutil_socket_t sig, short what, void *arg)
{
	if (child.ops->shutdown != NULL)
		child.ops->shutdown();
	exit(0);
}

void
child_run(enum proc_role role, int instance, const struct child_ops *ops,
    int debug, int verbose)
{
	char	 title[64];

	child.role = role;
	child.instance = instance;
	child.ops = ops;
	if (roster_role(role)->numbered)
		snprintf(title, sizeof(title), "%s %d", role_name(role),
		    instance);
	else
		strlcpy(title, role_name(role), sizeof(title));
	log_init("depotd", debug, verbose);
	log_procname(title);
	setproctitle("%s", title);

	/* Terminal ^C reaches the whole group; the master decides. */
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	child_watch_master();

	if ((child.base = event_base_new()) == NULL)
		fatalx("event_base_new");
	if (event_base_priority_init(child.base, CHILD_PRI_COUNT) == -1)
		fatalx("event_base_priority_init");
	child.ev_term = evsignal_new(child.base, SIGTERM, child_sigterm, NULL);
	evsignal_add(child.ev_term, NULL);
	if (imsgev_init(&child.parent, child.base, PARENT_SOCK_FILENO,
	    child_dispatch_master, child_parent_closed, NULL) == -1)
		fatal("imsgev_init");
	imsgev_set_channel(&child.parent, proto_channel(role, ROLE_MASTER));
	event_base_dispatch(child.base);
	exit(0);
}
