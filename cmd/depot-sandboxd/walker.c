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
 * walker.c: workspace walks off the event loop.
 *
 * A walk of a big workspace takes up to WS_WALK_USEC; on the loop it
 * would hold up every other session's replies that long.  A walk is
 * first tried on the loop for a millisecond (most workspaces hold a
 * few files, and a thread costs an Execute more than that walk); one
 * that needs longer starts again in a thread of its own, on its own
 * copy of the root fd and into its own listing, and ends by writing one
 * byte to a pipe the loop watches.  The thread touches nothing else, so
 * a caller that goes away (its session destroyed) only cancels: the
 * loop frees the walk when its thread is done.  Either way the caller
 * is called back from the loop, never from within ws_walker_start.
 */
#include <sys/types.h>
#include <sys/resource.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "sandboxd.h"

struct ws_walker {
	pthread_t		 thread;
	int			 threaded;
	int			 rootfd;	/* our own copy */
	int			 pipe[2];
	struct event		*ev;
	struct ws_listing	 listing;
	int			 rv;
	/* Loop thread only. */
	ws_walker_cb		 cb;
	void			*arg;
};

static void
walker_run(struct ws_walker *w)
{
	w->rv = ws_list(w->rootfd, ".", &w->listing);
	/* The loop reads it after this; the pipe orders the two. */
	while (write(w->pipe[1], "", 1) == -1 && errno == EINTR)
		;
}

static void *
walker_thread(void *arg)
{
	/* Background work: the loop's thread goes first (per thread). */
	(void)setpriority(PRIO_PROCESS, (id_t)gettid(), 10);
	walker_run(arg);
	return NULL;
}

static void
walker_free(struct ws_walker *w)
{
	if (w->ev != NULL)
		event_free(w->ev);
	if (w->pipe[0] != -1)
		close(w->pipe[0]);
	if (w->pipe[1] != -1)
		close(w->pipe[1]);
	if (w->rootfd != -1)
		close(w->rootfd);
	ws_listing_free(&w->listing);
	free(w);
}

static void
walker_done(int fd, short ev, void *arg)
{
	struct ws_walker	*w = arg;
	char			 c;

	/* fd -1: the walk was done (or failed) on the loop. */
	if (fd != -1 && read(fd, &c, 1) != 1)
		return;		/* spurious: the byte is still to come */
	if (w->threaded)
		pthread_join(w->thread, NULL);
	if (w->cb != NULL)
		w->cb(w->rv == 0 ? &w->listing : NULL, w->arg);
	walker_free(w);
}

/* The walk is over already: its callback runs on the loop's next pass. */
static struct ws_walker *
walker_later(struct event_base *base, struct ws_walker *w)
{
	if ((w->ev = event_new(base, -1, 0, walker_done, w)) == NULL)
		fatalx("walker event");
	event_active(w->ev, EV_TIMEOUT, 0);
	return w;
}

struct ws_walker *
ws_walker_start(struct event_base *base, int rootfd, ws_walker_cb cb,
    void *arg)
{
	struct ws_walker	*w;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		fatal("calloc");
	w->rootfd = w->pipe[0] = w->pipe[1] = -1;
	w->cb = cb;
	w->arg = arg;
	if ((w->rv = ws_list_quick(rootfd, &w->listing)) != 1)
		return walker_later(base, w);
	w->rv = -1;
	if ((w->rootfd = fcntl(rootfd, F_DUPFD_CLOEXEC, 0)) == -1 ||
	    pipe2(w->pipe, O_CLOEXEC | O_NONBLOCK) == -1) {
		/* Out of fds: the walk fails, like any other. */
		log_warn("walker");
		return walker_later(base, w);
	}
	w->ev = event_new(base, w->pipe[0], EV_READ | EV_PERSIST,
	    walker_done, w);
	if (w->ev == NULL || event_add(w->ev, NULL) == -1)
		fatalx("walker event");
	if (pthread_create(&w->thread, NULL, walker_thread, w) == 0)
		w->threaded = 1;
	else {
		/* No thread: walk here; the loop still calls back. */
		log_warnx("walker: no thread, walking on the loop");
		walker_run(w);
	}
	return w;
}

void
ws_walker_cancel(struct ws_walker *w)
{
	if (w != NULL)
		w->cb = NULL;
}
