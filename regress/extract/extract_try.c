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
 * extract_try.c: the extract child, run for real, asked through the
 * frontend's own code (fe_extract.c).
 *
 *	extract_try [-m] DEPOTD PDF3 GARBAGE
 *
 * Plays the master of DEPOTD -P extract (configuration, a frontend's
 * channel, START) and the frontend on that channel.  PDF3 is a PDF of
 * three pages reading "One", "Two" and "Three"; GARBAGE is not a PDF.
 * With -m, pdftotext is missing (the suite hides it) and every request
 * must fail.  child_peer_init and child_base are this program's: the
 * frontend's event loop is ours.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "t.h"
#include "log.h"
#include "privdrop.h"
#include "child.h"
#include "fe_model.h"
#include "extract.h"
#include "peer.h"

#define NJOBS		6	/* more than the child runs at once */
#define EXTRACT_USER	"_depotext"	/* as the master runs the child */

static struct event_base	*base;
static struct imsgbuf		 fe_buf;	/* only its fd is used */
static int			 fe_sock = -1;	/* our end, for -close */

struct event_base *
child_base(void)
{
	return base;
}

void
child_peer_init(struct imsgev *iev, enum proc_role peer, int fd,
    imsgev_dispatch_cb dispatch, imsgev_closed_cb closed, void *arg)
{
	if (imsgev_init(iev, base, fd, dispatch, closed, arg) == -1)
		err(1, "imsgev_init");
	imsgev_set_channel(iev, proto_channel(ROLE_FRONTEND, peer));
}

static double
now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The master's part, as master_proc.c and depotd.c do it: the extract
 * child gets no configuration part, only who it runs as.
 */
static int
start_child(int fd)
{
	struct proc_conf_msg	 pc;
	struct privuser		 pu;
	uint32_t		 generation = 1;
	int			 ready;

	if (priv_lookup(EXTRACT_USER, &pu) == -1)
		errx(1, "no user %s", EXTRACT_USER);
	memset(&pc, 0, sizeof(pc));
	strlcpy(pc.user, pu.name, sizeof(pc.user));
	pc.uid = pu.uid;
	pc.gid = pu.gid;
	if (imsgbuf_init(&peer_master, fd) == -1)
		err(1, "imsgbuf_init");
	imsg_compose(&peer_master, IMSG_CONF_BEGIN, 0, 0, -1, &generation,
	    sizeof(generation));
	imsg_compose(&peer_master, IMSG_CONF_PROC, 0, 0, -1, &pc, sizeof(pc));
	imsg_compose(&peer_master, IMSG_CONF_END, 0, 0, -1, NULL, 0);
	peer_channel(ROLE_FRONTEND, 0, &fe_buf);
	ready = peer_start();
	fe_sock = fe_buf.fd;
	fe_extract_attach(fe_sock);
	return ready;
}

struct result {
	int	 called;
	int	 fd;
	double	 asked;		/* when the request went */
	double	 ended;		/* when its text ended */
	char	 text[4096];
	size_t	 len;
};

static void
got_fd(void *arg, int fd)
{
	struct result	*r = arg;

	r->called++;
	r->fd = fd;
}

/* Runs the loop until every result has its callback, or 10 s pass. */
static void
wait_calls(struct result *r, int n)
{
	double	 until = now() + 10;
	int	 i, left;

	do {
		for (left = i = 0; i < n; i++)
			left += r[i].called == 0;
		if (left == 0)
			return;
		event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
		usleep(1000);
	} while (now() < until);
}

/* Reads every result's text to its end, or for limit seconds. */
static void
read_texts(struct result *r, int n, double limit)
{
	struct pollfd	 pfd[NJOBS];
	double		 until = now() + limit;
	ssize_t		 got;
	char		 sink[4096];
	int		 i, open;

	for (;;) {
		for (open = i = 0; i < n; i++) {
			pfd[i].fd = r[i].fd;
			pfd[i].events = POLLIN;
			open += r[i].fd != -1;
		}
		if (open == 0 || now() > until)
			return;
		if (poll(pfd, n, 100) == -1)
			err(1, "poll");
		for (i = 0; i < n; i++) {
			if (r[i].fd == -1 || pfd[i].revents == 0)
				continue;
			if (r[i].len < sizeof(r[i].text) - 1)
				got = read(r[i].fd, r[i].text + r[i].len,
				    sizeof(r[i].text) - 1 - r[i].len);
			else
				got = read(r[i].fd, sink, sizeof(sink));
			if (got > 0 && r[i].len < sizeof(r[i].text) - 1)
				r[i].len += got;
			if (got <= 0) {
				r[i].text[r[i].len] = '\0';
				r[i].ended = now();
				close(r[i].fd);
				r[i].fd = -1;
			}
		}
	}
}

static int
open_or_die(const char *path)
{
	int	 fd;

	if ((fd = open(path, O_RDONLY)) == -1)
		err(1, "%s", path);
	return fd;
}

/* One request, its answer and its whole text. */
static void
extract_one(int fd, int pages, int timeout, struct result *r)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	r->asked = now();
	fe_extract(fd, pages, timeout, got_fd, r);
	wait_calls(r, 1);
	read_texts(r, 1, timeout + 10);
}

static void
test_text(const char *pdf)
{
	struct result	 r;

	extract_one(open_or_die(pdf), 100, 10, &r);
	T_OK(r.called == 1 && r.ended > 0, "a PDF's text comes back "
	    "(calls %d, %zu bytes)", r.called, r.len);
	T_OK(strstr(r.text, "One") && strstr(r.text, "Two") &&
	    strstr(r.text, "Three"), "all three pages are in it");
	T_OK(strchr(r.text, '\f') != NULL && strstr(r.text, "Two") <
	    strstr(r.text, "Three"), "pages in order, split by form feeds");

	extract_one(open_or_die(pdf), 2, 10, &r);
	T_OK(strstr(r.text, "One") && strstr(r.text, "Two") &&
	    strstr(r.text, "Three") == NULL,
	    "pages 2: the third page is not read (%zu bytes)", r.len);
	extract_one(open_or_die(pdf), 0, 10, &r);
	T_OK(strstr(r.text, "One") && strstr(r.text, "Two") == NULL,
	    "pages 0 is taken as 1 (%zu bytes)", r.len);
}

/*
 * The PDF through a socket the frontend made non-blocking, written
 * late and in pieces, as a store streaming from S3 or SFTP would.
 */
static void
test_stream(const char *pdf)
{
	struct result	 r;
	char		 buf[512];
	ssize_t		 n;
	pid_t		 writer;
	int		 sv[2], in, status;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
		err(1, "socketpair");
	if (fcntl(sv[0], F_SETFL, O_NONBLOCK) == -1)
		err(1, "fcntl");
	if ((writer = fork()) == 0) {
		close(sv[0]);
		in = open_or_die(pdf);
		usleep(300000);
		while ((n = read(in, buf, sizeof(buf))) > 0) {
			if (write(sv[1], buf, n) != n)
				_exit(1);
			usleep(20000);
		}
		_exit(0);
	}
	close(sv[1]);
	extract_one(sv[0], 100, 10, &r);
	waitpid(writer, &status, 0);
	T_OK(strstr(r.text, "Three") != NULL, "a PDF from a non-blocking "
	    "socket, written late and in pieces (%zu bytes)", r.len);
}

static void
test_garbage(const char *garbage)
{
	struct result	 r;

	extract_one(open_or_die(garbage), 100, 10, &r);
	T_OK(r.called == 1 && r.ended > 0 && r.len == 0 &&
	    r.ended - r.asked < 5, "garbage: empty text at once "
	    "(%zu bytes, %.2f s)", r.len, r.ended - r.asked);
}

/*
 * Input that never ends, and input that never comes: the jail is
 * killed at its timeout either way.
 */
static void
test_timeout(void)
{
	struct result	 r;
	char		 zeros[65536];
	pid_t		 writer;
	int		 p[2], status;

	if (pipe(p) == -1)
		err(1, "pipe");
	extract_one(p[0], 100, 2, &r);
	T_OK(r.called == 1 && r.ended > 0 && r.ended - r.asked >= 1.9 &&
	    r.ended - r.asked < 4, "a PDF that never arrives is killed at "
	    "2 s (%.2f s)", r.ended - r.asked);
	close(p[1]);

	if (pipe(p) == -1)
		err(1, "pipe");
	memset(zeros, '%', sizeof(zeros));
	if ((writer = fork()) == 0) {
		close(p[0]);
		signal(SIGPIPE, SIG_DFL);
		for (;;)
			if (write(p[1], zeros, sizeof(zeros)) == -1)
				_exit(0);
	}
	close(p[1]);
	extract_one(p[0], 100, 3, &r);
	T_OK(r.called == 1 && r.ended > 0 && r.ended - r.asked < 5,
	    "an endless PDF ends by 3 s or its memory bound (%.2f s)",
	    r.ended - r.asked);
	waitpid(writer, &status, 0);
	T_OK(WIFSIGNALED(status) || WIFEXITED(status),
	    "and its writer saw the reader go");
}

/* More stalled requests than jails: they wait their turn. */
static void
test_queue(void)
{
	struct result	 r[NJOBS];
	int		 p[NJOBS][2], i, late = 0, ok = 1;
	double		 t0 = now();

	for (i = 0; i < NJOBS; i++) {
		if (pipe(p[i]) == -1)
			err(1, "pipe");
		memset(&r[i], 0, sizeof(r[i]));
		r[i].fd = -1;
		fe_extract(p[i][0], 10, 2, got_fd, &r[i]);
	}
	wait_calls(r, NJOBS);
	read_texts(r, NJOBS, 15);
	for (i = 0; i < NJOBS; i++) {
		ok &= r[i].called == 1 && r[i].ended > 0;
		late += r[i].ended - t0 >= 3.5;
		close(p[i][1]);
	}
	T_OK(ok, "%d requests at once all end", NJOBS);
	T_OK(late == NJOBS - 4, "4 run at once, %d wait for a jail "
	    "(%d ended after 3.5 s)", NJOBS - 4, late);
}

static void
test_cancel(void)
{
	struct result	 r;
	int		 p[2];
	uint32_t	 id;
	double		 until;

	if (pipe(p) == -1)
		err(1, "pipe");
	memset(&r, 0, sizeof(r));
	id = fe_extract(p[0], 10, 1, got_fd, &r);
	fe_extract_cancel(id);
	for (until = now() + 1; now() < until;) {
		event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
		usleep(1000);
	}
	T_OK(id != 0 && r.called == 0, "a cancelled call hears nothing");
	close(p[1]);
}

/* The jails the child still has (its children), or -1. */
static int
jails(pid_t pid)
{
	char	 path[64], buf[256];
	FILE	*f;
	int	 n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid,
	    (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fscanf(f, "%255s", buf) == 1)
		n++;
	fclose(f);
	return n;
}

static int
status_is(pid_t pid, const char *field, const char *want)
{
	char	 path[64], line[256];
	size_t	 len = strlen(field);
	FILE	*f;
	int	 found = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, field, len) == 0 && line[len] == ':')
			found = strncmp(line + len + 1 + strspn(line + len + 1,
			    " \t"), want, strlen(want)) == 0;
	fclose(f);
	return found;
}

static void
test_confined(pid_t pid)
{
	struct privuser	 pu;
	char		 uid[32];

	if (priv_lookup(EXTRACT_USER, &pu) == -1)
		errx(1, "no user %s", EXTRACT_USER);
	snprintf(uid, sizeof(uid), "%d\t", (int)pu.uid);
	T_OK(status_is(pid, "Seccomp", "2") &&
	    status_is(pid, "NoNewPrivs", "1"),
	    "the child is under seccomp with NoNewPrivs");
	T_OK(status_is(pid, "Uid", uid), "and runs as " EXTRACT_USER);
}

/* A descendant of pid named comm, or 0. */
static pid_t
descendant(pid_t pid, const char *comm)
{
	char	 path[64], name[64];
	FILE	*f;
	int	 kid;
	pid_t	 found = 0;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if ((f = fopen(path, "r")) != NULL) {
		if (fgets(name, sizeof(name), f) != NULL &&
		    strncmp(name, comm, strlen(comm)) == 0 &&
		    name[strlen(comm)] == '\n')
			found = pid;
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid,
	    (int)pid);
	if (found != 0 || (f = fopen(path, "r")) == NULL)
		return found;
	while (found == 0 && fscanf(f, "%d", &kid) == 1)
		found = descendant(kid, comm);
	fclose(f);
	return found;
}

static int
same_ns(pid_t pid, const char *ns)
{
	char	 a[64], b[64], path[64];
	ssize_t	 n, m;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, ns);
	n = readlink(path, a, sizeof(a) - 1);
	snprintf(path, sizeof(path), "/proc/self/ns/%s", ns);
	m = readlink(path, b, sizeof(b) - 1);
	if (n <= 0 || m <= 0)
		return -1;
	return n == m && memcmp(a, b, n) == 0;
}

static int
in_jail(pid_t pid, const char *path)
{
	char	 p[256];

	snprintf(p, sizeof(p), "/proc/%d/root%s", (int)pid, path);
	return access(p, F_OK) == 0;
}

/* What the jailed pdftotext has, seen from outside. */
static void
test_jail(pid_t child)
{
	pid_t	 pid = descendant(child, "pdftotext");

	T_OK(pid != 0, "pdftotext runs under the extract child (%d)",
	    (int)pid);
	if (pid == 0)
		return;
	T_OK(same_ns(pid, "net") == 0 && same_ns(pid, "user") == 0 &&
	    same_ns(pid, "pid") == 0 && same_ns(pid, "mnt") == 0 &&
	    same_ns(pid, "ipc") == 0, "in namespaces of its own (net, user, "
	    "pid, mount, ipc)");
	T_OK(status_is(pid, "CapEff", "0000000000000000") &&
	    status_is(pid, "CapBnd", "0000000000000000"),
	    "with no capability, even in its namespace");
	T_OK(status_is(pid, "Seccomp", "2") &&
	    status_is(pid, "NoNewPrivs", "1"),
	    "and the extract child's seccomp filter");
	T_OK(status_is(pid, "Seccomp_filters", "2"),
	    "and a filter of its own, from bwrap --seccomp (2 in all)");
	T_OK(in_jail(pid, "/usr/bin/pdftotext") && !in_jail(pid, "/etc/passwd")
	    && !in_jail(pid, "/etc/shadow") && !in_jail(pid, "/home") &&
	    !in_jail(pid, "/var") && !in_jail(pid, "/run"),
	    "its root holds /usr, and no /etc/passwd, /etc/shadow, /var, "
	    "/run, /home");
}

static void *
thread_main(void *arg)
{
	return arg;
}

/* In a child under the jail's filter: what pdftotext may still do. */
static int
under_jail_filter(void)
{
	struct sock_fprog	 prog;
	const unsigned char	*bpf;
	pthread_t		 t;
	size_t			 len;
	pid_t			 pid;
	int			 sv[2], bad = 0;

	extract_jail_prepare();
	bpf = extract_jail_bpf(&len);
	prog.len = len / sizeof(struct sock_filter);
	prog.filter = (struct sock_filter *)bpf;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == -1)
		return 1;
	if ((pid = fork()) == 0)
		_exit(0);
	bad |= (pid != -1 || errno != EPERM) << 1;
	bad |= (socket(AF_INET, SOCK_STREAM, 0) != -1) << 2;
	bad |= (socket(AF_UNIX, SOCK_STREAM, 0) != -1) << 3;
	bad |= (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != -1) << 4;
	bad |= (unshare(CLONE_NEWUSER) != -1) << 5;
	bad |= (kill(getppid(), 0) != -1) << 6;
	/* What it needs: threads, files, memory. */
	bad |= (pthread_create(&t, NULL, thread_main, NULL) != 0 ||
	    pthread_join(t, NULL) != 0) << 7;
	bad |= (open("/dev/null", O_RDONLY) == -1) << 8;
	return bad;
}

static void
test_jail_filter(void)
{
	pid_t	 pid;
	int	 status;

	if ((pid = fork()) == -1)
		err(1, "fork");
	if (pid == 0)
		_exit(under_jail_filter());
	waitpid(pid, &status, 0);
	T_OK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "the jail's own filter: no fork, socket, namespace or signal; "
	    "threads and files (status %#x)", status);
}

/* The frontend goes: its running jail is killed, not left to time out. */
static void
test_frontend_gone(pid_t pid)
{
	struct result	 r;
	int		 p[2];
	double		 t0;

	if (pipe(p) == -1)
		err(1, "pipe");
	memset(&r, 0, sizeof(r));
	r.fd = -1;
	fe_extract(p[0], 10, 60, got_fd, &r);
	wait_calls(&r, 1);
	usleep(200000);
	T_OK(jails(pid) == 1, "a jail runs (%d)", jails(pid));
	test_jail(pid);
	t0 = now();
	shutdown(fe_sock, SHUT_RDWR);
	read_texts(&r, 1, 10);
	T_OK(r.ended > 0 && r.ended - t0 < 3, "the frontend's channel "
	    "closes: its jail is killed (%.2f s)", r.ended - t0);
	/* Our side hears the end too. */
	for (t0 = now(); now() < t0 + 0.5;) {
		event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
		usleep(1000);
	}
	T_OK(jails(pid) == 0, "and reaped (%d left)", jails(pid));
	close(p[1]);
}

static void
test_missing(const char *pdf)
{
	struct result	 r;

	extract_one(open_or_die(pdf), 10, 5, &r);
	T_OK(r.called == 1 && r.fd == -1 && r.len == 0,
	    "no pdftotext: the call fails (called %d)", r.called);
}

int
main(int argc, char *argv[])
{
	pid_t	 pid;
	int	 fd, status, ch, missing = 0;

	while ((ch = getopt(argc, argv, "m")) != -1) {
		if (ch != 'm')
			errx(1, "usage: extract_try [-m] depotd pdf garbage");
		missing = 1;
	}
	argc -= optind;
	argv += optind;
	if (argc != 3)
		errx(1, "usage: extract_try [-m] depotd pdf garbage");
	signal(SIGPIPE, SIG_IGN);
	log_init("extract_try", 1, 0);
	if ((base = event_base_new()) == NULL)
		errx(1, "event_base_new");
	pid = peer_spawn(argv[0], "extract", &fd);
	T_OK(start_child(fd), "the extract child starts under a test master");
	test_confined(pid);
	test_jail_filter();
	if (missing)
		test_missing(argv[1]);
	else {
		test_text(argv[1]);
		test_stream(argv[1]);
		test_garbage(argv[2]);
		test_timeout();
		test_queue();
		test_cancel();
		test_frontend_gone(pid);
		T_OK(fe_extract(open_or_die(argv[1]), 1, 1, got_fd,
		    &(struct result){ 0 }) == 0,
		    "with the child's channel gone, a call fails at once");
	}
	/* Our own child only. */
	if (pid > 1) {
		kill(pid, SIGTERM);
		waitpid(pid, &status, 0);
	}
	return t_done();
}
