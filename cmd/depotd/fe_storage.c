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
 * fe_storage.c: a frontend's requests to the storage helper.
 *
 * Each request has a number that travels as the imsg peer id; replies
 * find their pending request by it (lib/calltab.c).  A request whose
 * HTTP request went away is cancelled: its replies are dropped and
 * their descriptors closed.
 */
#include <sys/types.h>

#include <stdlib.h>
#include <string.h>

#include "calltab.h"
#include "log.h"
#include "util.h"
#include "child.h"
#include "frontend.h"
#include "fe_authcache.h"

/* A request sent, its reply awaited. */
struct fe_storage_pending {
	struct call_entry	 entry;
	fe_storage_reply_cb	 cb;
	void			*arg;
};

static struct calltab	 pending = CALLTAB_INITIALIZER(pending);
static struct imsgev	 storage_iev;
static int		 storage_attached;

static struct fe_storage_pending *
fe_storage_pending_find(uint32_t id)
{
	return CALL_OF(calltab_find(&pending, id), struct fe_storage_pending,
	    entry);
}

/* Replies that end a request; list items and nothing else keep it open. */
static int
fe_storage_reply_ends(uint32_t type)
{
	return type != IMSG_FILE_LIST_ITEM && type != IMSG_CNTR_LIST_ITEM;
}

static void
frontend_dispatch_storage(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	struct fe_storage_pending	*p;
	struct auth_release		 rel;

	/*
	 * Unasked: the storage helper revoked a handle, or every one (a
	 * reload); no later request is answered from it.
	 */
	if (imsg->hdr.type == IMSG_AUTH_DROP) {
		memcpy(&rel, imsg->data, sizeof(rel));
		rel.handle[sizeof(rel.handle) - 1] = '\0';
		fe_authcache_drop(rel.handle);
		return;
	}
	if ((p = fe_storage_pending_find(imsg->hdr.peerid)) == NULL)
		return;		/* cancelled; imsg_free closes any fd */
	if (fe_storage_reply_ends(imsg->hdr.type))
		calltab_remove(&pending, &p->entry);
	p->cb(p->arg, imsg);
	if (fe_storage_reply_ends(imsg->hdr.type))
		free(p);
}

static void
fe_storage_closed(struct imsgev *iev, const char *why, void *arg)
{
	fatalx("lost the storage helper: %s", why);
}

void
fe_storage_attach(int fd)
{
	if (storage_attached)
		fatalx("a second storage channel");
	child_peer_init(&storage_iev, ROLE_STORAGE, fd,
	    frontend_dispatch_storage, fe_storage_closed, NULL);
	/*
	 * Before any client's bytes: a revocation pushed before a request
	 * arrived is seen before that request is answered from the cache.
	 */
	if (imsgev_set_priority(&storage_iev, CHILD_PRI_FIRST) == -1)
		fatalx("storage channel priority");
	storage_attached = 1;
}

int
fe_storage_up(void)
{
	return storage_attached;
}

uint32_t
fe_storage_request(uint32_t type, int fd, const void *data, size_t len,
    fe_storage_reply_cb cb, void *arg)
{
	struct fe_storage_pending	*p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		fatal("calloc");
	p->cb = cb;
	p->arg = arg;
	calltab_add(&pending, &p->entry);
	if (imsgev_compose(&storage_iev, type, p->entry.id, 0, fd, data,
	    len) == -1)
		fatal("imsg_compose");
	return p->entry.id;
}

/* A message that needs no answer. */
void
fe_storage_send(uint32_t type, const void *data, size_t len)
{
	if (imsgev_compose(&storage_iev, type, 0, 0, -1, data, len) == -1)
		fatal("imsg_compose");
}

/*
 * Tells the storage helper that bytes of an upload flowed, at most
 * once per FE_PROGRESS_EVERY seconds: it keeps the upload (and its
 * row, against the sweep) alive only while they do.
 */
#define FE_PROGRESS_EVERY	5

void
fe_storage_progress(int64_t *last, const char *handle, const char *id)
{
	struct file_key	 fk;
	int64_t		 now = mono_seconds();

	if (now - *last < FE_PROGRESS_EVERY || handle[0] == '\0' ||
	    id[0] == '\0')
		return;
	*last = now;
	memset(&fk, 0, sizeof(fk));
	strlcpy(fk.handle, handle, sizeof(fk.handle));
	strlcpy(fk.id, id, sizeof(fk.id));
	fe_storage_send(IMSG_FILE_PROGRESS, &fk, sizeof(fk));
}

void
fe_storage_cancel(uint32_t id)
{
	struct fe_storage_pending	*p;

	if ((p = fe_storage_pending_find(id)) != NULL) {
		calltab_remove(&pending, &p->entry);
		free(p);
	}
}
