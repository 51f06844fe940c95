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
	struct curlev	*cev;
	struct event	*ev;
	curl_socket_t	 fd;
};

static void	curlev_reap(struct curlev *);

static void
curlev_sock_cb(evutil_socket_t fd, short what, void *arg)
{
	struct curlev_sock	*cs = arg;
	struct curlev		*cev = cs->cev;
	int			 flags = 0, running;

	if (what & EV_READ)
		flags |= CURL_CSELECT_IN;
	if (what & EV_WRITE)
		flags |= CURL_CSELECT_OUT;
	/* cs may be freed inside the call: do not touch it after. */
	curl_multi_socket_action(cev->multi, fd, flags, &running);
	curlev_reap(cev);
}

static void
curlev_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct curlev	*cev = arg;
	int		 running;

	curl_multi_socket_action(cev->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	curlev_reap(cev);
}

static int
curlev_socket(CURL *easy, curl_socket_t fd, int action, void *userp,
    void *socketp)
{
	struct curlev		*cev = userp;
	struct curlev_sock	*cs = socketp;
	short			 what = EV_PERSIST;

	if (action == CURL_POLL_REMOVE) {
		if (cs != NULL) {
			event_free(cs->ev);
			free(cs);
			curl_multi_assign(cev->multi, fd, NULL);
		}
		return 0;
	}
	if (cs == NULL) {
		if ((cs = calloc(1, sizeof(*cs))) == NULL)
			return -1;
		cs->cev = cev;
		cs->fd = fd;
		curl_multi_assign(cev->multi, fd, cs);
	} else {
		event_free(cs->ev);
		cs->ev = NULL;
	}
	if (action & CURL_POLL_IN)
		what |= EV_READ;
	if (action & CURL_POLL_OUT)
		what |= EV_WRITE;
	cs->ev = event_new(cev->base, fd, what, curlev_sock_cb, cs);
	if (cs->ev == NULL || event_add(cs->ev, NULL) == -1)
		return -1;
	return 0;
}

static int
curlev_timer(CURLM *multi, long ms, void *userp)
{
	struct curlev	*cev = userp;
	struct timeval	 tv;

	if (ms < 0) {
		evtimer_del(cev->timer);
		return 0;
	}
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	return evtimer_add(cev->timer, &tv);
}

/* Finished transfers leave the multi before their owners hear of it. */
static void
curlev_reap(struct curlev *cev)
{
	struct curlev_job	*job;
	CURLMsg			*msg;
	CURL			*easy;
	CURLcode		 rc;
	int			 left;

	while ((msg = curl_multi_info_read(cev->multi, &left)) != NULL) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		easy = msg->easy_handle;
		rc = msg->data.result;
		job = NULL;
		curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&job);
		curl_multi_remove_handle(cev->multi, easy);
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
	struct curlev	*cev;

	if ((cev = calloc(1, sizeof(*cev))) == NULL)
		return NULL;
	cev->base = base;
	cev->multi = curl_multi_init();
	cev->timer = evtimer_new(base, curlev_timer_cb, cev);
	if (cev->multi == NULL || cev->timer == NULL) {
		curlev_free(cev);
		return NULL;
	}
	curl_multi_setopt(cev->multi, CURLMOPT_SOCKETFUNCTION, curlev_socket);
	curl_multi_setopt(cev->multi, CURLMOPT_SOCKETDATA, cev);
	curl_multi_setopt(cev->multi, CURLMOPT_TIMERFUNCTION, curlev_timer);
	curl_multi_setopt(cev->multi, CURLMOPT_TIMERDATA, cev);
	return cev;
}

void
curlev_free(struct curlev *cev)
{
	if (cev == NULL)
		return;
	if (cev->multi != NULL)
		curl_multi_cleanup(cev->multi);
	if (cev->timer != NULL)
		event_free(cev->timer);
	free(cev);
}

int
curlev_add(struct curlev *cev, CURL *easy, curlev_done_cb done, void *arg)
{
	struct curlev_job	*job;

	if ((job = calloc(1, sizeof(*job))) == NULL)
		return -1;
	job->done = done;
	job->arg = arg;
	curl_easy_setopt(easy, CURLOPT_PRIVATE, job);
	if (curl_multi_add_handle(cev->multi, easy) != CURLM_OK) {
		curl_easy_setopt(easy, CURLOPT_PRIVATE, NULL);
		free(job);
		return -1;
	}
	return 0;
}

void
curlev_remove(struct curlev *cev, CURL *easy)
{
	struct curlev_job	*job = NULL;

	curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&job);
	curl_multi_remove_handle(cev->multi, easy);
	curl_easy_setopt(easy, CURLOPT_PRIVATE, NULL);
	free(job);
}

void
curlev_unpause(struct curlev *cev, CURL *easy)
{
	int	running;

	curl_easy_pause(easy, CURLPAUSE_CONT);
	curl_multi_socket_action(cev->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	curlev_reap(cev);
}
