/*
 * proc.h: the master's view of its children.
 */
#ifndef DEPOTD_PROC_H
#define DEPOTD_PROC_H

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
};
TAILQ_HEAD(child_list, child_proc);

/* The whole environment of every program the master starts. */
extern char *const	 proc_env[];

void		 proc_spawn(struct child_proc *);
int		 proc_connect_pair(struct child_proc *, struct child_proc *);
void		 proc_send_conf(struct child_proc *, const struct depotd_conf *,
		    uint32_t generation);
int		 proc_signal(const struct child_proc *, int);
void		 proc_kill_all(struct child_list *);

#endif
