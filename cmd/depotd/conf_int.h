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
 * conf_int.h: what the configuration's files share among themselves.
 */
#ifndef DEPOTD_CONF_INT_H
#define DEPOTD_CONF_INT_H

#include <stddef.h>

struct upstream_conf;

/*
 * Calls found() with the span [start, end) of each password in a
 * libpq conninfo; returns how many there are.
 */
int	 conninfo_passwords(const char *,
	    void (*found)(void *, size_t, size_t), void *);

/*
 * conf_ca.c.  The master opens an https upstream's CA bundle (-1: an
 * http:// upstream, or logged); the frontend reads it into u->ca_pem
 * and closes fd (nothing kept, and logged, when it cannot).
 */
int	 conf_ca_open(const struct upstream_conf *u);
void	 conf_ca_read(struct upstream_conf *u, int fd);

#endif
