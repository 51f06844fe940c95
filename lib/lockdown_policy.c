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
 * lockdown_policy.c: each role's policy as pledge(2) promises, and
 * what every promise means on Linux.
 *
 * This is the file an OpenBSD port rewrites: there, lockdown_role
 * passes the promises to pledge(2) and the paths to unveil(2), and the
 * tables of system calls below are not needed.  The Linux meaning of
 * a promise follows pledge(2) where Linux allows it; where it differs:
 *
 *  - "stdio" also holds accept(2) and listen(2) on sockets a process
 *    was given (pledge wants "inet" or "unix" for them), and clone(2)
 *    for threads only (pledge's "stdio" has __tfork);
 *  - kill(2) and tgkill(2) reach only the process itself (pledge's
 *    "stdio" allows the same; "proc" would allow more);
 *  - "recvfd" and "sendfd" add nothing: sendmsg(2) and recvmsg(2) are
 *    "stdio", and seccomp cannot see an SCM_RIGHTS message;
 *  - "unix" and "inet" allow socket(2) of their family only; connect(2)
 *    and bind(2) cannot be told apart by family, so Landlock's network
 *    rules, not seccomp, keep "unix" from reaching TCP ports.
 *
 * No role but extract has "proc" or "exec", and none has "id" or
 * "ptrace": fork, execve, setuid and ptrace are refused to every other
 * child.  The extract child runs bubblewrap, so it also has a promise
 * pledge lacks, "jail": the system calls with which bubblewrap makes
 * its namespaces (mount, pivot_root, unshare, capset, ...), which act
 * only inside the new user namespace, and a netlink socket for its
 * loopback.  Unlike pledge's, "proc" lets kill(2) reach any process;
 * Landlock's signal scoping keeps it to the child's own jails.
 *
 * The frontend calls model upstreams: it has "inet", restricted to
 * TCP stream sockets, and Landlock network rules (ABI 4) for the
 * upstreams' ports alone keep it from connecting anywhere else.  With
 * no upstream it has no "inet" at all.  A kernel without Landlock
 * network rules lets it connect to any port (depotd.conf(5) says so).
 */
#include <string.h>

#include "lockdown.h"

static const struct lockdown_rules policies[] = {
	/*
	 * HTTP in, descriptors from the storage helper, TCP out to the
	 * model upstreams: no files.
	 */
	{ "frontend",	"stdio inet recvfd sendfd",		1,
	    LOCKDOWN_TCP_PORTS, 0, NULL, 0 },
	/* The database, the store and its credentials, TCP out. */
	{ "storage",	"stdio rpath wpath cpath fattr flock unix inet dns "
			"recvfd sendfd",			0,
	    LOCKDOWN_TCP_ANY, 0, NULL, 0 },
	/* The sandbox backend's unix socket. */
	{ "broker",	"stdio unix recvfd sendfd",		1,
	    LOCKDOWN_TCP_NONE, 0, NULL, 0 },
	/* bubblewrap and pdftotext; the files are the uid's and the jail's. */
	{ "extract",	"stdio rpath cpath proc exec jail recvfd "
			"sendfd",				0,
	    LOCKDOWN_TCP_NONE, 1, NULL, 0 },
};

static const char *const calls_stdio[] = {
	"read", "write", "readv", "writev", "pread64", "pwrite64", "preadv",
	"pwritev", "close", "close_range", "fstat", "newfstatat", "statx",
	"lseek", "mmap", "munmap", "mprotect", "mremap", "brk", "madvise",
	"msync", "mincore", "membarrier",
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending",
	"rt_sigtimedwait", "rt_sigsuspend", "sigaltstack", "restart_syscall",
	"getpid", "gettid", "getppid", "getuid", "geteuid", "getgid",
	"getegid", "getresuid", "getresgid", "getgroups", "getpgrp",
	"getpgid", "getsid", "getrusage", "getrlimit", "prlimit64",
	"clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep",
	"gettimeofday", "time", "getrandom", "uname", "sysinfo",
	"sched_yield", "sched_getaffinity", "futex", "set_robust_list",
	"get_robust_list", "rseq", "set_tid_address", "exit", "exit_group",
	"dup", "dup2", "dup3", "fcntl", "pipe", "pipe2", "poll", "ppoll",
	"select", "pselect6", "epoll_create", "epoll_create1", "epoll_ctl",
	"epoll_wait", "epoll_pwait", "epoll_pwait2", "eventfd", "eventfd2",
	"timerfd_create", "timerfd_settime", "timerfd_gettime", "signalfd",
	"signalfd4", "sendfile", "splice", "tee", "ftruncate", "fsync",
	"fdatasync", "umask",
	"recvfrom", "sendto", "recvmsg", "sendmsg", "recvmmsg", "sendmmsg",
	"shutdown", "getsockopt", "setsockopt", "getsockname", "getpeername",
	"accept", "accept4", "listen",
	NULL
};

static const char *const calls_rpath[] = {
	"open", "openat", "stat", "lstat", "access", "faccessat",
	"faccessat2", "readlink", "readlinkat", "getdents", "getdents64",
	"chdir", "fchdir", "getcwd", "statfs", "fstatfs", NULL
};

static const char *const calls_wpath[] = {
	"open", "openat", "truncate", "fallocate", NULL
};

static const char *const calls_cpath[] = {
	"open", "openat", "mkdir", "mkdirat", "rmdir", "rename", "renameat",
	"renameat2", "unlink", "unlinkat", "link", "linkat", "symlink",
	"symlinkat", NULL
};

static const char *const calls_fattr[] = {
	"chmod", "fchmod", "fchmodat", "chown", "fchown", "fchownat",
	"lchown", "utimensat", "utimes", "futimesat", NULL
};

static const char *const calls_flock[] = {
	"flock", NULL
};

/* socket(2) itself is added per family by lockdown_seccomp.c. */
static const char *const calls_net[] = {
	"connect", "bind", "socketpair", NULL
};

/* kill(2), tgkill(2) and clone(2) are widened by lockdown_seccomp.c. */
static const char *const calls_proc[] = {
	"fork", "vfork", "wait4", "waitid", "setpgid", "setsid", "setrlimit",
	NULL
};

/* The dynamic loader of the new program sets its thread pointer. */
static const char *const calls_exec[] = {
	"execve", "execveat", "arch_prctl", NULL
};

/* socket(2) (netlink) and ioctl(2) (SIOCGIFINDEX): lockdown_seccomp.c. */
static const char *const calls_jail[] = {
	"unshare", "mount", "umount2", "pivot_root", "capget", "capset",
	"prctl", "creat", "setresuid", "setresgid", "setgroups", "bind", NULL
};

static const char *const calls_none[] = {
	NULL
};

static const struct {
	const char		*promise;
	const char *const	*calls;
} promises[] = {
	{ "stdio",	calls_stdio },
	{ "rpath",	calls_rpath },
	{ "wpath",	calls_wpath },
	{ "cpath",	calls_cpath },
	{ "fattr",	calls_fattr },
	{ "flock",	calls_flock },
	{ "unix",	calls_net },
	{ "inet",	calls_net },
	{ "dns",	calls_net },
	{ "proc",	calls_proc },
	{ "exec",	calls_exec },
	{ "jail",	calls_jail },
	{ "recvfd",	calls_none },
	{ "sendfd",	calls_none },
};

const struct lockdown_rules *
lockdown_rules_of(const char *role)
{
	size_t	 i;

	for (i = 0; i < sizeof(policies) / sizeof(policies[0]); i++)
		if (strcmp(policies[i].role, role) == 0)
			return &policies[i];
	return NULL;
}

const char *const *
lockdown_promise_calls(const char *promise)
{
	size_t	 i;

	for (i = 0; i < sizeof(promises) / sizeof(promises[0]); i++)
		if (strcmp(promises[i].promise, promise) == 0)
			return promises[i].calls;
	return NULL;
}
