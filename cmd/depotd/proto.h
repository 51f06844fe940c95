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
 * proto.h: the messages between depotd's processes: their types, their
 * payloads, and the channel tables (proto.c) that say which peer may
 * send which of them.  Shared by every process and by depotctl.
 */
#ifndef DEPOTD_PROTO_H
#define DEPOTD_PROTO_H

#include <sys/types.h>
#include <stdint.h>

#include "imsg.h"

enum proc_role {
	ROLE_MASTER,
	ROLE_FRONTEND,
	ROLE_STORAGE,
	ROLE_BROKER,
	ROLE_SANDBOXD,		/* sandbox local: no channel, only a pid */
	ROLE_EXTRACT,		/* PDF to text: pdftotext in bubblewrap */
	ROLE_MAX,
};
#define ROLE_BIT(r)		(1U << (r))

#define PARENT_SOCK_FILENO	3	/* a child's channel to the master */
#define DEPOTD_SOCKET		"/run/depotd.sock"	/* control, default */
#define FRONTEND_MAX		64
#define IDLEN			40	/* "file-" + 32 hex, and NUL */

enum imsg_type {
	IMSG_NONE,

	/* master -> child: configuration, each role only its own parts */
	IMSG_CONF_BEGIN,		/* uint32_t generation */
	IMSG_CONF_PROC,			/* struct proc_conf_msg */
	IMSG_CONF_SECRET,		/* struct secret_msg */
	IMSG_CONF_STORE,		/* struct store_msg */
	IMSG_CONF_FILES,		/* struct files_msg */
	IMSG_CONF_HTTP,			/* struct http_limits */
	IMSG_CONF_UPSTREAM,		/* struct upstream_msg */
	IMSG_CONF_MODEL,		/* struct model_msg */
	IMSG_CONF_SANDBOX,		/* struct sandbox_msg */
	IMSG_CONF_CA,			/* struct ca_msg, fd: its CA bundle */
	IMSG_CONF_END,			/* apply what was sent */

	/* master -> child, set-up */
	IMSG_LISTEN_FD,			/* fd: a listening socket */
	IMSG_PEER_FD,			/* struct peer_msg, fd: a channel */
	IMSG_START,			/* set-up complete: drop privileges */
	IMSG_LOG_VERBOSE,		/* int32_t */

	/* child -> master */
	IMSG_READY,			/* privileges dropped, serving */
	IMSG_CONF_ACK,			/* uint32_t generation applied */
	IMSG_HEARTBEAT,			/* struct heartbeat_msg: loop turned */

	/* control, relayed by the master (peerid: control client) */
	IMSG_CTL_CMD,			/* struct ctl_cmd */
	IMSG_CTL_LINE,			/* text: one line, NUL included */
	IMSG_CTL_END,			/* int32_t: exit status */

	/*
	 * frontend <-> storage (peerid: request number).  Every file
	 * message names the auth handle the storage helper issued on the
	 * same channel; the owner is never the sender's to say.
	 */
	IMSG_AUTH_LOOKUP,		/* struct auth_lookup */
	IMSG_AUTH_RESULT,		/* struct auth_result */
	IMSG_AUTH_RELEASE,		/* struct auth_release: request over */
	/*
	 * struct auth_release: a handle for the broker's channel standing
	 * for the same caller, good only to store what a run produced;
	 * answered with IMSG_AUTH_RESULT.
	 */
	IMSG_AUTH_DELEGATE,
	/*
	 * storage -> frontend, unasked (peerid 0): struct auth_release,
	 * a handle revoked, or "" for every one (a reload).  Cached
	 * answers holding it go before the next request (fe_authcache.c).
	 */
	IMSG_AUTH_DROP,
	IMSG_FILE_CREATE,		/* struct file_create (intent) */
	IMSG_FILE_CREATED,		/* struct file_rec, fd: write end */
	IMSG_FILE_PROGRESS,		/* struct file_key: bytes flowed */
	IMSG_FILE_COMMIT,		/* struct file_commit */
	IMSG_FILE_ABORT,		/* struct file_key */
	IMSG_FILE_GET,			/* struct file_key */
	IMSG_FILE_INFO,			/* struct file_rec */
	IMSG_FILE_OPEN,			/* struct file_open */
	IMSG_FILE_OPENED,		/* struct file_opened, fd */
	IMSG_FILE_LIST,			/* struct file_list_req */
	IMSG_FILE_LIST_ITEM,		/* struct file_rec */
	IMSG_FILE_LIST_END,		/* struct file_list_end */
	IMSG_FILE_DELETE,		/* struct file_key */
	IMSG_FILE_DELETED,		/* struct file_key */
	IMSG_HEALTH_REQ,
	IMSG_HEALTH,			/* struct health_msg */
	IMSG_ERROR,			/* struct error_msg */

	/* frontend <-> extract (peerid: the frontend's call number) */
	IMSG_EXTRACT,			/* struct extract_req, fd: the PDF */
	IMSG_EXTRACTED,			/* struct extract_res, fd: the text */
	/*
	 * frontend <-> broker (peerid: the frontend's lease number).  A
	 * lease is one backend session for one request; JSON too large
	 * for one message comes in DATA pieces before the message it
	 * belongs to.
	 */
	IMSG_SBX_OPEN,			/* struct sbx_open */
	IMSG_SBX_SEED,			/* struct sbx_seed, fd: the file */
	IMSG_SBX_DATA,			/* bytes: a piece of the next JSON */
	IMSG_SBX_EXEC,			/* struct sbx_exec, after its input */
	IMSG_SBX_CLOSE,			/* the lease ends */
	IMSG_SBX_STATUS,		/* struct sbx_status: open, seed */
	IMSG_SBX_RESULT,		/* struct sbx_status, after its JSON */

	/* master -> frontend, after its IMSG_CONF_UPSTREAM */
	IMSG_CONF_REPLICA,		/* struct replica_msg */
	/* Containers, frontend <-> storage (storage_container.c). */
	IMSG_CNTR_CREATE,		/* struct cntr_create */
	IMSG_CNTR_GET,			/* struct cntr_key */
	IMSG_CNTR_LIST,			/* struct cntr_list_req */
	IMSG_CNTR_DELETE,		/* struct cntr_key */
	IMSG_CNTR_INFO,			/* struct cntr_rec */
	IMSG_CNTR_LIST_ITEM,		/* struct cntr_rec */
	IMSG_CNTR_LIST_END,		/* struct file_list_end */
	/* storage -> broker: a container's session is to go. */
	IMSG_CNTR_DESTROY,		/* struct cntr_destroy */
	/*
	 * A request runs in a container.  The frontend asks the storage
	 * helper (IMSG_CNTR_ATTACH), which checks the owner and the
	 * expiry, tells the broker first (IMSG_CNTR_GRANT: a one-time
	 * nonce for that frontend standing for that container's session)
	 * and then answers (IMSG_CNTR_ATTACHED, the nonce without the
	 * session).  The frontend presents the nonce in its IMSG_SBX_OPEN:
	 * it never names a session, so it cannot reach one it was not
	 * granted.  A session the broker creates for a container is
	 * recorded with IMSG_CNTR_BOUND.
	 */
	IMSG_CNTR_ATTACH,		/* struct cntr_key */
	IMSG_CNTR_ATTACHED,		/* struct cntr_attached */
	IMSG_CNTR_GRANT,		/* struct cntr_grant */
	IMSG_CNTR_BOUND,		/* struct cntr_bound */
	/* master -> storage, frontend: limits { } (after IMSG_CONF_FILES) */
	IMSG_CONF_LIMITS,		/* struct limits_msg */
	/* frontend <-> storage: shares of a key's limits (storage_limits.c) */
	IMSG_LIMIT_ASK,			/* struct limit_ask */
	IMSG_LIMIT_GRANT,		/* struct limit_grant */
	IMSG_LIMIT_RETURN,		/* struct limit_ask: a share's end */
	IMSG_USAGE_BATCH,		/* struct usage_rec[1..USAGE_BATCH] */
};

struct peer_msg {
	int32_t		 role;
	int32_t		 instance;
};

/*
 * A frontend's event loop sends one each second (HEARTBEAT_INTERVAL),
 * naming the oldest request it was serving then, so that the master
 * can say what a frontend that stops turning was doing.  Untrusted:
 * the master terminates and escapes the strings before logging them.
 */
#define HEARTBEAT_INTERVAL	1	/* seconds */
#define HEARTBEAT_PATH_MAX	256

struct heartbeat_msg {
	int32_t		 inflight;	/* requests being served */
	int32_t		 age;		/* the oldest's, in seconds */
	char		 id[33];	/* the oldest's request id */
	char		 method[16];
	char		 path[HEARTBEAT_PATH_MAX];	/* cut to fit */
};

/* Configuration messages (conf_msg.c builds and reads them). */

/* Who the child runs as and where it is jailed; the master looked up. */
struct proc_conf_msg {
	char		 user[64];
	uint32_t	 uid;
	uint32_t	 gid;
	uint32_t	 sgid;		/* a supplementary group, 0 none */
	char		 chroot[1024];	/* "" = none */
};

enum conf_secret {
	SECRET_DATABASE,
	SECRET_S3_ACCESS_KEY,
	SECRET_S3_SECRET_KEY,
	SECRET_S3_SESSION_TOKEN,
	SECRET_SFTP_PASSPHRASE,
	SECRET_SANDBOX_TOKEN,
	SECRET_ADMIN_KEY,
	SECRET_MAX,
};

#define SECRET_MSG_MAX	4096

struct secret_msg {
	int32_t		 which;		/* enum conf_secret */
	char		 value[SECRET_MSG_MAX];
};

struct store_msg {
	char		 url[1024];
	char		 endpoint[1024];
	char		 region[64];
	int32_t		 path_style;
	int64_t		 part_size;
	int32_t		 max_transfers;
	char		 identity[1024];
	char		 known_hosts[1024];
	int32_t		 keepalive;
	int32_t		 db_pool;
};

struct files_msg {
	int64_t		 max_size;
	int64_t		 retention;
	int64_t		 sweep_interval;
	int32_t		 max_filename;
	int32_t		 max_uploads_per_key;
	int64_t		 writing_grace;
	int32_t		 extract_pages;
	int64_t		 extract_size;
	int64_t		 cntr_expires_after;	/* containers { }: minutes */
	int64_t		 cntr_max_lifetime;	/* seconds */
	int32_t		 cntr_max_per_key;
	int32_t		 cntr_max_per_workspace;
};

struct limits_msg {
	int64_t		 requests_per_minute;
	int64_t		 tokens_per_minute;
	int64_t		 concurrency;
	int64_t		 tokens_per_day;
	int64_t		 tokens_per_month;
	int32_t		 prefork;
};

/* An upstream's second or later url line (fe_pool.c). */
struct replica_msg {
	char		 upstream[64];
	char		 url[1024];
	char		 resolve[1024];
	int32_t		 weight;
};

struct upstream_msg {
	char		 name[64];
	char		 url[1024];
	int32_t		 api;
	int32_t		 timeout;
	int32_t		 connect_timeout;
	int32_t		 idle_timeout;
	int32_t		 native_responses;
	char		 ca_file[1024];
	char		 anthropic_version[64];
	char		 resolve[1024];	/* the master looked it up */
	char		 api_key[1024];	/* "" = none */
	int32_t		 discover;
	int32_t		 weight;	/* of url */
	int32_t		 max_failover;
};

/*
 * The CA bundle of an https upstream (its ca-file or the system's),
 * sent after the upstreams as a descriptor the frontend reads: it
 * opens no file itself.
 */
struct ca_msg {
	char		 upstream[64];
};

struct model_msg {
	char		 name[128];
	char		 upstream[64];
	char		 remote_name[128];
	int32_t		 text_only;
	int32_t		 native_code_execution;
	int32_t		 pdf_as_text;
	int32_t		 max_tokens;
	int32_t		 max_tool_iterations;
};

struct sandbox_msg {
	char		 resolve[1024];	/* CURLOPT_RESOLVE, "" none */
	int32_t		 mode;		/* enum sandbox_mode */
	char		 url[1024];
	char		 dir[1024];
	int32_t		 max_tool_iterations;
	int32_t		 exec_timeout;
	int32_t		 max_output_files;
	int64_t		 max_output_size;
	int32_t		 max_sessions;
	int32_t		 max_sessions_per_key;
	int32_t		 transfer_timeout;
	int64_t		 max_answer_size;
	int32_t		 max_tool_calls;
	int32_t		 request_timeout;
};

/* Control commands, depotctl -> master (-> storage). */
enum ctl_cmd_type {
	CTL_STATUS,
	CTL_RELOAD,
	CTL_LOG_VERBOSE,
	CTL_LOG_BRIEF,
	CTL_USER_ADD,
	CTL_USER_LIST,
	CTL_WORKSPACE_ADD,
	CTL_WORKSPACE_LIST,
	CTL_KEY_CREATE,		/* arg0 user, arg1 workspace, arg2 expiry */
	CTL_KEY_LIST,
	CTL_KEY_REVOKE,		/* arg0 key id or prefix */
	CTL_SWEEP,
	CTL_SHOW_MODELS,	/* answered by a frontend */
	CTL_CONTAINER_LIST,	/* arg0 user, arg1 workspace, "" any */
	CTL_CONTAINER_SHOW,	/* arg0 container id */
	CTL_CONTAINER_DESTROY,	/* arg0 container id */
	CTL_LIMITS_SET,		/* arg0 key id or prefix, arg1 five numbers
				   (rpm,tpm,concurrency,day,month; "" the
				   default) */
	CTL_LIMITS_SHOW,	/* arg0 key id or prefix */
	CTL_USAGE,		/* arg0 user, workspace, model or day */
};

#define CTL_ARGS	4
#define CTL_ARGLEN	256
#define CTL_LINE_MAX	1024	/* a reply line, NUL included */

struct ctl_cmd {
	int32_t		 type;
	char		 args[CTL_ARGS][CTL_ARGLEN];
};

/*
 * What a key lookup asks and learns.  The frontend sends the SHA-256
 * of whatever token the caller presented; the storage helper alone
 * decides whether it is an API key or the admin key.  Only the admin
 * key may name a user (and workspace) to act for; for any other key
 * the names are ignored.
 */
struct auth_lookup {
	char		 token_sha256[65];
	char		 user_name[128];	/* admin: the user to act for */
	char		 workspace_name[128];	/* "" = "default" */
};

enum auth_status {
	AUTH_OK,
	AUTH_UNKNOWN,
	AUTH_EXPIRED,
	AUTH_REVOKED,
	AUTH_UNAVAILABLE,	/* database down */
};

#define HANDLE_LEN	40	/* "hdl-" + 32 hex, and NUL */

/*
 * handle: opaque, good only on the channel it was issued on, until
 * IMSG_AUTH_RELEASE, its key's revocation, the channel's end or an
 * idle bound; the frontend caches it across requests for ttl_ms (what
 * is left of the storage helper's own cached answer) or until the key
 * expires (key_expires, wall-clock seconds, 0 never).  Empty when the
 * lookup failed, or for the admin key that named no user yet (admin
 * set: the frontend may ask again naming one).
 */
struct auth_result {
	int32_t		 status;
	int32_t		 admin;
	char		 handle[HANDLE_LEN];
	char		 user_name[128];	/* for replies and logs */
	char		 workspace_name[128];	/* for logs */
	char		 key_id[IDLEN];		/* IMSG_AUTH_DELEGATE's only:
						   the broker's share */
	int32_t		 ttl_ms;		/* 0: this request only */
	int64_t		 key_expires;
};

struct auth_release {
	char		 handle[HANDLE_LEN];
};

/*
 * Limits (storage_limits.c, fe_limits.c).  A frontend asks for a share
 * of a key's window (so many requests and tokens until so long from
 * now) and decides locally until it is spent or ends; the ask and the
 * return carry what the share that ends was spent on, and the storage
 * helper settles that into the key's windows.  The key is the
 * handle's: a frontend can name no other key's.
 */
struct limit_ask {
	char		 handle[HANDLE_LEN];
	int64_t		 want_tokens;	/* the request at hand's estimate */
	int64_t		 spent_requests; /* of the share that ends */
	int64_t		 spent_tokens;	/* corrections included */
};

enum limit_status {
	LIMIT_OK,		/* a share */
	LIMIT_NONE,		/* the key has no limits: ask again later */
	LIMIT_RATE,		/* a per-minute rate is spent */
	LIMIT_BUDGET,		/* a day's or month's budget is spent */
	LIMIT_UNAVAILABLE,	/* the database is down */
};

#define LIMIT_MESSAGE_MAX	160

struct limit_grant {
	int32_t		 status;	/* enum limit_status */
	int32_t		 retry_after;	/* seconds, when refused */
	int64_t		 requests;	/* the share */
	int64_t		 tokens;	/* -1: no token limit */
	int64_t		 lease_ms;	/* the share ends this long from now */
	int32_t		 concurrency;	/* this frontend's slots, 0 none */
	/* For the x-ratelimit-* headers: the minute window. */
	int64_t		 limit_requests;	/* 0: none */
	int64_t		 limit_tokens;
	int64_t		 left_requests;	/* beyond this share */
	int64_t		 left_tokens;
	int64_t		 reset_ms;	/* the window ends, from now */
	char		 message[LIMIT_MESSAGE_MAX];	/* refused: why */
};

/* One model request's usage; the owner comes from the handle. */
#define USAGE_BATCH		64
#define USAGE_NAME_MAX		128

struct usage_rec {
	char		 handle[HANDLE_LEN];
	char		 model[USAGE_NAME_MAX];
	char		 replica[USAGE_NAME_MAX * 2];
	int64_t		 tokens_in;	/* -1 unknown */
	int64_t		 tokens_out;
	int32_t		 status;
	int64_t		 ttfb_us;	/* -1: no byte came */
	int64_t		 duration_us;
	int64_t		 time_us;	/* wall clock, since the epoch */
};

#define FILENAME_MAX_BYTES	1024
#define PURPOSE_MAX		128
#define MIME_MAX		256

enum file_source {
	SOURCE_UPLOAD,
	SOURCE_CODE_EXECUTION,
};

struct file_rec {
	char		 id[IDLEN];
	char		 filename[FILENAME_MAX_BYTES];
	char		 mime_type[MIME_MAX];
	char		 purpose[PURPOSE_MAX];
	int32_t		 source;
	int64_t		 bytes;
	int64_t		 created_us;	/* microseconds since the epoch */
	int64_t		 expires_us;	/* 0: never */
	int64_t		 expires_after;	/* create: caller's seconds, 0 none */
};

/* The intent of an upload; the owner comes from the handle. */
struct file_create {
	char		 handle[HANDLE_LEN];
	struct file_rec	 rec;
};

struct file_key {
	char		 handle[HANDLE_LEN];
	char		 id[IDLEN];
};

/* Purpose and expiry travel with the commit: form fields may follow
 * the file part. */
struct file_commit {
	struct file_key	 key;
	int64_t		 bytes;
	char		 sha256[65];
	char		 purpose[PURPOSE_MAX];
	int64_t		 expires_after;	/* seconds, 0 = none asked */
};

struct file_open {
	struct file_key	 key;
	int64_t		 range_first;	/* -1: no Range */
	int64_t		 range_last;	/* -1: to the end */
	int32_t		 range_suffix;	/* bytes=-N */
};

struct file_opened {
	struct file_rec	 rec;
	int32_t		 status;	/* 200, 206 or 416 */
	int64_t		 size;		/* the blob's real size */
	int64_t		 offset;	/* first byte sent */
	int64_t		 length;	/* bytes sent */
	int32_t		 seekable;	/* fd is the whole blob */
};

enum list_order {
	ORDER_DESC,
	ORDER_ASC,
};

struct file_list_req {
	char		 handle[HANDLE_LEN];
	int32_t		 limit;
	int32_t		 order;
	char		 after_id[IDLEN];	/* "" when absent */
	char		 before_id[IDLEN];
	char		 purpose[PURPOSE_MAX];	/* "" = any */
	int32_t		 nids;			/* 0 = no filter */
	char		 ids[100][IDLEN];
};

struct file_list_end {
	int32_t		 count;
	int32_t		 has_more;
};

struct health_msg {
	int32_t		 db_up;
	int32_t		 store_up;
};

struct error_msg {
	int32_t		 status;	/* HTTP status to answer */
	char		 message[512];
};

/*
 * PDF to text.  The frontend bounds both the pages and the time; the
 * extract child bounds them again (EXTRACT_*_MAX) whatever it asks.
 */
#define EXTRACT_PAGES_MAX	10000
#define EXTRACT_TIMEOUT_MAX	600	/* seconds */

struct extract_req {
	int32_t		 pages;		/* -l: the last page read */
	int32_t		 timeout;	/* seconds, CPU and wall clock */
};

/* status 0: fd is the read end of pdftotext's output; -1: no fd. */
struct extract_res {
	int32_t		 status;
};

/*
 * proto.c: the channel tables.  What the sender may send the receiver;
 * NULL for a pair that has no channel.
 */
const struct imsg_channel *proto_channel(enum proc_role receiver,
		    enum proc_role sender);
extern const struct imsg_channel proto_ctl_request;	/* master <- depotctl */
extern const struct imsg_channel proto_ctl_reply;	/* depotctl <- master */

/* Code execution, frontend <-> broker. */
#define SBX_NAME_MAX	256
#define GRANT_LEN	40	/* "grt_" + 32 hex, and NUL */
#define SBX_DATA_MAX	(60 * 1024)	/* bytes per IMSG_SBX_DATA */
#define SBX_JSON_MAX	(4 * 1024 * 1024) /* the pieces of one JSON */

struct sbx_open {
	/* Storage handle the frontend had issued for the broker, for
	 * the run's output files; "" stores none. */
	char		 handle[HANDLE_LEN];
	/* The caller's API key (as the storage helper named it when it
	 * lent the handle): max-sessions-per-key counts by it. */
	char		 key_id[IDLEN];
	/* IMSG_CNTR_ATTACHED's nonce: run in that container; "" none. */
	char		 grant[GRANT_LEN];
};

struct sbx_seed {
	char		 name[SBX_NAME_MAX];	/* in the workspace */
	int64_t		 size;
};

/* The input ({"tool":..., "input":{...}, "tool_use_id":...}) came
 * before in IMSG_SBX_DATA pieces. */
struct sbx_exec {
	int32_t		 reserved;
};

/* 0 or the status the request should get (502 backend, 503 full). */
struct sbx_status {
	int32_t		 status;
	char		 message[256];
};

/*
 * Containers: a sandbox session kept across requests, one row each
 * (storage_container.c).  Owned like files: the handle says whose.
 */
#define CNTR_NAME_MAX		256
#define CNTR_SESSION_MAX	130

struct cntr_rec {
	char		 id[IDLEN];
	char		 name[CNTR_NAME_MAX];
	char		 state[16];		/* running, expired, deleted */
	char		 memory_limit[16];
	char		 session[CNTR_SESSION_MAX];	/* "" none yet */
	int64_t		 expires_minutes;	/* idle, after last active */
	int64_t		 created_us;
	int64_t		 last_active_us;
	int64_t		 expires_us;		/* when it lapses, idle */
};

struct cntr_create {
	char		 handle[HANDLE_LEN];
	char		 name[CNTR_NAME_MAX];
	char		 memory_limit[16];
	int64_t		 expires_minutes;	/* 0: the default */
};

struct cntr_key {
	char		 handle[HANDLE_LEN];
	char		 id[IDLEN];
};

struct cntr_list_req {
	char		 handle[HANDLE_LEN];
	int32_t		 limit;
	int32_t		 order;
	char		 after_id[IDLEN];	/* "" when absent */
};

struct cntr_destroy {
	char		 session[CNTR_SESSION_MAX];
};

/* The session is left out: it is the broker's alone to know. */
struct cntr_attached {
	struct cntr_rec	 rec;
	char		 grant[GRANT_LEN];
};

struct cntr_grant {
	char		 grant[GRANT_LEN];
	int32_t		 frontend;		/* the instance it is for */
	char		 id[IDLEN];
	char		 session[CNTR_SESSION_MAX];	/* "" none yet */
	int64_t		 idle_seconds;		/* for a session made now */
	int64_t		 life_seconds;
};

struct cntr_bound {
	char		 id[IDLEN];
	char		 session[CNTR_SESSION_MAX];
};

#endif
