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
