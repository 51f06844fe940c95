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
 * storage.c: the storage helper process.
 *
 * It alone holds the database connection string and the store's
 * credentials.  Frontends ask it, over their channels, for key lookups
 * and file operations; it answers with records and with descriptors
 * the frontends read or write directly, so file bytes never pass
 * through this process.
 */
#include <sys/types.h>

#include <err.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "log.h"
#include "child.h"
#include "confine.h"
#include "storage.h"

struct storage_peer {
	TAILQ_ENTRY(storage_peer)	 entry;
	enum proc_role		 role;
	int			 instance;
	struct imsgev		 iev;
};

struct storage storage;
static TAILQ_HEAD(, storage_peer)	 peers = TAILQ_HEAD_INITIALIZER(peers);
/* The Landlock paths: the system's, then the store's. */
static const char	*ro_list[CONFINE_COMMON_MAX + STORE_PATHS_MAX + 1];
static const char	*rw_list[STORE_PATHS_MAX + 1];

int
storage_reply(struct storage_peer *p, uint32_t type, uint32_t peerid, int fd,
    const void *data, size_t len)
{
	return imsgev_compose(&p->iev, type, peerid, 0, fd, data, len);
}

void
storage_error(struct storage_peer *p, uint32_t peerid, int status,
    const char *fmt, ...)
{
	struct error_msg	 em;
	va_list			 ap;

	memset(&em, 0, sizeof(em));
	em.status = status;
	va_start(ap, fmt);
	vsnprintf(em.message, sizeof(em.message), fmt, ap);
	va_end(ap);
	storage_reply(p, IMSG_ERROR, peerid, -1, &em, sizeof(em));
}

/* proto.c has refused whatever this peer's role may not send. */
static void
storage_dispatch_peer(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	sfiles_dispatch(arg, imsg);
}

static void
storage_peer_closed(struct imsgev *iev, const char *why, void *arg)
{
	struct storage_peer	*p = arg;

	/* A lost frontend takes its half-written uploads with it. */
	sfiles_peer_lost(p);
	log_warnx("%s %d channel closed: %s", role_name(p->role), p->instance,
	    why);
	TAILQ_REMOVE(&peers, p, entry);
	imsgev_clear(&p->iev);
	free(p);
}

/* The broker's channel, NULL when it has none (yet). */
struct storage_peer *
storage_broker(void)
{
	struct storage_peer	*p;

	TAILQ_FOREACH(p, &peers, entry)
		if (p->role == ROLE_BROKER)
			return p;
	return NULL;
}

int
storage_peer_is_broker(const struct storage_peer *p)
{
	return p->role == ROLE_BROKER;
}

static void
storage_add_peer(enum proc_role role, int instance, int fd)
{
	struct storage_peer	*p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		fatal("calloc");
	p->role = role;
	p->instance = instance;
	child_peer_init(&p->iev, role, fd, storage_dispatch_peer,
	    storage_peer_closed, p);
	TAILQ_INSERT_TAIL(&peers, p, entry);
}

static void
store_checked(void *arg, int error)
{
	int	 was = storage.store_up;

	storage.store_up = error == 0;
	/* The URL names no secret: credentials are options apart. */
	if (error != 0 && (was || arg != NULL))
		log_warnx("storage: %s is not usable: %s",
		    storage.store_url, strerror(error));
	else if (error == 0 && !was)
		log_info("storage: store is usable");
}

static void
store_check_timer(evutil_socket_t fd, short what, void *arg)
{
	struct timeval	 tv = { 30, 0 };

	storage.store->ops->check(storage.store, store_checked, NULL);
	evtimer_add(storage.ev_store_check, &tv);
}

static void
db_state(void *arg, int up)
{
	if (up)
		log_info("database is up");
	else
		log_warnx("database is down");
}

static void
storage_conf(struct depotd_conf *conf, int reload)
{
	storage.conf = conf;
	storage.base = child_base();
	if (reload)
		sweep_reschedule();
}

/* Opened as root: the store's directory or key files may be root's. */
static void
storage_prepare(void)
{
	struct store_conf	 sc;
	const char		*why;
	size_t			 n;

	/* The store and the database stay as started until a restart. */
	strlcpy(storage.store_url, storage.conf->storage_url,
	    sizeof(storage.store_url));
	conf_store(storage.conf, &sc);
	if ((storage.store = store_new(storage.base, &sc, &why)) == NULL)
		fatalx("storage %s: %s", storage.conf->storage_url, why);
	n = confine_storage_common(ro_list);
	/* Room for STORE_PATHS_MAX each and the NULL that ends the lists. */
	storage.store->ops->paths(storage.store, ro_list + n, rw_list);
}

static const char *const *
storage_ro(void)
{
	return ro_list;
}

static const char *const *
storage_rw(void)
{
	return rw_list;
}

static void
storage_start(void)
{
	struct timeval	 now = { 0, 0 };

	storage.db = db_new(storage.base, storage.conf->database,
	    storage.conf->db_pool);
	if (storage.db == NULL)
		fatalx("database: cannot set up the connection pool");
	/* The conninfo may hold a password; the pool has its own copy. */
	db_start(storage.db, db_state, NULL);
	storage.ev_store_check = evtimer_new(storage.base, store_check_timer,
	    NULL);
	storage.store->ops->check(storage.store, store_checked, &storage);
	evtimer_add(storage.ev_store_check, &now);
	sweep_init();
}

/* The only message of its own the master sends: a control command. */
static void
storage_parent_msg(struct imsg *imsg)
{
	ctl_dispatch_cmd(imsg);
}

static void
storage_shutdown(void)
{
	struct storage_peer	*p;

	TAILQ_FOREACH(p, &peers, entry)
		sfiles_peer_lost(p);
}

static const struct child_ops storage_ops = {
	.conf = storage_conf,
	.peer = storage_add_peer,
	.prepare = storage_prepare,
	.ro_paths = storage_ro,
	.rw_paths = storage_rw,
	.start = storage_start,
	.parent_msg = storage_parent_msg,
	.shutdown = storage_shutdown,
};

void
storage_main(int instance, int debug, int verbose)
{
	/* Once per process, before any store may use libcurl. */
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		errx(1, "curl_global_init failed");
	gethostname(storage.host, sizeof(storage.host));
	storage.host[sizeof(storage.host) - 1] = '\0';
	snprintf(storage.host + strlen(storage.host),
	    sizeof(storage.host) - strlen(storage.host), ":%d", (int)getpid());
	child_run(ROLE_STORAGE, instance, &storage_ops, debug, verbose);
}
