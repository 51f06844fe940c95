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
 * roster.h: what each of depotd's roles is, in one table.  Start-up,
 * process titles, the secrets and configuration parts each role is
 * sent, which roles get channels to each other, the user each runs as,
 * its chroot and its lockdown all derive from this table.  How a role
 * is started is in master_roles.c.
 */
#ifndef DEPOTD_ROSTER_H
#define DEPOTD_ROSTER_H

#include "proto.h"
#include "config.h"

/* Which configured user a role runs as; the master looks them up. */
enum run_as {
	RUN_AS_ROOT,		/* the master */
	RUN_AS_DEPOTD,		/* `user': frontends and broker */
	RUN_AS_STORAGE,		/* `storage user' */
	RUN_AS_SANDBOX,		/* depot-sandboxd's jailed code */
	RUN_AS_EXTRACT,		/* the extract child, alone */
	RUN_AS_MAX,
};

enum chroot_policy {
	CHROOT_NONE,
	CHROOT_CONF,		/* the `chroot' keyword's directory, if set */
	CHROOT_SANDBOX,		/* sandbox local: its socket's directory */
};

/* Which lockdown (Landlock, seccomp) a child applies after the drop. */
enum lockdown_policy {
	LOCKDOWN_NONE,
	LOCKDOWN_FRONTEND,
	LOCKDOWN_STORAGE,
	LOCKDOWN_BROKER,
	LOCKDOWN_SANDBOXD,	/* depot-sandboxd confines itself */
	LOCKDOWN_EXTRACT,
};

struct role {
	enum proc_role		 role;
	const char		*title;		/* -P, ps, show status */
	int			 numbered;	/* title carries the instance */
	int			(*instances)(const struct depotd_conf *);
	int			 secrets;	/* CONF_SECRETS_* it is sent */
	int			 parts;		/* CONF_PART_* it is sent */
	unsigned int		 peers;		/* ROLE_BIT()s it talks to */
	int			 listens;	/* gets the listening sockets */
	enum run_as		 user;
	enum chroot_policy	 chroot;
	enum lockdown_policy	 lockdown;
};

extern const enum proc_role roster_order[];	/* start-up order */
extern const size_t	 roster_norder;

const struct role	*roster_role(enum proc_role);
const struct role	*roster_by_title(const char *);
const char		*role_name(enum proc_role);
/* The user name a run_as stands for in configuration c. */
const char		*roster_user(enum run_as, const struct depotd_conf *);

#endif
