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
 * confine.h: the children's confinement, as the master plans and
 * reports it (confine.c).
 */
#ifndef DEPOTD_CONFINE_H
#define DEPOTD_CONFINE_H

#include <stdio.h>

#include "config.h"

#define CONFINE_COMMON_MAX	3

/* The storage helper's paths to read whatever its store: how many. */
size_t		 confine_storage_common(const char **ro);
void		 confine_print_plan(FILE *, const struct depotd_conf *);
struct lockdown_rules;
/* A role's lockdown rules under conf (the frontend's TCP ports). */
const struct lockdown_rules *
		 confine_rules(enum proc_role, const struct depotd_conf *);
const char	*confine_status(void);
void		 confine_log_kernel(void);

#endif
