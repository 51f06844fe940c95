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
 * lockdown.c: a child's confinement, from its root directory to its
 * last system call, and the words that describe it.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/landlock.h>

#include <dirent.h>
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "lockdown.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
/*
 * LeakSanitizer needs /proc, ptrace and a tracer process, none of which
 * a confined child has: a sanitizer build checks for leaks as the child
 * confines itself, instead of at exit.
 */
#define leak_check_now()	__lsan_do_leak_check()
#else
#define leak_check_now()	do { } while (0)
#endif

void
lockdown_probe(struct lockdown_kernel *k)
{
	int	 abi;

	k->seccomp = seccomp_api_get() >= 1;
	abi = syscall(SYS_landlock_create_ruleset, NULL, 0,
	    LANDLOCK_CREATE_RULESET_VERSION);
	k->landlock_abi = abi > 0 ? abi : 0;
}

void
lockdown_missing(const struct lockdown_kernel *k, char *buf, size_t len)
{
	static const struct {
		int		 abi;
		const char	*what;
	} layers[] = {
		{ 1, "landlock file rules" },
		{ 4, "landlock network rules (ABI 4)" },
		{ 6, "landlock signal and abstract socket scoping (ABI 6)" },
	};
	size_t	 i;

	buf[0] = '\0';
	if (!k->seccomp)
		strlcat(buf, ", seccomp", len);
	for (i = 0; i < sizeof(layers) / sizeof(layers[0]); i++)
		if (k->landlock_abi < layers[i].abi) {
			strlcat(buf, ", ", len);
			strlcat(buf, layers[i].what, len);
		}
	if (buf[0] != '\0')
		memmove(buf, buf + 2, strlen(buf + 2) + 1);
}

static void
print_paths(FILE *fp, const char *what, const char *const *paths)
{
	fprintf(fp, "\t%s:", what);
	if (paths == NULL || *paths == NULL)
		fputs(" none", fp);
	for (; paths != NULL && *paths != NULL; paths++)
		fprintf(fp, " %s", *paths);
	fputc('\n', fp);
}

static void
print_tcp(FILE *fp, const struct lockdown_rules *pol)
{
	size_t	 i;

	if (pol->tcp_connect == LOCKDOWN_TCP_ANY) {
		fputs("connect (any port), no bind", fp);
		return;
	}
	if (pol->tcp_connect == LOCKDOWN_TCP_NONE || pol->nports == 0) {
		fputs("no connect, no bind", fp);
		return;
	}
	/* lockdown_seccomp.c: Fast Open would connect past the rules. */
	fputs("connect to port", fp);
	if (pol->nports > 1)
		fputc('s', fp);
	for (i = 0; i < pol->nports; i++)
		fprintf(fp, "%s %u", i > 0 ? "," : "",
		    (unsigned)pol->ports[i]);
	fputs(" only, no bind, no Fast Open", fp);
}

void
lockdown_print_plan(FILE *fp, const struct lockdown_rules *pol,
    const char *user, const char *root, const char *const *ro,
    const char *const *rw)
{
	if (pol->empty_root && (root == NULL || root[0] == '\0'))
		root = LOCKDOWN_EMPTY_DIR;
	fprintf(fp, "%s: user %s, root %s\n", pol->role, user,
	    pol->empty_root ? root : "/");
	fprintf(fp, "\tsystem calls: \"%s\"; %sptrace: killed; "
	    "others: EPERM\n", pol->promises,
	    strstr(pol->promises, "exec") != NULL ? "" : "execve, ");
	if (pol->no_fs_rules)
		fprintf(fp, "\tfiles: what its user may open (no Landlock "
		    "file rules: they forbid bubblewrap's mounts)\n");
	else {
		print_paths(fp, "read", ro);
		print_paths(fp, "read and write", rw);
	}
	fputs("\ttcp: ", fp);
	print_tcp(fp, pol);
	fputs("; signals, abstract sockets: own only\n", fp);
}

/*
 * The root of a role without files: only used while root alone may
 * write it.  The default one is made if missing and must be empty; a
 * configured one may hold what its administrator put there.
 */
static void
check_root(const char *dir, int is_default)
{
	struct stat	 sb;
	struct dirent	*de;
	DIR		*d;

	if (is_default && mkdir(dir, 0755) == -1 && errno != EEXIST)
		fatal("mkdir %s", dir);
	if (lstat(dir, &sb) == -1)
		fatal("%s", dir);
	if (!S_ISDIR(sb.st_mode) || sb.st_uid != 0 ||
	    (sb.st_mode & (S_IWGRP | S_IWOTH)) != 0)
		fatalx("%s must be a directory only root may write", dir);
	if (!is_default)
		return;
	if ((d = opendir(dir)) == NULL)
		fatal("%s", dir);
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			fatalx("%s must be empty: it holds %s", dir,
			    de->d_name);
	closedir(d);
}

void
lockdown_role(const struct lockdown_rules *pol, const struct privuser *pu,
    const char *root, const char *const *ro, const char *const *rw)
{
	struct lockdown_kernel	 k;

	leak_check_now();
	lockdown_probe(&k);
	if (!pol->empty_root)
		root = NULL;
	else if (root != NULL && root[0] != '\0')
		check_root(root, 0);
	else {
		root = LOCKDOWN_EMPTY_DIR;
		check_root(root, 1);
	}
	priv_drop(pu, root);
	lockdown_landlock(pol, k.landlock_abi, ro, rw);
	lockdown_seccomp(pol);
}
