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

#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "curlev.h"
#include "log.h"

struct curlev {
	struct event_base	*base;
	CURLM			*multi;
	struct event		*timer;
};

/* What curlev keeps for an easy handle, in CURLOPT_PRIVATE. */
struct curlev_job {
	curlev_done_cb	 done;
	void		*arg;
};

/* One socket curl watches; assigned to the socket in the multi. */
struct curlev_sock {
	struct curlev	*curl;
	struct event	*ev;
	curl_socket_t	 fd;
};

static void	curlev_reap(struct curlev *);

static void
curlev_sock_cb(evutil_socket_t fd, short what, void *arg)
{
	struct curlev_sock	*watch = arg;
	struct curlev		*curl = watch->curl;
	int			 flags = 0, running;

	if (what & EV_READ)
		flags |= CURL_CSELECT_IN;
	if (what & EV_WRITE)
		flags |= CURL_CSELECT_OUT;
	/* watch may be freed inside the call: do not touch it after. */
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

static int
curlev_socket(CURL *easy, curl_socket_t fd, int action, void *userp,
    void *socketp)
{
	struct curlev		*curl = userp;
	struct curlev_sock	*watch = socketp;
	short			 what = EV_PERSIST;

	if (action == CURL_POLL_REMOVE) {
		if (watch != NULL) {
			event_free(watch->ev);
			free(watch);
			curl_multi_assign(curl->multi, fd, NULL);
		}
		return 0;
	}
	if (watch == NULL) {
		if ((watch = calloc(1, sizeof(*watch))) == NULL)
			return -1;
		watch->curl = curl;
		watch->fd = fd;
		curl_multi_assign(curl->multi, fd, watch);
	} else {
		event_free(watch->ev);
		watch->ev = NULL;
	}
	if (action & CURL_POLL_IN)
		what |= EV_READ;
	if (action & CURL_POLL_OUT)
		what |= EV_WRITE;
	watch->ev = event_new(curl->base, fd, what, curlev_sock_cb, watch);
	if (watch->ev == NULL || event_add(watch->ev, NULL) == -1)
		return -1;
	return 0;
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
	curl->multi = curl_multi_init();
	curl->timer = evtimer_new(base, curlev_timer_cb, curl);
	if (curl->multi == NULL || curl->timer == NULL) {
		curlev_free(curl);
		return NULL;
	}
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
