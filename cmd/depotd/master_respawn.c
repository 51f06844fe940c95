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
 * master_respawn.c: the frontends' watchdog and their replacement.
 *
 * Every frontend's loop sends a heartbeat each second.  One that has
 * sent none for `frontend-timeout' seconds is spinning or stopped: the
 * master logs what it was serving and kills it.  A frontend that dies,
 * so killed or otherwise, is started again in its slot (same instance
 * number) with what the first one had at start: the running
 * configuration, its own listening sockets and fresh channels to the
 * storage helper, the broker and the extract child, whose ends of the
 * dead one's channels closed with it.  Any other child's death still
 * ends the daemon (master.c).
 *
 * Rate limit, per slot: RESPAWN_FREE replacements within RESPAWN_WINDOW
 * seconds start at once; each further one waits twice as long as the
 * one before, from 1 s up to RESPAWN_WINDOW.  The daemon keeps trying:
 * a request that kills frontends must not end the service for everyone,
 * and the other slots serve meanwhile.
 */
#include <sys/types.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "depotd.h"
#include "master.h"

#define RESPAWN_WINDOW	60	/* seconds */
#define RESPAWN_FREE	5	/* replacements at once within the window */
#define RESPAWN_SOON	50	/* ms: let a sibling's death be reaped too */
#define START_GRACE	10	/* s a replacement may take to start */

static struct event	*ev_watchdog;
/* master.c's, handed over by master_respawn_init: it is above this file. */
static imsgev_dispatch_cb	 child_dispatch;
static imsgev_closed_cb		 child_closed;
static void			(*child_reap)(void);

static int64_t
now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A string from a frontend, fit for one log line: no control bytes. */
static void
escape(char *dst, size_t len, const char *src, size_t srclen)
{
	size_t		 i, n = 0;
	unsigned char	 c;

	for (i = 0; i < srclen && src[i] != '\0' && n + 5 < len; i++) {
		c = src[i];
		if (c < 0x20 || c == 0x7f || c == '\\' || c == '"')
			n += snprintf(dst + n, len - n, "\\x%02x", c);
		else
			dst[n++] = c;
	}
	dst[n] = '\0';
}

/* What the last heartbeat said the frontend was serving. */
static void
describe(const struct child_proc *cp, char *buf, size_t len)
{
	const struct heartbeat_msg	*hb = &cp->beat;
	char				 id[sizeof(hb->id) * 4 + 1];
	char				 method[sizeof(hb->method) * 4 + 1];
	char				 path[sizeof(hb->path) * 4 + 1];

	if (hb->inflight <= 0) {
		snprintf(buf, len, "no request in flight at its last "
		    "heartbeat");
		return;
	}
	escape(id, sizeof(id), hb->id, sizeof(hb->id));
	escape(method, sizeof(method), hb->method, sizeof(hb->method));
	escape(path, sizeof(path), hb->path, sizeof(hb->path));
	snprintf(buf, len, "%d request%s in flight at its last heartbeat, "
	    "the oldest id=%s \"%s %s\" for %d s", (int)hb->inflight,
	    hb->inflight == 1 ? "" : "s", id, method, path, (int)hb->age);
}

void
master_respawn_heartbeat(struct child_proc *cp, struct imsg *imsg)
{
	memcpy(&cp->beat, imsg->data, sizeof(cp->beat));
	cp->beat_ms = now_ms();
}

/*
 * A replacement holds its listening sockets from the start: one stuck
 * before it serves would take its share of the connections for good.
 * The first frontends have no such bound: their start is the daemon's.
 */
static void
start_watch(struct child_proc *cp)
{
	time_t	 limit = master.conf->frontend_timeout;

	if (limit < START_GRACE)
		limit = START_GRACE;
	if (!cp->replaced || time(NULL) - cp->started <= limit)
		return;
	log_warnx("frontend %d (pid %d) did not start within %lld s; "
	    "killing it", cp->instance, (int)cp->pid, (long long)limit);
	master_proc_signal(cp, SIGKILL);
	cp->killed = 1;
}

/* The loop of a started frontend is seen every second, or it goes. */
static void
watchdog(evutil_socket_t fd, short what, void *arg)
{
	static int64_t		 last;
	struct child_proc	*cp;
	int64_t			 now = now_ms(), limit;
	char			 doing[1536];

	/*
	 * The master's own loop was held up (a slow reload, a name that
	 * takes long to resolve): the heartbeats wait unread in their
	 * channels, and silence says nothing this time.
	 */
	if (last != 0 && now - last > 2000) {
		TAILQ_FOREACH(cp, &master.children, entry)
			if (cp->role == ROLE_FRONTEND && cp->beat_ms != 0)
				cp->beat_ms = now;
		last = now;
		return;
	}
	last = now;
	limit = (int64_t)master.conf->frontend_timeout * 1000;
	TAILQ_FOREACH(cp, &master.children, entry) {
		if (cp->role != ROLE_FRONTEND || cp->pid <= 0 ||
		    cp->fd == -1 || cp->killed)
			continue;
		if (!cp->ready) {
			start_watch(cp);
			continue;
		}
		if (now - cp->beat_ms <= limit)
			continue;
		describe(cp, doing, sizeof(doing));
		log_warnx("frontend %d (pid %d) has not turned for %lld s, "
		    "%s; killing it", cp->instance, (int)cp->pid,
		    (long long)(now - cp->beat_ms) / 1000, doing);
		master_proc_signal(cp, SIGKILL);
		/* Its channel and its death come next: no second kill. */
		cp->killed = 1;
	}
}

void
master_respawn_init(imsgev_dispatch_cb dispatch, imsgev_closed_cb closed,
    void (*reap)(void))
{
	struct timeval	 tv = { 1, 0 };

	child_dispatch = dispatch;
	child_closed = closed;
	child_reap = reap;

	ev_watchdog = event_new(master.base, -1, EV_PERSIST, watchdog, NULL);
	if (ev_watchdog == NULL || event_add(ev_watchdog, &tv) == -1)
		fatalx("watchdog timer");
}

/*
 * A new frontend in cp's slot gets what spawn_children gave the first:
 * the running configuration, listening sockets, a channel to each peer
 * (which drops the dead one's on its own when it reads EOF), START.
 */
static void
respawn_start(struct child_proc *cp)
{
	const struct role	*r = roster_role(cp->role);
	struct child_proc	*peer;

	/* Reaped before its channel said EOF: that end goes now. */
	if (cp->fd != -1) {
		imsgev_clear(&cp->iev);
		cp->fd = -1;
	}
	cp->ready = 0;
	cp->killed = 0;
	cp->conf_acked = 0;
	cp->beat_ms = 0;
	cp->replaced = 1;
	cp->started = time(NULL);
	memset(&cp->beat, 0, sizeof(cp->beat));
	master_role_spawn(cp);
	if (imsgev_init(&cp->iev, master.base, cp->fd, child_dispatch,
	    child_closed, cp) == -1)
		fatal("imsgev_init");
	imsgev_set_channel(&cp->iev, proto_channel(ROLE_MASTER, cp->role));
	master_proc_send_conf(cp, master.conf, master.generation);
	if (r->listens)
		master_send_listeners(cp);
	TAILQ_FOREACH(peer, &master.children, entry)
		if (peer != cp && peer->fd != -1 &&
		    (r->peers & ROLE_BIT(peer->role)) &&
		    master_proc_connect_pair(peer, cp) == -1)
			fatal("socketpair");
	imsgev_compose(&cp->iev, IMSG_START, 0, 0, -1, NULL, 0);
	log_info("frontend %d started again (pid %d)", cp->instance,
	    (int)cp->pid);
}

static void
respawn_due(evutil_socket_t fd, short what, void *arg)
{
	struct child_proc	*cp = arg;

	event_free(cp->ev_respawn);
	cp->ev_respawn = NULL;
	/* A sibling that died meanwhile (the storage helper?) ends all. */
	child_reap();
	if (master.shutting_down || cp->pid != 0)
		return;
	respawn_start(cp);
}

/* cp's frontend is gone, reaped: start another, when the limit says. */
void
master_respawn_schedule(struct child_proc *cp)
{
	struct timeval	 tv;
	time_t		 now = time(NULL);
	int		 wait = 0, extra;

	if (cp->ev_respawn != NULL)
		return;
	if (now - cp->window >= RESPAWN_WINDOW) {
		cp->window = now;
		cp->nreplaced = 0;
	}
	if (++cp->nreplaced > RESPAWN_FREE) {
		extra = cp->nreplaced - RESPAWN_FREE - 1;
		wait = extra >= 6 ? RESPAWN_WINDOW : 1 << extra;
		log_warnx("frontend %d replaced %d times in %d s; the next "
		    "in %d s", cp->instance, cp->nreplaced - 1,
		    RESPAWN_WINDOW, wait);
	}
	tv.tv_sec = wait;
	tv.tv_usec = wait == 0 ? RESPAWN_SOON * 1000 : 0;
	if ((cp->ev_respawn = evtimer_new(master.base, respawn_due,
	    cp)) == NULL || evtimer_add(cp->ev_respawn, &tv) == -1)
		fatalx("respawn timer");
}

/*
 * A frontend's channel closed.  It died, or closed it: either way it
 * is of no more use, and it is replaced once it has been reaped.
 */
void
master_respawn_channel_closed(struct child_proc *cp, const char *why)
{
	log_warnx("frontend %d (pid %d) channel closed: %s", cp->instance,
	    (int)cp->pid, why);
	imsgev_clear(&cp->iev);
	cp->fd = -1;
	cp->ready = 0;
	if (cp->pid > 0)
		master_proc_signal(cp, SIGKILL);
}
