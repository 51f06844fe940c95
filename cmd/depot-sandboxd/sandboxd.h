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
 * sandboxd.h: depot-sandboxd, a code-execution backend speaking
 * protocol version 1 (SPEC.md section 7), one bubblewrap jail per
 * session.
 *
 *	depot-sandboxd.c	options, listening socket, privilege drop
 *	service_route.c		authentication, routing (service.h)
 *	service_session.c	CreateSession, Execute, DestroySession
 *	service_files.c		ListFiles, GetFile, PutFile
 *	service.c		replies and request helpers of the routes
 *	session.c		sessions, the spare jail, the reaper
 *	session_exec.c		a session's calls, their output, the pause
 *	runner.c		a session's jailed interpreter process
 *	jail.c			the bubblewrap command line and rlimits
 *	seccomp.c		the jails' system-call filter
 *	cgroup.c		per-session memory, process and CPU limits
 *	workspace.c		path confinement, listings, removal
 *	walker.c		workspace walks in threads, off the loop
 */
#ifndef DEPOT_SANDBOXD_H
#define DEPOT_SANDBOXD_H

#include <sys/types.h>
#include <sys/queue.h>
#include <stdint.h>
#include <time.h>

#include <event2/event.h>
#include <json-c/json.h>

#define SBX_SESSION_ID_PREFIX	"sess_"
#define SBX_MAX_CODE_CHARS	200000
#define SBX_OUTPUT_CAP		(1 << 20)
#define SBX_EXEC_TIMEOUT_MAX	120
#define SBX_JAIL_WORKSPACE	"/workspace"

struct sbx_limits {
	int		 max_sessions;
	int		 idle_default;		/* s */
	int		 idle_max;
	int		 life_default;
	int		 life_max;
	int		 exec_timeout;		/* default per Execute, s */
	int64_t		 max_put;		/* PutFile cap, bytes */
	int64_t		 rlim_as;		/* bytes */
	int64_t		 rlim_cpu;		/* s, per process */
	int64_t		 rlim_fsize;		/* bytes */
	int64_t		 rlim_nofile;
	int64_t		 rlim_nproc;		/* pids.max of a session */
	int64_t		 tmp_size;		/* the jail's /tmp, bytes */
	int64_t		 session_memory;	/* cgroup, bytes */
	int		 session_cpu;		/* cgroup, % of one CPU */
	int64_t		 total_memory;		/* cgroup, all jails */
	int64_t		 ws_bytes;		/* workspace quota */
	int64_t		 ws_entries;
};

struct sbx_config {
	struct sbx_limits limits;
	const char	*runner;	/* path of runner.py */
	const char	*python;	/* the jail's interpreter */
	char		 workdir[1024];	/* sessions/ and uploads/ */
	int		 sessions_fd;	/* workdir/sessions */
	int		 uploads_fd;	/* workdir/uploads */
	char		*token;		/* NULL: no authentication */
};

extern struct sbx_config *sbx_conf;

/* jail.c */
/*
 * The runner's fds: 0-2 are /dev/null outside calls and the capture
 * pipes during them, so the protocol channel is never what user code
 * writes to by printing.
 */
#define JAIL_FD_CHANNEL		3
#define JAIL_FD_CHANNEL_S	"3"
#define JAIL_FD_SECCOMP		4	/* read by bwrap, not passed on */
#define JAIL_FD_SECCOMP_S	"4"
#define JAIL_FD_INFO		5	/* bwrap writes the jail's pid here */
#define JAIL_FD_INFO_S		"5"
/* The argv (NULL-terminated, static storage) to run the runner jailed. */
char	**jail_argv(const char *workspace_path);
/* In the child, before exec: the per-session rlimits.  0 or -1. */
int	 jail_rlimits(const struct sbx_limits *);

/* cgroup.c */
struct privuser;
/* As root (pu: the user to hand the groups to) or not (pu NULL). */
int	 cgroup_init(const struct privuser *pu);
/* At exit: what cgroup_init made for the daemon itself goes. */
void	 cgroup_fini(void);
int	 cgroup_enabled(void);
int	 cgroup_session_create(const char *id);
/* In the runner's child before exec: join the session's groups. */
int	 cgroup_session_enter(const char *id);
void	 cgroup_session_remove(const char *id);
void	 cgroup_session_kill(const char *id);
/* A cgroup freezer: v2, or v1's freezer hierarchy. */
int	 cgroup_can_freeze(void);
/* 1 freezes, 0 thaws: 0 or -1.  Frozen: 1, 0 (not yet) or -1. */
int	 cgroup_session_freeze(const char *id, int freeze);
int	 cgroup_session_frozen(const char *id);

/* seccomp.c */
void	 jail_seccomp_init(void);
/* A fresh memfd holding the compiled filter, or -1. */
int	 jail_seccomp_fd(void);

/* workspace.c */
struct ws_entry {
	char		*path;		/* relative to the workspace root */
	int64_t		 size;
	struct timespec	 mtime;
};
struct ws_listing {
	struct ws_entry	*entries;	/* regular files only */
	size_t		 n;
	size_t		 cap;
	int		 truncated;
	int64_t		 nentries;	/* every entry walked, any type */
	int64_t		 bytes;		/* allocated, st_blocks */
	int		 cut;		/* the walk hit its entry or time bound */
};
#define WS_LIST_MAX	10000
#define WS_DEPTH_MAX	32

/*
 * Normalises a client path: "", "." and "/workspace" name the root,
 * "/workspace/x" is taken as "x"; other absolute paths and any ".."
 * component that would leave the root are refused.  Returns 0 or -1.
 */
int	 ws_clean_path(const char *in, char *out, size_t outlen);
/* openat2 beneath dirfd, no magic links.  -1 with errno (EXDEV: escape). */
int	 ws_open(int rootfd, const char *rel, int flags, mode_t mode);
/* mkdir -p of the parents of rel, beneath rootfd; returns the parent fd. */
int	 ws_open_parent(int rootfd, const char *rel, const char **leaf);
int	 ws_list(int rootfd, const char *sub, struct ws_listing *);
/*
 * ws_list of the root within a millisecond, for the event loop: 0 or
 * -1 as ws_list, 1 when the workspace takes longer (l is then empty).
 */
int	 ws_list_quick(int rootfd, struct ws_listing *);
void	 ws_listing_free(struct ws_listing *);
/* Over the workspace quota, or too big to walk within the bounds. */
int	 ws_over_quota(const struct ws_listing *);
/* Paths new or changed in after compared with before, as a json array. */
struct json_object *ws_produced(const struct ws_listing *before,
	    const struct ws_listing *after);
/* rm -rf of name beneath dirfd without following symlinks. */
int	 ws_remove_tree(int dirfd, const char *name);
const char *ws_mime_type(const char *path);

/* walker.c */
struct ws_walker;
/*
 * Called on the loop with the listing (the callee's to keep and free)
 * or NULL when the walk failed.
 */
typedef void (*ws_walker_cb)(struct ws_listing *, void *);
/* ws_list(rootfd, ".") in a thread; cb is called later, on base's loop. */
struct ws_walker *ws_walker_start(struct event_base *, int rootfd,
	    ws_walker_cb cb, void *arg);
/* cb will not be called; the walk is freed when its thread ends. */
void	 ws_walker_cancel(struct ws_walker *);

/* session.c */
struct session;
void	 session_init(struct event_base *);
int	 session_count(void);
struct session *session_create(int idle, int life, const char **why);
struct session *session_find(const char *id);
void	 session_destroy(struct session *, const char *why);
void	 session_destroy_all(void);
/* Destroyed sessions whose jail processes are not all gone yet. */
int	 session_burials(void);
void	 session_touch(struct session *);
const char *session_id(const struct session *);
int	 session_rootfd(const struct session *);
struct json_object *session_describe(const struct session *);
/* A protocol v1 time: seconds since the epoch with a fraction. */
struct json_object *json_time(int64_t usec);

/* session_exec.c */
struct exec_result {
	int		 status;	/* 200, or an HTTP error */
	const char	*error;		/* message when status != 200 */
	struct json_object *reply;	/* stdout, stderr, return_code */
	struct json_object *produced;	/* the files array */
	int64_t		 elapsed_ms;
};
typedef void (*exec_done_cb)(const struct exec_result *, void *);
/*
 * Runs one tool call; done is called exactly once, possibly later.
 * Returns a handle for session_exec_cancel (the client went away).
 */
void	*session_exec(struct session *, struct json_object *request,
	    int timeout, exec_done_cb done, void *arg);
void	 session_exec_cancel(void *handle);

/* service_route.c */
struct http_handler;
void	 service_route_handler(struct http_handler *);

#endif
