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
 * log.h: logging shared by every depotd program.
 *
 * Messages go to syslog(3) with LOG_DAEMON, or to stderr when the program
 * runs in the foreground (-d).  log_debug() only prints at verbosity > 1.
 */
#ifndef DEPOT_LOG_H
#define DEPOT_LOG_H

#include <stdarg.h>

#include "cdefs.h"

void	log_init(const char *ident, int foreground, int verbose);
void	log_setverbose(int verbose);
int	log_getverbose(void);
void	log_procname(const char *name);

void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
__dead void	fatal(const char *, ...) __attribute__((format(printf, 1, 2)));
__dead void	fatalx(const char *, ...) __attribute__((format(printf, 1, 2)));

#endif
