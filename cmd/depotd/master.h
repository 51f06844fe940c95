/*
 * master.h: the master's state, shared by depotd.c, master.c and
 * control.c.
 */
#ifndef DEPOTD_MASTER_H
#define DEPOTD_MASTER_H

#include "proc.h"

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
};

extern struct master master;

/* master.c */
void	 master_signals(void);
void	 master_dispatch(struct imsgev *, struct imsg *, void *);
void	 master_child_closed(struct imsgev *, const char *, void *);
int	 master_reload(char *why, size_t whylen);
void	 master_set_verbose(int);
struct child_proc *master_storage(void);
void	 master_shutdown(int) __attribute__((noreturn));

/* sandbox_local.c */
void	 sandbox_local_start(void);
void	 sandbox_local_cleanup(void);

/* control.c */
void	 control_init(const char *path);
int	 control_in_use(const char *path);
void	 control_relay(struct imsg *);
void	 control_cleanup(void);

#endif
