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
 * master_sandbox.c: `sandbox local': the master runs depot-sandboxd on a
 * private unix socket and points the broker at it, so that a fresh
 * install runs code with no other service.
 *
 * The sandbox daemon is the master's child like the others and is
 * stopped with them; when it dies it is started again, unless it dies
 * over and over, which is then a lost child.  It runs jailed
 * code as its own user (_depotsbx), whose group _depotd belongs to so
 * that the broker can reach the socket.  The socket has a directory of
 * its own, the broker's root: nothing else is there to reach.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "util.h"
#include "depotd.h"
#include "roster.h"
#include "master.h"

static char	 sbx_dir[PATH_MAX];
static char	 sbx_sock[PATH_MAX];
static char	 sbx_token[PATH_MAX];

/* Installed: libexec; in a build tree: the source beside build/. */
static int
runner_path(const char *self, char *buf, size_t len)
{
	char	 dir[PATH_MAX];

	snprintf(buf, len, "%s/runner.py", DEPOT_LIBEXECDIR);
	if (access(buf, R_OK) == 0)
		return 0;
	strlcpy(dir, self, sizeof(dir));
	snprintf(buf, len, "%s/../cmd/depot-sandboxd/runner.py",
	    dirname(dir));
	return access(buf, R_OK);
}

/* Root's, readable by all: the socket's own mode guards it. */
static void
socket_dir(const char *dir)
{
	struct stat	 st;

	if (mkdir(dir, 0755) == -1 && errno != EEXIST)
		fatal("mkdir %s", dir);
	if (lstat(dir, &st) == -1 || !S_ISDIR(st.st_mode) || st.st_uid != 0)
		fatalx("%s: not a directory of root's", dir);
	if (chmod(dir, 0755) == -1)
		fatal("chmod %s", dir);
}

const char *
master_sandbox_dir(void)
{
	return sbx_dir;
}

static void
write_token(const char *path, char *token, size_t len)
{
	int	 fd;

	token_new(token, len);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
	    O_NOFOLLOW, 0600);
	if (fd == -1 || write(fd, token, strlen(token)) == -1 ||
	    write(fd, "\n", 1) == -1)
		fatal("%s", path);
	close(fd);
}

static __dead void
exec_sandboxd(const char *prog, const char *runner, const char *workdir)
{
	char	*argv[16];
	int	 argc = 0;

	closefrom(STDERR_FILENO + 1);
	argv[argc++] = (char *)prog;
	if (master.debug)
		argv[argc++] = "-d";
	argv[argc++] = "-s";
	argv[argc++] = sbx_sock;
	argv[argc++] = "-t";
	argv[argc++] = sbx_token;
	argv[argc++] = "-u";
	argv[argc++] = (char *)roster_user(RUN_AS_SANDBOX, master.conf);
	argv[argc++] = "-w";
	argv[argc++] = (char *)workdir;
	argv[argc++] = "-r";
	argv[argc++] = (char *)runner;
	argv[argc] = NULL;
	execve(prog, argv, master_proc_env);
	fatal("execve %s", prog);
}

/* depot-sandboxd is installed (and built) beside depotd. */
static int
sandboxd_paths(char *prog, size_t plen, char *runner, size_t rlen)
{
	char	 self[PATH_MAX];

	strlcpy(self, master.self, sizeof(self));
	if (snprintf(prog, plen, "%s/depot-sandboxd", dirname(self)) >=
	    (int)plen)
		return -1;
	return runner_path(master.self, runner, rlen);
}

static const char *
sandbox_workdir(const struct depotd_conf *conf)
{
	return conf->sandbox_dir[0] ? conf->sandbox_dir :
	    "/var/tmp/depot-sandboxd";
}

/*
 * master_roles.c's spawner for depot-sandboxd: starts it and rewrites
 * the configuration so that the broker uses it (the URL names the
 * socket, the token is fresh).  It has no channel to the master, only
 * a pid.
 */
void
master_sandbox_spawn(struct child_proc *cp)
{
	struct depotd_conf	*conf = master.conf;
	char			 dir[PATH_MAX], prog[PATH_MAX], runner[PATH_MAX];
	char			 token[TOKEN_LEN];
	pid_t			 pid;

	strlcpy(dir, conf->control_socket, sizeof(dir));
	strlcpy(dir, dirname(dir), sizeof(dir));
	if (snprintf(sbx_dir, sizeof(sbx_dir), "%s/sandbox", dir) >=
	    (int)sizeof(sbx_dir) || snprintf(sbx_sock, sizeof(sbx_sock),
	    "%s/depot-sandboxd.sock", sbx_dir) >= (int)sizeof(sbx_sock) ||
	    snprintf(sbx_token,
	    sizeof(sbx_token), "%s/depot-sandboxd.token", dir) >=
	    (int)sizeof(sbx_token))
		fatalx("sandbox local: %s is too long a path", dir);
	if (sandboxd_paths(prog, sizeof(prog), runner, sizeof(runner)) == -1)
		fatalx("sandbox local: depot-sandboxd or runner.py not found");
	socket_dir(sbx_dir);
	write_token(sbx_token, token, sizeof(token));
	free(conf->sandbox_token);
	if ((conf->sandbox_token = strdup(token)) == NULL)
		fatal("strdup");
	explicit_bzero(token, sizeof(token));
	if (snprintf(conf->sandbox_url, sizeof(conf->sandbox_url), "unix:%s",
	    sbx_sock) >= (int)sizeof(conf->sandbox_url))
		fatalx("sandbox local: %s is too long a path", sbx_sock);

	switch (pid = fork()) {
	case -1:
		fatal("fork");
	case 0:
		signal(SIGCHLD, SIG_DFL);
		exec_sandboxd(prog, runner, sandbox_workdir(conf));
	}
	cp->pid = pid;
	log_info("sandbox local: depot-sandboxd on %s", sbx_sock);
}

#define RESPAWN_WINDOW	60	/* seconds */
#define RESPAWN_MAX	5	/* starts within the window */

/*
 * depot-sandboxd died: the same socket, token and work directory again.
 * Its sessions are gone; the requests that held them fail and the
 * broker's next session is a new one.
 */
int
master_sandbox_respawn(struct child_proc *cp)
{
	static time_t	 window;
	static int	 starts;
	char		 prog[PATH_MAX], runner[PATH_MAX];
	time_t		 now = time(NULL);
	pid_t		 pid;

	if (now - window > RESPAWN_WINDOW) {
		window = now;
		starts = 0;
	}
	if (++starts > RESPAWN_MAX) {
		log_warnx("sandbox local: depot-sandboxd died %d times in %d "
		    "seconds; giving up", RESPAWN_MAX, RESPAWN_WINDOW);
		return -1;
	}
	if (sandboxd_paths(prog, sizeof(prog), runner, sizeof(runner)) == -1)
		return -1;
	switch (pid = fork()) {
	case -1:
		log_warn("sandbox local: fork");
		return -1;
	case 0:
		signal(SIGCHLD, SIG_DFL);
		exec_sandboxd(prog, runner, sandbox_workdir(master.conf));
	}
	cp->pid = pid;
	cp->started = now;
	log_warnx("sandbox local: depot-sandboxd started again (pid %d)",
	    (int)pid);
	return 0;
}

void
master_sandbox_cleanup(void)
{
	if (sbx_token[0] != '\0')
		unlink(sbx_token);
}
