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
 * confine_try.c: runs a role's real lockdown (lockdown_role, as the
 * child's start-up calls it), then tries one thing and prints what
 * happened: "ok" or the errno name (EPERM, EACCES, ...).  A call the
 * filter kills for prints nothing; the caller sees the signal.
 *
 *	confine_try [-x] [-u user] [-r root] [-R path] [-W path] [-p port]
 *	    [-C cafile] role action [argument]
 *	confine_try -L program [argument ...]
 *
 * -x drops to the user without any lockdown: what the same uid could
 * do unconfined, so that a refusal is shown to come from the lockdown.
 * -R and -W (repeatable) are the role's read and read-write paths; -p
 * (repeatable) the TCP ports a role that connects only to listed ports
 * (the frontend: its upstreams') may reach.
 *
 * Actions: open PATH, create DIR, unix PATH (connect), tcp PORT
 * (connect to 127.0.0.1), bind (TCP, 127.0.0.1, any port), socket (a
 * new TCP socket), udp (a new UDP socket), abstract (connect to an
 * abstract unix socket made before the lockdown), kill PID (SIGCONT),
 * ptrace PID (attach), exec PATH (runs PATH with the argument "ok"),
 * pair (a descriptor passed over a socketpair, then used), curl PORT
 * (libcurl, set up before the lockdown as a frontend sets it up,
 * fetches http://upstream.test:PORT/ with the name given by
 * CURLOPT_RESOLVE: 127.0.0.1; with -C file, https:// checked against
 * that file's certificates, read before the lockdown and given as
 * CURLOPT_CAINFO_BLOB), fastopen PORT (TCP Fast Open to 127.0.0.1:
 * sendto(2) with MSG_FASTOPEN and the address, as connect(2) never
 * called; "ok" when the connection is then up), fastopen-msg PORT and
 * fastopen-mmsg PORT (the same through sendmsg(2) and sendmmsg(2)),
 * tfo-connect PORT (setsockopt TCP_FASTOPEN_CONNECT, then connect and
 * write),
 * tfo-listen (setsockopt TCP_FASTOPEN, the server side).  The sockets
 * of tcp, bind and the TCP Fast Open actions are made before the
 * lockdown, so that they are tried even where the role may make none.
 *
 * -L runs program on a kernel made to look as if it had no Landlock:
 * the Landlock system calls fail with ENOSYS, for it and its children.
 */
#include <sys/types.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <curl/curl.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "lockdown.h"

#define MAX_PATHS	8

struct attempt {
	const char	*action;
	const char	*arg;
	int		 fd;		/* made before the lockdown */
	int		 peer;
	struct sockaddr_un sun;
	socklen_t	 sunlen;
	CURL		*curl;
	struct curl_slist *resolve;
	const char	*cafile;	/* -C: https, this CA */
};

static __dead void
usage(void)
{
	fprintf(stderr, "usage: confine_try [-x] [-u user] [-r root] "
	    "[-R path] [-W path] [-p port] [-C cafile] role action "
	    "[argument]\n");
	exit(2);
}

static int
loopback(struct sockaddr_in *sin, const char *port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port != NULL ? atoi(port) : 0);
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sizeof(*sin);
}

/* An abstract socket listening, owned by no Landlock domain. */
static int
abstract_listener(struct attempt *a)
{
	int	 fd;

	memset(&a->sun, 0, sizeof(a->sun));
	a->sun.sun_family = AF_UNIX;
	snprintf(a->sun.sun_path + 1, sizeof(a->sun.sun_path) - 1,
	    "depot-confine-%d", (int)getpid());
	a->sunlen = offsetof(struct sockaddr_un, sun_path) + 1 +
	    strlen(a->sun.sun_path + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
	    bind(fd, (struct sockaddr *)&a->sun, a->sunlen) == -1 ||
	    listen(fd, 1) == -1)
		err(2, "abstract listener");
	return fd;
}

static size_t
discard(char *ptr, size_t size, size_t n, void *arg)
{
	return size * n;
}

/* The handle and the address, made while files can still be read. */
static void
prepare_curl(struct attempt *a)
{
	struct curl_blob	 blob;
	char			 url[128], entry[128], *pem;
	size_t			 len;
	FILE			*fp;

	snprintf(url, sizeof(url), "%s://upstream.test:%s/",
	    a->cafile != NULL ? "https" : "http", a->arg);
	snprintf(entry, sizeof(entry), "upstream.test:%s:127.0.0.1", a->arg);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0 ||
	    (a->curl = curl_easy_init()) == NULL ||
	    (a->resolve = curl_slist_append(NULL, entry)) == NULL)
		errx(2, "curl set-up");
	curl_easy_setopt(a->curl, CURLOPT_URL, url);
	curl_easy_setopt(a->curl, CURLOPT_RESOLVE, a->resolve);
	curl_easy_setopt(a->curl, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(a->curl, CURLOPT_TIMEOUT, 10L);
	curl_easy_setopt(a->curl, CURLOPT_NOSIGNAL, 1L);
	if (a->cafile == NULL)
		return;
	if ((fp = fopen(a->cafile, "r")) == NULL)
		err(2, "%s", a->cafile);
	if ((pem = malloc(65536)) == NULL ||
	    (len = fread(pem, 1, 65536, fp)) == 0)
		errx(2, "%s: empty", a->cafile);
	fclose(fp);
	blob.data = pem;
	blob.len = len;
	blob.flags = CURL_BLOB_COPY;
	if (curl_easy_setopt(a->curl, CURLOPT_CAINFO_BLOB, &blob) != CURLE_OK)
		errx(2, "CURLOPT_CAINFO_BLOB");
	free(pem);
}

/* 0 when the server answered 200; errno is the connection's. */
static int
try_curl(struct attempt *a)
{
	CURLcode	 rc;
	long		 status = 0, os_errno = 0;

	rc = curl_easy_perform(a->curl);
	curl_easy_getinfo(a->curl, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(a->curl, CURLINFO_OS_ERRNO, &os_errno);
	/* Freed, so that a sanitizer's leak check has nothing to say. */
	curl_easy_cleanup(a->curl);
	curl_slist_free_all(a->resolve);
	curl_global_cleanup();
	if (rc == CURLE_OK && status == 200)
		return 0;
	errno = os_errno != 0 ? os_errno : EIO;
	return -1;
}

/* What the attempt needs from before the lockdown. */
static void
prepare(struct attempt *a)
{
	int	 sv[2];

	a->fd = a->peer = -1;
	if (strcmp(a->action, "curl") == 0)
		prepare_curl(a);
	if (strcmp(a->action, "tcp") == 0 || strcmp(a->action, "bind") == 0 ||
	    strncmp(a->action, "fastopen", 8) == 0 ||
	    strncmp(a->action, "tfo-", 4) == 0)
		a->fd = socket(AF_INET, SOCK_STREAM, 0);
	else if (strcmp(a->action, "unix") == 0 ||
	    strcmp(a->action, "abstract") == 0)
		a->fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (strcmp(a->action, "abstract") == 0)
		a->peer = abstract_listener(a);
	if (strcmp(a->action, "pair") == 0) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
			err(2, "socketpair");
		a->fd = sv[0];
		a->peer = sv[1];
	}
	if (a->fd == -1 && a->peer == -1 && (strcmp(a->action, "tcp") == 0 ||
	    strcmp(a->action, "unix") == 0 || strcmp(a->action, "bind") == 0 ||
	    strncmp(a->action, "fastopen", 8) == 0 ||
	    strncmp(a->action, "tfo-", 4) == 0))
		err(2, "socket");
}

static int
connect_unix(int fd, const char *path)
{
	struct sockaddr_un	 sun;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strlcpy(sun.sun_path, path, sizeof(sun.sun_path));
	return connect(fd, (struct sockaddr *)&sun, sizeof(sun));
}

static int
try_create(const char *dir)
{
	char	 path[1024];
	int	 fd;

	snprintf(path, sizeof(path), "%s/confine-%d", dir, (int)getpid());
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600)) == -1)
		return -1;
	if (write(fd, "x", 1) != 1 || close(fd) == -1 || unlink(path) == -1)
		return -1;
	return 0;
}

/* Passes one end of a pipe over the pair, then writes through it. */
static int
try_pair(struct attempt *a)
{
	union {
		struct cmsghdr	 hdr;
		char		 buf[CMSG_SPACE(sizeof(int))];
	}		 cm;
	struct msghdr	 msg;
	struct iovec	 iov;
	char		 c = 'x';
	int		 p[2], got;

	if (pipe(p) == -1)
		return -1;
	memset(&msg, 0, sizeof(msg));
	memset(&cm, 0, sizeof(cm));
	iov.iov_base = &c;
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cm.buf;
	msg.msg_controllen = sizeof(cm.buf);
	cm.hdr.cmsg_level = SOL_SOCKET;
	cm.hdr.cmsg_type = SCM_RIGHTS;
	cm.hdr.cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(&cm.hdr), &p[1], sizeof(int));
	if (sendmsg(a->fd, &msg, 0) != 1 || recvmsg(a->peer, &msg, 0) != 1)
		return -1;
	memcpy(&got, CMSG_DATA(&cm.hdr), sizeof(int));
	if (write(got, "y", 1) != 1 || read(p[0], &c, 1) != 1 || c != 'y')
		return -1;
	return 0;
}

static int
try_ptrace(pid_t pid)
{
	if (ptrace(PTRACE_ATTACH, pid, NULL, NULL) == -1)
		return -1;
	waitpid(pid, NULL, __WALL);
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	return 0;
}

/*
 * TCP Fast Open: the address goes with the data, and the kernel
 * connects from inside sendto(2), sendmsg(2) or sendmmsg(2).  Without
 * a cookie for the server the SYN carries none of the data, but the
 * connection is made all the same: getpeername(2) shows it up.
 */
static int
try_fastopen(struct attempt *a, const char *how)
{
	struct sockaddr_in	 sin, peer;
	struct mmsghdr		 mm;
	struct iovec		 iov;
	socklen_t		 len = sizeof(peer);
	ssize_t			 n;
	char			 c = 'x';

	loopback(&sin, a->arg);
	memset(&mm, 0, sizeof(mm));
	iov.iov_base = &c;
	iov.iov_len = 1;
	mm.msg_hdr.msg_name = &sin;
	mm.msg_hdr.msg_namelen = sizeof(sin);
	mm.msg_hdr.msg_iov = &iov;
	mm.msg_hdr.msg_iovlen = 1;
	if (strcmp(how, "fastopen") == 0)
		n = sendto(a->fd, &c, 1, MSG_FASTOPEN,
		    (struct sockaddr *)&sin, sizeof(sin));
	else if (strcmp(how, "fastopen-msg") == 0)
		n = sendmsg(a->fd, &mm.msg_hdr, MSG_FASTOPEN);
	else if (strcmp(how, "fastopen-mmsg") == 0)
		n = sendmmsg(a->fd, &mm, 1, MSG_FASTOPEN) == 1 ? 1 : -1;
	else
		errx(2, "unknown action %s", how);
	if (n != 1)
		return -1;
	return getpeername(a->fd, (struct sockaddr *)&peer, &len);
}

/*
 * TCP_FASTOPEN_CONNECT: connect(2) defers the SYN to the first write.
 * Set with junk in the upper halves of the level and option registers,
 * which the kernel, reading ints, ignores: a filter must too.
 */
static int
try_tfo_connect(struct attempt *a)
{
	struct sockaddr_in	 sin;
	const unsigned long	 junk = 0x5a5a5a5aUL << 32;
	int			 on = 1;

	if (syscall(SYS_setsockopt, a->fd, junk | IPPROTO_TCP,
	    junk | TCP_FASTOPEN_CONNECT, &on, (socklen_t)sizeof(on)) == -1)
		return -1;
	if (connect(a->fd, (struct sockaddr *)&sin, loopback(&sin, a->arg)) ==
	    -1)
		return -1;
	return write(a->fd, "x", 1) == 1 ? 0 : -1;
}

static int
try_tfo_listen(struct attempt *a)
{
	int	 qlen = 5;

	return setsockopt(a->fd, IPPROTO_TCP, TCP_FASTOPEN, &qlen,
	    sizeof(qlen));
}

static int
attempt(struct attempt *a)
{
	struct sockaddr_in	 sin;
	const char		*act = a->action;

	if (strcmp(act, "open") == 0)
		return open(a->arg, O_RDONLY) == -1 ? -1 : 0;
	if (strcmp(act, "create") == 0)
		return try_create(a->arg);
	if (strcmp(act, "unix") == 0)
		return connect_unix(a->fd, a->arg);
	if (strcmp(act, "tcp") == 0)
		return connect(a->fd, (struct sockaddr *)&sin,
		    loopback(&sin, a->arg));
	if (strcmp(act, "bind") == 0)
		return bind(a->fd, (struct sockaddr *)&sin,
		    loopback(&sin, NULL));
	if (strcmp(act, "socket") == 0)
		return socket(AF_INET, SOCK_STREAM, 0) == -1 ? -1 : 0;
	if (strcmp(act, "udp") == 0)
		return socket(AF_INET, SOCK_DGRAM, 0) == -1 ? -1 : 0;
	if (strcmp(act, "abstract") == 0)
		return connect(a->fd, (struct sockaddr *)&a->sun, a->sunlen);
	if (strcmp(act, "kill") == 0)
		return kill(atoi(a->arg), SIGCONT);
	if (strcmp(act, "ptrace") == 0)
		return try_ptrace(atoi(a->arg));
	if (strcmp(act, "exec") == 0)
		return execl(a->arg, a->arg, "ok", (char *)NULL);
	if (strcmp(act, "pair") == 0)
		return try_pair(a);
	if (strcmp(act, "curl") == 0)
		return try_curl(a);
	if (strncmp(act, "fastopen", 8) == 0)
		return try_fastopen(a, act);
	if (strcmp(act, "tfo-connect") == 0)
		return try_tfo_connect(a);
	if (strcmp(act, "tfo-listen") == 0)
		return try_tfo_listen(a);
	errx(2, "unknown action %s", act);
}

static __dead void
without_landlock(char *argv[])
{
	static const char *const calls[] = { "landlock_create_ruleset",
	    "landlock_add_rule", "landlock_restrict_self" };
	scmp_filter_ctx	 ctx;
	size_t		 i;

	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL)
		errx(2, "seccomp_init");
	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS),
		    seccomp_syscall_resolve_name(calls[i]), 0) != 0)
			errx(2, "seccomp_rule_add %s", calls[i]);
	/* Root keeps its privileges across the exec. */
	if (seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) != 0 ||
	    seccomp_load(ctx) != 0)
		errx(2, "seccomp_load");
	execv(argv[0], argv);
	err(2, "%s", argv[0]);
}

static void
add_path(const char **list, int *n, const char *path)
{
	if (*n == MAX_PATHS)
		usage();
	list[(*n)++] = path;
}

int
main(int argc, char *argv[])
{
	const struct lockdown_rules	*pol;
	struct lockdown_rules		 rules;
	uint16_t			 ports[MAX_PATHS];
	size_t				 nports = 0;
	const char			*ro[MAX_PATHS + 1] = { NULL };
	const char			*rw[MAX_PATHS + 1] = { NULL };
	const char			*user = "_depotd", *root = NULL;
	struct privuser			 pu;
	struct attempt			 a;
	int				 ch, nro = 0, nrw = 0, bare = 0;

	memset(&a, 0, sizeof(a));
	while ((ch = getopt(argc, argv, "+C:Lp:r:R:u:W:x")) != -1) {
		switch (ch) {
		case 'C':
			a.cafile = optarg;
			break;
		case 'L':
			if (optind >= argc)
				usage();
			without_landlock(argv + optind);
		case 'p':
			if (nports == MAX_PATHS)
				usage();
			ports[nports++] = atoi(optarg);
			break;
		case 'r':
			root = optarg;
			break;
		case 'R':
			add_path(ro, &nro, optarg);
			break;
		case 'u':
			user = optarg;
			break;
		case 'W':
			add_path(rw, &nrw, optarg);
			break;
		case 'x':
			bare = 1;
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 2 || (pol = lockdown_rules_of(argv[0])) == NULL)
		usage();
	/* As confine_rules gives the frontend its upstreams' ports. */
	rules = *pol;
	if (rules.tcp_connect == LOCKDOWN_TCP_PORTS) {
		rules.ports = ports;
		rules.nports = nports;
	}
	a.action = argv[1];
	a.arg = argc > 2 ? argv[2] : "";
	if (priv_lookup(user, &pu) == -1)
		errx(2, "unknown user %s", user);
	prepare(&a);
	if (bare)
		priv_drop(&pu, NULL);
	else
		lockdown_role(&rules, &pu, root, ro, rw);
	if (attempt(&a) == 0)
		printf("ok\n");
	else
		printf("%s\n", strerrorname_np(errno));
	return 0;
}
