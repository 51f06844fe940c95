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
 * depotd.h: the entry points of depotd's processes.  The messages
 * between them are in proto.h, what each role is in roster.h.
 */
#ifndef DEPOTD_H
#define DEPOTD_H

#include "cdefs.h"
#include "proto.h"
#include "config.h"

/* frontend.c */
__dead void	 frontend_main(int instance, int debug, int verbose);
/* storage.c */
__dead void	 storage_main(int instance, int debug, int verbose);
#define STATUS_DB_DOWN	503
/* broker.c */
__dead void	 broker_main(int instance, int debug, int verbose);
/* extract.c */
__dead void	 extract_main(int instance, int debug, int verbose);

#endif
