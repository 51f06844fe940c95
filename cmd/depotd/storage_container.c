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
 * storage_container.c: containers, a sandbox session kept across
 * requests (issue 20), one row each: create under the caps, retrieve,
 * list, delete, and the expiry the sweep applies.
 *
 * Owned like files: every query is scoped to the owner the handle
 * stands for, and another tenant's id finds nothing, as a missing one.
 * Expiry is tested in the queries themselves (CNTR_LAPSED), so that a
 * container idle past its minutes reads as expired at once, whatever
 * the sweep has done yet; the sweep then marks it and has the broker
 * destroy its session at the backend.
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

struct cntr_request {
	struct storage_request	 req;
	struct owner		 owner;
	char			 id[IDLEN];
	char			 key_id[IDLEN];
	struct cntr_create	 create;
	struct cntr_list_req	 list;
	char			 cursor_created[64];
};
STORAGE_REQUEST_FIRST(cntr_request);

void
storage_cntr_from_row(struct cntr_rec *c, const PGresult *res, int row)
{
	memset(c, 0, sizeof(*c));
	strlcpy(c->id, PQgetvalue(res, row, 0), sizeof(c->id));
	strlcpy(c->name, PQgetvalue(res, row, 1), sizeof(c->name));
	strlcpy(c->state, PQgetvalue(res, row, 2), sizeof(c->state));
	strlcpy(c->memory_limit, PQgetvalue(res, row, 3),
	    sizeof(c->memory_limit));
	strlcpy(c->session, PQgetvalue(res, row, 4), sizeof(c->session));
	c->expires_minutes = strtoll(PQgetvalue(res, row, 5), NULL, 10);
	c->created_us = strtoll(PQgetvalue(res, row, 6), NULL, 10);
	c->last_active_us = strtoll(PQgetvalue(res, row, 7), NULL, 10);
	c->expires_us = strtoll(PQgetvalue(res, row, 8), NULL, 10);
}

/* A request under a handle, or NULL when it was answered at once. */
static struct cntr_request *
cntr_request_new(struct storage_peer *p, uint32_t peerid, const char *handle)
{
	const struct principal_ref	*who;
	struct cntr_request		*r;

	if ((who = storage_auth_handle(p, peerid, handle)) == NULL)
		return NULL;
	if ((r = calloc(1, sizeof(*r))) == NULL)
		fatal("calloc");
	r->owner = who->owner;
	strlcpy(r->key_id, who->key_id, sizeof(r->key_id));
	storage_request_begin(&r->req, p, peerid);
	return r;
}

static void
cntr_one(void *arg, const PGresult *res)
{
	struct cntr_request	*r = arg;
	struct cntr_rec		 c;

	if (storage_request_db_failed(&r->req, res, PGRES_TUPLES_OK)) {
		storage_request_free(&r->req);
		return;
	}
	if (PQntuples(res) == 0)
		storage_request_error(&r->req, 404, "no such container");
	else {
		storage_cntr_from_row(&c, res, 0);
		storage_request_reply(&r->req, IMSG_CNTR_INFO, -1, &c,
		    sizeof(c));
	}
	storage_request_free(&r->req);
}

/* --- create --- */

static void
cntr_created(void *arg, const PGresult *res)
{
	struct cntr_request	*r = arg;
	char			 msg[256];

	if (!storage_request_db_failed(&r->req, res, PGRES_TUPLES_OK) &&
	    PQntuples(res) == 0) {
		snprintf(msg, sizeof(msg), "too many live containers: at most "
		    "%d per key and %d per workspace (containers { "
		    "max-per-key, max-per-workspace })",
		    storage.conf->cntr_max_per_key,
		    storage.conf->cntr_max_per_workspace);
		storage_request_error(&r->req, 429, msg);
		storage_request_free(&r->req);
		return;
	}
	if (PQresultStatus(res) == PGRES_TUPLES_OK)
		log_info("container %s created (user %s)",
		    PQgetvalue(res, 0, 0), r->owner.user_id);
	cntr_one(arg, res);
}

/*
 * The caps are counted in the insert's own statement: two creates at
 * the same moment may each see the other not yet there, so a cap can
 * be passed by the creates in flight at once, never more.
 */
void
storage_container_create(struct storage_peer *p, struct imsg *imsg)
{
	struct cntr_create	 cc;
	struct cntr_request	*r;
	const char		*params[10];
	char			 mins[24], life[24], perkey[16], perws[16];

	IMSG_TAKE(imsg, cc);
	cc.handle[sizeof(cc.handle) - 1] = '\0';
	cc.name[sizeof(cc.name) - 1] = '\0';
	cc.memory_limit[sizeof(cc.memory_limit) - 1] = '\0';
	if ((r = cntr_request_new(p, imsg->hdr.peerid, cc.handle)) == NULL)
		return;
	id_new(r->id, sizeof(r->id), "cntr_");
	if (cc.expires_minutes <= 0 || cc.expires_minutes > 30 * 24 * 60)
		cc.expires_minutes = storage.conf->cntr_expires_after;
	snprintf(mins, sizeof(mins), "%" PRId64, cc.expires_minutes);
	snprintf(life, sizeof(life), "%" PRId64,
	    storage.conf->cntr_max_lifetime);
	snprintf(perkey, sizeof(perkey), "%d", storage.conf->cntr_max_per_key);
	snprintf(perws, sizeof(perws), "%d",
	    storage.conf->cntr_max_per_workspace);
	params[0] = r->id;
	params[1] = r->owner.user_id;
	params[2] = r->owner.workspace_id;
	params[3] = r->key_id;
	params[4] = cc.name;
	params[5] = cc.memory_limit[0] != '\0' ? cc.memory_limit : "1g";
	params[6] = mins;
	params[7] = life;
	params[8] = perkey;
	params[9] = perws;
	if (storage_request_query(&r->req, "insert into containers (id, "
	    "user_id, workspace_id, key_id, name, backend, memory_limit, "
	    "expires_minutes, state, expires_at) select $1, $2, $3, $4, $5, "
	    "'', $6, $7::int, 'running', clock_timestamp() + "
	    "make_interval(secs => $8::bigint) where (select count(*) from "
	    "containers where key_id = $4 and " CNTR_LIVE ") < $9::int and "
	    "(select count(*) from containers where workspace_id = $3 and "
	    CNTR_LIVE ") < $10::int returning " CNTR_COLS, 10, params,
	    cntr_created) == -1)
		storage_request_free(&r->req);
}

/* --- retrieve and delete --- */

static int
cntr_keyed(struct storage_peer *p, struct imsg *imsg,
    struct cntr_request **rp, const char **params)
{
	struct cntr_key		 k;
	struct cntr_request	*r;

	IMSG_TAKE(imsg, k);
	k.handle[sizeof(k.handle) - 1] = k.id[sizeof(k.id) - 1] = '\0';
	if (storage_auth_handle(p, imsg->hdr.peerid, k.handle) == NULL)
		return 0;
	if (!id_valid(k.id, "cntr_")) {
		storage_peer_error(p, imsg->hdr.peerid, 404,
		    "no such container");
		return 0;
	}
	if ((r = cntr_request_new(p, imsg->hdr.peerid, k.handle)) == NULL)
		return 0;
	strlcpy(r->id, k.id, sizeof(r->id));
	params[0] = r->id;
	params[1] = r->owner.user_id;
	params[2] = r->owner.workspace_id;
	*rp = r;
	return 1;
}

void
storage_container_get(struct storage_peer *p, struct imsg *imsg)
{
	struct cntr_request	*r;
	const char		*params[3];

	if (!cntr_keyed(p, imsg, &r, params))
		return;
	if (storage_request_query(&r->req, "select " CNTR_COLS " from "
	    "containers where id = $1 and " CNTR_OWNED " and state <> "
	    "'deleted'", 3, params, cntr_one) == -1)
		storage_request_free(&r->req);
}

/* The broker destroys a container's session at the backend. */
void
storage_container_session_gone(const char *session)
{
	struct storage_peer	*b;
	struct cntr_destroy	 d;

	if (session[0] == '\0' || (b = storage_peer_broker()) == NULL)
		return;
	memset(&d, 0, sizeof(d));
	strlcpy(d.session, session, sizeof(d.session));
	storage_peer_push(b, IMSG_CNTR_DESTROY, &d, sizeof(d));
}

static void
cntr_deleted(void *arg, const PGresult *res)
{
	struct cntr_request	*r = arg;

	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1) {
		log_info("container %s destroyed (deleted by its owner)",
		    PQgetvalue(res, 0, 0));
		storage_container_session_gone(PQgetvalue(res, 0, 4));
	}
	cntr_one(r, res);
}

void
storage_container_delete(struct storage_peer *p, struct imsg *imsg)
{
	struct cntr_request	*r;
	const char		*params[3];

	if (!cntr_keyed(p, imsg, &r, params))
		return;
	if (storage_request_query(&r->req, "update containers set state = "
	    "'deleted', ended_at = now() where id = $1 and " CNTR_OWNED
	    " and state <> 'deleted' returning " CNTR_COLS, 3, params,
	    cntr_deleted) == -1)
		storage_request_free(&r->req);
}

/* --- list --- */

static void
cntr_listed(void *arg, const PGresult *res)
{
	struct cntr_request	*r = arg;
	struct file_list_end	 end;
	struct cntr_rec		 c;
	int			 i, n;

	if (storage_request_db_failed(&r->req, res, PGRES_TUPLES_OK)) {
		storage_request_free(&r->req);
		return;
	}
	n = PQntuples(res);
	memset(&end, 0, sizeof(end));
	end.has_more = n > r->list.limit;
	if (n > r->list.limit)
		n = r->list.limit;
	for (i = 0; i < n; i++) {
		storage_cntr_from_row(&c, res, i);
		storage_request_reply(&r->req, IMSG_CNTR_LIST_ITEM, -1, &c,
		    sizeof(c));
	}
	end.count = n;
	storage_request_reply(&r->req, IMSG_CNTR_LIST_END, -1, &end,
	    sizeof(end));
	storage_request_free(&r->req);
}

/* A keyset page on (created_at, id), as the files' listing. */
static void
cntr_list_page(struct cntr_request *r)
{
	const char	*params[5], *dir;
	char		 sql[1536], limit[16];

	dir = r->list.order == ORDER_ASC ? "asc" : "desc";
	snprintf(limit, sizeof(limit), "%d", r->list.limit + 1);
	params[0] = r->list.after_id;
	params[1] = r->owner.user_id;
	params[2] = r->owner.workspace_id;
	params[3] = limit;
	params[4] = r->cursor_created[0] ? r->cursor_created : NULL;
	snprintf(sql, sizeof(sql), "select " CNTR_COLS " from containers "
	    "where " CNTR_OWNED " and state <> 'deleted' %s order by "
	    "created_at %s, id %s limit $4::int", params[4] == NULL ?
	    "and $1 = '' and $5::timestamptz is null" :
	    r->list.order == ORDER_ASC ?
	    "and (created_at, id) > ($5::timestamptz, $1)" :
	    "and (created_at, id) < ($5::timestamptz, $1)", dir, dir);
	if (storage_request_query(&r->req, sql, 5, params, cntr_listed) == -1)
		storage_request_free(&r->req);
}

static void
cntr_list_cursor(void *arg, const PGresult *res)
{
	struct cntr_request	*r = arg;

	if (storage_request_db_failed(&r->req, res, PGRES_TUPLES_OK)) {
		storage_request_free(&r->req);
		return;
	}
	if (PQntuples(res) == 0) {
		storage_request_error(&r->req, 404,
		    "the cursor names no container you can see");
		storage_request_free(&r->req);
		return;
	}
	strlcpy(r->cursor_created, PQgetvalue(res, 0, 0),
	    sizeof(r->cursor_created));
	cntr_list_page(r);
}

void
storage_container_list(struct storage_peer *p, struct imsg *imsg)
{
	struct cntr_list_req	 l;
	struct cntr_request	*r;
	const char		*params[3];

	IMSG_TAKE(imsg, l);
	l.handle[sizeof(l.handle) - 1] = l.after_id[sizeof(l.after_id) - 1] =
	    '\0';
	if (l.limit < 1 || l.limit > 1000) {
		storage_peer_error(p, imsg->hdr.peerid, 400,
		    "bad list request");
		return;
	}
	if ((r = cntr_request_new(p, imsg->hdr.peerid, l.handle)) == NULL)
		return;
	r->list = l;
	if (l.after_id[0] == '\0') {
		cntr_list_page(r);
		return;
	}
	params[0] = l.after_id;
	params[1] = r->owner.user_id;
	params[2] = r->owner.workspace_id;
	if (storage_request_query(&r->req, "select created_at::text from "
	    "containers where id = $1 and " CNTR_OWNED " and state <> "
	    "'deleted'", 3, params, cntr_list_cursor) == -1)
		storage_request_free(&r->req);
}

/* --- expiry --- */

static void
cntr_swept(void *arg, const PGresult *res)
{
	int	 i, n;

	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
		if (res != NULL)
			log_warnx("sweep: containers: %s",
			    PQresultErrorMessage(res));
		return;
	}
	n = PQntuples(res);
	for (i = 0; i < n; i++) {
		log_info("container %s expired", PQgetvalue(res, i, 0));
		storage_container_session_gone(PQgetvalue(res, i, 1));
	}
}

/*
 * Lapsed containers are marked and their sessions destroyed, a batch
 * a pass; several hosts share the work through SKIP LOCKED.
 */
void
storage_container_sweep(void)
{
	db_query(storage.db, "update containers set state = 'expired', "
	    "ended_at = now() where id in (select id from containers where "
	    "state = 'running' and " CNTR_LAPSED " limit "
	    "200 for update skip locked) returning id, "
	    "coalesce(session_id, '')", 0, NULL, cntr_swept, NULL);
}
