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
 * storage_control.c: depotctl's commands that need the database: users,
 * workspaces, keys, status and an immediate sweep.  The master relays
 * them here and relays the reply lines back.
 */
#include <sys/types.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "util.h"
#include "child.h"
#include "storage.h"

struct control_request {
	uint32_t	 client;
	int		 type;
	char		 token[TOKEN_LEN];
};

static void
control_line(uint32_t client, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
control_line(uint32_t client, const char *fmt, ...)
{
	char	 line[1024];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	child_send_parent(IMSG_CTL_LINE, client, -1, line, strlen(line) + 1);
}

static void
control_end(struct control_request *c, int status)
{
	int32_t	 s = status;

	child_send_parent(IMSG_CTL_END, c->client, -1, &s, sizeof(s));
	explicit_bzero(c->token, sizeof(c->token));
	free(c);
}

static int
control_failed(struct control_request *c, const PGresult *res,
    ExecStatusType want)
{
	if (res == NULL) {
		control_line(c->client, "the database is unavailable");
		control_end(c, 1);
		return 1;
	}
	if (PQresultStatus(res) != want) {
		control_line(c->client, "%s", PQresultErrorField(res,
		    PG_DIAG_MESSAGE_PRIMARY));
		control_end(c, 1);
		return 1;
	}
	return 0;
}

/* Prints every row as tab-separated columns. */
static void
control_rows(void *arg, const PGresult *res)
{
	struct control_request	*c = arg;
	char		 line[1024];
	int		 i, j;

	if (control_failed(c, res, PGRES_TUPLES_OK))
		return;
	for (i = 0; i < PQntuples(res); i++) {
		line[0] = '\0';
		for (j = 0; j < PQnfields(res); j++) {
			if (j > 0)
				strlcat(line, "\t", sizeof(line));
			strlcat(line, PQgetisnull(res, i, j) ? "-" :
			    PQgetvalue(res, i, j), sizeof(line));
		}
		control_line(c->client, "%s", line);
	}
	if (PQntuples(res) == 0 && c->type == CTL_KEY_CREATE) {
		/* The insert selected no user or no workspace. */
		control_line(c->client, "no such user or workspace");
		control_end(c, 1);
		return;
	}
	if (c->type == CTL_KEY_CREATE && PQntuples(res) == 1) {
		/* The only time the token is ever shown. */
		control_line(c->client, "token\t%s", c->token);
	}
	control_end(c, 0);
}

static void
control_query_to(struct control_request *c, const char *sql, int n,
    const char **params, db_cb cb)
{
	if (db_query(storage.db, sql, n, params, cb, c) == -1) {
		control_line(c->client, "the database is unavailable");
		control_end(c, 1);
	}
}

static void
control_query(struct control_request *c, const char *sql, int n,
    const char **params)
{
	control_query_to(c, sql, n, params, control_rows);
}

static void
control_key_create(struct control_request *c, const struct ctl_cmd *cmd)
{
	const char	*params[6];
	char		 id[ID_BUFSIZE], hash[SHA256_HEXLEN], prefix[16];

	token_new(c->token, sizeof(c->token));
	sha256_hex(c->token, strlen(c->token), hash);
	strlcpy(prefix, c->token, sizeof(prefix) < 13 ? sizeof(prefix) : 13);
	id_new(id, sizeof(id), "key-");
	params[0] = id;
	params[1] = prefix;
	params[2] = hash;
	params[3] = cmd->args[0];
	params[4] = cmd->args[1];
	params[5] = cmd->args[2];
	control_query(c, "insert into api_keys (id, prefix, token_sha256, "
	    "user_id, workspace_id, expires_at) select $1, $2, $3, u.id, "
	    "w.id, case when $6 = '' then null else now() + $6::interval "
	    "end from users u, workspaces w where u.name = $4 and "
	    "w.name = $5 returning id, prefix, $4, $5, "
	    "coalesce(expires_at::text, 'never')", 6, params);
	explicit_bzero(hash, sizeof(hash));
}

static void
control_revoked(void *arg, const PGresult *res)
{
	struct control_request	*c = arg;
	long		 matched;

	if (control_failed(c, res, PGRES_TUPLES_OK))
		return;
	matched = strtol(PQgetvalue(res, 0, 0), NULL, 10);
	if (matched == 0) {
		control_line(c->client, "no such key");
		control_end(c, 1);
		return;
	}
	if (matched > 1) {
		control_line(c->client, "%ld active keys have that prefix; "
		    "none revoked: name the key by its id", matched);
		control_end(c, 1);
		return;
	}
	/* This host forgets the key at once; others within seconds. */
	storage_auth_key_revoked(PQgetvalue(res, 0, 1));
	control_line(c->client, "%s\trevoked", PQgetvalue(res, 0, 1));
	control_end(c, 0);
}

/*
 * A prefix names a key only when exactly one active key has it: the
 * count and the update are one statement, so a key created meanwhile
 * cannot slip in between.
 */
static void
control_key_revoke(struct control_request *c, const char *id_or_prefix)
{
	const char	*params[1] = { id_or_prefix };

	control_query_to(c, "with m as (select id from api_keys where "
	    "(id = $1 or prefix = $1) and revoked_at is null), r as (update "
	    "api_keys set revoked_at = now() where id in (select id from m) "
	    "and (select count(*) from m) = 1 returning id) select (select "
	    "count(*) from m), (select id from r)", 1, params, control_revoked);
}

static void
control_sweep_reported(void *arg, const char *result)
{
	struct control_request	*c = arg;

	control_line(c->client, "%s", result);
	control_end(c, 0);
}

static void
control_status_rows(struct control_request *c)
{
	control_line(c->client, "database %s, store %s",
	    db_up(storage.db) ? "up" : "down",
	    storage.store_up ? "up" : "down");
	control_query(c, "select 'files ' || state || case when deleted_at is "
	    "not null then ' deleted' when expires_at <= now() then "
	    "' expired' else '' end, count(*), coalesce(sum(bytes), 0) "
	    "from files group by 1 union all (select 'last sweep ' || host "
	    "|| ' at ' || finished_at::text || ': removed ' || removed || "
	    "', failed ' || failed, null, null from sweep_runs order by "
	    "finished_at desc limit 1) order by 1", 0, NULL);
}

/* An operator's destroy: the row is marked, then the session goes. */
static void
control_container_destroyed(void *arg, const PGresult *res)
{
	struct control_request	*c = arg;

	if (control_failed(c, res, PGRES_TUPLES_OK))
		return;
	if (PQntuples(res) == 0) {
		control_line(c->client, "no such container");
		control_end(c, 1);
		return;
	}
	log_info("container %s destroyed (depotctl)", PQgetvalue(res, 0, 0));
	storage_container_session_gone(PQgetvalue(res, 0, 1));
	control_line(c->client, "destroyed %s", PQgetvalue(res, 0, 0));
	control_end(c, 0);
}

#define CONTROL_CONTAINER_COLS						\
	"c.id, u.name, w.name, case when c.state = 'running' and "	\
	"(c.last_active_at + make_interval(mins => c.expires_minutes) " \
	"<= now() or c.expires_at <= now()) then 'expired' else c.state " \
	"end, coalesce(c.session_id, '-'), c.created_at, "		\
	"c.last_active_at, c.expires_minutes || 'm idle' "		\
	"from containers c join users u on u.id = c.user_id join "	\
	"workspaces w on w.id = c.workspace_id"

static void
control_container(struct control_request *c, const struct ctl_cmd *cmd)
{
	const char	*p[2];

	p[0] = cmd->args[0];
	p[1] = cmd->args[1];
	switch (cmd->type) {
	case CTL_CONTAINER_LIST:
		control_query(c, "select " CONTROL_CONTAINER_COLS " where "
		    "c.state <> 'deleted' and ($1 = '' or u.name = $1) and "
		    "($2 = '' or w.name = $2) order by c.created_at", 2, p);
		break;
	case CTL_CONTAINER_SHOW:
		control_query(c, "select " CONTROL_CONTAINER_COLS
		    " where c.id = $1", 1, p);
		break;
	default:
		control_query_to(c, "update containers set state = "
		    "'deleted', ended_at = now() where id = $1 and state <> "
		    "'deleted' returning id, coalesce(session_id, '')", 1, p,
		    control_container_destroyed);
		break;
	}
}

/*
 * A key's own limits: the five numbers of arg1, "" for the default,
 * replace what it had.  The key is named as for revoke.
 */
static void
control_limits_set_done(void *arg, const PGresult *res)
{
	struct control_request	*c = arg;

	if (control_failed(c, res, PGRES_TUPLES_OK))
		return;
	if (PQntuples(res) != 1) {
		control_line(c->client, "no such key, or more than one");
		control_end(c, 1);
		return;
	}
	storage_limits_changed(PQgetvalue(res, 0, 0));
	control_line(c->client, "limits of %s set", PQgetvalue(res, 0, 0));
	control_end(c, 0);
}

#define LIMIT_COL(i)	"nullif(split_part($2, ',', " #i "), '')::bigint"

static void
control_limits(struct control_request *c, const struct ctl_cmd *cmd)
{
	const char	*p[2] = { cmd->args[0], cmd->args[1] };

	if (cmd->type == CTL_LIMITS_SHOW) {
		control_query(c, "select k.id, coalesce(l.requests_per_minute"
		    "::text, 'default'), coalesce(l.tokens_per_minute::text, "
		    "'default'), coalesce(l.concurrency::text, 'default'), "
		    "coalesce(l.tokens_per_day::text, 'default'), "
		    "coalesce(l.tokens_per_month::text, 'default') from "
		    "api_keys k left join key_limits l on l.key_id = k.id "
		    "where k.id = $1 or k.prefix = $1", 1, p);
		return;
	}
	control_query_to(c, "with k as (select id from api_keys where "
	    "(id = $1 or prefix = $1) and revoked_at is null) insert into "
	    "key_limits (key_id, requests_per_minute, tokens_per_minute, "
	    "concurrency, tokens_per_day, tokens_per_month) select id, "
	    LIMIT_COL(1) ", " LIMIT_COL(2) ", " LIMIT_COL(3) ", "
	    LIMIT_COL(4) ", " LIMIT_COL(5) " from k where (select count(*) "
	    "from k) = 1 on conflict (key_id) do update set "
	    "requests_per_minute = excluded.requests_per_minute, "
	    "tokens_per_minute = excluded.tokens_per_minute, concurrency = "
	    "excluded.concurrency, tokens_per_day = excluded.tokens_per_day, "
	    "tokens_per_month = excluded.tokens_per_month, updated_at = "
	    "now() returning key_id", 2, p, control_limits_set_done);
}

/* Requests and tokens per user, workspace, model or UTC day. */
static void
control_usage(struct control_request *c, const struct ctl_cmd *cmd)
{
	static const struct {
		const char	*by;
		const char	*sql;
	} groups[] = {
		{ "user", "select u.name, count(*), coalesce(sum(g.tokens_in), "
		    "0), coalesce(sum(g.tokens_out), 0) from usage g join "
		    "users u on u.id = g.user_id group by 1 order by 1" },
		{ "workspace", "select w.name, count(*), "
		    "coalesce(sum(g.tokens_in), 0), coalesce(sum(g.tokens_out), "
		    "0) from usage g join workspaces w on w.id = "
		    "g.workspace_id group by 1 order by 1" },
		{ "model", "select model, count(*), coalesce(sum(tokens_in), "
		    "0), coalesce(sum(tokens_out), 0) from usage group by 1 "
		    "order by 1" },
		{ "day", "select (at at time zone 'UTC')::date, count(*), "
		    "coalesce(sum(tokens_in), 0), coalesce(sum(tokens_out), 0) "
		    "from usage group by 1 order by 1" },
	};
	size_t	 i;

	for (i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (strcmp(cmd->args[0], groups[i].by) == 0) {
			control_query(c, groups[i].sql, 0, NULL);
			return;
		}
	control_line(c->client, "usage by user, workspace, model or day");
	control_end(c, 1);
}

void
storage_dispatch_control(struct imsg *imsg)
{
	struct ctl_cmd	 cmd;
	struct control_request	*c;
	const char	*p[2];
	char		 id[ID_BUFSIZE];
	int		 i;

	if (imsg->datalen != sizeof(cmd))
		fatalx("storage: bad control message");
	memcpy(&cmd, imsg->data, sizeof(cmd));
	for (i = 0; i < CTL_ARGS; i++)
		cmd.args[i][CTL_ARGLEN - 1] = '\0';
	if ((c = calloc(1, sizeof(*c))) == NULL)
		fatal("calloc");
	c->client = imsg->hdr.peerid;
	c->type = cmd.type;
	p[0] = id;
	p[1] = cmd.args[0];
	switch (cmd.type) {
	case CTL_STATUS:
		control_status_rows(c);
		break;
	case CTL_USER_ADD:
		id_new(id, sizeof(id), "usr-");
		control_query(c, "insert into users (id, name) values ($1, $2) "
		    "returning id, name", 2, p);
		break;
	case CTL_WORKSPACE_ADD:
		id_new(id, sizeof(id), "wrk-");
		control_query(c, "insert into workspaces (id, name) values "
		    "($1, $2) returning id, name", 2, p);
		break;
	case CTL_USER_LIST:
		control_query(c, "select id, name, created_at from users "
		    "order by name", 0, NULL);
		break;
	case CTL_WORKSPACE_LIST:
		control_query(c, "select id, name, created_at from workspaces "
		    "order by name", 0, NULL);
		break;
	case CTL_KEY_CREATE:
		control_key_create(c, &cmd);
		break;
	case CTL_KEY_LIST:
		control_query(c,
		    "select k.id, k.prefix || '...', u.name, w.name, "
		    "k.created_at, coalesce(k.expires_at::text, 'never'), "
		    "case when k.revoked_at is null then 'active' else "
		    "'revoked' end from api_keys k join users u on "
		    "u.id = k.user_id join workspaces w on "
		    "w.id = k.workspace_id order by k.created_at", 0, NULL);
		break;
	case CTL_KEY_REVOKE:
		control_key_revoke(c, cmd.args[0]);
		break;
	case CTL_SWEEP:
		storage_sweep_run(control_sweep_reported, c);
		break;
	case CTL_CONTAINER_LIST:
	case CTL_CONTAINER_SHOW:
	case CTL_CONTAINER_DESTROY:
		control_container(c, &cmd);
		break;
	case CTL_LIMITS_SET:
	case CTL_LIMITS_SHOW:
		control_limits(c, &cmd);
		break;
	case CTL_USAGE:
		control_usage(c, &cmd);
		break;
	default:
		control_line(c->client, "unknown command");
		control_end(c, 1);
		break;
	}
	explicit_bzero(&cmd, sizeof(cmd));
}
