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
 * storage_container_attach.c: a request runs in a container.  The
 * owner is checked and the container touched (last_active_at) in one
 * statement, so that only a live one is revived; then the broker is
 * granted the container's session under a one-time nonce for the
 * frontend that asked, and only then is the frontend answered, with
 * the nonce and without the session.  The broker takes a frontend's
 * word for nothing else (broker_grant.c).
 *
 * A session the broker makes for a container is recorded here
 * (IMSG_CNTR_BOUND); one made for a container that ended meanwhile is
 * destroyed at once.
 */
#include <sys/types.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "util.h"
#include "storage.h"
#include "storage_cntr.h"

#define ATTACH_COLS	CNTR_COLS ", greatest(1, extract(epoch from "	\
	"expires_at - now()))::bigint"

struct attach_request {
	struct storage_request	 req;
	struct owner		 owner;
	char			 id[IDLEN];
	int			 frontend;	/* its instance */
};
STORAGE_REQUEST_FIRST(attach_request);

static void
attach_grant(struct attach_request *r, const PGresult *res)
{
	struct storage_peer	*broker;
	struct cntr_attached	 a;
	struct cntr_grant	 g;

	if ((broker = storage_peer_broker()) == NULL) {
		storage_request_error(&r->req, 502, "no sandbox broker");
		return;
	}
	memset(&a, 0, sizeof(a));
	memset(&g, 0, sizeof(g));
	storage_cntr_from_row(&a.rec, res, 0);
	id_new(g.grant, sizeof(g.grant), "grt_");
	g.frontend = r->frontend;
	strlcpy(g.id, a.rec.id, sizeof(g.id));
	strlcpy(g.session, a.rec.session, sizeof(g.session));
	g.idle_seconds = a.rec.expires_minutes * 60;
	g.life_seconds = strtoll(PQgetvalue(res, 0, 9), NULL, 10);
	/* Pushed, so written before the answer below leaves. */
	storage_peer_push(broker, IMSG_CNTR_GRANT, &g, sizeof(g));
	strlcpy(a.grant, g.grant, sizeof(a.grant));
	a.rec.session[0] = '\0';
	storage_request_reply(&r->req, IMSG_CNTR_ATTACHED, -1, &a, sizeof(a));
	log_info("container %s %s (user %s)", a.rec.id, g.session[0] ?
	    "reused" : "attached, its session to be made", r->owner.user_id);
	explicit_bzero(&g, sizeof(g));
	explicit_bzero(&a, sizeof(a));
}

/* Not live: missing (or another's) is a 404, else it has expired. */
static void
attach_why_not(void *arg, const PGresult *res)
{
	struct attach_request	*r = arg;
	char			 msg[160];

	if (storage_request_db_failed(&r->req, res, PGRES_TUPLES_OK)) {
		storage_request_free(&r->req);
		return;
	}
	if (PQntuples(res) == 0)
		storage_request_error(&r->req, 404, "no such container");
	else {
		snprintf(msg, sizeof(msg), "container %s has expired; create "
		    "a new one", r->id);
		storage_request_error(&r->req, 400, msg);
	}
	storage_request_free(&r->req);
}

static void
attach_touched(void *arg, const PGresult *res)
{
	struct attach_request	*r = arg;
	const char		*params[3];

	if (storage_request_db_failed(&r->req, res, PGRES_TUPLES_OK)) {
		storage_request_free(&r->req);
		return;
	}
	if (PQntuples(res) == 1) {
		attach_grant(r, res);
		storage_request_free(&r->req);
		return;
	}
	params[0] = r->id;
	params[1] = r->owner.user_id;
	params[2] = r->owner.workspace_id;
	if (storage_request_query(&r->req, "select id from containers where "
	    "id = $1 and " CNTR_OWNED " and state <> 'deleted'", 3, params,
	    attach_why_not) == -1)
		storage_request_free(&r->req);
}

void
storage_container_attach(struct storage_peer *p, struct imsg *imsg)
{
	const struct principal_ref	*who;
	struct attach_request		*r;
	struct cntr_key			 k;
	const char			*params[3];

	IMSG_TAKE(imsg, k);
	k.handle[sizeof(k.handle) - 1] = k.id[sizeof(k.id) - 1] = '\0';
	if ((who = storage_auth_handle(p, imsg->hdr.peerid, k.handle)) == NULL)
		return;
	if (!id_valid(k.id, "cntr_")) {
		storage_peer_error(p, imsg->hdr.peerid, 404,
		    "no such container");
		return;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL)
		fatal("calloc");
	r->owner = who->owner;
	r->frontend = storage_peer_instance(p);
	strlcpy(r->id, k.id, sizeof(r->id));
	storage_request_begin(&r->req, p, imsg->hdr.peerid);
	params[0] = r->id;
	params[1] = r->owner.user_id;
	params[2] = r->owner.workspace_id;
	if (storage_request_query(&r->req, "update containers set "
	    "last_active_at = now() where id = $1 and " CNTR_OWNED " and "
	    CNTR_LIVE " returning " ATTACH_COLS, 3, params,
	    attach_touched) == -1)
		storage_request_free(&r->req);
}

static void
attach_bound(void *arg, const PGresult *res)
{
	char	*session = arg;

	if (res != NULL && PQresultStatus(res) == PGRES_TUPLES_OK &&
	    PQntuples(res) == 0) {
		log_info("a session made for a container that ended, or "
		    "has one already, is destroyed");
		storage_container_session_gone(session);
	} else if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK)
		log_warnx("container session: %s", res == NULL ?
		    "no database" : PQresultErrorMessage(res));
	free(session);
}

/* The broker made the session of a container granted to it. */
void
storage_container_bound(struct storage_peer *p, struct imsg *imsg)
{
	struct cntr_bound	 b;
	const char		*params[2];
	char			*session;

	IMSG_TAKE(imsg, b);
	b.id[sizeof(b.id) - 1] = b.session[sizeof(b.session) - 1] = '\0';
	if (!id_valid(b.id, "cntr_") || b.session[0] == '\0' ||
	    (session = strdup(b.session)) == NULL)
		return;
	params[0] = b.id;
	params[1] = b.session;
	if (db_query(storage.db, "update containers set session_id = $2 "
	    "where id = $1 and state = 'running' and session_id is null "
	    "returning id", 2, params, attach_bound, session) == -1)
		free(session);
}
