/*
 * depotd.h: the processes of depotd and the messages between them.
 */
#ifndef DEPOTD_H
#define DEPOTD_H

#include <sys/types.h>
#include <stdint.h>

#include <event2/event.h>

#include "imsg.h"
#include "config.h"

enum proc_role {
	ROLE_MASTER,
	ROLE_FRONTEND,
	ROLE_STORAGE,
	ROLE_BROKER,
	ROLE_SANDBOXD,		/* sandbox local: no channel, only a pid */
	ROLE_MAX,
};

#define PARENT_SOCK_FILENO	3	/* a child's channel to the master */
#define FRONTEND_MAX		64
#define IDLEN			40	/* "file-" + 32 hex, and NUL */
#define CONF_CHUNK		(IMSG_MAXSIZE - IMSG_HDRSIZE - 64)

enum imsg_type {
	IMSG_NONE,

	/* master -> child, set-up and reload */
	IMSG_CONF_CHUNK,		/* JSON text */
	IMSG_CONF_END,			/* apply what was sent */
	IMSG_LISTEN_FD,			/* fd: a listening socket */
	IMSG_PEER_FD,			/* struct peer_msg, fd: a channel */
	IMSG_START,			/* set-up complete: drop privileges */
	IMSG_LOG_VERBOSE,		/* int */

	/* child -> master */
	IMSG_READY,			/* struct ready_msg */

	/* control, relayed by the master (peerid: control client) */
	IMSG_CTL_CMD,			/* struct ctl_cmd */
	IMSG_CTL_LINE,			/* text: one line of output */
	IMSG_CTL_END,			/* int: exit status */

	/*
	 * frontend <-> storage (peerid: request number).  Every file
	 * message names the auth handle the storage helper issued on the
	 * same channel; the owner is never the sender's to say.
	 */
	IMSG_AUTH_LOOKUP,		/* struct auth_lookup */
	IMSG_AUTH_RESULT,		/* struct auth_result */
	IMSG_AUTH_RELEASE,		/* struct auth_release: request over */
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
};

struct peer_msg {
	int32_t		 role;
	int32_t		 instance;
};

struct ready_msg {
	int32_t		 role;
	int32_t		 instance;
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
};

#define CTL_ARGS	4
#define CTL_ARGLEN	256

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
 * IMSG_AUTH_RELEASE, the channel's end or an idle bound.  Empty when
 * the lookup failed, or for the admin key that named no user yet
 * (admin set: the frontend may ask again naming one).
 */
struct auth_result {
	int32_t		 status;
	int32_t		 admin;
	char		 handle[HANDLE_LEN];
	char		 user_name[128];	/* for replies and logs */
};

struct auth_release {
	char		 handle[HANDLE_LEN];
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

/* Process titles and roles. */
const char	*role_name(enum proc_role);

/* depotd.c: the master */
/* frontend.c */
void		 frontend_main(int instance, int debug, int verbose)
		    __attribute__((noreturn));
/* storage.c */
void		 storage_main(int debug, int verbose)
		    __attribute__((noreturn));
#define STATUS_DB_DOWN	503
/* broker.c */
void		 broker_main(int debug, int verbose)
		    __attribute__((noreturn));

#endif
