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
 * broker.c: the sandbox broker process.
 *
 * It alone holds the sandbox backend's URL and token.  In this
 * version it takes its channels from the master, the storage helper
 * and every frontend, and keeps them open; session leasing and file
 * transfers for the code-execution pipeline will be served here.
 */
#include <sys/types.h>

#include <stdlib.h>
#include <unistd.h>

#include "log.h"
#include "roster.h"
#include "child.h"

struct broker_peer {
	enum proc_role		 role;
	int			 instance;
	struct imsgev		 iev;
};

/*
 * The broker sends nothing on its peer channels yet, so nothing is
 * owed to it: the frontend's table (proto.c) is empty, and the storage
 * helper's replies to file calls the broker has not made are fatal here.
 */
static void
broker_dispatch_peer(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	struct broker_peer	*p = arg;

	fatalx("broker: message %u from %s %d", imsg->hdr.type,
	    role_name(p->role), p->instance);
}

static void
broker_peer_closed(struct imsgev *iev, const char *why, void *arg)
{
	struct broker_peer	*p = arg;

	imsgev_clear(&p->iev);
	free(p);
}

static void
broker_add_peer(enum proc_role role, int instance, int fd)
{
	struct broker_peer	*p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		fatal("calloc");
	p->role = role;
	p->instance = instance;
	child_peer_init(&p->iev, role, fd, broker_dispatch_peer,
	    broker_peer_closed, p);
}

static const struct child_ops broker_ops = {
	.peer = broker_add_peer,
};

void
broker_main(int instance, int debug, int verbose)
{
	child_run(ROLE_BROKER, instance, &broker_ops, debug, verbose);
}
