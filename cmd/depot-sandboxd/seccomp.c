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
 * seccomp.c: the system-call filter of the jails.
 *
 * Built once at start-up with libseccomp and kept as a compiled BPF
 * program; every jail gets its own memfd copy, which bubblewrap reads
 * with --seccomp and installs just before it runs the runner.  The
 * filter allows by default and refuses, with EPERM, the calls a Python
 * or shell workload has no use for and that widen the kernel's attack
 * surface: io_uring, keys, userfaultfd, bpf, namespaces and mounts,
 * tracing other processes, module and kexec loading, perf events, and
 * rare socket families.  clone3 answers ENOSYS, so that the C library
 * falls back to clone, whose namespace flags the filter can see.
 * System calls of another architecture kill the process (libseccomp's
 * default for a foreign architecture).
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <seccomp.h>

#include "log.h"
#include "sandboxd.h"

static const char *const denied_calls[] = {
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"keyctl", "add_key", "request_key",
	"userfaultfd", "bpf", "perf_event_open", "fanotify_init",
	"unshare", "setns",
	"mount", "umount", "umount2", "pivot_root", "chroot",
	"fsopen", "fsconfig", "fsmount", "fspick", "move_mount",
	"open_tree", "mount_setattr",
	"ptrace", "process_vm_readv", "process_vm_writev",
	"process_madvise", "pidfd_getfd", "kcmp",
	"kexec_load", "kexec_file_load",
	"init_module", "finit_module", "delete_module",
	"name_to_handle_at", "open_by_handle_at",
	"swapon", "swapoff", "reboot", "acct", "quotactl", "quotactl_fd",
	"syslog", "uselib", "vhangup", "iopl", "ioperm", "lookup_dcookie",
	"settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
	"sethostname", "setdomainname", "move_pages", "migrate_pages",
	NULL
};

/* Families with a history of kernel bugs and no use in a jail. */
static const int denied_families[] = {
	3 /* AX25 */, 4 /* IPX */, 5 /* APPLETALK */, 9 /* X25 */,
	15 /* KEY */, 17 /* PACKET */, 21 /* RDS */, 26 /* LLC */,
	29 /* CAN */, 30 /* TIPC */, 31 /* BLUETOOTH */, 38 /* ALG */,
	40 /* VSOCK */, 44 /* XDP */,
};

static const unsigned long denied_clone_flags[] = {
	CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET,
	CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWCGROUP,
};

static void	*filter_prog;
static size_t	 filter_len;

static void
deny(scmp_filter_ctx ctx, int nr, unsigned int nargs,
    const struct scmp_arg_cmp *cmp)
{
	int	 rv;

	rv = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), nr, nargs,
	    cmp);
	if (rv < 0)
		fatalx("seccomp: rule for call %d: %s", nr, strerror(-rv));
}

static void
filter_rules(scmp_filter_ctx ctx)
{
	struct scmp_arg_cmp	 cmp;
	size_t			 i;
	int			 nr;

	for (i = 0; denied_calls[i] != NULL; i++) {
		/* A call this architecture lacks needs no rule. */
		nr = seccomp_syscall_resolve_name(denied_calls[i]);
		if (nr != __NR_SCMP_ERROR)
			deny(ctx, nr, 0, NULL);
	}
	for (i = 0; i < sizeof(denied_families) / sizeof(int); i++) {
		cmp = (struct scmp_arg_cmp)SCMP_A0(SCMP_CMP_EQ,
		    denied_families[i]);
		deny(ctx, SCMP_SYS(socket), 1, &cmp);
	}
	for (i = 0; i < sizeof(denied_clone_flags) / sizeof(long); i++) {
		cmp = (struct scmp_arg_cmp)SCMP_A0(SCMP_CMP_MASKED_EQ,
		    denied_clone_flags[i], denied_clone_flags[i]);
		deny(ctx, SCMP_SYS(clone), 1, &cmp);
	}
	/* Typing into the terminal of someone else. */
	cmp = (struct scmp_arg_cmp)SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL,
	    TIOCSTI);
	deny(ctx, SCMP_SYS(ioctl), 1, &cmp);
	cmp = (struct scmp_arg_cmp)SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL,
	    TIOCLINUX);
	deny(ctx, SCMP_SYS(ioctl), 1, &cmp);
	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3),
	    0) < 0)
		fatalx("seccomp: rule for clone3");
}

void
jail_seccomp_init(void)
{
	scmp_filter_ctx	 ctx;
	off_t		 len;
	int		 fd, rv;

	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL)
		fatalx("seccomp_init");
	filter_rules(ctx);
	if ((fd = memfd_create("depot-seccomp", MFD_CLOEXEC)) == -1)
		fatal("memfd_create");
	if ((rv = seccomp_export_bpf(ctx, fd)) < 0)
		fatalx("seccomp_export_bpf: %s", strerror(-rv));
	seccomp_release(ctx);
	if ((len = lseek(fd, 0, SEEK_END)) <= 0 ||
	    (filter_prog = malloc(len)) == NULL ||
	    pread(fd, filter_prog, len, 0) != len)
		fatal("seccomp: reading the program back");
	filter_len = len;
	close(fd);
}

int
jail_seccomp_fd(void)
{
	int	 fd;

	/* Each jail reads its own copy from offset 0. */
	if ((fd = memfd_create("depot-seccomp", MFD_CLOEXEC)) == -1)
		return -1;
	if (write(fd, filter_prog, filter_len) != (ssize_t)filter_len ||
	    lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}
