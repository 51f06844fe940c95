/*
 * depotd.h: the entry points of depotd's processes.  The messages
 * between them are in proto.h, what each role is in roster.h.
 */
#ifndef DEPOTD_H
#define DEPOTD_H

#include "proto.h"
#include "config.h"

/* frontend.c */
void		 frontend_main(int instance, int debug, int verbose)
		    __attribute__((noreturn));
/* storage.c */
void		 storage_main(int instance, int debug, int verbose)
		    __attribute__((noreturn));
#define STATUS_DB_DOWN	503
/* broker.c */
void		 broker_main(int instance, int debug, int verbose)
		    __attribute__((noreturn));

#endif
