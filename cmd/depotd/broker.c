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
 * broker.c: the sandbox broker process.
 *
 * It alone holds the sandbox backend's URL and token.  Frontends lease
 * backend sessions from it (broker_lease.c) for the requests that run
 * code; it talks to the backend with libcurl on its own loop
 * (broker_sbx.c).  Whatever a frontend leased dies with its channel.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "log.h"
#include "roster.h"
#include "child.h"
#include "curlev.h"
#include "broker.h"

struct broker broker;

/*
 * Frontends lease sessions; the storage helper answers the broker's
 * calls to store what runs produced.  proto.c's tables have refused
 * anything else.
 */
static void
broker_dispatch_peer(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	struct broker_peer	*p = arg;
	struct cntr_destroy	 d;

	/* The storage helper's word that a container's session is to go. */
	if (p->role == ROLE_STORAGE && imsg->hdr.type == IMSG_CNTR_DESTROY) {
		memcpy(&d, imsg->data, sizeof(d));
		d.session[sizeof(d.session) - 1] = '\0';
		broker_lease_destroy_session(d.session);
	} else if (p->role == ROLE_STORAGE &&
	    imsg->hdr.type == IMSG_CNTR_GRANT) {
		broker_grant_add(imsg);
		broker_lease_grant_arrived();
	} else if (p->role == ROLE_STORAGE)
		broker_dispatch_storage(imsg);
	else
		broker_dispatch_frontend(p, imsg);
}

static void
broker_peer_closed(struct imsgev *iev, const char *why, void *arg)
{
	struct broker_peer	*p = arg;

	if (p->role == ROLE_STORAGE)
		broker_output_storage_attach(NULL);
	broker_lease_peer_gone(p);
	imsgev_clear(&p->iev);
	free(p);
}

static void
broker_add_peer(enum proc_role role, int instance, int fd)
{
	struct broker_peer	*p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		fatal("calloc");
	p->role = role;
	p->instance = instance;
	TAILQ_INIT(&p->leases);
	child_peer_init(&p->iev, role, fd, broker_dispatch_peer,
	    broker_peer_closed, p);
	if (role == ROLE_STORAGE)
		broker_output_storage_attach(&p->iev);
}

/*
 * Under `sandbox local' the broker's root is the socket's directory,
 * so the socket is reached from "/".
 */
static const char *
broker_sandbox_url(const char *url, char *buf, size_t len)
{
	const char	*root = child_root();
	size_t		 n = strlen(root);

	if (strncmp(url, "unix:", 5) != 0 || n == 0 ||
	    strncmp(url + 5, root, n) != 0 || url[5 + n] != '/')
		return url;
	snprintf(buf, len, "unix:%s", url + 5 + n);
	return buf;
}

static void
broker_conf(struct depotd_conf *conf, int reload)
{
	char	 url[1100];

	broker.conf = conf;
	if (conf->sandbox == SANDBOX_NONE) {
		broker.backend.base[0] = '\0';
		return;
	}
	if (sbx_backend_set(&broker.backend, broker_sandbox_url(
	    conf->sandbox_url, url, sizeof(url)), conf->sandbox_token) == -1)
		log_warnx("sandbox: unusable URL %s", conf->sandbox_url);
	broker.backend.resolve = conf->sandbox_link.resolve;
	broker.backend.ca_pem = conf->sandbox_link.ca_pem;
	broker.backend.ca_len = conf->sandbox_link.ca_len;
	broker.backend.transfer_timeout = conf->transfer_timeout;
}

/* TLS libraries read their configuration: before the lockdown. */
static void
broker_prepare(void)
{
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		fatalx("curl_global_init");
}

static void
broker_start(void)
{
	if ((broker.backend.curl = curlev_new(child_base())) == NULL)
		fatalx("curlev_new");
}

/*
 * Stopping: the sessions are destroyed before the broker goes, for a
 * few seconds at most (the backend's idle timeout reaps the rest).
 */
static void
broker_shutdown(void)
{
	struct timespec	 start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (broker.backend.curl != NULL && broker_lease_end_all() > 0) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec >= 3)
			break;
		event_base_loop(child_base(), EVLOOP_ONCE);
	}
}

static const struct child_ops broker_ops = {
	.conf = broker_conf,
	.peer = broker_add_peer,
	.prepare = broker_prepare,
	.start = broker_start,
	.shutdown = broker_shutdown,
};

void
broker_main(int instance, int debug, int verbose)
{
	child_run(ROLE_BROKER, instance, &broker_ops, debug, verbose);
}
