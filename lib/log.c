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
 *
 * Messages carry strings from callers, backends and sandboxed code
 * (model names, paths, backend errors): every line is escaped here,
 * once, so that none of them can start a line of its own or speak to
 * the terminal that shows it.  C0 controls and DEL become \n, \r, \t
 * or \xHH, a backslash \\ (a written "\n" is then not a newline);
 * bytes that are not UTF-8 (overlong forms and surrogates too) and the
 * C1 controls, U+0080 to U+009F, become \xHH each; other UTF-8 stays
 * as it is.
 */
#include <errno.h>
#include <pthread.h>
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
static pid_t	 log_pid;	/* 0: not known yet */
static int	 log_hooked;

/* A child learns its pid anew; getpid(2) per line costs a call. */
static void
log_forget_pid(void)
{
	log_pid = 0;
}

static pid_t
log_getpid(void)
{
	if (log_pid == 0) {
		if (!log_hooked && pthread_atfork(NULL, NULL,
		    log_forget_pid) == 0)
			log_hooked = 1;
		log_pid = getpid();
		/* No hook: ask every time rather than print a stale pid. */
		if (!log_hooked) {
			pid_t pid = log_pid;

			log_pid = 0;
			return pid;
		}
	}
	return log_pid;
}

void
log_init(const char *ident, int foreground, int verbose)
{
	log_foreground = foreground;
	log_verbose = verbose;
	strlcpy(log_name, ident, sizeof(log_name));
	log_pid = 0;
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

/* The length of the valid UTF-8 sequence at s, other than C1; or 0. */
static size_t
utf8_len(const unsigned char *s)
{
	unsigned int	 c = s[0], cp;
	size_t		 len, i;

	if (c >= 0xc2 && c <= 0xdf)
		len = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, cp = c & 0x07;
	else
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff ||
	    (cp >= 0x80 && cp <= 0x9f))
		return 0;
	return len;
}

/*
 * Escapes src into dst of size len (> 0), always terminated; what does
 * not fit is cut before an escape or a character, never inside one.
 */
static void
log_escape(char *dst, size_t len, const char *src)
{
	const unsigned char	*s = (const unsigned char *)src;
	char			 esc[5];
	const char		*piece;
	size_t			 n, used = 0;

	while (*s != '\0') {
		piece = esc;
		n = 1;
		if (*s == '\n' || *s == '\r' || *s == '\t' || *s == '\\') {
			esc[0] = '\\';
			esc[1] = *s == '\n' ? 'n' : *s == '\r' ? 'r' :
			    *s == '\t' ? 't' : '\\';
			n = 2;
		} else if (*s >= 0x20 && *s < 0x7f)
			piece = (const char *)s;
		else if ((n = utf8_len(s)) > 0)
			piece = (const char *)s;
		else {
			snprintf(esc, sizeof(esc), "\\x%02x", *s);
			n = 4;
		}
		if (used + n >= len)
			break;
		memcpy(dst + used, piece, n);
		used += n;
		/* An escape stands for one byte; a character for n. */
		s += piece == esc ? 1 : n;
	}
	dst[used] = '\0';
}

static void
log_emit(int pri, const char *fmt, va_list ap, int with_errno)
{
	char	 msg[2048], esc[2048];
	int	 saved = errno;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (with_errno) {
		size_t n = strlen(msg);

		snprintf(msg + n, sizeof(msg) - n, ": %s", strerror(saved));
	}
	log_escape(esc, sizeof(esc), msg);
	if (log_foreground) {
		/* One write(2) per line so that children do not interleave. */
		char	 line[2200];
		int	 len;

		len = snprintf(line, sizeof(line), "%s[%d]: %s\n", log_name,
		    (int)log_getpid(), esc);
		if (len > (int)sizeof(line) - 1)
			len = sizeof(line) - 1;
		(void)!write(STDERR_FILENO, line, len);
	} else
		syslog(pri, "%s", esc);
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
