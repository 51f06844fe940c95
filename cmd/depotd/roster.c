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
 * roster.c: the table of roles (see roster.h): data and lookups only.
 * How each role is started, its spawner in the master and its main in
 * the re-executed child, is the master's (master_roles.c), so that
 * every process's code can look a role up here without reaching the
 * others'.
 */
#include <sys/types.h>

#include <stddef.h>
#include <string.h>

#include "roster.h"

#define SANDBOX_USER	"_depotsbx"
#define EXTRACT_USER	"_depotext"

static int
one(const struct depotd_conf *c)
{
	return 1;
}

static int
preforked(const struct depotd_conf *c)
{
	return c->prefork;
}

static int
sandbox_local(const struct depotd_conf *c)
{
	return c->sandbox == SANDBOX_LOCAL;
}

static const struct role roster[ROLE_MAX] = {
	[ROLE_MASTER] = {
		.role = ROLE_MASTER,
		.title = "master",
		.user = RUN_AS_ROOT,
	},
	[ROLE_STORAGE] = {
		.role = ROLE_STORAGE,
		.title = "storage",
		.instances = one,
		.secrets = CONF_SECRETS_STORAGE,
		.parts = CONF_PART_STORE | CONF_PART_FILES,
		.peers = ROLE_BIT(ROLE_FRONTEND) | ROLE_BIT(ROLE_BROKER),
		.user = RUN_AS_STORAGE,
		.chroot = CHROOT_NONE,
		.lockdown = LOCKDOWN_STORAGE,
	},
	[ROLE_BROKER] = {
		.role = ROLE_BROKER,
		.title = "broker",
		.instances = one,
		.secrets = CONF_SECRETS_BROKER,
		.parts = CONF_PART_SANDBOX,
		.peers = ROLE_BIT(ROLE_FRONTEND) | ROLE_BIT(ROLE_STORAGE),
		.user = RUN_AS_DEPOTD,
		.chroot = CHROOT_SANDBOX,
		.lockdown = LOCKDOWN_BROKER,
	},
	[ROLE_FRONTEND] = {
		.role = ROLE_FRONTEND,
		.title = "frontend",
		.numbered = 1,
		.instances = preforked,
		.secrets = CONF_SECRETS_FRONTEND,
		/* The sandbox part without its location (conf_msg.c). */
		.parts = CONF_PART_FILES | CONF_PART_HTTP | CONF_PART_MODELS |
		    CONF_PART_SANDBOX,
		.peers = ROLE_BIT(ROLE_STORAGE) | ROLE_BIT(ROLE_BROKER) |
		    ROLE_BIT(ROLE_EXTRACT),
		.listens = 1,
		.user = RUN_AS_DEPOTD,
		.chroot = CHROOT_CONF,
		.lockdown = LOCKDOWN_FRONTEND,
	},
	[ROLE_SANDBOXD] = {
		.role = ROLE_SANDBOXD,
		.title = "sandboxd",
		.instances = sandbox_local,
		.user = RUN_AS_SANDBOX,
		.lockdown = LOCKDOWN_SANDBOXD,
	},
	/*
	 * No secrets and no configuration: each request says its pages
	 * and time.  No chroot, since it runs /usr/bin/bwrap.  Its own
	 * user, as it reads what strangers upload: no file or process of
	 * the frontends' and the broker's is its own.
	 */
	[ROLE_EXTRACT] = {
		.role = ROLE_EXTRACT,
		.title = "extract",
		.instances = one,
		.secrets = CONF_SECRETS_NONE,
		.peers = ROLE_BIT(ROLE_FRONTEND),
		.user = RUN_AS_EXTRACT,
		.chroot = CHROOT_NONE,
		.lockdown = LOCKDOWN_EXTRACT,
	},
};

/*
 * Start-up order: the storage helper first, depot-sandboxd last; the
 * extract child before the frontends that call it.
 */
const enum proc_role roster_order[] = {
	ROLE_STORAGE, ROLE_BROKER, ROLE_EXTRACT, ROLE_FRONTEND, ROLE_SANDBOXD,
};
const size_t roster_norder = sizeof(roster_order) / sizeof(roster_order[0]);

const struct role *
roster_role(enum proc_role role)
{
	if (role < 0 || role >= ROLE_MAX)
		return NULL;
	return &roster[role];
}

const struct role *
roster_by_title(const char *title)
{
	int	 i;

	for (i = 0; i < ROLE_MAX; i++)
		if (strcmp(roster[i].title, title) == 0)
			return &roster[i];
	return NULL;
}

const char *
role_name(enum proc_role role)
{
	const struct role	*r = roster_role(role);

	return r != NULL ? r->title : "unknown";
}

const char *
roster_user(enum run_as who, const struct depotd_conf *c)
{
	switch (who) {
	case RUN_AS_DEPOTD:
		return c->user;
	case RUN_AS_STORAGE:
		return c->storage_user;
	case RUN_AS_SANDBOX:
		return SANDBOX_USER;
	case RUN_AS_EXTRACT:
		return EXTRACT_USER;
	default:
		return "root";
	}
}
