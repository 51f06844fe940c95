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
 * lockdown.h: what each role of depotd may still do once it serves.
 *
 * A role's policy is written the OpenBSD way, as pledge(2) promises and
 * unveil(2)-like paths (lockdown_policy.c, the one file a port to
 * OpenBSD rewrites).  On Linux the promises become a seccomp allow-list
 * (lockdown_seccomp.c) and the paths and the network limits Landlock
 * rules (lockdown_landlock.c).
 */
#ifndef DEPOT_LOCKDOWN_H
#define DEPOT_LOCKDOWN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "privdrop.h"

/* The root of a role that needs no file system, unless chroot says. */
#define LOCKDOWN_EMPTY_DIR	"/var/empty"

/* Where a role may connect over TCP. */
#define LOCKDOWN_TCP_NONE	0
#define LOCKDOWN_TCP_ANY	1	/* any port */
#define LOCKDOWN_TCP_PORTS	2	/* the ports listed, only */

struct lockdown_rules {
	const char	*role;
	const char	*promises;	/* pledge(2) promises */
	int		 empty_root;	/* chroot to an empty directory */
	int		 tcp_connect;	/* LOCKDOWN_TCP_* */
	/*
	 * No Landlock file rules: a domain with them may not mount(2),
	 * and bubblewrap mounts.  Network rules and scoping still hold.
	 */
	int		 no_fs_rules;
	/*
	 * LOCKDOWN_TCP_PORTS: the ports, known from the configuration at
	 * lockdown; none means no TCP at all ("inet" is then dropped).
	 */
	const uint16_t	*ports;
	size_t		 nports;
};

/* What this kernel can enforce. */
struct lockdown_kernel {
	int	 seccomp;		/* 1: seccomp filters */
	int	 landlock_abi;		/* 0: no Landlock */
};

/* The policy of a role by name ("frontend", ...); NULL if none. */
const struct lockdown_rules *lockdown_rules_of(const char *role);
/* The system calls a promise allows on Linux, NULL-terminated. */
const char *const *lockdown_promise_calls(const char *promise);

void	 lockdown_probe(struct lockdown_kernel *);
/*
 * The layers this kernel lacks, in words ("" when none); the same
 * text the master logs and depotctl show status prints.
 */
void	 lockdown_missing(const struct lockdown_kernel *, char *, size_t);
/* Prints the plan of one role, as depotd -n -v shows it. */
void	 lockdown_print_plan(FILE *, const struct lockdown_rules *,
	    const char *user, const char *root, const char *const *ro,
	    const char *const *rw);

/*
 * Confines the calling process for good, in this order: chroot (to
 * root, or LOCKDOWN_EMPTY_DIR for a role with an empty root), the
 * change of user, Landlock (paths ro to read, rw to read and write;
 * the role's network limits; no signals or abstract sockets outside),
 * then the seccomp allow-list.  A layer the kernel lacks is skipped
 * with a warning; anything else that fails is fatal.
 */
void	 lockdown_role(const struct lockdown_rules *,
	    const struct privuser *, const char *root, const char *const *ro,
	    const char *const *rw);

/* The layers, one at a time (lockdown_role uses them). */
int	 lockdown_landlock(const struct lockdown_rules *, int abi,
	    const char *const *ro, const char *const *rw);
int	 lockdown_seccomp(const struct lockdown_rules *);

#endif
