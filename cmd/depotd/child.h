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

void			 child_run(enum proc_role, int instance,
			    const struct child_ops *, int debug, int verbose)
			    __attribute__((noreturn));
struct event_base	*child_base(void);
struct depotd_conf	*child_conf(void);
int			 child_instance(void);
time_t			 child_started(void);
void			 child_peer_init(struct imsgev *, enum proc_role peer,
			    int fd, imsgev_dispatch_cb, imsgev_closed_cb,
			    void *);
int			 child_send_parent(uint32_t type, uint32_t peerid,
			    int fd, const void *, size_t);

#endif
