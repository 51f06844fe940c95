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
 * frontend.c: an HTTP frontend process.
 *
 * It parses HTTP, decides who the caller is, and serves the API.  It
 * has no filesystem, no database and no storage credentials: it asks
 * the storage helper, and reads or writes the descriptors it is given.
 */
#include <sys/types.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "log.h"
#include "util.h"
#include "child.h"
#include "frontend.h"
#include "fe_model.h"
#include "fe_upcall.h"
#include "fe_discover.h"

struct frontend fe;

static int	 listen_fds[16];
static int	 nlisten;
/* What the heartbeat names: the requests in flight, oldest first. */
static TAILQ_HEAD(, api_req)	 running = TAILQ_HEAD_INITIALIZER(running);
static int			 nrunning;
static struct event		*heartbeat_event;

static void
frontend_not_found(struct api_req *ar)
{
	ar->req->route = "notfound";
	fe_reply_error(ar, 404, NULL, "no route for %s %s", ar->req->method_str,
	    ar->req->path);
}

static void
frontend_request(struct http_request *req, void *arg)
{
	struct api_req	*ar;

	if ((ar = calloc(1, sizeof(*ar))) == NULL) {
		http_reply_close(req);
		http_reply(req, 503, "application/json", "{}", 2);
		return;
	}
	ar->req = req;
	ar->dialect = fe_reply_dialect(req);
	req->arg = ar;
	TAILQ_INSERT_TAIL(&running, ar, running);
	nrunning++;
	if (strcmp(req->path, "/healthz") == 0)
		fe_health_route(ar);
	else if (strcmp(req->path, "/metrics") == 0)
		fe_metrics_route(ar);
	else if (strcmp(req->path, "/v1/files") == 0 ||
	    strncmp(req->path, "/v1/files/", 10) == 0)
		fe_files_route(ar);
	else if (strcmp(req->path, "/v1/containers") == 0 ||
	    strncmp(req->path, "/v1/containers/", 15) == 0)
		fe_container_route(ar);
	else if (strcmp(req->path, "/v1/chat/completions") == 0)
		fe_model_route(ar, WIRE_CHAT);
	else if (strcmp(req->path, "/v1/responses") == 0)
		fe_model_route(ar, WIRE_RESPONSES);
	else if (strcmp(req->path, "/v1/messages") == 0)
		fe_model_route(ar, WIRE_MESSAGES);
	else if (strcmp(req->path, "/v1/messages/count_tokens") == 0)
		fe_model_count_route(ar);
	else if (strcmp(req->path, "/v1/models") == 0 ||
	    strncmp(req->path, "/v1/models/", 11) == 0)
		fe_catalog_route(ar);
	else
		frontend_not_found(ar);
}

/* The body goes to the route that accepted it. */
static void
frontend_body(struct http_request *req, const void *data, size_t len,
    void *arg)
{
	struct api_req	*ar = req->arg;

	if (ar != NULL && ar->on_body != NULL)
		ar->on_body(ar, data, len);
}

static void
frontend_body_end(struct http_request *req, void *arg)
{
	struct api_req	*ar = req->arg;

	if (ar != NULL && ar->on_body_end != NULL)
		ar->on_body_end(ar);
}

static void
frontend_request_free(struct http_request *req, void *arg)
{
	struct api_req	*ar = req->arg;

	fe_metrics_count(req);
	if (ar == NULL)
		return;
	TAILQ_REMOVE(&running, ar, running);
	nrunning--;
	/*
	 * The route first: an upload whose create is in flight takes the
	 * storage request over (ar->pending becomes 0), so that the answer
	 * still finds it and the storage helper is told to abort.  Then
	 * the handle goes, and with it anything the storage helper still
	 * holds for this request.
	 */
	if (ar->free_route != NULL)
		ar->free_route(ar);
	if (ar->pending != 0)
		fe_storage_cancel(ar->pending);
	fe_auth_release(ar);
	if (ar->auth != NULL)
		free(ar->auth);
	explicit_bzero(ar, sizeof(*ar));
	free(ar);
	req->arg = NULL;
}

static const struct http_handler handler = {
	.on_request = frontend_request,
	.on_body = frontend_body,
	.on_body_end = frontend_body_end,
	.on_free = frontend_request_free,
};

static void
frontend_conf(struct depotd_conf *conf, int reload)
{
	fe.conf = conf;
	fe.base = child_base();
	/* New limits hold for what happens next on every connection. */
	if (reload && fe.http != NULL) {
		http_server_set_limits(fe.http, &conf->http);
		fe_discover_start();	/* the upstreams may be others */
	}
}

static void
frontend_listen(int fd)
{
	if (nlisten == (int)(sizeof(listen_fds) / sizeof(listen_fds[0])))
		fatalx("too many listening sockets");
	listen_fds[nlisten++] = fd;
}

static void
frontend_peer(enum proc_role role, int instance, int fd)
{
	if (role == ROLE_STORAGE)
		fe_storage_attach(fd);
	else if (role == ROLE_EXTRACT)
		fe_extract_attach(fd);
	else if (role == ROLE_BROKER)
		fe_broker_attach(fd);
	else
		close(fd);
}

/*
 * The master replaces a frontend whose loop stops turning (master.c):
 * this timer is the loop saying it still does, and what it serves.
 */
static void
frontend_heartbeat(evutil_socket_t fd, short what, void *arg)
{
	struct heartbeat_msg	 hb;
	struct api_req		*ar;

	memset(&hb, 0, sizeof(hb));
	hb.inflight = nrunning;
	if ((ar = TAILQ_FIRST(&running)) != NULL) {
		/* req->start is CLOCK_MONOTONIC too (http.c). */
		hb.age = mono_seconds() - ar->req->start.tv_sec;
		strlcpy(hb.id, ar->req->id, sizeof(hb.id));
		strlcpy(hb.method, ar->req->method_str, sizeof(hb.method));
		strlcpy(hb.path, ar->req->path, sizeof(hb.path));
	}
	child_send_parent(IMSG_HEARTBEAT, 0, -1, &hb, sizeof(hb));
}

static void
frontend_heartbeat_start(void)
{
	struct timeval	 tv = { HEARTBEAT_INTERVAL, 0 };

	heartbeat_event = event_new(fe.base, -1, EV_PERSIST, frontend_heartbeat,
	    NULL);
	if (heartbeat_event == NULL || event_add(heartbeat_event, &tv) == -1)
		fatalx("heartbeat timer");
	frontend_heartbeat(-1, 0, NULL);
}

static void
frontend_start(void)
{
	int	 i;

	if ((fe.http = http_server_new(fe.base, &fe.conf->http,
	    &handler)) == NULL)
		fatalx("http_server_new");
	for (i = 0; i < nlisten; i++)
		if (http_server_listen_fd(fe.http, listen_fds[i]) == -1)
			fatal("listen");
	upcall_init();
	fe_auth_init();
	fe_discover_start();
	frontend_heartbeat_start();
}

static void
frontend_ctl_line(void *arg, const char *line)
{
	uint32_t	 client = *(uint32_t *)arg;

	child_send_parent(IMSG_CTL_LINE, client, -1, line, strlen(line) + 1);
}

/* depotctl show models, relayed by the master (proto.c lets no other). */
static void
frontend_parent_msg(struct imsg *imsg)
{
	struct ctl_cmd	 cmd;
	uint32_t	 client = imsg->hdr.peerid;
	int32_t		 status = 0;

	memcpy(&cmd, imsg->data, sizeof(cmd));
	if (cmd.type == CTL_SHOW_MODELS)
		fe_discover_lines(frontend_ctl_line, &client);
	else {
		frontend_ctl_line(&client, "unknown command");
		status = 1;
	}
	child_send_parent(IMSG_CTL_END, client, -1, &status, sizeof(status));
}

static void
frontend_shutdown(void)
{
	if (fe.http != NULL)
		http_server_close_listeners(fe.http);
}

static const struct child_ops frontend_ops = {
	.conf = frontend_conf,
	.listen_fd = frontend_listen,
	.peer = frontend_peer,
	.start = frontend_start,
	.parent_msg = frontend_parent_msg,
	.shutdown = frontend_shutdown,
};

void
frontend_main(int instance, int debug, int verbose)
{
	fe.instance = instance;
	/* Before any lockdown: TLS initialisation may read its files. */
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		fatalx("curl_global_init");
	child_run(ROLE_FRONTEND, instance, &frontend_ops, debug, verbose);
}
