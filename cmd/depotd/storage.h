/*
 * storage.h: the storage helper's parts: its process (storage.c), the
 * file operations the frontends ask for (storage_files.c), the control
 * commands (storage_ctl.c) and the retention sweep (sweep.c).
 */
#ifndef DEPOTD_STORAGE_H
#define DEPOTD_STORAGE_H

#include "depotd.h"
#include "db.h"
#include "store.h"

struct storage_peer;

struct storage {
	struct event_base	*base;
	struct depotd_conf	*conf;
	struct db		*db;
	struct store		*store;
	int			 store_up;
	struct event		*ev_store_check;
	char			 host[128];	/* this host, for sweep claims */
	char			 store_url[1024];	/* as started */
};

extern struct storage storage;

/* storage.c */
int	 storage_reply(struct storage_peer *, uint32_t type, uint32_t peerid,
	    int fd, const void *, size_t);
void	 storage_error(struct storage_peer *, uint32_t peerid, int status,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* storage_files.c */
void	 files_dispatch(struct storage_peer *, struct imsg *);
void	 files_peer_lost(struct storage_peer *);
/* storage_ctl.c */
void	 ctl_dispatch_cmd(struct imsg *);
/* sweep.c */
void	 sweep_init(void);
void	 sweep_reschedule(void);
void	 sweep_run(void (*)(void *, const char *), void *);

#endif
