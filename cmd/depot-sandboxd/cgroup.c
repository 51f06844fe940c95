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
 * cgroup.c: one control group per session, so that a session's memory,
 * processes and CPU are bounded together, whatever it forks.
 *
 * cgroup v2 is used where /sys/fs/cgroup holds the memory and pids
 * controllers; otherwise the v1 memory, pids and cpu hierarchies.  At
 * start-up, still root, the daemon makes a parent group per hierarchy,
 * caps the memory of all jails together there (total-memory) and hands
 * the group to the unprivileged user; the per-session groups below it
 * are then made, limited, joined and removed without privilege.  On v2
 * the daemon itself moves into a leaf of the parent (a process may only
 * move others between groups below a group it may write), which is why
 * the jails of two daemons on one host share the parent's total.
 *
 * A session's group is also frozen between its calls (cgroup.freeze on
 * v2, the freezer hierarchy on v1, where it is optional), so that no
 * thread or process the code leaves behind runs, and writes, while no
 * call does: see runner_pause.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "privdrop.h"
#include "util.h"
#include "sandboxd.h"

#define CG_ROOT		"/sys/fs/cgroup"
#define CG_PARENT	"depot-sandboxd"

enum cg_mode { CG_NONE, CG_V1, CG_V2 };

static enum cg_mode	 cg_mode;
/* v2: one directory; v1: memory, pids, cpu and, if mounted, freezer. */
#define CG_V1_NEEDED	3
#define CG_V1_FREEZER	3
static const char *const v1_controllers[] = { "memory", "pids", "cpu",
	"freezer" };
static char		 cg_dirs[4][256];
static int		 cg_ndirs;
static int		 cg_freezer;
static char		 cg_hold[300];

static void	cgroup_kill_dir(const char *);

static int
cg_write(const char *dir, const char *file, const char *value)
{
	char	 path[512];
	int	 fd, rv = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	if (write(fd, value, strlen(value)) != (ssize_t)strlen(value))
		rv = -1;
	close(fd);
	return rv;
}

static int
cg_write_i64(const char *dir, const char *file, int64_t v)
{
	char	 buf[32];

	snprintf(buf, sizeof(buf), "%lld", (long long)v);
	return cg_write(dir, file, buf);
}

static int
cg_v2_usable(void)
{
	char	 buf[512];
	ssize_t	 n;
	int	 fd;

	if ((fd = open(CG_ROOT "/cgroup.controllers", O_RDONLY |
	    O_CLOEXEC)) == -1)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strstr(buf, "memory") != NULL && strstr(buf, "pids") != NULL &&
	    access(CG_ROOT, W_OK) == 0;
}

/* Makes dir (as root) and gives it, and the files named, to pu. */
static int
cg_delegate(const char *dir, const struct privuser *pu,
    const char *const files[])
{
	char	 path[512];
	size_t	 i;

	if (mkdir(dir, 0755) == -1 && errno != EEXIST)
		return -1;
	if (pu == NULL)
		return access(dir, W_OK);
	if (chown(dir, pu->uid, pu->gid) == -1)
		return -1;
	for (i = 0; files[i] != NULL; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		if (chown(path, pu->uid, pu->gid) == -1 && errno != ENOENT)
			return -1;
	}
	return 0;
}

static int
cg_setup_v2(const struct privuser *pu, int64_t total)
{
	static const char *const files[] = { "cgroup.procs",
	    "cgroup.subtree_control", NULL };
	char	 leaf[300];

	snprintf(cg_dirs[0], sizeof(cg_dirs[0]), "%s/%s", CG_ROOT, CG_PARENT);
	cg_ndirs = 1;
	(void)cg_write(CG_ROOT, "cgroup.subtree_control", "+memory +pids +cpu");
	if (cg_delegate(cg_dirs[0], pu, files) == -1)
		return -1;
	snprintf(leaf, sizeof(leaf), "%s/daemon-%d", cg_dirs[0], (int)getpid());
	if (mkdir(leaf, 0755) == -1 || cg_write(leaf, "cgroup.procs", "0") ==
	    -1)
		return -1;
	if (pu != NULL && chown(leaf, pu->uid, pu->gid) == -1)
		return -1;
	if (cg_write(cg_dirs[0], "cgroup.subtree_control",
	    "+memory +pids +cpu") == -1)
		return -1;
	if (total > 0 && cg_write_i64(cg_dirs[0], "memory.max", total) == -1)
		return -1;
	/* In every group but the root since Linux 5.2. */
	snprintf(leaf, sizeof(leaf), "%s/cgroup.freeze", cg_dirs[0]);
	cg_freezer = access(leaf, F_OK) == 0;
	return 0;
}

/*
 * The v1 freezer turns a kernel-wide switch on while any group is
 * frozen, and off again when none is: each switch costs about 1.5 ms
 * of every freeze and thaw, which would be 3 ms of each Execute.  An
 * empty group of the daemon's own, frozen for its lifetime, keeps the
 * switch on (v2 has none).
 */
static void
cg_hold_freezer(const char *parent)
{
	snprintf(cg_hold, sizeof(cg_hold), "%s/hold-%d", parent,
	    (int)getpid());
	if ((mkdir(cg_hold, 0755) == -1 && errno != EEXIST) ||
	    cg_write(cg_hold, "freezer.state", "FROZEN") == -1) {
		log_warn("%s", cg_hold);
		cg_hold[0] = '\0';
	}
}

void
cgroup_fini(void)
{
	if (cg_hold[0] != '\0' && rmdir(cg_hold) == -1)
		log_warn("rmdir %s", cg_hold);
}

static int
cg_setup_v1(const struct privuser *pu, int64_t total)
{
	static const char *const files[] = { "cgroup.procs", "tasks", NULL };
	char	 state[300];
	size_t	 i;

	cg_ndirs = 0;
	for (i = 0; i < CG_V1_NEEDED; i++) {
		snprintf(cg_dirs[i], sizeof(cg_dirs[i]), "%s/%s/%s", CG_ROOT,
		    v1_controllers[i], CG_PARENT);
		if (cg_delegate(cg_dirs[i], pu, files) == -1)
			return -1;
		cg_ndirs++;
	}
	if (total > 0 && cg_write_i64(cg_dirs[0], "memory.limit_in_bytes",
	    total) == -1)
		return -1;
	/* The freezer is not needed for the limits: without it, no freeze. */
	i = CG_V1_FREEZER;
	snprintf(cg_dirs[i], sizeof(cg_dirs[i]), "%s/%s/%s", CG_ROOT,
	    v1_controllers[i], CG_PARENT);
	snprintf(state, sizeof(state), "%s/freezer.state", cg_dirs[i]);
	if (access(CG_ROOT "/freezer/cgroup.procs", F_OK) == 0 &&
	    cg_delegate(cg_dirs[i], pu, files) == 0 &&
	    access(state, F_OK) == 0) {
		cg_ndirs++;
		cg_freezer = 1;
		cg_hold_freezer(cg_dirs[i]);
	}
	return 0;
}

int
cgroup_init(const struct privuser *pu)
{
	int64_t	 total = sbx_conf->limits.total_memory;

	if (cg_v2_usable() && cg_setup_v2(pu, total) == 0)
		cg_mode = CG_V2;
	else if (cg_setup_v1(pu, total) == 0)
		cg_mode = CG_V1;
	else {
		cg_mode = CG_NONE;
		log_warnx("WARNING: no writable cgroup (v2 with the memory and "
		    "pids controllers, or v1 memory, pids and cpu): sessions "
		    "run WITHOUT per-session memory, process and CPU limits, "
		    "and are not frozen between calls; only the per-process "
		    "rlimits hold");
		return -1;
	}
	log_info("cgroup %s: per session %lld bytes, %lld processes, %d%% "
	    "CPU; all jails %lld bytes", cg_mode == CG_V2 ? "v2" : "v1",
	    (long long)sbx_conf->limits.session_memory,
	    (long long)sbx_conf->limits.rlim_nproc,
	    sbx_conf->limits.session_cpu, (long long)total);
	if (cg_freezer)
		log_info("cgroup %s: sessions are frozen between calls",
		    cg_mode == CG_V2 ? "v2" : "v1");
	else
		log_warnx("WARNING: no cgroup freezer: sessions are not "
		    "frozen between calls, and what code leaves running "
		    "keeps running until the next call ends");
	return 0;
}

int
cgroup_enabled(void)
{
	return cg_mode != CG_NONE;
}

int
cgroup_can_freeze(void)
{
	return cg_mode != CG_NONE && cg_freezer;
}

/*
 * The session's group in hierarchy i, or -1: only a well-formed session
 * id below a parent that was set up names a group, so that no caller
 * can ever reach the parent's or the root's cgroup.procs (which list
 * other daemons' jails, or every process on the host).
 */
static int
cg_session_dir(int i, const char *id, char *buf, size_t len)
{
	int	 n;

	if (cg_mode == CG_NONE || i < 0 || i >= cg_ndirs ||
	    cg_dirs[i][0] != '/' || !id_valid(id, SBX_SESSION_ID_PREFIX))
		return -1;
	n = snprintf(buf, len, "%s/%s", cg_dirs[i], id);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

static int
cg_limit(const char *dir, const char *ctl)
{
	const struct sbx_limits	*l = &sbx_conf->limits;
	int64_t			 quota = 1000LL * l->session_cpu;
	char			 cpu[64];

	if (strcmp(ctl, "freezer") == 0)
		return 0;
	if (cg_mode == CG_V2) {
		snprintf(cpu, sizeof(cpu), "%lld 100000", (long long)quota);
		/* Swap may be off, and memory.swap.max absent with it. */
		(void)cg_write(dir, "memory.swap.max", "0");
		return (cg_write_i64(dir, "memory.max", l->session_memory) ==
		    -1 || cg_write_i64(dir, "pids.max", l->rlim_nproc) == -1 ||
		    cg_write(dir, "cpu.max", cpu) == -1) ? -1 : 0;
	}
	if (strcmp(ctl, "memory") == 0)
		return cg_write_i64(dir, "memory.limit_in_bytes",
		    l->session_memory);
	if (strcmp(ctl, "pids") == 0)
		return cg_write_i64(dir, "pids.max", l->rlim_nproc);
	return cg_write(dir, "cpu.cfs_period_us", "100000") == -1 ||
	    cg_write_i64(dir, "cpu.cfs_quota_us", quota) == -1 ? -1 : 0;
}

int
cgroup_session_create(const char *id)
{
	char	 dir[512];
	int	 i;

	if (cg_mode == CG_NONE)
		return 0;
	for (i = 0; i < cg_ndirs; i++) {
		if (cg_session_dir(i, id, dir, sizeof(dir)) == -1 ||
		    (mkdir(dir, 0755) == -1 && errno != EEXIST) ||
		    cg_limit(dir, v1_controllers[i]) == -1) {
			log_warn("%s: cgroup %s", id, dir);
			cgroup_session_remove(id);
			return -1;
		}
	}
	return 0;
}

int
cgroup_session_enter(const char *id)
{
	char	 dir[512];
	int	 i;

	for (i = 0; i < cg_ndirs && cg_mode != CG_NONE; i++) {
		/* "0" is the writer itself. */
		if (cg_session_dir(i, id, dir, sizeof(dir)) == -1 ||
		    cg_write(dir, "cgroup.procs", "0") == -1)
			return -1;
	}
	return 0;
}

#define CG_RMDIR_TRIES		20
#define CG_RMDIR_WAIT_NSEC	5000000L

/*
 * A process just sent SIGKILL stays in its group until its exit is
 * complete, and the group cannot go before: wait up to 100 ms for it.
 */
static int
cg_rmdir(const char *dir)
{
	struct timespec	 ts = { 0, CG_RMDIR_WAIT_NSEC };
	int		 tries;

	for (tries = 0; rmdir(dir) == -1; tries++) {
		if (errno != EBUSY || tries >= CG_RMDIR_TRIES)
			return -1;
		cgroup_kill_dir(dir);
		nanosleep(&ts, NULL);
	}
	return 0;
}

void
cgroup_session_remove(const char *id)
{
	char	 dir[512];
	int	 i;

	for (i = 0; i < cg_ndirs && cg_mode != CG_NONE; i++) {
		if (cg_session_dir(i, id, dir, sizeof(dir)) == -1)
			continue;
		if (cg_rmdir(dir) == -1 && errno != ENOENT)
			log_warn("%s: rmdir %s", id, dir);
	}
}

/*
 * SIGKILL to every process listed in dir/cgroup.procs.  Never as root
 * (the daemon has dropped to the jails' user by now, so a wrong list
 * could only reach that user's processes), never to pid 1 or ourselves,
 * and only pids read whole: a read may end in the middle of a number.
 */
static void
cgroup_kill_dir(const char *dir)
{
	char	 path[600], buf[8192], *p, *nl, *end;
	size_t	 have = 0;
	ssize_t	 n;
	long	 pid;
	int	 fd;

	if (geteuid() == 0) {
		log_warnx("%s: not killing a cgroup's processes as root", dir);
		return;
	}
	if (snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >=
	    (int)sizeof(path))
		return;
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return;
	while ((n = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		have += n;
		buf[have] = '\0';
		for (p = buf; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
			pid = strtol(p, &end, 10);
			if (end == nl && pid > 1 && pid != (long)getpid())
				kill((pid_t)pid, SIGKILL);
		}
		have = strlen(p);
		memmove(buf, p, have);
		if (have == sizeof(buf) - 1)
			break;
	}
	close(fd);
}

/* SIGKILL to every process left in the session's group. */
void
cgroup_session_kill(const char *id)
{
	char	 dir[512];

	/* v1: the pids hierarchy; v2: the only one. */
	if (cg_session_dir(cg_mode == CG_V1 ? 1 : 0, id, dir,
	    sizeof(dir)) == 0)
		cgroup_kill_dir(dir);
}

/*
 * Freezes (1) or thaws (0) the session's group.  Freezing is
 * asynchronous: cgroup_session_frozen says when every process in the
 * group has stopped.  0, or -1 (no freezer, or the group is gone).
 */
int
cgroup_session_freeze(const char *id, int freeze)
{
	char	 dir[512];

	if (!cgroup_can_freeze())
		return -1;
	if (cg_mode == CG_V2)
		return cg_session_dir(0, id, dir, sizeof(dir)) == -1 ? -1 :
		    cg_write(dir, "cgroup.freeze", freeze ? "1" : "0");
	return cg_session_dir(CG_V1_FREEZER, id, dir, sizeof(dir)) == -1 ?
	    -1 : cg_write(dir, "freezer.state", freeze ? "FROZEN" : "THAWED");
}

static int
cg_read(const char *dir, const char *file, char *buf, size_t len)
{
	char	 path[600];
	ssize_t	 n;
	int	 fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/*
 * 1 when every process of the session's group is frozen, 0 while some
 * are still on their way, -1 on error.  v2 says so in cgroup.events;
 * v1's freezer.state reads FREEZING until the last one has stopped.
 */
int
cgroup_session_frozen(const char *id)
{
	char	 dir[512], buf[512], *p, *nl;

	if (!cgroup_can_freeze())
		return -1;
	if (cg_mode == CG_V2) {
		if (cg_session_dir(0, id, dir, sizeof(dir)) == -1 ||
		    cg_read(dir, "cgroup.events", buf, sizeof(buf)) == -1)
			return -1;
		for (p = buf; p != NULL; p = nl == NULL ? NULL : nl + 1) {
			nl = strchr(p, '\n');
			if (strncmp(p, "frozen ", 7) == 0)
				return p[7] == '1';
		}
		return -1;
	}
	if (cg_session_dir(CG_V1_FREEZER, id, dir, sizeof(dir)) == -1 ||
	    cg_read(dir, "freezer.state", buf, sizeof(buf)) == -1)
		return -1;
	if (strncmp(buf, "FROZEN", 6) == 0)
		return 1;
	return strncmp(buf, "FREEZING", 8) == 0 ? 0 : -1;
}
