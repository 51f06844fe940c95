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
 * test_log.c: what reaches the log is one line per message, whatever
 * the strings it carries: control characters, DEL, C1 controls and
 * bytes that are not UTF-8 come out escaped, valid UTF-8 as it is.
 * The lines are read back from stderr, as a foreground daemon writes;
 * the pid in their prefix is the process's own, also after a fork.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "t.h"

static int	 saved_stderr;
static char	 path[] = "/tmp/test_log.XXXXXX";
static int	 fd;

/* What the log wrote since the last call, NUL-terminated. */
static char *
logged(void)
{
	static char	 buf[16384];
	ssize_t		 n;
	off_t		 end;

	end = lseek(fd, 0, SEEK_CUR);
	if (end > (off_t)sizeof(buf) - 1)
		end = sizeof(buf) - 1;
	n = pread(fd, buf, end, 0);
	buf[n > 0 ? n : 0] = '\0';
	if (ftruncate(fd, 0) == -1 || lseek(fd, 0, SEEK_SET) == -1)
		abort();
	return buf;
}

static size_t
lines(const char *s)
{
	size_t	 n = 0;

	for (; *s != '\0'; s++)
		if (*s == '\n')
			n++;
	return n;
}

/* The message of the one line logged, without prefix and newline. */
static const char *
message(const char *line)
{
	static char	 msg[16384];
	const char	*p;

	if ((p = strstr(line, "]: ")) == NULL)
		return "(no prefix)";
	strlcpy(msg, p + 3, sizeof(msg));
	msg[strcspn(msg, "\n")] = '\0';
	return msg;
}

static void
test_controls(void)
{
	char	*out;

	/* A model name that would forge a second line, and colour it. */
	log_warnx("unknown model %s", "m\r\nfrontend[1]: admin key ok\x1b[2J");
	out = logged();
	T_EQ_INT(lines(out), 1, "CR, LF and ESC make one line");
	T_EQ_STR(message(out), "unknown model m\\r\\nfrontend[1]: admin key "
	    "ok\\x1b[2J", "CR, LF as \\r, \\n; ESC as \\x1b");

	log_info("%s", "tab\there, bell\a, nul-less \x01\x1f, del \x7f");
	T_EQ_STR(message(logged()), "tab\\there, bell\\x07, nul-less "
	    "\\x01\\x1f, del \\x7f", "HT, other C0 controls and DEL escaped");

	log_info("path %s", "C:\\n\\x41");
	T_EQ_STR(message(logged()), "path C:\\\\n\\\\x41",
	    "a backslash is doubled: a written \\n is not a newline");
}

static void
test_utf8(void)
{
	log_info("%s", "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x93\x84 "
	    "\xe6\x96\x87\xe4\xbb\xb6");
	T_EQ_STR(message(logged()), "caf\xc3\xa9 \xe2\x9c\x93 "
	    "\xf0\x9f\x93\x84 \xe6\x96\x87\xe4\xbb\xb6",
	    "valid UTF-8 stays as it is");

	/* U+009B is CSI to a terminal that reads C1 controls. */
	log_info("%s", "csi \xc2\x9b" "31m");
	T_EQ_STR(message(logged()), "csi \\xc2\\x9b31m",
	    "a C1 control (U+009B) is escaped");

	log_info("%s", "bad \xff\xfe lone \x80 cut \xe2\x9c end");
	T_EQ_STR(message(logged()), "bad \\xff\\xfe lone \\x80 cut "
	    "\\xe2\\x9c end", "bytes that are not UTF-8 are escaped");

	/* Overlong "/" and a UTF-16 surrogate are not UTF-8 either. */
	log_info("%s", "\xc0\xaf \xed\xa0\x80");
	T_EQ_STR(message(logged()), "\\xc0\\xaf \\xed\\xa0\\x80",
	    "overlong forms and surrogates are escaped");
}

static void
test_errno_and_length(void)
{
	char	 big[6000], *out;

	errno = ENOENT;
	log_warn("open %s", "a\nb");
	T_EQ_STR(message(logged()), "open a\\nb: No such file or directory",
	    "log_warn escapes and still ends with strerror");

	/* Every byte of it grows fourfold: it is cut, not split. */
	memset(big, '\x1b', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	log_warnx("%s", big);
	out = logged();
	T_EQ_INT(lines(out), 1, "a long message of controls is one line");
	T_OK(strlen(out) < PIPE_BUF, "one write a pipe takes whole "
	    "(%zu bytes)", strlen(out));
	T_OK(strlen(message(out)) % 4 == 0 && strstr(out, "\x1b") == NULL,
	    "cut between escapes, none of it raw");
}

/* The pid is taken once: a forked child must still print its own. */
static void
test_pid_after_fork(void)
{
	char	 want[64];
	pid_t	 pid;
	int	 st;

	log_info("the parent");
	snprintf(want, sizeof(want), "[%d]: the parent\n", (int)getpid());
	T_OK(strstr(logged(), want) != NULL, "the line carries the pid");
	if ((pid = fork()) == 0) {
		log_info("the child");
		_exit(0);
	}
	waitpid(pid, &st, 0);
	snprintf(want, sizeof(want), "[%d]: the child\n", (int)pid);
	T_OK(strstr(logged(), want) != NULL, "a forked child's line carries "
	    "the child's pid, not its parent's");
}

int
main(void)
{
	if ((fd = mkstemp(path)) == -1 || unlink(path) == -1 ||
	    (saved_stderr = dup(STDERR_FILENO)) == -1 ||
	    dup2(fd, STDERR_FILENO) == -1) {
		perror("test_log");
		return 1;
	}
	log_init("test_log", 1, 0);
	test_controls();
	test_utf8();
	test_errno_and_length();
	test_pid_after_fork();
	dup2(saved_stderr, STDERR_FILENO);
	return t_done();
}
