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
 * fe_usage.c: the model requests' usage records, to the storage helper
 * in batches: one message every FLUSH_MS or USAGE_BATCH records,
 * whichever comes first (storage_usage.c writes them).  A record names
 * its request's handle; one whose handle goes with its request (not
 * cached) is sent at once, before the release that ends the handle.
 */
#include <sys/types.h>

#include <string.h>

#include "log.h"
#include "frontend.h"
#include "fe_limits.h"

#define FLUSH_MS	100

static struct usage_rec	 batch[USAGE_BATCH];
static int		 nbatch;
static struct event	*ev_flush;

static void
usage_flush(void)
{
	if (nbatch == 0)
		return;
	if (fe_storage_up())
		fe_storage_send(IMSG_USAGE_BATCH, batch,
		    nbatch * sizeof(batch[0]));
	explicit_bzero(batch, nbatch * sizeof(batch[0]));
	nbatch = 0;
	if (ev_flush != NULL)
		evtimer_del(ev_flush);
}

static void
usage_timer(evutil_socket_t fd, short what, void *arg)
{
	usage_flush();
}

void
fe_usage_add(const struct usage_rec *rec, int flush_now)
{
	struct timeval	 tv = { 0, FLUSH_MS * 1000 };

	if (ev_flush == NULL &&
	    (ev_flush = evtimer_new(fe.base, usage_timer, NULL)) == NULL)
		flush_now = 1;	/* no timer: no batch */
	batch[nbatch++] = *rec;
	if (flush_now || nbatch == USAGE_BATCH) {
		usage_flush();
		return;
	}
	if (nbatch == 1)
		evtimer_add(ev_flush, &tv);
}
