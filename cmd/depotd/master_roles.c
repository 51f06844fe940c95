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
 * master_roles.c: how each role of the roster is started.  In the
 * master, its spawner makes one instance (a pid, and a channel or -1);
 * in the child re-executed with -P, its main runs.  Apart from
 * roster.c, whose data every process reads, since only the master and
 * depotd.c's start-up reach every process's main.
 */
#include <sys/types.h>

#include <stddef.h>

#include "depotd.h"
#include "master_proc.h"
#include "master.h"

struct role_start {
	void	(*spawn)(struct child_proc *);
	/* NULL for a role that is another program (depot-sandboxd). */
	void	(*main)(int instance, int debug, int verbose);
};

static const struct role_start role_starts[ROLE_MAX] = {
	[ROLE_STORAGE] = { master_proc_spawn, storage_main },
	[ROLE_BROKER] = { master_proc_spawn, broker_main },
	[ROLE_FRONTEND] = { master_proc_spawn, frontend_main },
	[ROLE_SANDBOXD] = { master_sandbox_spawn, NULL },
	[ROLE_EXTRACT] = { master_proc_spawn, extract_main },
};

void
master_role_spawn(struct child_proc *cp)
{
	role_starts[cp->role].spawn(cp);
}

master_role_main_fn
master_role_main(enum proc_role role)
{
	if (role < 0 || role >= ROLE_MAX)
		return NULL;
	return role_starts[role].main;
}
