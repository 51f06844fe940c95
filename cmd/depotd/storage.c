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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "log.h"
#include "child.h"
#include "confine.h"
#include "storage.h"

struct storage storage;
/* The Landlock paths: the system's, then the store's. */
static const char	*ro_list[CONFINE_COMMON_MAX + STORE_PATHS_MAX + 1];
static const char	*rw_list[STORE_PATHS_MAX + 1];

/*
 * proto.c let through only what a frontend may send, at its size; the
 * broker's channel carries nothing yet (see there).
 */
static void
storage_dispatch_peer(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	struct storage_peer	*p = arg;

	switch (imsg->hdr.type) {
	case IMSG_AUTH_LOOKUP:
		storage_auth_lookup(p, imsg);
		break;
	case IMSG_AUTH_RELEASE:
		storage_auth_release(p, imsg);
		break;
	case IMSG_LIMIT_ASK:
		storage_limits_ask(p, imsg);
		break;
	case IMSG_LIMIT_RETURN:
		storage_limits_return(p, imsg);
		break;
	case IMSG_USAGE_BATCH:
		storage_usage_batch(p, imsg);
		break;
	case IMSG_AUTH_DELEGATE:
		storage_auth_delegate(p, imsg);
		break;
	case IMSG_FILE_CREATE:
		storage_upload_create(p, imsg);
		break;
	case IMSG_FILE_PROGRESS:
		storage_upload_progress(p, imsg);
		break;
	case IMSG_FILE_COMMIT:
		storage_upload_commit(p, imsg);
		break;
	case IMSG_FILE_ABORT:
		storage_upload_abort(p, imsg);
		break;
	case IMSG_FILE_GET:
		storage_files_get(p, imsg);
		break;
	case IMSG_FILE_OPEN:
		storage_files_open(p, imsg);
		break;
	case IMSG_FILE_LIST:
		storage_files_list(p, imsg);
		break;
	case IMSG_FILE_DELETE:
		storage_files_delete(p, imsg);
		break;
	case IMSG_HEALTH_REQ:
		storage_files_health(p, imsg);
		break;
	case IMSG_CNTR_CREATE:
		storage_container_create(p, imsg);
		break;
	case IMSG_CNTR_GET:
		storage_container_get(p, imsg);
		break;
	case IMSG_CNTR_LIST:
		storage_container_list(p, imsg);
		break;
	case IMSG_CNTR_DELETE:
		storage_container_delete(p, imsg);
		break;
	case IMSG_CNTR_ATTACH:
		storage_container_attach(p, imsg);
		break;
	case IMSG_CNTR_BOUND:
		storage_container_bound(p, imsg);
		break;
	default:
		fatalx("storage: unexpected message %u", imsg->hdr.type);
	}
}

/* A closed channel takes its handles and half-written uploads along. */
static void
storage_lost_peer(struct storage_peer *p)
{
	storage_request_peer_lost(p);
	storage_upload_peer_lost(p);
	storage_limits_peer_lost(p);
	storage_auth_peer_lost(p);
}

static void
storage_peer_closed(struct imsgev *iev, const char *why, void *arg)
{
	struct storage_peer	*p = arg;

	storage_lost_peer(p);
	storage_peer_remove(p, why);
}

static void
storage_add_peer(enum proc_role role, int instance, int fd)
{
	storage_peer_add(role, instance, fd, storage_dispatch_peer,
	    storage_peer_closed);
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
	if (reload) {
		storage_sweep_reschedule();
		storage_auth_reloaded();
	}
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
	storage_sweep_init();
	storage_limits_init();
	storage_usage_init();
}

/* The only message of its own the master sends: a control command. */
static void
storage_parent_msg(struct imsg *imsg)
{
	storage_dispatch_control(imsg);
}

static void
storage_shutdown(void)
{
	storage_peer_foreach(storage_lost_peer);
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
	/* The handle table sits below the uploads: told, it never calls. */
	storage_auth_on_handle_gone(storage_upload_handle_gone);
	child_run(ROLE_STORAGE, instance, &storage_ops, debug, verbose);
}
