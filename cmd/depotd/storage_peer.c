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
 * storage_peer.c: the storage helper's channels to the frontends and
 * the broker, and the replies sent down them.
 *
 * The bottom of the helper: storage.c adds and removes the channels
 * and dispatches what arrives on them; every other file only answers
 * on one, or asks which one is the broker's.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "child.h"
#include "roster.h"
#include "storage.h"

struct storage_peer {
	TAILQ_ENTRY(storage_peer)	 entry;
	enum proc_role		 role;
	int			 instance;
	struct imsgev		 iev;
};

static TAILQ_HEAD(, storage_peer)	 peers = TAILQ_HEAD_INITIALIZER(peers);

/* dispatch and closed are called with the new peer as their argument. */
struct storage_peer *
storage_peer_add(enum proc_role role, int instance, int fd,
    imsgev_dispatch_cb dispatch, imsgev_closed_cb closed)
{
	struct storage_peer	*p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		fatal("calloc");
	p->role = role;
	p->instance = instance;
	child_peer_init(&p->iev, role, fd, dispatch, closed, p);
	TAILQ_INSERT_TAIL(&peers, p, entry);
	return p;
}

void
storage_peer_remove(struct storage_peer *p, const char *why)
{
	log_warnx("%s %d channel closed: %s", role_name(p->role), p->instance,
	    why);
	TAILQ_REMOVE(&peers, p, entry);
	imsgev_clear(&p->iev);
	free(p);
}

/* Calls fn for each channel; fn may not remove one. */
void
storage_peer_foreach(void (*fn)(struct storage_peer *))
{
	struct storage_peer	*p;

	TAILQ_FOREACH(p, &peers, entry)
		fn(p);
}

int
storage_peer_reply(struct storage_peer *p, uint32_t type, uint32_t peerid,
    int fd, const void *data, size_t len)
{
	return imsgev_compose(&p->iev, type, peerid, 0, fd, data, len);
}

/*
 * An unasked message, written at once where the channel takes it: it
 * must be in the peer's channel before our answers on other channels
 * leave (storage_auth.c), and the loop's next turn writes those.
 */
void
storage_peer_push(struct storage_peer *p, uint32_t type, const void *data,
    size_t len)
{
	/* A channel that fails here fails again in its own handler. */
	if (imsgev_compose(&p->iev, type, 0, 0, -1, data, len) == 0)
		(void)imsgbuf_write(&p->iev.ibuf);
}

void
storage_peer_error(struct storage_peer *p, uint32_t peerid, int status,
    const char *fmt, ...)
{
	struct error_msg	 em;
	va_list			 ap;

	memset(&em, 0, sizeof(em));
	em.status = status;
	va_start(ap, fmt);
	vsnprintf(em.message, sizeof(em.message), fmt, ap);
	va_end(ap);
	storage_peer_reply(p, IMSG_ERROR, peerid, -1, &em, sizeof(em));
}

/* The broker's channel, NULL when it has none (yet). */
struct storage_peer *
storage_peer_broker(void)
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

int
storage_peer_instance(const struct storage_peer *p)
{
	return p->instance;
}
