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
 * lockdown_seccomp.c: a role's promises as a seccomp allow-list, built
 * with libseccomp.
 *
 * A system call outside the list fails with EPERM, so that a library
 * probing for an optional call degrades instead of dying.  The calls
 * no child has any use for and an intruder needs most (execve,
 * ptrace, reading or writing another process's memory) kill the
 * process instead: trying them means the child is compromised.
 */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "log.h"
#include "lockdown.h"

static const char *const calls_fatal[] = {
	"ptrace", "process_vm_readv", "process_vm_writev", NULL
};

/* Fatal too, unless the role promised "exec". */
static const char *const calls_exec[] = {
	"execve", "execveat", NULL
};

/* The ioctls of stdio: non-blocking mode, bytes waiting, isatty. */
static const unsigned long ioctls[] = {
	FIONREAD, FIONBIO, FIOCLEX, FIONCLEX, TCGETS,
};

static int
add_call(scmp_filter_ctx ctx, uint32_t action, const char *name,
    unsigned int nargs, const struct scmp_arg_cmp *args)
{
	int	 nr, rc;

	/* A call this architecture lacks needs no rule. */
	if ((nr = seccomp_syscall_resolve_name(name)) == __NR_SCMP_ERROR)
		return 0;
	rc = seccomp_rule_add_array(ctx, action, nr, nargs, args);
	if (rc == -EEXIST)
		rc = 0;
	if (rc < 0)
		log_warnx("seccomp: rule for %s: %s", name, strerror(-rc));
	return rc;
}

static int
add_calls(scmp_filter_ctx ctx, uint32_t action, const char *const *names)
{
	for (; names != NULL && *names != NULL; names++)
		if (add_call(ctx, action, *names, 0, NULL) < 0)
			return -1;
	return 0;
}

/* One rule per value: the call is allowed when argument arg is one. */
static int
add_call_if(scmp_filter_ctx ctx, const char *name, unsigned int arg,
    const unsigned long *values, size_t n)
{
	struct scmp_arg_cmp	 cmp;
	size_t			 i;

	for (i = 0; i < n; i++) {
		cmp = SCMP_CMP(arg, SCMP_CMP_EQ, values[i]);
		if (add_call(ctx, SCMP_ACT_ALLOW, name, 1, &cmp) < 0)
			return -1;
	}
	return 0;
}

/*
 * What stdio holds beyond plain calls: signals to this process only,
 * threads but no new processes, a few ioctls.  clone3 hides its flags
 * in memory seccomp cannot read: ENOSYS makes the C library use clone.
 */
static int
add_stdio_args(scmp_filter_ctx ctx)
{
	unsigned long		 self = (unsigned long)getpid();
	struct scmp_arg_cmp	 thread;

	thread = SCMP_CMP(0, SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD);
	if (add_call_if(ctx, "kill", 0, &self, 1) < 0 ||
	    add_call_if(ctx, "tgkill", 0, &self, 1) < 0 ||
	    add_call_if(ctx, "ioctl", 1, ioctls,
	    sizeof(ioctls) / sizeof(ioctls[0])) < 0 ||
	    add_call(ctx, SCMP_ACT_ALLOW, "clone", 1, &thread) < 0 ||
	    add_call(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL) < 0)
		return -1;
	return 0;
}

/*
 * "proc": new processes and signals to any of them (Landlock's scoping
 * keeps signals to the role's own descendants); "jail": the sockets
 * and the ioctl bubblewrap brings its loopback up with.
 */
static int
add_proc_args(scmp_filter_ctx ctx)
{
	if (add_call(ctx, SCMP_ACT_ALLOW, "kill", 0, NULL) < 0 ||
	    add_call(ctx, SCMP_ACT_ALLOW, "tgkill", 0, NULL) < 0 ||
	    add_call(ctx, SCMP_ACT_ALLOW, "clone", 0, NULL) < 0)
		return -1;
	return 0;
}

static int
add_jail_args(scmp_filter_ctx ctx)
{
	static const unsigned long	 families[] = { AF_UNIX, AF_NETLINK };
	static const unsigned long	 ifindex[] = { SIOCGIFINDEX };

	if (add_call_if(ctx, "socket", 0, families, 2) < 0 ||
	    add_call_if(ctx, "ioctl", 1, ifindex, 1) < 0)
		return -1;
	return 0;
}

/*
 * socket(2) for TCP alone: AF_INET or AF_INET6, SOCK_STREAM (whatever
 * its flags), protocol 0 or IPPROTO_TCP.  Landlock's network rules
 * govern TCP only; UDP, SCTP or MPTCP would slip past them.
 */
static int
add_tcp_socket(scmp_filter_ctx ctx)
{
	static const int	 families[] = { AF_INET, AF_INET6 };
	static const int	 protocols[] = { 0, IPPROTO_TCP };
	struct scmp_arg_cmp	 cmp[3];
	size_t			 f, p;

	for (f = 0; f < 2; f++)
		for (p = 0; p < 2; p++) {
			cmp[0] = SCMP_CMP(0, SCMP_CMP_EQ, families[f]);
			cmp[1] = SCMP_CMP(1, SCMP_CMP_MASKED_EQ, 0xf,
			    SOCK_STREAM);
			cmp[2] = SCMP_CMP(2, SCMP_CMP_EQ, protocols[p]);
			if (add_call(ctx, SCMP_ACT_ALLOW, "socket", 3, cmp) <
			    0)
				return -1;
		}
	return 0;
}

/*
 * TCP Fast Open connects from inside sendto(2), sendmsg(2) and
 * sendmmsg(2), to the address the data is sent to, and Landlock's
 * connect hook never sees that connection: a role held to named ports
 * may not ask for it.  MSG_FASTOPEN fails with EPERM, and so do the
 * socket options that turn Fast Open on for connect(2)
 * (TCP_FASTOPEN_CONNECT) and for a listener (TCP_FASTOPEN), which no
 * role uses.
 *
 * These refusals are a filter of their own, allowing everything else:
 * libseccomp drops a rule with arguments for a call that one without
 * allows whole, and the kernel answers with the strictest of all the
 * filters a process has.  The option is compared on its low 32 bits,
 * as the kernel reads an int: junk in the upper half of the register
 * makes no other option.
 */
static int
add_no_fastopen(scmp_filter_ctx ctx)
{
	static const struct {
		const char	*name;
		unsigned int	 flags;		/* the flags argument */
	} sends[] = {
		{ "sendto", 3 }, { "sendmsg", 2 }, { "sendmmsg", 3 },
	};
	static const int	 opts[] = { TCP_FASTOPEN, TCP_FASTOPEN_CONNECT };
	const uint32_t		 refuse = SCMP_ACT_ERRNO(EPERM);
	struct scmp_arg_cmp	 cmp[2];
	size_t			 i;

	for (i = 0; i < sizeof(sends) / sizeof(sends[0]); i++) {
		cmp[0] = SCMP_CMP(sends[i].flags, SCMP_CMP_MASKED_EQ,
		    MSG_FASTOPEN, MSG_FASTOPEN);
		if (add_call(ctx, refuse, sends[i].name, 1, cmp) < 0)
			return -1;
	}
	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		cmp[0] = SCMP_CMP(1, SCMP_CMP_MASKED_EQ, 0xffffffffUL,
		    IPPROTO_TCP);
		cmp[1] = SCMP_CMP(2, SCMP_CMP_MASKED_EQ, 0xffffffffUL,
		    opts[i]);
		if (add_call(ctx, refuse, "setsockopt", 2, cmp) < 0)
			return -1;
	}
	return 0;
}

static int
add_promise(scmp_filter_ctx ctx, const struct lockdown_rules *pol,
    const char *promise)
{
	static const unsigned long	 unix_family[] = { AF_UNIX };
	static const unsigned long	 inet_family[] = { AF_INET, AF_INET6 };
	const char *const		*calls;

	/* Ports to be named, and none were: no network at all. */
	if (strcmp(promise, "inet") == 0 &&
	    pol->tcp_connect == LOCKDOWN_TCP_PORTS && pol->nports == 0)
		return 0;

	if ((calls = lockdown_promise_calls(promise)) == NULL) {
		log_warnx("seccomp: unknown promise %s", promise);
		return -1;
	}
	if (add_calls(ctx, SCMP_ACT_ALLOW, calls) < 0)
		return -1;
	if (strcmp(promise, "stdio") == 0)
		return add_stdio_args(ctx);
	if (strcmp(promise, "proc") == 0)
		return add_proc_args(ctx);
	if (strcmp(promise, "jail") == 0)
		return add_jail_args(ctx);
	if (strcmp(promise, "unix") == 0)
		return add_call_if(ctx, "socket", 0, unix_family, 1);
	if (strcmp(promise, "inet") == 0 &&
	    pol->tcp_connect == LOCKDOWN_TCP_PORTS)
		return add_tcp_socket(ctx);
	if (strcmp(promise, "inet") == 0 || strcmp(promise, "dns") == 0)
		return add_call_if(ctx, "socket", 0, inet_family, 2);
	return 0;
}

/* Adds each promise; *exec is set when one of them is "exec". */
static int
add_promises(scmp_filter_ctx ctx, const struct lockdown_rules *pol,
    int *exec)
{
	char	*copy, *p, *word;
	int	 rc = 0;

	*exec = 0;
	if ((copy = strdup(pol->promises)) == NULL)
		return -1;
	for (p = copy; rc == 0 && (word = strsep(&p, " ")) != NULL;) {
		if (*word != '\0')
			rc = add_promise(ctx, pol, word);
		if (strcmp(word, "exec") == 0)
			*exec = 1;
	}
	free(copy);
	return rc;
}

/* 0, or libseccomp's error: -EINVAL or -ENOSYS when seccomp is missing. */
static int
load(scmp_filter_ctx ctx)
{
	int	 rc;

	rc = seccomp_load(ctx);
	seccomp_release(ctx);
	if (rc != 0 && rc != -EINVAL && rc != -ENOSYS)
		fatalx("seccomp_load: %s", strerror(-rc));
	return rc;
}

/*
 * The refusals of add_no_fastopen, loaded first: the allow-list has no
 * seccomp(2) for a filter after it.
 */
static int
load_no_fastopen(const struct lockdown_rules *pol)
{
	scmp_filter_ctx	 ctx;

	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL)
		fatalx("seccomp_init");
	if (seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1) != 0 ||
	    add_no_fastopen(ctx) == -1)
		fatalx("seccomp: cannot build the %s Fast Open filter",
		    pol->role);
	return load(ctx);
}

/* 0: the filter is in force; -1: this kernel has no seccomp filters. */
int
lockdown_seccomp(const struct lockdown_rules *pol)
{
	scmp_filter_ctx	 ctx;
	int		 rc = 0, exec;

	if (pol->tcp_connect == LOCKDOWN_TCP_PORTS)
		rc = load_no_fastopen(pol);
	if (rc == 0) {
		if ((ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM))) == NULL)
			fatalx("seccomp_init");
		/* Every thread, also any a library started before now. */
		if (seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1) != 0 ||
		    add_promises(ctx, pol, &exec) == -1 ||
		    add_calls(ctx, SCMP_ACT_KILL_PROCESS, calls_fatal) == -1 ||
		    (!exec && add_calls(ctx, SCMP_ACT_KILL_PROCESS,
		    calls_exec) == -1))
			fatalx("seccomp: cannot build the %s filter",
			    pol->role);
		rc = load(ctx);
	}
	if (rc != 0) {
		log_warnx("seccomp is not available in this kernel; "
		    "system calls are not filtered");
		return -1;
	}
	return 0;
}
