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
 * child.h: what every child process shares: the channel to the master,
 * the configuration it sends, and the start-up sequence that ends with
 * privileges dropped.
 */
#ifndef DEPOTD_CHILD_H
#define DEPOTD_CHILD_H

#include "depotd.h"
#include "roster.h"

struct child_ops {
	/* A configuration arrived: at start-up, then on each reload. */
	void	(*conf)(struct depotd_conf *, int reload);
	void	(*listen_fd)(int fd);
	void	(*peer)(enum proc_role, int instance, int fd);
	/* Before the privilege drop: open what must be opened as root. */
	void	(*prepare)(void);
	/* Landlock paths for this role (NULL: no filesystem at all). */
	const char *const *(*ro_paths)(void);
	const char *const *(*rw_paths)(void);
	/* Privileges are gone: begin serving. */
	void	(*start)(void);
	/* Any other message the role's channel table lets through. */
	void	(*parent_msg)(struct imsg *);
	/* SIGTERM: finish quickly. */
	void	(*shutdown)(void);
};

/*
 * Event priorities in every child: a channel set to CHILD_PRI_FIRST is
 * served before anything else ready in the same turn (a frontend's
 * storage channel: revocations before requests); the rest share
 * libevent's default, the middle one.
 */
#define CHILD_PRI_FIRST		0
#define CHILD_PRI_COUNT		2

__dead void		 child_run(enum proc_role, int instance,
			    const struct child_ops *, int debug, int verbose);
struct event_base	*child_base(void);
/* The directory the child is confined to ("" for none, or empty). */
const char		*child_root(void);
void			 child_peer_init(struct imsgev *, enum proc_role peer,
			    int fd, imsgev_dispatch_cb, imsgev_closed_cb,
			    void *);
int			 child_send_parent(uint32_t type, uint32_t peerid,
			    int fd, const void *, size_t);

#endif
