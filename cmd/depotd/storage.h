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
 * storage.h: the storage helper's parts, top down: its process and
 * the dispatch of what each peer sends (storage.c); the control
 * commands (storage_control.c), the file operations (storage_files.c),
 * uploads (storage_upload.c) and the retention sweep
 * (storage_sweep.c); who is calling (storage_auth.c: key lookups and
 * the handles that stand for them); the head every request shares
 * and the file row (storage_request.c); the channels and their
 * replies (storage_peer.c).  Calls go down that list, never up: a
 * handle's end reaches the uploads through a callback storage.c
 * registers.
 */
#ifndef DEPOTD_STORAGE_H
#define DEPOTD_STORAGE_H

#include <stddef.h>

#include "depotd.h"
#include "storage_db.h"
#include "store/store.h"

/* A channel to a frontend or the broker (storage.c). */
struct storage_peer;

/* Owner of a file: every file operation is scoped to one. */
struct owner {
	char		 user_id[IDLEN];
	char		 workspace_id[IDLEN];
};

/* What a handle stands for, derived here from a key or the admin key. */
struct principal_ref {
	struct owner	 owner;
	char		 key_id[IDLEN];		/* "admin" for the admin key */
};

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

/* Copies a fixed-size message out of an imsg, refusing a wrong size. */
#define IMSG_TAKE(imsg, var) do {					\
	if ((imsg)->datalen != sizeof(var))				\
		fatalx("storage: message %u of %zu bytes",		\
		    (imsg)->hdr.type, (imsg)->datalen);			\
	memcpy(&(var), (imsg)->data, sizeof(var));			\
} while (0)

/*
 * The columns a file record is read from, in the order of the COL_*
 * indexes: one list makes both, so they cannot drift apart.  The blob's
 * storage_ref comes last, as COL_REF.
 */
#define FILE_COLUMNS(X)							\
	X(COL_ID, "id")							\
	X(COL_USER, "user_id")						\
	X(COL_WS, "workspace_id")					\
	X(COL_NAME, "filename")						\
	X(COL_MIME, "mime_type")					\
	X(COL_PURPOSE, "purpose")					\
	X(COL_SOURCE, "source")						\
	X(COL_BYTES, "coalesce(bytes, 0)")				\
	X(COL_CREATED, "(extract(epoch from created_at) * 1000000)::bigint") \
	X(COL_EXPIRES, "coalesce((extract(epoch from expires_at) * "	\
	    "1000000)::bigint, 0)")
#define FILE_COL_ENUM(name, sql)	name,
#define FILE_COL_SQL(name, sql)		sql ", "
enum file_col { FILE_COLUMNS(FILE_COL_ENUM) COL_REF };
#define FILE_COLS	FILE_COLUMNS(FILE_COL_SQL) "storage_ref"

/*
 * The head of every request a peer makes that outlives its message
 * (a query or a store operation runs): the peer is cleared when its
 * channel closes, and replies then go nowhere.  It is the first member
 * of each operation's request struct, which storage_request_free()
 * frees whole.
 */
struct storage_request {
	TAILQ_ENTRY(storage_request) entry;
	struct storage_peer	*peer;
	uint32_t		 peerid;
};
#define STORAGE_REQUEST_FIRST(type)					\
	_Static_assert(offsetof(struct type, req) == 0,			\
	    #type ": its struct storage_request must come first")

/* storage_peer.c */
struct storage_peer *storage_peer_add(enum proc_role, int instance, int fd,
	    imsgev_dispatch_cb, imsgev_closed_cb);
void	 storage_peer_remove(struct storage_peer *, const char *why);
void	 storage_peer_foreach(void (*)(struct storage_peer *));
int	 storage_peer_reply(struct storage_peer *, uint32_t type,
	    uint32_t peerid, int fd, const void *, size_t);
void	 storage_peer_push(struct storage_peer *, uint32_t type,
	    const void *, size_t);
void	 storage_peer_error(struct storage_peer *, uint32_t peerid,
	    int status, const char *fmt, ...)
	    __attribute__((format(printf, 4, 5)));
struct storage_peer *storage_peer_broker(void);
int	 storage_peer_is_broker(const struct storage_peer *);
int	 storage_peer_instance(const struct storage_peer *);
/* storage_request.c */
void	 storage_request_begin(struct storage_request *,
	    struct storage_peer *, uint32_t peerid);
void	 storage_request_end(struct storage_request *);
void	 storage_request_free(struct storage_request *);
void	 storage_request_reply(struct storage_request *, uint32_t type,
	    int fd, const void *, size_t);
void	 storage_request_error(struct storage_request *, int status,
	    const char *msg);
int	 storage_request_db_failed(struct storage_request *,
	    const PGresult *, ExecStatusType);
int	 storage_request_query(struct storage_request *, const char *sql,
	    int n, const char *const *params, db_cb);
int	 storage_request_query_batched(struct storage_request *,
	    const struct db_batch *, const char *const *params, db_row_cb);
void	 storage_request_peer_lost(struct storage_peer *);
void	 storage_request_file_from_row(struct file_rec *, const PGresult *,
	    int row);
/* storage_auth.c */
void	 storage_auth_lookup(struct storage_peer *, struct imsg *);
void	 storage_auth_release(struct storage_peer *, struct imsg *);
void	 storage_auth_delegate(struct storage_peer *, struct imsg *);
const struct principal_ref *storage_auth_handle(struct storage_peer *,
	    uint32_t peerid, const char *handle);
const struct principal_ref *storage_auth_handle_ref(struct storage_peer *,
	    const char *handle);
int	 storage_auth_handle_live(struct storage_peer *, const char *handle);
void	 storage_auth_handle_touch(struct storage_peer *, const char *handle);
void	 storage_auth_key_revoked(const char *key_id);
void	 storage_auth_peer_lost(struct storage_peer *);
void	 storage_auth_reloaded(void);
/* Called as each handle ends, with its channel and id. */
void	 storage_auth_on_handle_gone(void (*)(struct storage_peer *,
	    const char *handle));
/* storage_files.c */
void	 storage_files_get(struct storage_peer *, struct imsg *);
void	 storage_files_open(struct storage_peer *, struct imsg *);
void	 storage_files_list(struct storage_peer *, struct imsg *);
void	 storage_files_delete(struct storage_peer *, struct imsg *);
void	 storage_files_health(struct storage_peer *, struct imsg *);
/* storage_container.c */
void	 storage_container_create(struct storage_peer *, struct imsg *);
void	 storage_container_get(struct storage_peer *, struct imsg *);
void	 storage_container_list(struct storage_peer *, struct imsg *);
void	 storage_container_delete(struct storage_peer *, struct imsg *);
void	 storage_container_sweep(void);
void	 storage_container_session_gone(const char *session);
/* storage_container_attach.c */
void	 storage_container_attach(struct storage_peer *, struct imsg *);
void	 storage_container_bound(struct storage_peer *, struct imsg *);
/* storage_upload.c */
void	 storage_upload_create(struct storage_peer *, struct imsg *);
void	 storage_upload_progress(struct storage_peer *, struct imsg *);
void	 storage_upload_commit(struct storage_peer *, struct imsg *);
void	 storage_upload_abort(struct storage_peer *, struct imsg *);
void	 storage_upload_handle_gone(struct storage_peer *, const char *handle);
void	 storage_upload_peer_lost(struct storage_peer *);
/* storage_control.c */
void	 storage_dispatch_control(struct imsg *);
/* storage_limits.c */
void	 storage_limits_init(void);
void	 storage_limits_ask(struct storage_peer *, struct imsg *);
void	 storage_limits_return(struct storage_peer *, struct imsg *);
void	 storage_limits_peer_lost(struct storage_peer *);
void	 storage_limits_changed(const char *key_id);
/* storage_usage.c */
void	 storage_usage_init(void);
void	 storage_usage_batch(struct storage_peer *, struct imsg *);
/* storage_sweep.c */
void	 storage_sweep_init(void);
void	 storage_sweep_reschedule(void);
void	 storage_sweep_run(void (*)(void *, const char *), void *);

#endif
