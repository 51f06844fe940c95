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
 * master.h: the master's state, shared by depotd.c and the master_*.c
 * files.
 */
#ifndef DEPOTD_MASTER_H
#define DEPOTD_MASTER_H

#include "cdefs.h"
#include "privdrop.h"
#include "master_proc.h"

struct master {
	struct event_base	*base;
	struct depotd_conf	*conf;
	const char		*conffile;
	const char		*self;
	const char		*pidfile;
	struct child_list	 children;
	int			 debug;
	int			 verbose;
	int			 shutting_down;
	int			 exit_status;
	time_t			 started;
	struct privuser		 users[RUN_AS_MAX];	/* looked up at start */
	uint32_t		 generation;	/* of the configuration sent */
};

extern struct master master;

/* master.c */
void	 master_signals(void);
void	 master_dispatch_child(struct imsgev *, struct imsg *, void *);
void	 master_child_closed(struct imsgev *, const char *, void *);
/* Reaps what exited; ends the daemon if that was not a frontend. */
void	 master_reap(void);
__dead void	 master_shutdown(int);

/* master_reload.c */
/* The new configuration's generation, or 0 (why says) if it failed. */
uint32_t master_reload(char *why, size_t whylen);

/* master_roles.c: how each role is started */
typedef void	(*master_role_main_fn)(int instance, int debug, int verbose);
/* Starts one instance of cp's role: its pid, and its channel or -1. */
void	 master_role_spawn(struct child_proc *);
/* The main of role in the re-executed child; NULL if it has none. */
master_role_main_fn master_role_main(enum proc_role);

/* master_proc.c: listening sockets, SO_REUSEPORT when shared */
int	 master_bound_socket(const struct listen_conf *, int shared,
	    const char *taken);
void	 master_send_listeners(struct child_proc *);
struct child_proc *master_storage(void);
void	 master_set_verbose(int);

/*
 * master_respawn.c: the frontends' heartbeat and replacement.  A
 * replacement's channel gets master.c's dispatch and closed; reap is
 * master_reap, run before one starts.
 */
void	 master_respawn_init(imsgev_dispatch_cb dispatch,
	    imsgev_closed_cb closed, void (*reap)(void));
void	 master_respawn_heartbeat(struct child_proc *, struct imsg *);
void	 master_respawn_schedule(struct child_proc *);
void	 master_respawn_channel_closed(struct child_proc *, const char *why);

/* master_sandbox.c */
void	 master_sandbox_spawn(struct child_proc *);
void	 master_sandbox_cleanup(void);
/* Starts it again; -1 when it dies too often to try. */
int	 master_sandbox_respawn(struct child_proc *);
const char *master_sandbox_dir(void);

/* master_control.c */
void	 master_control_init(const char *path);
int	 master_control_in_use(const char *path);
void	 master_control_relay(const struct child_proc *, struct imsg *);
/* Every child has applied generation: answer who waits for it. */
void	 master_control_reload_acked(uint32_t generation);
void	 master_control_cleanup(void);

#endif
