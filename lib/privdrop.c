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
 * privdrop.c: privilege drop.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "privdrop.h"

int
priv_lookup(const char *name, struct privuser *pu)
{
	struct passwd	*pw;

	if ((pw = getpwnam(name)) == NULL)
		return -1;
	strlcpy(pu->name, name, sizeof(pu->name));
	pu->uid = pw->pw_uid;
	pu->gid = pw->pw_gid;
	return 0;
}

void
priv_drop(const struct privuser *pu, const char *chroot_dir)
{
	gid_t	 groups[2];
	int	 deathsig = 0;

	/* The kernel forgets it when the uid changes: set it again. */
	if (prctl(PR_GET_PDEATHSIG, &deathsig) == -1)
		fatal("prctl(PR_GET_PDEATHSIG)");
	if (chroot_dir != NULL && chroot_dir[0] != '\0') {
		if (chroot(chroot_dir) == -1)
			fatal("chroot %s", chroot_dir);
	}
	if (chdir("/") == -1)
		fatal("chdir /");
	groups[0] = pu->gid;
	groups[1] = pu->sgid;
	if (setgroups(pu->sgid != 0 ? 2 : 1, groups) == -1)
		fatal("setgroups");
	if (setresgid(pu->gid, pu->gid, pu->gid) == -1)
		fatal("setresgid");
	if (setresuid(pu->uid, pu->uid, pu->uid) == -1)
		fatal("setresuid");
	/* A drop that can be undone is no drop at all. */
	if (pu->uid != 0 && (setuid(0) != -1 || seteuid(0) != -1))
		fatalx("could regain root after dropping to %s", pu->name);
	if (deathsig != 0 && prctl(PR_SET_PDEATHSIG, deathsig) == -1)
		fatal("prctl(PR_SET_PDEATHSIG)");
	if (deathsig != 0 && getppid() == 1)
		fatalx("the parent is already gone");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		fatal("prctl(PR_SET_NO_NEW_PRIVS)");
}
