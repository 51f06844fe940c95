/*
 * child.c: the start-up sequence shared by frontends, the storage
 * helper and the broker.
 *
 * A child starts as root with nothing but its channel to the master.
 * The master sends the configuration (with only the secrets this role
 * needs), listening sockets and peer channels, then IMSG_START.  The
 * child then drops privileges, locks down its filesystem view, and
 * serves until the master goes away or tells it to stop.
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
#include "child.h"

static struct {
	enum proc_role		 role;
	int			 instance;
	struct event_base	*base;
	struct imsgev		 parent;
	char			*confbuf;
	size_t			 conflen;
	struct depotd_conf	*conf;
	const struct child_ops	*ops;
	time_t			 started;
	int			 running;
	struct event		*ev_term;
} child;

struct event_base *
child_base(void)
{
	return child.base;
}

struct depotd_conf *
child_conf(void)
{
	return child.conf;
}

int
child_instance(void)
{
	return child.instance;
}

time_t
child_started(void)
{
	return child.started;
}

int
child_send_parent(uint32_t type, uint32_t peerid, int fd, const void *data,
    size_t len)
{
	return imsgev_compose(&child.parent, type, peerid, getpid(), fd, data,
	    len);
}

static void
child_conf_chunk(struct imsg *imsg)
{
	char	*n;

	if (child.conflen + imsg->datalen > 16 * 1024 * 1024)
		fatalx("configuration from the master is too large");
	n = realloc(child.confbuf, child.conflen + imsg->datalen + 1);
	if (n == NULL)
		fatal("realloc");
	memcpy(n + child.conflen, imsg->data, imsg->datalen);
	child.conflen += imsg->datalen;
	n[child.conflen] = '\0';
	child.confbuf = n;
}

static void
child_conf_end(void)
{
	struct depotd_conf	*conf;
	int			 reload = child.conf != NULL;

	if (child.confbuf == NULL)
		fatalx("empty configuration from the master");
	conf = conf_from_json(child.confbuf);
	freezero(child.confbuf, child.conflen + 1);
	child.confbuf = NULL;
	child.conflen = 0;
	if (conf == NULL)
		fatalx("bad configuration from the master");
	if (child.conf != NULL)
		conf_free(child.conf);
	child.conf = conf;
	if (child.ops->conf != NULL)
		child.ops->conf(conf, reload);
	if (reload)
		log_info("configuration reloaded");
}

/*
 * Confines this child for good: its role's user, root, paths, network
 * and system calls (lockdown.c).  The storage helper runs as its own
 * user, so that the database role and the store are its alone.
 */
static void
child_start(void)
{
	const struct lockdown_rules	*pol;
	struct privuser			 pu;
	const char			*user;

	if (child.conf == NULL)
		fatalx("start without a configuration");
	if ((pol = lockdown_rules_of(role_name(child.role))) == NULL)
		fatalx("no lockdown policy for %s", role_name(child.role));
	user = child.role == ROLE_STORAGE ? child.conf->storage_user :
	    child.conf->user;
	if (priv_lookup(user, &pu) == -1)
		fatalx("unknown user %s", user);
	if (child.ops->prepare != NULL)
		child.ops->prepare();
	lockdown_role(pol, &pu, child.conf->chroot,
	    child.ops->ro_paths ? child.ops->ro_paths() : NULL,
	    child.ops->rw_paths ? child.ops->rw_paths() : NULL);
	child.running = 1;
	if (child.ops->start != NULL)
		child.ops->start();
	log_debug("%s %d started", role_name(child.role), child.instance);
}

static void
child_dispatch(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	struct peer_msg	 pm;
	int		 fd, v;

	switch (imsg->hdr.type) {
	case IMSG_CONF_CHUNK:
		child_conf_chunk(imsg);
		break;
	case IMSG_CONF_END:
		child_conf_end();
		break;
	case IMSG_LISTEN_FD:
		if ((fd = imsg_get_fd(imsg)) == -1)
			fatalx("listen message without a socket");
		if (child.ops->listen_fd == NULL)
			fatalx("%s got a listening socket",
			    role_name(child.role));
		child.ops->listen_fd(fd);
		break;
	case IMSG_PEER_FD:
		if (imsg->datalen != sizeof(pm) ||
		    (fd = imsg_get_fd(imsg)) == -1)
			fatalx("bad peer message");
		memcpy(&pm, imsg->data, sizeof(pm));
		if (pm.role <= ROLE_MASTER || pm.role >= ROLE_MAX)
			fatalx("peer message for an unknown role");
		child.ops->peer(pm.role, pm.instance, fd);
		break;
	case IMSG_START:
		child_start();
		child_send_parent(IMSG_READY, 0, -1, NULL, 0);
		break;
	case IMSG_LOG_VERBOSE:
		if (imsg->datalen != sizeof(v))
			fatalx("bad log message");
		memcpy(&v, imsg->data, sizeof(v));
		log_setverbose(v);
		break;
	default:
		if (child.ops->parent_msg == NULL)
			fatalx("unexpected message %u from the master",
			    imsg->hdr.type);
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
	child.started = time(NULL);
	if (role == ROLE_FRONTEND)
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
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) == -1)
		fatal("prctl(PR_SET_PDEATHSIG)");
	if (getppid() == 1)
		fatalx("the master is already gone");

	if ((child.base = event_base_new()) == NULL)
		fatalx("event_base_new");
	child.ev_term = evsignal_new(child.base, SIGTERM, child_sigterm, NULL);
	evsignal_add(child.ev_term, NULL);
	if (imsgev_init(&child.parent, child.base, PARENT_SOCK_FILENO,
	    child_dispatch, child_parent_closed, NULL) == -1)
		fatal("imsgev_init");
	event_base_dispatch(child.base);
	exit(0);
}
