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
 * privdrop.h: giving up root, in the order that leaves no way back.
 */
#ifndef DEPOT_PRIVDROP_H
#define DEPOT_PRIVDROP_H

#include <sys/types.h>

struct privuser {
	char	 name[64];
	uid_t	 uid;
	gid_t	 gid;
	gid_t	 sgid;		/* one supplementary group, 0 none */
};

/* Looks the user up (before any chroot: the passwd file is outside). */
int	 priv_lookup(const char *name, struct privuser *);
/*
 * chroot (when dir is not NULL or empty), chdir("/"), setgroups (the
 * primary group and sgid if set),
 * setresgid, setresuid, then checks that root cannot be regained and
 * sets again the parent-death signal the uid change cleared.  Any
 * failure is fatal.
 */
void	 priv_drop(const struct privuser *, const char *chroot_dir);

#endif
