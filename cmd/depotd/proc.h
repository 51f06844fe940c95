/*
 * proc.h: the master's view of its children.
 */
#ifndef DEPOTD_PROC_H
#define DEPOTD_PROC_H

#include <sys/queue.h>
#include <time.h>

#include "imsg.h"

struct child_proc {
	TAILQ_ENTRY(child_proc)	 entry;
	enum proc_role		 role;
	int			 instance;
	pid_t			 pid;
	int			 fd;
	time_t			 started;
	int			 ready;
	struct imsgev		 iev;
};
TAILQ_HEAD(child_list, child_proc);

int		 role_from_name(const char *);
struct child_proc *proc_spawn(const char *self, enum proc_role, int instance,
		    int debug, int verbose);
int		 proc_connect_pair(struct child_proc *, struct child_proc *);
void		 proc_send_conf(struct child_proc *, const struct depotd_conf *);
void		 proc_kill_all(struct child_list *);

#endif
