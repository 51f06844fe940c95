/*
 * log.h: logging shared by every depotd program.
 *
 * Messages go to syslog(3) with LOG_DAEMON, or to stderr when the program
 * runs in the foreground (-d).  log_debug() only prints at verbosity > 1.
 */
#ifndef DEPOT_LOG_H
#define DEPOT_LOG_H

#include <stdarg.h>

void	log_init(const char *ident, int foreground, int verbose);
void	log_setverbose(int verbose);
int	log_getverbose(void);
void	log_procname(const char *name);

void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void	fatal(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));

#endif
