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
 * pdftotext runs in a pid namespace of its own whose init dies with
 * bwrap (--die-with-parent), and bwrap dies with the timer's kill.
 */
#include <sys/types.h>
#include <sys/resource.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "log.h"
#include "extract.h"

static int
limit(int resource, rlim_t value)
{
	struct rlimit	 rl;

	rl.rlim_cur = rl.rlim_max = value;
	return setrlimit(resource, &rl);
}

/* In the forked child: only async-signal-safe calls until the exec. */
static void __attribute__((noreturn))
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
		"--", EXTRACT_PDFTOTEXT, "-q", "-enc", "UTF-8", "-l", last,
		"-", "-", NULL
	};
	sigset_t		 none;
	int			 null;

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
	null = open("/dev/null", O_WRONLY);
	if (dup2(pdf_fd, STDIN_FILENO) == -1 ||
	    dup2(out_fd, STDOUT_FILENO) == -1 ||
	    (null != -1 && dup2(null, STDERR_FILENO) == -1))
		_exit(126);
	if (null == -1)
		close(STDERR_FILENO);
	closefrom(STDERR_FILENO + 1);
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
