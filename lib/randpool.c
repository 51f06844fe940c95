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
 * randpool.c: a per-process pool of kernel random bytes, refilled by
 * one getrandom(2) every RANDPOOL_SIZE bytes, so that a request id
 * costs no system call.  libbsd's arc4random_buf would cost a getpid(2)
 * per call (its fork check).  Each byte is handed out once and wiped
 * as it goes; a forked child starts with an empty pool so that it
 * never repeats its parent's bytes.
 */
#include <sys/types.h>
#include <sys/random.h>

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "log.h"
#include "randpool.h"

#define RANDPOOL_SIZE	4096

static unsigned char	 randpool_buf[RANDPOOL_SIZE];
static size_t		 randpool_left;
static int		 randpool_hooked;

static void
randpool_forget(void)
{
	explicit_bzero(randpool_buf, sizeof(randpool_buf));
	randpool_left = 0;
}

static void
randpool_fill(void)
{
	unsigned char	*p = randpool_buf;
	size_t		 len = sizeof(randpool_buf);
	ssize_t		 n;

	if (!randpool_hooked) {
		if (pthread_atfork(NULL, NULL, randpool_forget) != 0)
			fatalx("%s: pthread_atfork", __func__);
		randpool_hooked = 1;
	}
	while (len > 0) {
		if ((n = getrandom(p, len, 0)) == -1) {
			if (errno == EINTR)
				continue;
			fatal("%s: getrandom", __func__);
		}
		p += n;
		len -= n;
	}
	randpool_left = sizeof(randpool_buf);
}

void
randpool_bytes(void *buf, size_t len)
{
	unsigned char	*src;

	if (len > 256)
		fatalx("%s: %zu bytes asked", __func__, len);
	if (randpool_left < len)
		randpool_fill();
	/* Served from the end: what is left is always the front. */
	randpool_left -= len;
	src = randpool_buf + randpool_left;
	memcpy(buf, src, len);
	explicit_bzero(src, len);
}
