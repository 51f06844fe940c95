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
 * log.c: syslog or stderr logging with a process name prefix.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static int	 log_foreground = 1;
static int	 log_verbose;
static char	 log_name[32] = "depotd";

void
log_init(const char *ident, int foreground, int verbose)
{
	log_foreground = foreground;
	log_verbose = verbose;
	strlcpy(log_name, ident, sizeof(log_name));
	/* openlog before any chroot: /dev/log must be reachable. */
	if (!foreground)
		openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	tzset();
}

void
log_setverbose(int verbose)
{
	log_verbose = verbose;
}

int
log_getverbose(void)
{
	return log_verbose;
}

void
log_procname(const char *name)
{
	strlcpy(log_name, name, sizeof(log_name));
}

static void
log_emit(int pri, const char *fmt, va_list ap, int with_errno)
{
	char	 msg[2048];
	int	 saved = errno;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (with_errno) {
		size_t n = strlen(msg);

		snprintf(msg + n, sizeof(msg) - n, ": %s", strerror(saved));
	}
	if (log_foreground) {
		/* One write(2) per line so that children do not interleave. */
		char	 line[2200];
		int	 len;

		len = snprintf(line, sizeof(line), "%s[%d]: %s\n", log_name,
		    (int)getpid(), msg);
		if (len > (int)sizeof(line) - 1)
			len = sizeof(line) - 1;
		(void)!write(STDERR_FILENO, line, len);
	} else
		syslog(pri, "%s", msg);
	errno = saved;
}

void
log_warn(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	log_emit(LOG_ERR, fmt, ap, 1);
	va_end(ap);
}

void
log_warnx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	log_emit(LOG_ERR, fmt, ap, 0);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	log_emit(LOG_INFO, fmt, ap, 0);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list	 ap;

	if (log_verbose < 2)
		return;
	va_start(ap, fmt);
	log_emit(LOG_DEBUG, fmt, ap, 0);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	log_emit(LOG_CRIT, fmt, ap, 1);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	log_emit(LOG_CRIT, fmt, ap, 0);
	va_end(ap);
	exit(1);
}
