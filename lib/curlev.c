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
 * curlev.c: curl multi glued to libevent with the socket and timer
 * callbacks: curl says which descriptors it waits on, libevent says
 * when they are ready.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>
#include <event2/event.h>
#include <event2/event_struct.h>

#include "curlev.h"
#include "log.h"

#define CURLEV_MAXCONNECTS	256	/* idle and busy, all hosts */

struct curlev_sock;
LIST_HEAD(curlev_socks, curlev_sock);

struct curlev {
	struct event_base	*base;
	CURLM			*multi;
	struct event		*timer;
	struct curlev_socks	 socks;	/* watched and parked */
};

/* What curlev keeps for an easy handle, in CURLOPT_PRIVATE. */
struct curlev_job {
	curlev_done_cb	 done;
	void		*arg;
};

/*
 * One socket curl opened, from its first wish to its close.  Two
 * events, so that a change of interest is one EPOLL_CTL_MOD.  When
 * curl stops watching a kept-alive connection the socket is parked:
 * its read event stays armed (no system call between transfers) and
 * the next transfer on it takes it back as it is.  A parked socket
 * that turns readable (the upstream closed it, or said something out
 * of turn) is disarmed, not read: curl's own check before reuse finds
 * it dead.  Only curl's close callback frees it, before the close,
 * so that a descriptor number reused later never finds a stale event.
 */
struct curlev_sock {
	struct curlev		*curl;
	struct event		 rd;
	struct event		 wr;
	short			 what;	/* armed: EV_READ, EV_WRITE */
	int			 parked;
	curl_socket_t		 fd;
	LIST_ENTRY(curlev_sock)	 entry;
};

static void	curlev_reap(struct curlev *);
static int	curlev_sock_arm(struct curlev_sock *, short);

static void
curlev_sock_cb(evutil_socket_t fd, short what, void *arg)
{
	struct curlev_sock	*watch = arg;
	struct curlev		*curl = watch->curl;
	int			 flags = 0, running;

	if (watch->parked) {
		curlev_sock_arm(watch, 0);
		return;
	}
	if (what & EV_READ)
		flags |= CURL_CSELECT_IN;
	if (what & EV_WRITE)
		flags |= CURL_CSELECT_OUT;
	/* watch may be parked or freed inside the call: not touched after. */
	curl_multi_socket_action(curl->multi, fd, flags, &running);
	curlev_reap(curl);
}

static void
curlev_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct curlev	*curl = arg;
	int		 running;

	curl_multi_socket_action(curl->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	curlev_reap(curl);
}

/* Arms what of EV_READ and EV_WRITE, and only what changed. */
static int
curlev_sock_arm(struct curlev_sock *watch, short what)
{
	int	 rc = 0;

	if ((what & EV_READ) && !(watch->what & EV_READ))
		rc |= event_add(&watch->rd, NULL);
	else if (!(what & EV_READ) && (watch->what & EV_READ))
		event_del(&watch->rd);
	if ((what & EV_WRITE) && !(watch->what & EV_WRITE))
		rc |= event_add(&watch->wr, NULL);
	else if (!(what & EV_WRITE) && (watch->what & EV_WRITE))
		event_del(&watch->wr);
	watch->what = what;
	return rc == 0 ? 0 : -1;
}

static struct curlev_sock *
curlev_sock_find(struct curlev *curl, curl_socket_t fd)
{
	struct curlev_sock	*watch;

	LIST_FOREACH(watch, &curl->socks, entry)
		if (watch->fd == fd)
			return watch;
	return NULL;
}

static struct curlev_sock *
curlev_sock_new(struct curlev *curl, curl_socket_t fd)
{
	struct curlev_sock	*watch;

	if ((watch = calloc(1, sizeof(*watch))) == NULL)
		return NULL;
	watch->curl = curl;
	watch->fd = fd;
	event_assign(&watch->rd, curl->base, fd, EV_READ | EV_PERSIST,
	    curlev_sock_cb, watch);
	event_assign(&watch->wr, curl->base, fd, EV_WRITE | EV_PERSIST,
	    curlev_sock_cb, watch);
	LIST_INSERT_HEAD(&curl->socks, watch, entry);
	return watch;
}

static void
curlev_sock_free(struct curlev_sock *watch)
{
	curlev_sock_arm(watch, 0);
	LIST_REMOVE(watch, entry);
	free(watch);
}

static int
curlev_socket(CURL *easy, curl_socket_t fd, int action, void *userp,
    void *socketp)
{
	struct curlev		*curl = userp;
	struct curlev_sock	*watch = socketp;
	short			 what = 0;

	if (watch == NULL)
		watch = curlev_sock_find(curl, fd);
	if (action == CURL_POLL_REMOVE) {
		if (watch != NULL) {
			/* Kept alive, most likely: only EOF is of interest. */
			watch->parked = 1;
			curl_multi_assign(curl->multi, fd, NULL);
			return curlev_sock_arm(watch, EV_READ);
		}
		return 0;
	}
	if (watch == NULL && (watch = curlev_sock_new(curl, fd)) == NULL)
		return -1;
	if (watch->parked || socketp == NULL) {
		watch->parked = 0;
		curl_multi_assign(curl->multi, fd, watch);
	}
	if (action & CURL_POLL_IN)
		what |= EV_READ;
	if (action & CURL_POLL_OUT)
		what |= EV_WRITE;
	return curlev_sock_arm(watch, what);
}

/* curl closes a socket: its events go first, then the descriptor. */
static int
curlev_closesocket(void *userp, curl_socket_t fd)
{
	struct curlev		*curl = userp;
	struct curlev_sock	*watch;

	if ((watch = curlev_sock_find(curl, fd)) != NULL)
		curlev_sock_free(watch);
	return close(fd);
}

static int
curlev_timer(CURLM *multi, long ms, void *userp)
{
	struct curlev	*curl = userp;
	struct timeval	 tv;

	if (ms < 0) {
		evtimer_del(curl->timer);
		return 0;
	}
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	return evtimer_add(curl->timer, &tv);
}

/* Finished transfers leave the multi before their owners hear of it. */
static void
curlev_reap(struct curlev *curl)
{
	struct curlev_job	*job;
	CURLMsg			*msg;
	CURL			*easy;
	CURLcode		 rc;
	int			 left;

	while ((msg = curl_multi_info_read(curl->multi, &left)) != NULL) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		easy = msg->easy_handle;
		rc = msg->data.result;
		job = NULL;
		curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&job);
		curl_multi_remove_handle(curl->multi, easy);
		curl_easy_setopt(easy, CURLOPT_PRIVATE, NULL);
		if (job != NULL) {
			job->done(job->arg, rc);
			free(job);
		}
	}
}

struct curlev *
curlev_new(struct event_base *base)
{
	struct curlev	*curl;

	if ((curl = calloc(1, sizeof(*curl))) == NULL)
		return NULL;
	curl->base = base;
	LIST_INIT(&curl->socks);
	curl->multi = curl_multi_init();
	curl->timer = evtimer_new(base, curlev_timer_cb, curl);
	if (curl->multi == NULL || curl->timer == NULL) {
		curlev_free(curl);
		return NULL;
	}
	/*
	 * curl's default cache is four connections per handle in the
	 * multi, counted as a transfer ends: under a burst that closes
	 * kept-alive connections as fast as it opens new ones.
	 */
	curl_multi_setopt(curl->multi, CURLMOPT_MAXCONNECTS,
	    (long)CURLEV_MAXCONNECTS);
	curl_multi_setopt(curl->multi, CURLMOPT_SOCKETFUNCTION, curlev_socket);
	curl_multi_setopt(curl->multi, CURLMOPT_SOCKETDATA, curl);
	curl_multi_setopt(curl->multi, CURLMOPT_TIMERFUNCTION, curlev_timer);
	curl_multi_setopt(curl->multi, CURLMOPT_TIMERDATA, curl);
	return curl;
}

void
curlev_free(struct curlev *curl)
{
	if (curl == NULL)
		return;
	if (curl->multi != NULL)
		curl_multi_cleanup(curl->multi);
	/* The cleanup closed curl's sockets; any left are not curl's now. */
	while (!LIST_EMPTY(&curl->socks))
		curlev_sock_free(LIST_FIRST(&curl->socks));
	if (curl->timer != NULL)
		event_free(curl->timer);
	free(curl);
}

int
curlev_add(struct curlev *curl, CURL *easy, curlev_done_cb done, void *arg)
{
	struct curlev_job	*job;

	if ((job = calloc(1, sizeof(*job))) == NULL)
		return -1;
	job->done = done;
	job->arg = arg;
	curl_easy_setopt(easy, CURLOPT_PRIVATE, job);
	/* Kept by each connection it opens, for its close. */
	curl_easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION, curlev_closesocket);
	curl_easy_setopt(easy, CURLOPT_CLOSESOCKETDATA, curl);
	if (curl_multi_add_handle(curl->multi, easy) != CURLM_OK) {
		curl_easy_setopt(easy, CURLOPT_PRIVATE, NULL);
		free(job);
		return -1;
	}
	return 0;
}

void
curlev_remove(struct curlev *curl, CURL *easy)
{
	struct curlev_job	*job = NULL;

	curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&job);
	curl_multi_remove_handle(curl->multi, easy);
	curl_easy_setopt(easy, CURLOPT_PRIVATE, NULL);
	free(job);
}

void
curlev_unpause(struct curlev *curl, CURL *easy)
{
	int	running;

	curl_easy_pause(easy, CURLPAUSE_CONT);
	curl_multi_socket_action(curl->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	curlev_reap(curl);
}

struct event_base *
curlev_base(const struct curlev *curl)
{
	return curl->base;
}
