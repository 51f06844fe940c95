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
 * extract_jail.c: one pdftotext run in a bubblewrap jail.
 *
 * The jail has every namespace of its own (no network, no other
 * process, no host user), /usr read-only and nothing else of the
 * host's files but /etc/localtime, no capabilities and an empty
 * environment.  The PDF is its standard input and the text its
 * standard output, so that it opens no file of ours.  Resource limits
 * are set before bwrap runs and hold for pdftotext too: address space,
 * CPU seconds, no file written, few descriptors, no core.
 *
 * RLIMIT_NPROC is not set: it counts every process of the user, in
 * every user namespace, and the frontends and the broker run as the
 * same user, so any small bound would fail their threads or the jail.
 * Instead bwrap puts a second seccomp filter on pdftotext alone
 * (--seccomp): no new process, no socket, no new namespace or mount.
 * pdftotext runs in a pid namespace of its own whose init dies with
 * bwrap (--die-with-parent), and bwrap dies with the timer's kill.
 */
#include <sys/types.h>
#include <sys/resource.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "extract.h"

#define JAIL_SECCOMP_FD		3	/* where bwrap reads the filter */
#define JAIL_SECCOMP_ARG	"3"
#define JAIL_FD_ABOVE		10	/* clear of what is moved below */

/* pdftotext's own filter, as BPF for bwrap --seccomp. */
static unsigned char	 jail_bpf[8192];
static size_t		 jail_bpf_len;

/* What pdftotext has no use for; threads stay allowed. */
static const char *const jail_denied[] = {
	"fork", "vfork", "socket", "socketpair", "connect", "bind",
	"unshare", "setns", "mount", "umount2", "pivot_root", "ptrace",
	"process_vm_readv", "process_vm_writev", "kill", "tgkill",
	NULL
};

static int
jail_filter(scmp_filter_ctx ctx)
{
	struct scmp_arg_cmp	 proc;
	size_t			 i;
	int			 nr;

	for (i = 0; jail_denied[i] != NULL; i++)
		if ((nr = seccomp_syscall_resolve_name(jail_denied[i])) !=
		    __NR_SCMP_ERROR && seccomp_rule_add(ctx,
		    SCMP_ACT_ERRNO(EPERM), nr, 0) != 0)
			return -1;
	/* A clone without CLONE_THREAD is a new process. */
	proc = SCMP_CMP(0, SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0);
	if (seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM),
	    SCMP_SYS(clone), 1, &proc) != 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3),
	    0) != 0)
		return -1;
	return 0;
}

/*
 * Before the lockdown: builds the filter and keeps its BPF, which each
 * jail gets through a pipe (the lockdown has no memfd_create).
 */
void
extract_jail_prepare(void)
{
	scmp_filter_ctx	 ctx;
	ssize_t		 n;
	int		 p[2];

	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL ||
	    jail_filter(ctx) == -1)
		fatalx("seccomp: cannot build the jail's filter");
	if (pipe(p) == -1)
		fatal("pipe");
	if (seccomp_export_bpf(ctx, p[1]) != 0)
		fatalx("seccomp_export_bpf");
	close(p[1]);
	seccomp_release(ctx);
	while ((n = read(p[0], jail_bpf + jail_bpf_len,
	    sizeof(jail_bpf) - jail_bpf_len)) > 0)
		jail_bpf_len += n;
	if (n == -1 || jail_bpf_len == 0 || jail_bpf_len == sizeof(jail_bpf))
		fatalx("the jail's filter: %zu bytes", jail_bpf_len);
	close(p[0]);
}

const unsigned char *
extract_jail_bpf(size_t *len)
{
	*len = jail_bpf_len;
	return jail_bpf;
}

/* The filter in a pipe, at a descriptor above the standard three. */
static int
jail_filter_pipe(void)
{
	int	 p[2], fd;

	if (pipe(p) == -1 ||
	    write(p[1], jail_bpf, jail_bpf_len) != (ssize_t)jail_bpf_len)
		return -1;
	close(p[1]);
	if ((fd = fcntl(p[0], F_DUPFD, JAIL_FD_ABOVE)) == -1)
		return -1;
	close(p[0]);
	return fd;
}

static int
limit(int resource, rlim_t value)
{
	struct rlimit	 rl;

	rl.rlim_cur = rl.rlim_max = value;
	return setrlimit(resource, &rl);
}

/* In the forked child: only async-signal-safe calls until the exec. */
static __dead void
jail_exec(int pdf_fd, int out_fd, int pages, int timeout)
{
	static char *const	 env[] = { NULL };
	char			 last[16];
	char			*argv[] = {
		EXTRACT_BWRAP, "--unshare-all", "--die-with-parent",
		"--new-session", "--cap-drop", "ALL", "--clearenv",
		"--ro-bind", "/usr", "/usr",
		"--symlink", "usr/lib", "/lib",
		"--symlink", "usr/lib64", "/lib64",
		"--symlink", "usr/bin", "/bin",
		"--ro-bind-try", "/etc/localtime", "/etc/localtime",
		"--dev", "/dev", "--tmpfs", "/tmp", "--chdir", "/",
		"--seccomp", JAIL_SECCOMP_ARG,
		"--", EXTRACT_PDFTOTEXT, "-q", "-enc", "UTF-8", "-l", last,
		"-", "-", NULL
	};
	sigset_t		 none;
	int			 null, filter, flags;

	snprintf(last, sizeof(last), "%d", pages);
	/* A group of its own, which the timer kills whole. */
	if (setpgid(0, 0) == -1)
		_exit(126);
	/* Ignored signals stay ignored across exec: pdftotext must die of
	 * SIGPIPE when its reader goes. */
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (limit(RLIMIT_AS, EXTRACT_AS_MAX) == -1 ||
	    limit(RLIMIT_CPU, timeout) == -1 ||
	    limit(RLIMIT_FSIZE, 0) == -1 ||
	    limit(RLIMIT_NOFILE, EXTRACT_NOFILE_MAX) == -1 ||
	    limit(RLIMIT_CORE, 0) == -1)
		_exit(126);
	/*
	 * A frontend may have made the PDF's socket non-blocking (the
	 * flag is the description's, shared): pdftotext would take
	 * EAGAIN for the end of its input.
	 */
	if ((flags = fcntl(pdf_fd, F_GETFL)) == -1 ||
	    fcntl(pdf_fd, F_SETFL, flags & ~O_NONBLOCK) == -1)
		_exit(126);
	/* Out of the way of the descriptors the dup2s below make. */
	if ((pdf_fd = fcntl(pdf_fd, F_DUPFD, JAIL_FD_ABOVE)) == -1 ||
	    (out_fd = fcntl(out_fd, F_DUPFD, JAIL_FD_ABOVE)) == -1)
		_exit(126);
	null = open("/dev/null", O_WRONLY);
	if ((filter = jail_filter_pipe()) == -1 ||
	    dup2(pdf_fd, STDIN_FILENO) == -1 ||
	    dup2(out_fd, STDOUT_FILENO) == -1 ||
	    (null != -1 && dup2(null, STDERR_FILENO) == -1) ||
	    dup2(filter, JAIL_SECCOMP_FD) == -1)
		_exit(126);
	if (null == -1)
		close(STDERR_FILENO);
	closefrom(JAIL_SECCOMP_FD + 1);
	execve(EXTRACT_BWRAP, argv, env);
	_exit(127);
}

pid_t
extract_jail_start(int pdf_fd, int out_fd, int pages, int timeout)
{
	pid_t	 pid;

	switch (pid = fork()) {
	case -1:
		log_warn("fork");
		return -1;
	case 0:
		jail_exec(pdf_fd, out_fd, pages, timeout);
		/* NOTREACHED */
	}
	/* Also here, so that a kill before the child ran finds the group. */
	setpgid(pid, pid);
	return pid;
}

int
extract_jail_check(const char **missing)
{
	if (access(EXTRACT_BWRAP, X_OK) == -1) {
		*missing = EXTRACT_BWRAP;
		return -1;
	}
	if (access(EXTRACT_PDFTOTEXT, X_OK) == -1) {
		*missing = EXTRACT_PDFTOTEXT;
		return -1;
	}
	return 0;
}
