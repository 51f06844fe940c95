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
 * peer.h: a test that plays the master of one real depotd child
 * (depotd -P ROLE), and a peer of it on channels the "master" hands it.
 * Header-only, like t.h.
 */
#ifndef DEPOT_PEER_H
#define DEPOT_PEER_H

#include <sys/types.h>
#include <sys/socket.h>

#include <err.h>
#include <poll.h>
#include <unistd.h>

#include "imsg.h"
#include "depotd.h"
#include "roster.h"

static struct imsgev	 peer_master_iev;	/* only its buffer is used */
#define peer_master	 (peer_master_iev.ibuf)

/* Starts depotd -P role with our end of its channel to the "master". */
static inline pid_t
peer_spawn(const char *depotd, const char *role, int *fd)
{
	int	 sv[2];
	pid_t	 pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
		err(1, "socketpair");
	if ((pid = fork()) == -1)
		err(1, "fork");
	if (pid == 0) {
		close(sv[0]);
		if (dup2(sv[1], PARENT_SOCK_FILENO) == -1)
			err(1, "dup2");
		execl(depotd, depotd, "-P", role, "-I", "0", "-d",
		    (char *)NULL);
		err(1, "exec %s", depotd);
	}
	close(sv[1]);
	*fd = sv[0];
	return pid;
}

/* The master's part of start-up: who it runs as, then role's parts. */
static inline void
peer_configure(struct event_base *base, int fd, enum proc_role role,
    struct depotd_conf *conf, const struct proc_conf_msg *pc)
{
	const struct role	*r = roster_role(role);
	uint32_t		 generation = 1;

	if (imsgev_init(&peer_master_iev, base, fd, NULL, NULL, NULL) == -1)
		err(1, "imsgev_init");
	imsg_compose(&peer_master, IMSG_CONF_BEGIN, 0, 0, -1, &generation,
	    sizeof(generation));
	imsg_compose(&peer_master, IMSG_CONF_PROC, 0, 0, -1, pc, sizeof(*pc));
	conf_send(&peer_master_iev, conf, r->parts, r->secrets);
	imsg_compose(&peer_master, IMSG_CONF_END, 0, 0, -1, NULL, 0);
}

/* A channel to the child, as a child of the given role. */
static inline void
peer_channel(int role, int instance, struct imsgbuf *ib)
{
	struct peer_msg	 pm;
	int		 sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
		err(1, "socketpair");
	pm.role = role;
	pm.instance = instance;
	imsg_compose(&peer_master, IMSG_PEER_FD, 0, 0, sv[1], &pm,
	    sizeof(pm));
	imsgbuf_init(ib, sv[0]);
}

/* The next message within ms; 0 on timeout or a closed channel. */
static inline int
peer_next(struct imsgbuf *ib, struct imsg *imsg, int ms)
{
	struct pollfd	 pfd = { ib->fd, POLLIN, 0 };
	int		 n;

	for (;;) {
		if ((n = imsg_get(ib, imsg)) == -1)
			errx(1, "imsg_get");
		if (n > 0)
			return 1;
		if (poll(&pfd, 1, ms) <= 0 || imsgbuf_read(ib) <= 0)
			return 0;
	}
}

/* START, then the child's READY. */
static inline int
peer_start(void)
{
	struct imsg	 imsg;
	int		 ready = 0;

	imsg_compose(&peer_master, IMSG_START, 0, 0, -1, NULL, 0);
	imsgbuf_flush(&peer_master);
	while (!ready && peer_next(&peer_master, &imsg, 10000)) {
		ready = imsg.hdr.type == IMSG_READY;
		imsg_free(&imsg);
	}
	return ready;
}

#endif
