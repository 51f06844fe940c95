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
};

/* Looks the user up (before any chroot: the passwd file is outside). */
int	 priv_lookup(const char *name, struct privuser *);
/*
 * chroot (when dir is not NULL or empty), chdir("/"), setgroups,
 * setresgid, setresuid, then checks that root cannot be regained and
 * sets again the parent-death signal the uid change cleared.  Any
 * failure is fatal.
 */
void	 priv_drop(const struct privuser *, const char *chroot_dir);

#endif
