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
 * depotd.c: the master process.
 *
 * The master parses the configuration, binds the listening and control
 * sockets, spawns the children (re-executing itself with -P), wires
 * them together and then only watches: signals, dying children and the
 * control socket.  It never reads network input.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "privdrop.h"
#include "depotd.h"
#include "roster.h"
#include "master_proc.h"
#include "master.h"
#include "confine.h"

static __dead void
usage(void)
{
	fprintf(stderr, "usage: depotd [-dnv] [-D macro=value] "
	    "[-f file] [-p pidfile]\n");
	exit(1);
}

/*
 * SO_REUSEPORT would let a second depotd, or anything else run by
 * root, share the port and silently take part of the connections.  A
 * bind without it fails while any socket listens there: try one first.
 */
static void
check_listeners(void)
{
	struct listen_conf	*lc;

	TAILQ_FOREACH(lc, &master.conf->listens, entry)
		close(master_bound_socket(lc, 0, " is taken (another depotd?)"));
}

static void
spawn_role(const struct role *r)
{
	struct child_proc	*cp;
	int			 i, n = r->instances(master.conf);

	for (i = 0; i < n; i++) {
		if ((cp = calloc(1, sizeof(*cp))) == NULL)
			fatal("calloc");
		cp->role = r->role;
		cp->instance = i;
		cp->fd = -1;
		cp->started = time(NULL);
		master_role_spawn(cp);
		TAILQ_INSERT_TAIL(&master.children, cp, entry);
	}
}

/* Each pair of children whose roster rows name each other as peers. */
static void
connect_peers(void)
{
	struct child_proc	*a, *b;

	TAILQ_FOREACH(a, &master.children, entry)
		for (b = TAILQ_NEXT(a, entry); b != NULL;
		    b = TAILQ_NEXT(b, entry))
			if (roster_role(a->role)->peers & ROLE_BIT(b->role) &&
			    master_proc_connect_pair(a, b) == -1)
				fatal("socketpair");
}

/*
 * Starts every role of the roster, in its order, then sends each child
 * with a channel its configuration, listeners and peers, and START.
 */
static void
spawn_children(void)
{
	struct child_proc	*cp;
	size_t			 i;

	for (i = 0; i < roster_norder; i++)
		spawn_role(roster_role(roster_order[i]));
	master.generation = 1;
	TAILQ_FOREACH(cp, &master.children, entry) {
		if (cp->fd == -1) {
			cp->ready = 1;
			continue;
		}
		if (imsgev_init(&cp->iev, master.base, cp->fd,
		    master_dispatch_child, master_child_closed, cp) == -1)
			fatal("imsgev_init");
		imsgev_set_channel(&cp->iev, proto_channel(ROLE_MASTER,
		    cp->role));
		master_proc_send_conf(cp, master.conf, master.generation);
		if (roster_role(cp->role)->listens)
			master_send_listeners(cp);
	}
	connect_peers();
	TAILQ_FOREACH(cp, &master.children, entry)
		if (cp->fd != -1)
			imsgev_compose(&cp->iev, IMSG_START, 0, 0, -1, NULL,
			    0);
}

/* Every user a role of this configuration runs as must exist. */
static void
lookup_users(void)
{
	const struct role	*r;
	const char		*name;
	int			 i;

	for (i = 0; i < ROLE_MAX; i++) {
		r = roster_role(i);
		if (r->instances == NULL || r->instances(master.conf) == 0)
			continue;
		name = roster_user(r->user, master.conf);
		if (priv_lookup(name, &master.users[r->user]) == -1)
			errx(1, "unknown user %s (%s)", name, r->title);
	}
}

static void
write_pidfile(const char *path)
{
	FILE	*f;

	if (path == NULL)
		return;
	if ((f = fopen(path, "w")) == NULL)
		fatal("%s", path);
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
}

static const char *
self_path(void)
{
	static char	 path[PATH_MAX];
	ssize_t		 n;

	/* Children run the very binary the master was started from. */
	if ((n = readlink("/proc/self/exe", path, sizeof(path) - 1)) == -1)
		fatal("readlink /proc/self/exe");
	path[n] = '\0';
	return path;
}

static void
child_main(const char *title, const char *inst, int debug, int verbose)
{
	const struct role	*r;
	master_role_main_fn	 role_main;
	const char		*errstr;
	int			 instance;

	instance = strtonum(inst ? inst : "0", 0, FRONTEND_MAX - 1, &errstr);
	if (errstr != NULL)
		errx(1, "instance %s", errstr);
	if ((r = roster_by_title(title)) == NULL ||
	    (role_main = master_role_main(r->role)) == NULL)
		errx(1, "unknown role %s", title);
	role_main(instance, debug, verbose);
}

int
main(int argc, char *argv[], char *envp[])
{
	const char	*conffile = DEPOTD_CONF, *role = NULL, *inst = NULL;
	const char	*pidfile = NULL;
	char		*no_env[] = { NULL };
	int		 ch, noaction = 0;

	/*
	 * Before getopt: the title moves argv.  A child (exec_child puts
	 * -P first) gives the title the argv area only, so that the
	 * environment the master gave it stays readable in /proc.
	 */
	if (argc > 1 && strcmp(argv[1], "-P") == 0)
		setproctitle_init(argc, argv, no_env);
	else
		setproctitle_init(argc, argv, envp);
	while ((ch = getopt(argc, argv, "dD:f:I:np:P:v")) != -1) {
		switch (ch) {
		case 'd':
			master.debug = 1;
			break;
		case 'D':
			if (cmdline_symset(optarg) < 0)
				errx(1, "could not parse macro definition %s",
				    optarg);
			break;
		case 'f':
			conffile = optarg;
			break;
		case 'I':
			inst = optarg;
			break;
		case 'n':
			noaction = 1;
			break;
		case 'p':
			pidfile = optarg;
			break;
		case 'P':
			role = optarg;
			break;
		case 'v':
			master.verbose++;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	if (role != NULL)
		child_main(role, inst, master.debug, master.verbose);

	log_init("depotd", 1, master.verbose);
	if ((master.conf = parse_config(conffile, master.verbose)) == NULL)
		exit(1);
	/* A name that does not resolve is a warning, also for -n. */
	conf_resolve_upstreams(master.conf);
	if (noaction) {
		if (master.verbose) {
			conf_print(stdout, master.conf);
			confine_print_plan(stderr, master.conf);
		}
		fprintf(stderr, "configuration OK\n");
		exit(0);
	}
	if (geteuid() != 0)
		errx(1, "need root privileges");
	lookup_users();
	master.conffile = conffile;
	master.self = self_path();
	/* Still on stderr: a second daemon is refused before it harms. */
	check_listeners();
	if (master_control_in_use(master.conf->control_socket))
		fatalx("control socket %s answers: is depotd running?",
		    master.conf->control_socket);

	log_init("depotd", master.debug, master.verbose);
	if (!master.debug && daemon(0, 0) == -1)
		fatal("daemon");
	write_pidfile(pidfile);
	master.pidfile = pidfile;
	log_procname("master");
	setproctitle("master");

	if ((master.base = event_base_new()) == NULL)
		fatalx("event_base_new");
	TAILQ_INIT(&master.children);
	master_signals();
	master_control_init(master.conf->control_socket);
	confine_log_kernel();
	spawn_children();
	master_respawn_init(master_dispatch_child, master_child_closed,
	    master_reap);
	log_info("started, %d frontends", master.conf->prefork);
	event_base_dispatch(master.base);
	master_shutdown(master.exit_status);
}
