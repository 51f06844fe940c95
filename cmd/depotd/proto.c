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
 * proto.c: for each channel, the messages its sender may send, with
 * their payload sizes and whether a descriptor rides along.  imsgev
 * applies these before any dispatcher runs (imsgev_set_channel), so a
 * dispatcher sees only messages of the right type and size.  A message
 * outside its channel's table is fatal between depotd's own processes;
 * a control client that sends one is only disconnected.
 */
#include <sys/types.h>

#include <stddef.h>

#include "http.h"
#include "proto.h"

#define NRULES(a)	(sizeof(a) / sizeof((a)[0]))
#define FIXED(t, s, f)	{ (t), sizeof(s), sizeof(s), (f) }
#define EMPTY(t)	{ (t), 0, 0, IMSG_FD_NO }

/* Every child hears these from the master. */
#define FROM_MASTER							\
	FIXED(IMSG_CONF_BEGIN, uint32_t, IMSG_FD_NO),			\
	FIXED(IMSG_CONF_PROC, struct proc_conf_msg, IMSG_FD_NO),	\
	FIXED(IMSG_CONF_SECRET, struct secret_msg, IMSG_FD_NO),		\
	EMPTY(IMSG_CONF_END),						\
	FIXED(IMSG_PEER_FD, struct peer_msg, IMSG_FD_MUST),		\
	EMPTY(IMSG_START),						\
	FIXED(IMSG_LOG_VERBOSE, int32_t, IMSG_FD_NO)

static const struct imsg_rule frontend_from_master[] = {
	FROM_MASTER,
	FIXED(IMSG_CONF_FILES, struct files_msg, IMSG_FD_NO),
	FIXED(IMSG_CONF_LIMITS, struct limits_msg, IMSG_FD_NO),
	FIXED(IMSG_CONF_HTTP, struct http_limits, IMSG_FD_NO),
	FIXED(IMSG_CONF_UPSTREAM, struct upstream_msg, IMSG_FD_NO),
	FIXED(IMSG_CONF_REPLICA, struct replica_msg, IMSG_FD_NO),
	FIXED(IMSG_CONF_MODEL, struct model_msg, IMSG_FD_NO),
	FIXED(IMSG_CONF_SANDBOX, struct sandbox_msg, IMSG_FD_NO),
	FIXED(IMSG_CONF_CA, struct ca_msg, IMSG_FD_MUST),
	{ IMSG_LISTEN_FD, 0, 0, IMSG_FD_MUST },
	FIXED(IMSG_CTL_CMD, struct ctl_cmd, IMSG_FD_NO),	/* show models */
};

static const struct imsg_rule storage_from_master[] = {
	FROM_MASTER,
	FIXED(IMSG_CONF_STORE, struct store_msg, IMSG_FD_NO),
	FIXED(IMSG_CONF_FILES, struct files_msg, IMSG_FD_NO),
	FIXED(IMSG_CONF_LIMITS, struct limits_msg, IMSG_FD_NO),
	FIXED(IMSG_CTL_CMD, struct ctl_cmd, IMSG_FD_NO),
};

static const struct imsg_rule broker_from_master[] = {
	FROM_MASTER,
	FIXED(IMSG_CONF_SANDBOX, struct sandbox_msg, IMSG_FD_NO),
	FIXED(IMSG_CONF_CA, struct ca_msg, IMSG_FD_MUST),
};

/* The extract child needs no configuration part: requests carry all. */
static const struct imsg_rule extract_from_master[] = {
	FROM_MASTER,
};

/* What any child may tell the master. */
#define TO_MASTER							\
	EMPTY(IMSG_READY),						\
	FIXED(IMSG_CONF_ACK, uint32_t, IMSG_FD_NO)

static const struct imsg_rule master_from_child[] = {
	TO_MASTER,
};

/* A frontend also says, each second, that its loop still turns. */
static const struct imsg_rule master_from_frontend[] = {
	TO_MASTER,
	FIXED(IMSG_HEARTBEAT, struct heartbeat_msg, IMSG_FD_NO),
	/* What discovery learnt (depotctl show models). */
	{ IMSG_CTL_LINE, 1, CTL_LINE_MAX, IMSG_FD_NO },
	FIXED(IMSG_CTL_END, int32_t, IMSG_FD_NO),
};

/* The storage helper also answers the control commands relayed to it. */
static const struct imsg_rule master_from_storage[] = {
	TO_MASTER,
	{ IMSG_CTL_LINE, 1, CTL_LINE_MAX, IMSG_FD_NO },
	FIXED(IMSG_CTL_END, int32_t, IMSG_FD_NO),
};

static const struct imsg_rule storage_from_frontend[] = {
	FIXED(IMSG_AUTH_LOOKUP, struct auth_lookup, IMSG_FD_NO),
	FIXED(IMSG_AUTH_RELEASE, struct auth_release, IMSG_FD_NO),
	FIXED(IMSG_AUTH_DELEGATE, struct auth_release, IMSG_FD_NO),
	FIXED(IMSG_FILE_CREATE, struct file_create, IMSG_FD_NO),
	FIXED(IMSG_FILE_PROGRESS, struct file_key, IMSG_FD_NO),
	FIXED(IMSG_FILE_COMMIT, struct file_commit, IMSG_FD_NO),
	FIXED(IMSG_FILE_ABORT, struct file_key, IMSG_FD_NO),
	FIXED(IMSG_FILE_GET, struct file_key, IMSG_FD_NO),
	FIXED(IMSG_FILE_OPEN, struct file_open, IMSG_FD_NO),
	FIXED(IMSG_FILE_LIST, struct file_list_req, IMSG_FD_NO),
	FIXED(IMSG_FILE_DELETE, struct file_key, IMSG_FD_NO),
	EMPTY(IMSG_HEALTH_REQ),
	FIXED(IMSG_CNTR_CREATE, struct cntr_create, IMSG_FD_NO),
	FIXED(IMSG_CNTR_GET, struct cntr_key, IMSG_FD_NO),
	FIXED(IMSG_CNTR_LIST, struct cntr_list_req, IMSG_FD_NO),
	FIXED(IMSG_CNTR_DELETE, struct cntr_key, IMSG_FD_NO),
	FIXED(IMSG_CNTR_ATTACH, struct cntr_key, IMSG_FD_NO),
	FIXED(IMSG_LIMIT_ASK, struct limit_ask, IMSG_FD_NO),
	FIXED(IMSG_LIMIT_RETURN, struct limit_ask, IMSG_FD_NO),
	/* A whole number of records: storage_usage.c checks. */
	{ IMSG_USAGE_BATCH, sizeof(struct usage_rec),
	    USAGE_BATCH * sizeof(struct usage_rec), IMSG_FD_NO },
};

/* Replies to the calls above; a create or an open hands over an fd. */
static const struct imsg_rule frontend_from_storage[] = {
	FIXED(IMSG_FILE_CREATED, struct file_rec, IMSG_FD_MUST),
	FIXED(IMSG_FILE_INFO, struct file_rec, IMSG_FD_NO),
	FIXED(IMSG_ERROR, struct error_msg, IMSG_FD_NO),
	FIXED(IMSG_AUTH_RESULT, struct auth_result, IMSG_FD_NO),
	FIXED(IMSG_AUTH_DROP, struct auth_release, IMSG_FD_NO),
	/* No descriptor for a 416: there is nothing to read. */
	FIXED(IMSG_FILE_OPENED, struct file_opened, IMSG_FD_MAY),
	FIXED(IMSG_FILE_LIST_ITEM, struct file_rec, IMSG_FD_NO),
	FIXED(IMSG_FILE_LIST_END, struct file_list_end, IMSG_FD_NO),
	FIXED(IMSG_FILE_DELETED, struct file_key, IMSG_FD_NO),
	FIXED(IMSG_HEALTH, struct health_msg, IMSG_FD_NO),
	FIXED(IMSG_CNTR_INFO, struct cntr_rec, IMSG_FD_NO),
	FIXED(IMSG_CNTR_LIST_ITEM, struct cntr_rec, IMSG_FD_NO),
	FIXED(IMSG_CNTR_LIST_END, struct file_list_end, IMSG_FD_NO),
	FIXED(IMSG_CNTR_ATTACHED, struct cntr_attached, IMSG_FD_NO),
	FIXED(IMSG_LIMIT_GRANT, struct limit_grant, IMSG_FD_NO),
};

static const struct imsg_rule extract_from_frontend[] = {
	FIXED(IMSG_EXTRACT, struct extract_req, IMSG_FD_MUST),
};

/* No descriptor when the extraction could not start. */
static const struct imsg_rule frontend_from_extract[] = {
	FIXED(IMSG_EXTRACTED, struct extract_res, IMSG_FD_MAY),
};

/*
 * The broker stores what runs produce, under handles frontends had
 * delegated to it; it may read, list or delete nothing.
 */
static const struct imsg_rule storage_from_broker[] = {
	FIXED(IMSG_AUTH_RELEASE, struct auth_release, IMSG_FD_NO),
	FIXED(IMSG_FILE_CREATE, struct file_create, IMSG_FD_NO),
	FIXED(IMSG_FILE_PROGRESS, struct file_key, IMSG_FD_NO),
	FIXED(IMSG_FILE_COMMIT, struct file_commit, IMSG_FD_NO),
	FIXED(IMSG_FILE_ABORT, struct file_key, IMSG_FD_NO),
	FIXED(IMSG_CNTR_BOUND, struct cntr_bound, IMSG_FD_NO),
};

static const struct imsg_rule broker_from_storage[] = {
	FIXED(IMSG_FILE_CREATED, struct file_rec, IMSG_FD_MUST),
	FIXED(IMSG_FILE_INFO, struct file_rec, IMSG_FD_NO),
	FIXED(IMSG_ERROR, struct error_msg, IMSG_FD_NO),
	FIXED(IMSG_CNTR_DESTROY, struct cntr_destroy, IMSG_FD_NO),
	FIXED(IMSG_CNTR_GRANT, struct cntr_grant, IMSG_FD_NO),
};

/* A lease of a sandbox session, and what it runs. */
static const struct imsg_rule broker_from_frontend[] = {
	FIXED(IMSG_SBX_OPEN, struct sbx_open, IMSG_FD_NO),
	FIXED(IMSG_SBX_SEED, struct sbx_seed, IMSG_FD_MUST),
	{ IMSG_SBX_DATA, 1, SBX_DATA_MAX, IMSG_FD_NO },
	FIXED(IMSG_SBX_EXEC, struct sbx_exec, IMSG_FD_NO),
	EMPTY(IMSG_SBX_CLOSE),
};

static const struct imsg_rule frontend_from_broker[] = {
	FIXED(IMSG_SBX_STATUS, struct sbx_status, IMSG_FD_NO),
	{ IMSG_SBX_DATA, 1, SBX_DATA_MAX, IMSG_FD_NO },
	FIXED(IMSG_SBX_RESULT, struct sbx_status, IMSG_FD_NO),
};

#define CHANNEL(recv, send, rules, name)				\
	{ (recv), (send), { (name), (rules), NRULES(rules), 1 } }

static const struct {
	enum proc_role		 receiver;
	enum proc_role		 sender;
	struct imsg_channel	 chan;
} channels[] = {
	CHANNEL(ROLE_FRONTEND, ROLE_MASTER, frontend_from_master,
	    "frontend <- master"),
	CHANNEL(ROLE_STORAGE, ROLE_MASTER, storage_from_master,
	    "storage <- master"),
	CHANNEL(ROLE_BROKER, ROLE_MASTER, broker_from_master,
	    "broker <- master"),
	CHANNEL(ROLE_MASTER, ROLE_FRONTEND, master_from_frontend,
	    "master <- frontend"),
	CHANNEL(ROLE_MASTER, ROLE_STORAGE, master_from_storage,
	    "master <- storage"),
	CHANNEL(ROLE_MASTER, ROLE_BROKER, master_from_child,
	    "master <- broker"),
	CHANNEL(ROLE_STORAGE, ROLE_FRONTEND, storage_from_frontend,
	    "storage <- frontend"),
	CHANNEL(ROLE_STORAGE, ROLE_BROKER, storage_from_broker,
	    "storage <- broker"),
	CHANNEL(ROLE_FRONTEND, ROLE_STORAGE, frontend_from_storage,
	    "frontend <- storage"),
	CHANNEL(ROLE_EXTRACT, ROLE_MASTER, extract_from_master,
	    "extract <- master"),
	CHANNEL(ROLE_MASTER, ROLE_EXTRACT, master_from_child,
	    "master <- extract"),
	CHANNEL(ROLE_EXTRACT, ROLE_FRONTEND, extract_from_frontend,
	    "extract <- frontend"),
	CHANNEL(ROLE_FRONTEND, ROLE_EXTRACT, frontend_from_extract,
	    "frontend <- extract"),
	CHANNEL(ROLE_BROKER, ROLE_STORAGE, broker_from_storage,
	    "broker <- storage"),
	CHANNEL(ROLE_FRONTEND, ROLE_BROKER, frontend_from_broker,
	    "frontend <- broker"),
	CHANNEL(ROLE_BROKER, ROLE_FRONTEND, broker_from_frontend,
	    "broker <- frontend"),
};

const struct imsg_channel *
proto_channel(enum proc_role receiver, enum proc_role sender)
{
	size_t	 i;

	for (i = 0; i < NRULES(channels); i++)
		if (channels[i].receiver == receiver &&
		    channels[i].sender == sender)
			return &channels[i].chan;
	return NULL;
}

static const struct imsg_rule ctl_request[] = {
	FIXED(IMSG_CTL_CMD, struct ctl_cmd, IMSG_FD_NO),
};

static const struct imsg_rule ctl_reply[] = {
	{ IMSG_CTL_LINE, 1, CTL_LINE_MAX, IMSG_FD_NO },
	FIXED(IMSG_CTL_END, int32_t, IMSG_FD_NO),
};

const struct imsg_channel proto_ctl_request = {
	"master <- control client", ctl_request, NRULES(ctl_request), 0
};

const struct imsg_channel proto_ctl_reply = {
	"depotctl <- master", ctl_reply, NRULES(ctl_reply), 0
};
