/*
 * privdrop.c: privilege drop and Landlock lockdown.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/landlock.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "privdrop.h"

/* Debian 12's kernel headers predate these; the values are ABI. */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER	(1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE	(1ULL << 14)
#endif

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
	if (chroot_dir != NULL && chroot_dir[0] != '\0') {
		if (chroot(chroot_dir) == -1)
			fatal("chroot %s", chroot_dir);
	}
	if (chdir("/") == -1)
		fatal("chdir /");
	if (setgroups(1, &pu->gid) == -1)
		fatal("setgroups");
	if (setresgid(pu->gid, pu->gid, pu->gid) == -1)
		fatal("setresgid");
	if (setresuid(pu->uid, pu->uid, pu->uid) == -1)
		fatal("setresuid");
	/* A drop that can be undone is no drop at all. */
	if (pu->uid != 0 && (setuid(0) != -1 || seteuid(0) != -1))
		fatalx("could regain root after dropping to %s", pu->name);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		fatal("prctl(PR_SET_NO_NEW_PRIVS)");
}

static uint64_t
landlock_fs_rights(int abi)
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
		all |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		all |= LANDLOCK_ACCESS_FS_TRUNCATE;
	return all;
}

static int
landlock_allow(int ruleset, const char *path, uint64_t rights)
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
		    LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE;
	memset(&pb, 0, sizeof(pb));
	pb.allowed_access = rights;
	pb.parent_fd = fd;
	rc = syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH,
	    &pb, 0);
	close(fd);
	return rc;
}

int
lockdown_paths(const char *const *ro, const char *const *rw)
{
	struct landlock_ruleset_attr	 attr;
	uint64_t			 all, read;
	int				 abi, ruleset;

	abi = syscall(SYS_landlock_create_ruleset, NULL, 0,
	    LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 1) {
		log_warnx("landlock is not available in this kernel; "
		    "filesystem lockdown skipped");
		return -1;
	}
	all = landlock_fs_rights(abi);
	read = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
	memset(&attr, 0, sizeof(attr));
	attr.handled_access_fs = all;
	ruleset = syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (ruleset == -1)
		fatal("landlock_create_ruleset");
	for (; ro != NULL && *ro != NULL; ro++)
		if (landlock_allow(ruleset, *ro, read) == -1)
			fatal("landlock_add_rule %s", *ro);
	for (; rw != NULL && *rw != NULL; rw++)
		if (landlock_allow(ruleset, *rw, all & ~(
		    LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
		    LANDLOCK_ACCESS_FS_MAKE_BLOCK)) == -1)
			fatal("landlock_add_rule %s", *rw);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		fatal("prctl(PR_SET_NO_NEW_PRIVS)");
	if (syscall(SYS_landlock_restrict_self, ruleset, 0) == -1)
		fatal("landlock_restrict_self");
	close(ruleset);
	return 0;
}
