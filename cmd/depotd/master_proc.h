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
 * master_proc.h: the master's view of its children (master_proc.c).
 */
#ifndef DEPOTD_MASTER_PROC_H
#define DEPOTD_MASTER_PROC_H

#include <sys/queue.h>
#include <time.h>

#include "imsg.h"
#include "roster.h"

struct child_proc {
	TAILQ_ENTRY(child_proc)	 entry;
	enum proc_role		 role;
	int			 instance;
	pid_t			 pid;
	int			 fd;		/* -1: no channel */
	time_t			 started;
	int			 ready;
	uint32_t		 conf_acked;	/* last generation applied */
	struct imsgev		 iev;
	/* Frontends: heartbeat and replacements (master_respawn.c). */
	int64_t			 beat_ms;	/* monotonic, last heartbeat */
	struct heartbeat_msg	 beat;		/* as it came */
	int			 replaced;	/* a replacement, not the first */
	int			 killed;	/* by the watchdog: wait for it */
	time_t			 window;	/* replacements counted since */
	int			 nreplaced;	/* within the window */
	struct event		*ev_respawn;	/* NULL: none pending */
};
TAILQ_HEAD(child_list, child_proc);

/* The whole environment of every program the master starts. */
extern char *const	 master_proc_env[];

void		 master_proc_spawn(struct child_proc *);
int		 master_proc_connect_pair(struct child_proc *,
		    struct child_proc *);
void		 master_proc_send_conf(struct child_proc *,
		    const struct depotd_conf *, uint32_t generation);
void		 master_proc_kill_all(struct child_list *);
int		 master_proc_signal(const struct child_proc *, int sig);

#endif
