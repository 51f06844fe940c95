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
 * tsock.h: the loops a test client needs on a blocking socket, shared
 * by the unit tests that talk HTTP to a server of their own.
 */
#ifndef DEPOT_TSOCK_H
#define DEPOT_TSOCK_H

#include <stddef.h>
#include <unistd.h>

/* All of len written, or -1. */
static inline int
t_send_all(int fd, const void *p, size_t len)
{
	const char	*s = p;
	ssize_t		 n;

	while (len > 0) {
		if ((n = write(fd, s, len)) <= 0)
			return -1;
		s += n;
		len -= n;
	}
	return 0;
}

/* Exactly len read, or -1 at an end or an error before it. */
static inline int
t_read_full(int fd, void *p, size_t len)
{
	char	*s = p;
	ssize_t	 n;

	while (len > 0) {
		if ((n = read(fd, s, len)) <= 0)
			return -1;
		s += n;
		len -= n;
	}
	return 0;
}

#endif
