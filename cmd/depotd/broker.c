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
#include "child.h"

struct broker_peer {
	enum proc_role		 role;
	int			 instance;
	struct imsgev		 iev;
};

static void
peer_dispatch(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	struct broker_peer	*p = arg;

	log_warnx("broker: unexpected message %u from %s %d; ignored",
	    imsg->hdr.type, role_name(p->role), p->instance);
}

static void
peer_closed(struct imsgev *iev, const char *why, void *arg)
{
	struct broker_peer	*p = arg;

	imsgev_clear(&p->iev);
	free(p);
}

static void
broker_peer(enum proc_role role, int instance, int fd)
{
	struct broker_peer	*p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		fatal("calloc");
	p->role = role;
	p->instance = instance;
	if (imsgev_init(&p->iev, child_base(), fd, peer_dispatch,
	    peer_closed, p) == -1)
		fatal("imsgev_init");
}

static const struct child_ops broker_ops = {
	.peer = broker_peer,
};

void
broker_main(int debug, int verbose)
{
	child_run(ROLE_BROKER, 0, &broker_ops, debug, verbose);
}
