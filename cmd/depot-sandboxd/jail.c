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
 * jail.c: the bubblewrap command line and the resource limits of a
 * session's runner.
 *
 * Every namespace is unshared, so the jail has no network interface but
 * its own loopback, sees only its own processes and cannot reach the
 * host's IPC.  Inside, the runner is uid 65534 with no capabilities; the
 * kernel maps that uid back to the daemon's own (unprivileged) uid, so
 * files written in the workspace belong to the daemon outside.  The
 * root is a read-only tmpfs holding read-only /usr, a private /proc and
 * /dev, a size-limited /tmp and the workspace, the only writable place
 * that outlives a call.
 */
#include <sys/types.h>
#include <sys/resource.h>

#include <stdio.h>
#include <string.h>

#include "log.h"
#include "sandboxd.h"

#define JAIL_MAXARGS	160

static char	*jail_args[JAIL_MAXARGS];
static char	 jail_tmpsize[32];
static char	 jail_workspace[1024];
static char	 jail_runner[1024];
static char	 jail_cap[32];

static int
jail_add(int n, const char *arg)
{
	if (n >= JAIL_MAXARGS - 1)
		fatalx("jail: too many arguments");
	/* execv does not write to its arguments. */
	jail_args[n] = (char *)arg;
	return n + 1;
}

char **
jail_argv(const char *workspace_path)
{
	static const char *const fixed[] = {
		"/usr/bin/bwrap",
		"--unshare-all", "--unshare-user", "--disable-userns",
		"--uid", "65534", "--gid", "65534",
		"--cap-drop", "ALL",
		"--die-with-parent", "--new-session",
		"--hostname", "sandbox",
		"--ro-bind", "/usr", "/usr",
		"--symlink", "usr/bin", "/bin",
		"--symlink", "usr/lib", "/lib",
		"--symlink", "usr/lib64", "/lib64",
		"--symlink", "usr/sbin", "/sbin",
		"--ro-bind-try", "/etc/alternatives", "/etc/alternatives",
		"--ro-bind-try", "/etc/localtime", "/etc/localtime",
		/* Debian keeps some Python packages' data here. */
		"--ro-bind-try", "/etc/matplotlibrc", "/etc/matplotlibrc",
		"--ro-bind-try", "/etc/python3", "/etc/python3",
		"--ro-bind-try", "/etc/python3.11", "/etc/python3.11",
		"--ro-bind-try", "/etc/fonts", "/etc/fonts",
		"--proc", "/proc",
		"--dev", "/dev",
		"--clearenv",
		"--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin",
		"--setenv", "HOME", SBX_JAIL_WORKSPACE,
		"--setenv", "LANG", "C.UTF-8",
		"--setenv", "MPLBACKEND", "Agg",
		"--setenv", "MPLCONFIGDIR", "/tmp/.matplotlib",
		"--setenv", "XDG_CACHE_HOME", "/tmp/.cache",
		"--setenv", "PYTHONDONTWRITEBYTECODE", "1",
		"--setenv", "DEPOT_WORKSPACE", SBX_JAIL_WORKSPACE,
		"--setenv", "DEPOT_CHANNEL_FD", JAIL_FD_CHANNEL_S,
		"--seccomp", JAIL_FD_SECCOMP_S,
		"--info-fd", JAIL_FD_INFO_S,
		NULL
	};
	int	 n = 0;
	size_t	 i;

	for (i = 0; fixed[i] != NULL; i++)
		n = jail_add(n, fixed[i]);

	snprintf(jail_cap, sizeof(jail_cap), "%d", SBX_OUTPUT_CAP);
	n = jail_add(n, "--setenv");
	n = jail_add(n, "DEPOT_OUTPUT_CAP");
	n = jail_add(n, jail_cap);

	snprintf(jail_tmpsize, sizeof(jail_tmpsize), "%lld",
	    (long long)sbx_conf->limits.tmp_size);
	n = jail_add(n, "--size");
	n = jail_add(n, jail_tmpsize);
	n = jail_add(n, "--tmpfs");
	n = jail_add(n, "/tmp");

	strlcpy(jail_workspace, workspace_path, sizeof(jail_workspace));
	n = jail_add(n, "--bind");
	n = jail_add(n, jail_workspace);
	n = jail_add(n, SBX_JAIL_WORKSPACE);

	strlcpy(jail_runner, sbx_conf->runner, sizeof(jail_runner));
	n = jail_add(n, "--ro-bind");
	n = jail_add(n, jail_runner);
	n = jail_add(n, "/run/depot/runner.py");

	/* Nothing is writable outside /tmp and the workspace. */
	n = jail_add(n, "--remount-ro");
	n = jail_add(n, "/");
	n = jail_add(n, "--chdir");
	n = jail_add(n, SBX_JAIL_WORKSPACE);
	n = jail_add(n, "--");
	n = jail_add(n, sbx_conf->python);
	n = jail_add(n, "-I");
	n = jail_add(n, "/run/depot/runner.py");
	jail_args[n] = NULL;
	return jail_args;
}

static int
jail_setlimit(int resource, int64_t value, const char *name)
{
	struct rlimit	 rl;

	if (value <= 0)
		return 0;
	rl.rlim_cur = rl.rlim_max = (rlim_t)value;
	if (setrlimit(resource, &rl) == -1) {
		log_warn("setrlimit %s", name);
		return -1;
	}
	return 0;
}

int
jail_rlimits(const struct sbx_limits *l)
{
	struct rlimit	 nocore = { 0, 0 };

	if (setrlimit(RLIMIT_CORE, &nocore) == -1)
		return -1;
	if (jail_setlimit(RLIMIT_AS, l->rlim_as, "as") == -1 ||
	    jail_setlimit(RLIMIT_CPU, l->rlim_cpu, "cpu") == -1 ||
	    jail_setlimit(RLIMIT_FSIZE, l->rlim_fsize, "fsize") == -1 ||
	    jail_setlimit(RLIMIT_NOFILE, l->rlim_nofile, "nofile") == -1 ||
	    /* A uid-wide count would let one session starve the others. */
	    jail_setlimit(RLIMIT_NPROC, cgroup_enabled() ? 0 : l->rlim_nproc,
	    "nproc") == -1)
		return -1;
	return 0;
}
