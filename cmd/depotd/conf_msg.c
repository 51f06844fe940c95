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
 * conf_msg.c: the configuration as typed messages.  The master sends
 * each role only the parts and the secrets its roster row names (the
 * way httpd's config_set_* and config_getcfg do); the child rebuilds a
 * configuration from them on top of conf_new()'s defaults.
 *
 * Each part's fields are listed once, in a *_sync() function that
 * copies them towards the message or back from it.  An https
 * upstream's CA bundle follows the upstreams as a descriptor
 * (IMSG_CONF_CA, conf_ca.c).
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "proto.h"
#include "config.h"
#include "conf_int.h"

enum sync_dir {
	TO_MSG,
	FROM_MSG,
};

#define SYNC(d, field, msgfield) do {					\
	if ((d) == TO_MSG)						\
		(msgfield) = (field);					\
	else								\
		(field) = (msgfield);					\
} while (0)

/* A received string is cut at its array's end before it is read. */
#define SYNC_STR(d, field, msgfield) do {				\
	if ((d) == TO_MSG)						\
		conf_copy((msgfield), (field), sizeof(msgfield));	\
	else {								\
		(msgfield)[sizeof(msgfield) - 1] = '\0';		\
		conf_copy((field), (msgfield), sizeof(field));		\
	}								\
} while (0)

static void
conf_copy(char *dst, const char *src, size_t len)
{
	if (strlcpy(dst, src, len) >= len)
		fatalx("configuration: \"%.32s...\" is too long to send", src);
}

/* Which secret lives where, and which roles may hold it. */
static const struct {
	enum conf_secret	 which;
	int			 mask;
	size_t			 offset;	/* of a char * in depotd_conf */
} secret_slots[] = {
	{ SECRET_DATABASE, CONF_SECRETS_STORAGE,
	    offsetof(struct depotd_conf, database) },
	{ SECRET_S3_ACCESS_KEY, CONF_SECRETS_STORAGE,
	    offsetof(struct depotd_conf, storage.access_key) },
	{ SECRET_S3_SECRET_KEY, CONF_SECRETS_STORAGE,
	    offsetof(struct depotd_conf, storage.secret_key) },
	{ SECRET_S3_SESSION_TOKEN, CONF_SECRETS_STORAGE,
	    offsetof(struct depotd_conf, storage.session_token) },
	{ SECRET_SFTP_PASSPHRASE, CONF_SECRETS_STORAGE,
	    offsetof(struct depotd_conf, storage.passphrase) },
	{ SECRET_SANDBOX_TOKEN, CONF_SECRETS_BROKER,
	    offsetof(struct depotd_conf, sandbox_token) },
	/* The storage helper decides who is admin; frontends never know. */
	{ SECRET_ADMIN_KEY, CONF_SECRETS_STORAGE,
	    offsetof(struct depotd_conf, admin_key) },
};
#define NSLOTS	(sizeof(secret_slots) / sizeof(secret_slots[0]))

static char **
secret_slot(const struct depotd_conf *c, size_t i)
{
	return (char **)((char *)c + secret_slots[i].offset);
}

static void
store_sync(struct depotd_conf *c, struct store_msg *m, enum sync_dir d)
{
	SYNC_STR(d, c->storage_url, m->url);
	SYNC_STR(d, c->storage.endpoint, m->endpoint);
	SYNC_STR(d, c->storage.region, m->region);
	SYNC(d, c->storage.path_style, m->path_style);
	SYNC(d, c->storage.part_size, m->part_size);
	SYNC(d, c->storage.max_transfers, m->max_transfers);
	SYNC_STR(d, c->storage.identity, m->identity);
	SYNC_STR(d, c->storage.known_hosts, m->known_hosts);
	SYNC(d, c->storage.keepalive, m->keepalive);
	SYNC(d, c->db_pool, m->db_pool);
}

static void
files_sync(struct depotd_conf *c, struct files_msg *m, enum sync_dir d)
{
	SYNC(d, c->max_size, m->max_size);
	SYNC(d, c->retention, m->retention);
	SYNC(d, c->sweep_interval, m->sweep_interval);
	SYNC(d, c->max_filename, m->max_filename);
	SYNC(d, c->max_uploads_per_key, m->max_uploads_per_key);
	SYNC(d, c->writing_grace, m->writing_grace);
	SYNC(d, c->extract_pages, m->extract_pages);
	SYNC(d, c->extract_size, m->extract_size);
	SYNC(d, c->cntr_expires_after, m->cntr_expires_after);
	SYNC(d, c->cntr_max_lifetime, m->cntr_max_lifetime);
	SYNC(d, c->cntr_max_per_key, m->cntr_max_per_key);
	SYNC(d, c->cntr_max_per_workspace, m->cntr_max_per_workspace);
}

static void
limits_sync(struct depotd_conf *c, struct limits_msg *m, enum sync_dir d)
{
	SYNC(d, c->limits.requests_per_minute, m->requests_per_minute);
	SYNC(d, c->limits.tokens_per_minute, m->tokens_per_minute);
	SYNC(d, c->limits.concurrency, m->concurrency);
	SYNC(d, c->limits.tokens_per_day, m->tokens_per_day);
	SYNC(d, c->limits.tokens_per_month, m->tokens_per_month);
	SYNC(d, c->prefork, m->prefork);
}

static void
sandbox_sync(struct depotd_conf *c, struct sandbox_msg *m, enum sync_dir d)
{
	SYNC(d, c->sandbox, m->mode);
	SYNC_STR(d, c->sandbox_url, m->url);
	SYNC_STR(d, c->sandbox_dir, m->dir);
	SYNC(d, c->max_tool_iterations, m->max_tool_iterations);
	SYNC(d, c->exec_timeout, m->exec_timeout);
	SYNC(d, c->max_output_files, m->max_output_files);
	SYNC(d, c->max_output_size, m->max_output_size);
	SYNC(d, c->max_sessions, m->max_sessions);
	SYNC(d, c->max_sessions_per_key, m->max_sessions_per_key);
	SYNC(d, c->transfer_timeout, m->transfer_timeout);
	SYNC(d, c->max_answer_size, m->max_answer_size);
	SYNC(d, c->max_tool_calls, m->max_tool_calls);
	SYNC(d, c->request_timeout, m->request_timeout);
	SYNC_STR(d, c->sandbox_link.resolve, m->resolve);
}

static void
upstream_sync(struct upstream_conf *u, struct upstream_msg *m,
    enum sync_dir d)
{
	SYNC_STR(d, u->name, m->name);
	SYNC_STR(d, u->url, m->url);
	SYNC(d, u->api, m->api);
	SYNC(d, u->timeout, m->timeout);
	SYNC(d, u->connect_timeout, m->connect_timeout);
	SYNC(d, u->idle_timeout, m->idle_timeout);
	SYNC(d, u->native_responses, m->native_responses);
	SYNC_STR(d, u->ca_file, m->ca_file);
	SYNC_STR(d, u->anthropic_version, m->anthropic_version);
	SYNC_STR(d, u->resolve, m->resolve);
	SYNC(d, u->discover, m->discover);
	SYNC(d, u->weight, m->weight);
	SYNC(d, u->max_failover, m->max_failover);
}

static void
model_sync(struct model_conf *mc, struct model_msg *m, enum sync_dir d)
{
	SYNC_STR(d, mc->name, m->name);
	SYNC_STR(d, mc->upstream, m->upstream);
	SYNC_STR(d, mc->remote_name, m->remote_name);
	SYNC(d, mc->text_only, m->text_only);
	SYNC(d, mc->native_code_execution, m->native_code_execution);
	SYNC(d, mc->pdf_as_text, m->pdf_as_text);
	SYNC(d, mc->max_tokens, m->max_tokens);
	SYNC(d, mc->max_tool_iterations, m->max_tool_iterations);
}

static void
send_part(struct imsgev *iev, uint32_t type, void *msg, size_t len)
{
	if (imsgev_compose(iev, type, 0, 0, -1, msg, len) == -1)
		fatal("imsg_compose");
	/* Parts may hold secrets: the queue has its copy now. */
	explicit_bzero(msg, len);
}

static void
send_secrets(struct imsgev *iev, const struct depotd_conf *c, int mask)
{
	struct secret_msg	 sm;
	const char		*value;
	size_t			 i;

	for (i = 0; i < NSLOTS; i++) {
		value = *secret_slot(c, i);
		if (value == NULL || (secret_slots[i].mask & mask) == 0)
			continue;
		memset(&sm, 0, sizeof(sm));
		sm.which = secret_slots[i].which;
		conf_copy(sm.value, value, sizeof(sm.value));
		send_part(iev, IMSG_CONF_SECRET, &sm, sizeof(sm));
	}
}

/*
 * Each https upstream's CA bundle as a descriptor of its own, opened
 * now (at start and at every reload): the frontend, which has no file
 * system, reads it.  One that cannot be opened is logged and skipped.
 */
static void
send_cas(struct imsgev *iev, const struct depotd_conf *c)
{
	struct upstream_conf	*u;
	struct ca_msg		 cm;
	int			 fd;

	TAILQ_FOREACH(u, &c->upstreams, entry) {
		if ((fd = conf_ca_open(u)) == -1)
			continue;
		memset(&cm, 0, sizeof(cm));
		conf_copy(cm.upstream, u->name, sizeof(cm.upstream));
		if (imsgev_compose(iev, IMSG_CONF_CA, 0, 0, fd, &cm,
		    sizeof(cm)) == -1)
			fatal("imsg_compose");
	}
}

/* A remote sandbox's CA bundle, under the empty name. */
static void
send_sandbox_ca(struct imsgev *iev, const struct depotd_conf *c)
{
	struct ca_msg	 cm;
	int		 fd;

	if (c->sandbox != SANDBOX_URL ||
	    (fd = conf_ca_open(&c->sandbox_link)) == -1)
		return;
	memset(&cm, 0, sizeof(cm));
	if (imsgev_compose(iev, IMSG_CONF_CA, 0, 0, fd, &cm, sizeof(cm)) == -1)
		fatal("imsg_compose");
}

/* The url lines after an upstream's first, as replica messages. */
static void
send_replicas(struct imsgev *iev, const struct upstream_conf *u)
{
	struct replica_msg	 rm;
	size_t			 i;

	for (i = 0; i < u->nmore; i++) {
		memset(&rm, 0, sizeof(rm));
		conf_copy(rm.upstream, u->name, sizeof(rm.upstream));
		conf_copy(rm.url, u->more[i].url, sizeof(rm.url));
		conf_copy(rm.resolve, u->more[i].resolve, sizeof(rm.resolve));
		rm.weight = u->more[i].weight;
		send_part(iev, IMSG_CONF_REPLICA, &rm, sizeof(rm));
	}
}

static void
send_models(struct imsgev *iev, const struct depotd_conf *c, int mask)
{
	struct upstream_conf	*u;
	struct model_conf	*mc;
	struct upstream_msg	 um;
	struct model_msg	 mm;

	TAILQ_FOREACH(u, &c->upstreams, entry) {
		memset(&um, 0, sizeof(um));
		upstream_sync(u, &um, TO_MSG);
		if (u->api_key != NULL && (mask & CONF_SECRETS_FRONTEND))
			conf_copy(um.api_key, u->api_key, sizeof(um.api_key));
		send_part(iev, IMSG_CONF_UPSTREAM, &um, sizeof(um));
		send_replicas(iev, u);
	}
	TAILQ_FOREACH(mc, &c->models, entry) {
		memset(&mm, 0, sizeof(mm));
		model_sync(mc, &mm, TO_MSG);
		send_part(iev, IMSG_CONF_MODEL, &mm, sizeof(mm));
	}
	send_cas(iev, c);
}

/*
 * Sends the parts a role may see, between the IMSG_CONF_BEGIN and
 * IMSG_CONF_END the caller sends.  const in spirit: the sync functions
 * only read the configuration when they write a message.
 */
void
conf_send(struct imsgev *iev, const struct depotd_conf *conf, int parts,
    int secrets)
{
	struct depotd_conf	*c = (struct depotd_conf *)conf;
	struct store_msg	 st;
	struct files_msg	 fm;
	struct limits_msg	 lm;
	struct sandbox_msg	 sb;
	struct http_limits	 hl;

	send_secrets(iev, c, secrets);
	if (parts & CONF_PART_STORE) {
		memset(&st, 0, sizeof(st));
		store_sync(c, &st, TO_MSG);
		send_part(iev, IMSG_CONF_STORE, &st, sizeof(st));
	}
	if (parts & CONF_PART_FILES) {
		memset(&fm, 0, sizeof(fm));
		files_sync(c, &fm, TO_MSG);
		send_part(iev, IMSG_CONF_FILES, &fm, sizeof(fm));
		memset(&lm, 0, sizeof(lm));
		limits_sync(c, &lm, TO_MSG);
		send_part(iev, IMSG_CONF_LIMITS, &lm, sizeof(lm));
	}
	if (parts & CONF_PART_HTTP) {
		hl = c->http;
		send_part(iev, IMSG_CONF_HTTP, &hl, sizeof(hl));
	}
	if (parts & CONF_PART_MODELS)
		send_models(iev, c, secrets);
	if (parts & CONF_PART_SANDBOX) {
		memset(&sb, 0, sizeof(sb));
		sandbox_sync(c, &sb, TO_MSG);
		/* Where the sandbox is: only for who holds its token. */
		if ((secrets & CONF_SECRETS_BROKER) == 0) {
			memset(sb.url, 0, sizeof(sb.url));
			memset(sb.dir, 0, sizeof(sb.dir));
			memset(sb.resolve, 0, sizeof(sb.resolve));
		}
		send_part(iev, IMSG_CONF_SANDBOX, &sb, sizeof(sb));
		if (secrets & CONF_SECRETS_BROKER)
			send_sandbox_ca(iev, c);
	}
}

static int
recv_secret(struct depotd_conf *c, struct secret_msg *sm)
{
	char	**slot;
	size_t	  i;

	for (i = 0; i < NSLOTS; i++)
		if ((int)secret_slots[i].which == sm->which)
			break;
	if (i == NSLOTS)
		return -1;
	sm->value[sizeof(sm->value) - 1] = '\0';
	slot = secret_slot(c, i);
	if (*slot != NULL)
		freezero(*slot, strlen(*slot));
	if ((*slot = strdup(sm->value)) == NULL)
		fatal("strdup");
	return 0;
}

static void
recv_upstream(struct depotd_conf *c, struct upstream_msg *um)
{
	struct upstream_conf	*u;

	if ((u = calloc(1, sizeof(*u))) == NULL)
		fatal("calloc");
	upstream_sync(u, um, FROM_MSG);
	um->api_key[sizeof(um->api_key) - 1] = '\0';
	if (um->api_key[0] != '\0' && (u->api_key = strdup(um->api_key)) ==
	    NULL)
		fatal("strdup");
	TAILQ_INSERT_TAIL(&c->upstreams, u, entry);
}

/* It follows its upstream, the last one received. */
static int
recv_replica(struct depotd_conf *c, struct replica_msg *rm)
{
	struct upstream_conf	*u;

	rm->upstream[sizeof(rm->upstream) - 1] = '\0';
	rm->url[sizeof(rm->url) - 1] = '\0';
	rm->resolve[sizeof(rm->resolve) - 1] = '\0';
	if ((u = TAILQ_LAST(&c->upstreams, upstream_head)) == NULL ||
	    strcmp(u->name, rm->upstream) != 0 || rm->url[0] == '\0' ||
	    rm->weight < 1 || rm->weight > CONF_WEIGHT_MAX)
		return -1;
	if (conf_replica_add(u, rm->url, rm->weight) == -1)
		return -1;
	strlcpy(u->more[u->nmore - 1].resolve, rm->resolve,
	    sizeof(u->more[u->nmore - 1].resolve));
	return 0;
}

/* The descriptor is required by the channel table. */
static int
recv_ca(struct depotd_conf *c, struct ca_msg *cm, int fd)
{
	struct upstream_conf	*u;

	cm->upstream[sizeof(cm->upstream) - 1] = '\0';
	if (cm->upstream[0] == '\0') {		/* the sandbox's */
		conf_ca_read(&c->sandbox_link, fd);
		return 0;
	}
	TAILQ_FOREACH(u, &c->upstreams, entry)
		if (strcmp(u->name, cm->upstream) == 0)
			break;
	if (u == NULL) {
		close(fd);
		return -1;
	}
	conf_ca_read(u, fd);
	return 0;
}

static void
recv_model(struct depotd_conf *c, struct model_msg *mm)
{
	struct model_conf	*mc;

	if ((mc = calloc(1, sizeof(*mc))) == NULL)
		fatal("calloc");
	model_sync(mc, mm, FROM_MSG);
	TAILQ_INSERT_TAIL(&c->models, mc, entry);
}

/*
 * The channel table has checked the size already; the payload is
 * copied into a local message (it may hold a secret, which is wiped).
 */
int
conf_recv(struct depotd_conf *c, struct imsg *imsg)
{
	union {
		struct secret_msg	 secret;
		struct store_msg	 store;
		struct files_msg	 files;
		struct limits_msg	 limits;
		struct upstream_msg	 upstream;
		struct replica_msg	 replica;
		struct model_msg	 model;
		struct sandbox_msg	 sandbox;
		struct ca_msg		 ca;
		struct http_limits	 http;
	}	 m;
	int	 rc = 0;

	if (imsg->datalen > sizeof(m))
		return -1;
	memset(&m, 0, sizeof(m));
	memcpy(&m, imsg->data, imsg->datalen);
	explicit_bzero(imsg->data, imsg->datalen);
	switch (imsg->hdr.type) {
	case IMSG_CONF_SECRET:
		rc = recv_secret(c, &m.secret);
		break;
	case IMSG_CONF_STORE:
		store_sync(c, &m.store, FROM_MSG);
		break;
	case IMSG_CONF_FILES:
		files_sync(c, &m.files, FROM_MSG);
		break;
	case IMSG_CONF_LIMITS:
		limits_sync(c, &m.limits, FROM_MSG);
		break;
	case IMSG_CONF_HTTP:
		c->http = m.http;
		break;
	case IMSG_CONF_UPSTREAM:
		recv_upstream(c, &m.upstream);
		break;
	case IMSG_CONF_REPLICA:
		rc = recv_replica(c, &m.replica);
		break;
	case IMSG_CONF_MODEL:
		recv_model(c, &m.model);
		break;
	case IMSG_CONF_SANDBOX:
		sandbox_sync(c, &m.sandbox, FROM_MSG);
		break;
	case IMSG_CONF_CA:
		rc = recv_ca(c, &m.ca, imsg_get_fd(imsg));
		break;
	default:
		rc = -1;
		break;
	}
	explicit_bzero(&m, sizeof(m));
	return rc;
}
