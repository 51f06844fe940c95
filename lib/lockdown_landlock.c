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
 * lockdown_landlock.c: a role's paths and network limits as Landlock
 * rules.
 *
 * What a rule set may hold grew with the kernel's Landlock ABI: files
 * (1), renames across directories (2), truncation (3), TCP bind and
 * connect (4), device ioctls (5), signals and abstract unix sockets
 * outside the domain (6).  Each is used where the kernel has it.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/landlock.h>

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "lockdown.h"

/* Debian 12's kernel headers predate these; the values are ABI. */
#define LL_FS_REFER		(1ULL << 13)
#define LL_FS_TRUNCATE		(1ULL << 14)
#define LL_FS_IOCTL_DEV		(1ULL << 15)
#define LL_NET_BIND_TCP		(1ULL << 0)
#define LL_NET_CONNECT_TCP	(1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX	(1ULL << 0)
#define LL_SCOPE_SIGNAL		(1ULL << 1)
#define LL_RULE_NET_PORT	2

struct ll_net_port_attr {
	uint64_t	 allowed_access;
	uint64_t	 port;
};

/* The rule set attribute as of ABI 6; older kernels take a prefix. */
struct ll_ruleset_attr {
	uint64_t	 handled_access_fs;
	uint64_t	 handled_access_net;
	uint64_t	 scoped;
};

static uint64_t
fs_rights(int abi)
{
	uint64_t	 all;

	all = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
	    LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR |
	    LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
	    LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |
	    LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |
	    LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
	    LANDLOCK_ACCESS_FS_MAKE_SYM;
	if (abi >= 2)
		all |= LL_FS_REFER;
	if (abi >= 3)
		all |= LL_FS_TRUNCATE;
	if (abi >= 5)
		all |= LL_FS_IOCTL_DEV;
	return all;
}

static int
allow_path(int ruleset, const char *path, uint64_t rights)
{
	struct landlock_path_beneath_attr	 pb;
	struct stat				 sb;
	int					 fd, rc;

	if ((fd = open(path, O_PATH | O_CLOEXEC)) == -1) {
		log_warn("landlock: %s", path);
		return 0;	/* a path that is not there needs no rule */
	}
	/* A rule on a file may only hold rights that apply to files. */
	if (fstat(fd, &sb) == 0 && !S_ISDIR(sb.st_mode))
		rights &= LANDLOCK_ACCESS_FS_EXECUTE |
		    LANDLOCK_ACCESS_FS_WRITE_FILE |
		    LANDLOCK_ACCESS_FS_READ_FILE | LL_FS_TRUNCATE |
		    LL_FS_IOCTL_DEV;
	memset(&pb, 0, sizeof(pb));
	pb.allowed_access = rights;
	pb.parent_fd = fd;
	rc = syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH,
	    &pb, 0);
	close(fd);
	return rc;
}

static int
allow_paths(int ruleset, const char *const *paths, uint64_t rights)
{
	for (; paths != NULL && *paths != NULL; paths++)
		if (allow_path(ruleset, *paths, rights) == -1) {
			log_warn("landlock_add_rule %s", *paths);
			return -1;
		}
	return 0;
}

/*
 * The attribute for this ABI and policy; returns its size.  No role
 * may bind a TCP port.  LOCKDOWN_TCP_NONE may not connect either;
 * LOCKDOWN_TCP_PORTS connects only to the ports allow_ports names;
 * LOCKDOWN_TCP_ANY anywhere (the storage helper: its servers' ports
 * are not known here).  Every role is kept from signalling and from
 * reaching abstract unix sockets outside its own domain.
 */
static size_t
ruleset_attr(const struct lockdown_rules *pol, int abi,
    struct ll_ruleset_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	if (!pol->no_fs_rules)
		attr->handled_access_fs = fs_rights(abi);
	if (abi < 4)
		return sizeof(attr->handled_access_fs);
	attr->handled_access_net = LL_NET_BIND_TCP;
	if (pol->tcp_connect != LOCKDOWN_TCP_ANY)
		attr->handled_access_net |= LL_NET_CONNECT_TCP;
	if (abi < 6)
		return offsetof(struct ll_ruleset_attr, scoped);
	attr->scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
	return sizeof(*attr);
}

static int
allow_ports(int ruleset, const struct lockdown_rules *pol, int abi)
{
	struct ll_net_port_attr	 np;
	size_t			 i;

	if (pol->tcp_connect != LOCKDOWN_TCP_PORTS || pol->nports == 0)
		return 0;
	if (abi < 4) {
		log_warnx("landlock: this kernel has no network rules; the "
		    "%s may connect to any TCP port", pol->role);
		return 0;
	}
	for (i = 0; i < pol->nports; i++) {
		memset(&np, 0, sizeof(np));
		np.allowed_access = LL_NET_CONNECT_TCP;
		np.port = pol->ports[i];
		if (syscall(SYS_landlock_add_rule, ruleset, LL_RULE_NET_PORT,
		    &np, 0) == -1) {
			log_warn("landlock_add_rule port %u",
			    (unsigned)pol->ports[i]);
			return -1;
		}
	}
	return 0;
}

/* 0: in force; -1: this kernel has no Landlock. */
int
lockdown_landlock(const struct lockdown_rules *pol, int abi,
    const char *const *ro, const char *const *rw)
{
	struct ll_ruleset_attr	 attr;
	uint64_t		 read, write;
	size_t			 len;
	int			 ruleset;

	if (abi < 1) {
		log_warnx("landlock is not available in this kernel; "
		    "file system and network lockdown skipped");
		return -1;
	}
	if (pol->no_fs_rules && abi < 4) {
		log_warnx("landlock has no network rules in this kernel "
		    "(ABI %d); network lockdown skipped", abi);
		return -1;
	}
	len = ruleset_attr(pol, abi, &attr);
	read = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
	write = attr.handled_access_fs & ~(LANDLOCK_ACCESS_FS_EXECUTE |
	    LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
	    LL_FS_IOCTL_DEV);
	ruleset = syscall(SYS_landlock_create_ruleset, &attr, len, 0);
	if (ruleset == -1)
		fatal("landlock_create_ruleset");
	if (allow_paths(ruleset, ro, read) == -1 ||
	    allow_paths(ruleset, rw, write) == -1 ||
	    allow_ports(ruleset, pol, abi) == -1)
		fatalx("landlock: cannot build the %s rules", pol->role);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		fatal("prctl(PR_SET_NO_NEW_PRIVS)");
	if (syscall(SYS_landlock_restrict_self, ruleset, 0) == -1)
		fatal("landlock_restrict_self");
	close(ruleset);
	return 0;
}
