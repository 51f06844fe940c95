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
 * depot-sandboxd: a code-execution backend speaking protocol version 1,
 * one bubblewrap jail per session.  See depot-sandboxd(8).
 *
 * Start-up order matters: read the token and bind the socket while
 * still root, prepare the work directory for the unprivileged user,
 * then drop to that user for good before serving anything.
 */
#include <sys/types.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <netdb.h>
#include <pwd.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "http.h"
#include "log.h"
#include "privdrop.h"
#include "util.h"
#include "sandboxd.h"

#define SBX_DEFAULT_SOCKET	"/run/depot-sandboxd.sock"
#define SBX_DEFAULT_WORKDIR	"/var/tmp/depot-sandboxd"
#define SBX_DEFAULT_USER	"_depotsbx"
#define SBX_LOCKFILE		"lock"

static struct sbx_config	 config;
struct sbx_config		*sbx_conf = &config;

static struct event_base	*base;
static struct http_server	*server;

static __dead void
usage(void)
{
	fprintf(stderr, "usage: %s [-dv] [-s socket | -l address:port] "
	    "[-t tokenfile] [-r runner]\n\t[-u user] [-w workdir] "
	    "[-o limit=value]\n", getprogname());
	exit(1);
}

static void
limits_default(struct sbx_limits *l)
{
	l->max_sessions = 32;
	l->idle_default = 300;
	l->idle_max = 3600;
	l->life_default = 3600;
	l->life_max = 86400;
	l->exec_timeout = 30;
	l->max_put = 100LL << 20;
	l->rlim_as = 2LL << 30;
	l->rlim_cpu = 600;
	l->rlim_fsize = 1LL << 30;
	l->rlim_nofile = 1024;
	l->rlim_nproc = 256;
	l->tmp_size = 256LL << 20;
	l->session_memory = 1LL << 30;
	l->session_cpu = 100;
	/* Half the machine: the rest stays for the host and its services. */
	l->total_memory = (int64_t)sysconf(_SC_PHYS_PAGES) *
	    sysconf(_SC_PAGESIZE) / 2;
	l->ws_bytes = 1LL << 30;
	l->ws_entries = 10000;
}

/* -o name=value.  Sizes take k/M/G, times s/m/h/d. */
static void
limit_set(struct sbx_limits *l, const char *opt)
{
	static const struct {
		const char	*name;
		int		 is_size;
		size_t		 off;
		int		 is_int;
		int64_t		 min, max;
	} table[] = {
#define INT(f)	offsetof(struct sbx_limits, f), 1
#define I64(f)	offsetof(struct sbx_limits, f), 0
		{ "max-sessions",	0, INT(max_sessions), 1, 100000 },
		{ "idle-timeout",	0, INT(idle_default), 1, 86400 * 30 },
		{ "max-idle-timeout",	0, INT(idle_max), 1, 86400 * 30 },
		{ "lifetime",		0, INT(life_default), 1, 86400 * 30 },
		{ "max-lifetime",	0, INT(life_max), 1, 86400 * 30 },
		{ "exec-timeout",	0, INT(exec_timeout), 1,
		    SBX_EXEC_TIMEOUT_MAX },
		{ "max-upload",		1, I64(max_put), 1, 1LL << 40 },
		{ "memory",		1, I64(rlim_as), 0, 1LL << 44 },
		{ "cpu",		0, I64(rlim_cpu), 0, 86400 * 30 },
		{ "file-size",		1, I64(rlim_fsize), 0, 1LL << 44 },
		{ "open-files",		0, I64(rlim_nofile), 0, 1 << 20 },
		{ "processes",		0, I64(rlim_nproc), 0, 1 << 20 },
		{ "tmp-size",		1, I64(tmp_size), 1 << 20, 1LL << 40 },
		{ "session-memory",	1, I64(session_memory), 16 << 20,
		    1LL << 44 },
		{ "session-cpu",	0, INT(session_cpu), 1, 100000 },
		{ "total-memory",	1, I64(total_memory), 16 << 20,
		    1LL << 46 },
		{ "workspace-size",	1, I64(ws_bytes), 1 << 20, 1LL << 44 },
		{ "workspace-entries",	0, I64(ws_entries), 16, 10000000 },
#undef INT
#undef I64
	};
	char		 name[64];
	const char	*eq;
	int64_t		 v;
	size_t		 i;
	int		 rv;

	if ((eq = strchr(opt, '=')) == NULL || (size_t)(eq - opt) >=
	    sizeof(name))
		errx(1, "-o %s: expected limit=value", opt);
	memcpy(name, opt, eq - opt);
	name[eq - opt] = '\0';
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strcmp(name, table[i].name) != 0)
			continue;
		rv = table[i].is_size ? parse_size(eq + 1, &v) :
		    parse_duration(eq + 1, &v);
		if (rv == -1 || v < table[i].min || v > table[i].max)
			errx(1, "-o %s: bad value", opt);
		if (table[i].is_int)
			*(int *)((char *)l + table[i].off) = (int)v;
		else
			*(int64_t *)((char *)l + table[i].off) = v;
		return;
	}
	errx(1, "-o %s: unknown limit", opt);
}

/*
 * Relative paths would be taken from / once the daemon detaches, and
 * the jail binds the runner by its path.
 */
static void
runner_resolve(void)
{
	static char	 resolved[PATH_MAX];

	if (realpath(config.runner, resolved) == NULL)
		err(1, "runner %s", config.runner);
	if (access(resolved, R_OK) == -1)
		err(1, "runner %s", resolved);
	config.runner = resolved;
}

/*
 * nobody owns the files of every service that runs as nobody; jails
 * running as nobody would share their uid with all of them.
 */
static void
jail_user_check(uid_t uid, const char *name)
{
	struct passwd	*pw;

	if (uid == 0)
		errx(1, "refusing to run jails as root: start as root with "
		    "-u user, or as an unprivileged user");
	pw = getpwuid(uid);
	if (uid == 65534 || (pw != NULL && strcmp(pw->pw_name, "nobody") ==
	    0))
		errx(1, "refusing to run jails as %s (nobody): name a "
		    "dedicated user with -u", name);
}

static char *
token_read(const char *path)
{
	char		 buf[1024], *tok;
	struct stat	 st;
	ssize_t		 n;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		err(1, "%s", path);
	if (fstat(fd, &st) == -1)
		err(1, "%s", path);
	if (st.st_mode & (S_IRWXG | S_IRWXO))
		errx(1, "%s: must not be group or world accessible", path);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		err(1, "%s", path);
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (strlen(buf) < 16)
		errx(1, "%s: token shorter than 16 characters", path);
	if ((tok = strdup(buf)) == NULL)
		err(1, NULL);
	explicit_bzero(buf, sizeof(buf));
	return tok;
}

static int
listen_unix(const char *path, mode_t mode)
{
	struct sockaddr_un	 sun;
	int			 fd;

	if (unix_addr(&sun, path) == -1)
		errx(1, "%s: socket path too long", path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		err(1, "socket");
	if (unlink(path) == -1 && errno != ENOENT)
		err(1, "unlink %s", path);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		err(1, "bind %s", path);
	if (chmod(path, mode) == -1)
		err(1, "chmod %s", path);
	if (listen(fd, 128) == -1)
		err(1, "listen");
	return fd;
}

static int
listen_tcp(const char *spec)
{
	struct addrinfo	 hints, *res;
	char		 host[256], *port;
	int		 fd, on = 1, e;

	if (strlcpy(host, spec, sizeof(host)) >= sizeof(host) ||
	    (port = strrchr(host, ':')) == NULL)
		errx(1, "-l %s: expected address:port", spec);
	*port++ = '\0';
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	if ((e = getaddrinfo(host[0] ? host : NULL, port, &hints, &res)) != 0)
		errx(1, "-l %s: %s", spec, gai_strerror(e));
	fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, 0);
	if (fd == -1)
		err(1, "socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	if (bind(fd, res->ai_addr, res->ai_addrlen) == -1)
		err(1, "bind %s", spec);
	freeaddrinfo(res);
	if (listen(fd, 128) == -1)
		err(1, "listen");
	return fd;
}

static int
subdir(int parent, const char *name, const struct privuser *pu)
{
	int	 fd;

	if (mkdirat(parent, name, 0700) == -1 && errno != EEXIST)
		err(1, "%s/%s", config.workdir, name);
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd == -1)
		err(1, "%s/%s", config.workdir, name);
	if (pu != NULL && fchown(fd, pu->uid, pu->gid) == -1)
		err(1, "chown %s/%s", config.workdir, name);
	return fd;
}

/*
 * Start-up empties the work directory: a second daemon on the same one
 * would destroy the first one's sessions.  The lock is held (its fd
 * kept open) for the daemon's life.
 */
static void
workdir_lock(int dirfd)
{
	int	 fd;

	fd = openat(dirfd, SBX_LOCKFILE, O_RDWR | O_CREAT | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (fd == -1)
		err(1, "%s/%s", config.workdir, SBX_LOCKFILE);
	if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		if (errno == EWOULDBLOCK)
			errx(1, "%s is in use by another depot-sandboxd",
			    config.workdir);
		err(1, "flock %s/%s", config.workdir, SBX_LOCKFILE);
	}
}

static void
workdir_setup(const struct privuser *pu)
{
	char	 resolved[PATH_MAX];
	int	 fd;

	if (mkdir(config.workdir, 0711) == -1 && errno != EEXIST)
		err(1, "%s", config.workdir);
	if ((fd = open(config.workdir, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1)
		err(1, "%s", config.workdir);
	/* The jail is bound from a path: every component must be ours. */
	if (realpath(config.workdir, resolved) == NULL ||
	    strlcpy(config.workdir, resolved, sizeof(config.workdir)) >=
	    sizeof(config.workdir))
		err(1, "%s", config.workdir);
	workdir_lock(fd);
	ws_remove_tree(fd, "sessions");
	ws_remove_tree(fd, "uploads");
	config.sessions_fd = subdir(fd, "sessions", pu);
	config.uploads_fd = subdir(fd, "uploads", pu);
	close(fd);
}

#define SHUTDOWN_GRACE_TICKS	20	/* of 100 ms */

/* Lets the answers to calls cut short by the shutdown go out. */
static void
on_shutdown_tick(int fd, short ev, void *arg)
{
	static int	 ticks;

	if ((http_server_nconns(server) == 0 && session_burials() == 0) ||
	    ++ticks >= SHUTDOWN_GRACE_TICKS)
		event_base_loopbreak(base);
}

static void
on_shutdown(int sig, short ev, void *arg)
{
	static struct event	*tick;
	struct timeval		 tv = { 0, 100000 };

	if (tick != NULL)
		return;
	log_info("received signal %d; destroying %d sessions", sig,
	    session_count());
	session_destroy_all();
	http_server_close_listeners(server);
	tick = event_new(base, -1, EV_PERSIST, on_shutdown_tick, NULL);
	if (tick == NULL || event_add(tick, &tv) == -1)
		event_base_loopbreak(base);
}

int
main(int argc, char *argv[])
{
	struct privuser		 pu;
	struct http_limits	 hl;
	struct http_handler	 handler;
	struct event		*ev_term, *ev_int;
	const char		*sockpath = NULL, *listen_spec = NULL;
	const char		*tokenfile = NULL, *user = SBX_DEFAULT_USER;
	int			 ch, foreground = 0, verbose = 0, fd, root;

	limits_default(&config.limits);
	config.python = "/usr/bin/python3";
	config.runner = getenv("DEPOT_SANDBOXD_RUNNER");
	if (config.runner == NULL)
		config.runner = DEPOT_LIBEXECDIR "/runner.py";
	strlcpy(config.workdir, SBX_DEFAULT_WORKDIR, sizeof(config.workdir));

	while ((ch = getopt(argc, argv, "dl:o:r:s:t:u:vw:")) != -1) {
		switch (ch) {
		case 'd':
			foreground = 1;
			break;
		case 'l':
			listen_spec = optarg;
			break;
		case 'o':
			limit_set(&config.limits, optarg);
			break;
		case 'r':
			config.runner = optarg;
			break;
		case 's':
			sockpath = optarg;
			break;
		case 't':
			tokenfile = optarg;
			break;
		case 'u':
			user = optarg;
			break;
		case 'v':
			verbose++;
			break;
		case 'w':
			if (strlcpy(config.workdir, optarg,
			    sizeof(config.workdir)) >= sizeof(config.workdir))
				errx(1, "-w: path too long");
			break;
		default:
			usage();
		}
	}
	if (argc != optind || (sockpath != NULL && listen_spec != NULL))
		usage();
	/* A lowered maximum lowers the default with it. */
	if (config.limits.idle_default > config.limits.idle_max)
		config.limits.idle_default = config.limits.idle_max;
	if (config.limits.life_default > config.limits.life_max)
		config.limits.life_default = config.limits.life_max;
	runner_resolve();
	if (access("/usr/bin/bwrap", X_OK) == -1)
		err(1, "/usr/bin/bwrap (install bubblewrap)");

	/* Whoever reaches the daemon runs code. */
	if (listen_spec != NULL && tokenfile == NULL)
		errx(1, "-l needs -t: a TCP listener requires a token");

	log_init("depot-sandboxd", foreground, verbose + 1);
	if (tokenfile != NULL)
		config.token = token_read(tokenfile);

	root = geteuid() == 0;
	if (root && priv_lookup(user, &pu) == -1)
		errx(1, "unknown user %s (create it, or name another with -u)",
		    user);
	jail_user_check(root ? pu.uid : geteuid(), root ? user : "the "
	    "invoking user");
	workdir_setup(root ? &pu : NULL);
	jail_seccomp_init();
	cgroup_init(root ? &pu : NULL);
	if (listen_spec != NULL)
		fd = listen_tcp(listen_spec);
	else {
		if (sockpath == NULL)
			sockpath = SBX_DEFAULT_SOCKET;
		/* Without a token, only the user itself may connect. */
		fd = listen_unix(sockpath, config.token != NULL ? 0660 : 0600);
		if (root && chown(sockpath, pu.uid, pu.gid) == -1)
			err(1, "chown %s", sockpath);
	}

	if (!foreground && daemon(0, 0) == -1)
		err(1, "daemon");
	if (root)
		priv_drop(&pu, NULL);
	/* The jails need no privilege: bubblewrap is not setuid here. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		fatal("PR_SET_NO_NEW_PRIVS");
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);

	if ((base = event_base_new()) == NULL)
		fatalx("event_base_new");
	session_init(base);
	http_limits_default(&hl);
	hl.body_timeout = 300;
	service_route_handler(&handler);
	if ((server = http_server_new(base, &hl, &handler)) == NULL)
		fatalx("http_server_new");
	if (http_server_listen_fd(server, fd) == -1)
		fatalx("http_server_listen_fd");
	ev_term = evsignal_new(base, SIGTERM, on_shutdown, NULL);
	ev_int = evsignal_new(base, SIGINT, on_shutdown, NULL);
	if (ev_term == NULL || ev_int == NULL ||
	    event_add(ev_term, NULL) == -1 || event_add(ev_int, NULL) == -1)
		fatalx("signal events");

	log_info("listening on %s; runner %s; at most %d sessions",
	    listen_spec ? listen_spec : sockpath, config.runner,
	    config.limits.max_sessions);
	event_base_dispatch(base);
	http_server_free(server);
	cgroup_fini();
	log_info("exiting");
	return 0;
}
