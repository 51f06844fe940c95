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
 * config.h: depotd's configuration, as parse.y builds it.
 */
#ifndef DEPOT_CONFIG_H
#define DEPOT_CONFIG_H

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <stdint.h>
#include <stdio.h>

#include "http.h"
#include "proto.h"

struct store_conf;

#define DEPOTD_CONF		"/etc/depotd.conf"
#define DEPOTD_USER		"_depotd"
#define DEPOTD_STORAGE_USER	"_depotstore"
#define DEPOTD_CA_BUNDLE	"/etc/ssl/certs/ca-certificates.crt"
#define CONF_CA_MAX		(4 * 1024 * 1024)	/* bytes of PEM */
#define CONF_PORTS_MAX		64	/* distinct upstream ports */
#define CONF_REPLICAS_MAX	16	/* url lines of one upstream */
#define CONF_WEIGHT_MAX		100

struct listen_conf {
	TAILQ_ENTRY(listen_conf)	 entry;
	struct sockaddr_storage		 ss;
	socklen_t			 sslen;
	char				 host[256];	/* as written */
	uint16_t			 port;
};

/*
 * The two provider dialects: what a caller's request speaks (by its
 * headers) and what an upstream's api setting names.
 */
enum dialect {
	DIALECT_OPENAI,
	DIALECT_ANTHROPIC,
};

/* A second or later url line of an upstream: a replica (fe_pool.c). */
struct replica_conf {
	char				 url[1024];
	char				 resolve[1024];	/* as upstream's */
	int				 weight;
};

struct upstream_conf {
	TAILQ_ENTRY(upstream_conf)	 entry;
	char				 name[64];
	char				 url[1024];
	enum dialect			 api;
	char				*api_key;	/* secret, may be NULL */
	int				 timeout;	/* seconds, whole call */
	int				 connect_timeout; /* seconds */
	int				 idle_timeout;	/* seconds of silence */
	char				 ca_file[1024];	/* "" = system bundle */
	char				 anthropic_version[64];
	int				 native_responses; /* openai: has
							   /responses */
	int				 discover;	/* fe_discover.c */
	/*
	 * Filled in by the master at load and reload, for the frontend,
	 * which can resolve nothing: "host:port:addr[,addr...]" for
	 * CURLOPT_RESOLVE ("" when the host is a literal address).
	 */
	char				 resolve[1024];
	/*
	 * The frontend's copy of the CA bundle (ca_file or the system's),
	 * read from the descriptor of IMSG_CONF_CA: NULL for http://, or
	 * when it could not be read (an https call then fails: 502).
	 */
	char				*ca_pem;
	size_t				 ca_len;
	/*
	 * Replicas: url and resolve above are the first, with weight;
	 * more[] the url lines after it (conf_replica_*).
	 */
	int				 weight;	/* 1 unless set */
	struct replica_conf		*more;
	size_t				 nmore;
	int				 max_failover;	/* replicas more */
};

struct model_conf {
	TAILQ_ENTRY(model_conf)		 entry;
	char				 name[128];
	char				 upstream[64];
	char				 remote_name[128]; /* "" = name */
	int				 text_only;
	int				 pdf_as_text;	/* images native */
	int				 max_tokens;	/* conf_model_init */
	int				 max_tool_iterations; /* 0 = global */
	int				 native_code_execution;
	/* Set on a request's copy only: an image is a 400 (why below). */
	int				 refuse_images;
#define REFUSE_IMAGES_VISION	1	/* discovery: no vision */
#define REFUSE_IMAGES_COUNT	2	/* count_tokens cannot count it */
};

enum sandbox_mode {
	SANDBOX_NONE,
	SANDBOX_LOCAL,
	SANDBOX_URL,
};

struct depotd_conf {
	TAILQ_HEAD(, listen_conf)	 listens;
	int				 prefork;
	int				 frontend_timeout; /* s, no beat */
	char				 user[64];	/* frontends, broker */
	char				 storage_user[64];
	char				 chroot[1024];	/* "" = none */
	char				 control_socket[1024];

	char				*database;	/* conninfo; secret */
	int				 db_pool;

	char				 storage_url[1024];
	struct {
		char			 endpoint[1024];
		char			 region[64];
		char			*access_key;
		char			*secret_key;	/* secret */
		char			*session_token;	/* secret */
		int			 path_style;
		int64_t			 part_size;
		int			 max_transfers;
		char			 identity[1024];
		char			*passphrase;	/* secret */
		char			 known_hosts[1024];
		int			 keepalive;
	}				 storage;

	/* files { ... } */
	int64_t				 max_size;	/* bytes */
	int64_t				 retention;	/* seconds, 0 = none */
	int64_t				 sweep_interval; /* seconds, 0 = off */
	int				 max_filename;	/* bytes */
	int				 max_uploads_per_key;
	int64_t				 writing_grace;	/* seconds */
	int				 extract_pages;	/* PDF pages to text */
	int64_t				 extract_size;	/* bytes of text inlined */

	/* containers { ... } */
	int64_t				 cntr_expires_after; /* minutes idle */
	int64_t				 cntr_max_lifetime; /* seconds */
	int				 cntr_max_per_key;
	int				 cntr_max_per_workspace;

	struct http_limits		 http;		/* http { ... } */

	/* limits { ... }: every key's default, 0 = none (storage_limits.c) */
	struct limits_conf {
		int64_t			 requests_per_minute;
		int64_t			 tokens_per_minute;
		int64_t			 concurrency;	/* per host */
		int64_t			 tokens_per_day;	/* budgets */
		int64_t			 tokens_per_month;
	}				 limits;

	enum sandbox_mode		 sandbox;
	char				 sandbox_url[1024];
	char				*sandbox_token;	/* secret */
	char				 sandbox_dir[1024]; /* local: workspaces */
	char				 sandbox_ca_file[1024]; /* https: "" =
							   system bundle */
	int				 exec_timeout;	/* seconds */
	int				 max_output_files; /* per call */
	int64_t				 max_output_size;  /* per call */
	int				 max_sessions;
	int				 max_sessions_per_key; /* 0: half of
							   max_sessions */
	int				 transfer_timeout; /* PutFile, GetFile:
							   seconds */
	int				 max_tool_iterations;
	/* Bounds on one model request (issue 18). */
	int64_t				 max_answer_size; /* bytes, upstream's */
	int				 max_tool_calls;  /* per model turn */
	int				 request_timeout; /* seconds, whole */
	/*
	 * sandbox "https://...": its addresses and CA bundle, found by the
	 * master as an upstream's are, for the broker, which can read no
	 * file and resolve no name (url, resolve, ca_pem used; name "").
	 */
	struct upstream_conf		 sandbox_link;

	char				*admin_key;	/* secret */

	TAILQ_HEAD(upstream_head, upstream_conf) upstreams;
	TAILQ_HEAD(, model_conf)	 models;
};

/* Which secrets a role is sent (the roster's secrets column). */
#define CONF_SECRETS_NONE	0x00
#define CONF_SECRETS_STORAGE	0x01	/* database, store, the admin key */
#define CONF_SECRETS_FRONTEND	0x02	/* upstream keys */
#define CONF_SECRETS_BROKER	0x04	/* sandbox token */
#define CONF_SECRETS_ALL	0x07

/* Which parts of the configuration a role is sent (conf_msg.c). */
#define CONF_PART_STORE		0x01	/* storage URL, options, db pool */
#define CONF_PART_FILES		0x02	/* files { } */
#define CONF_PART_HTTP		0x04	/* http { } */
#define CONF_PART_MODELS	0x08	/* upstreams and models */
#define CONF_PART_SANDBOX	0x10	/* sandbox, max-tool-iterations;
					   its URL and directory only with
					   CONF_SECRETS_BROKER */

/* parse.y */
struct depotd_conf	*parse_config(const char *file, int verbose);
int			 cmdline_symset(const char *);
/* conf.c, conf_url.c */
struct depotd_conf	*conf_new(void);
/* An upstream's defaults, before its block is read. */
void			 conf_upstream_init(struct upstream_conf *);
void			 conf_model_init(struct model_conf *);
/* max-sessions-per-key as set, else half of max-sessions, at least 1. */
int			 conf_sessions_per_key(const struct depotd_conf *);
/* A model's max-tool-iterations as set, else the global one. */
int			 conf_tool_iterations(const struct depotd_conf *,
			    const struct model_conf *);
/*
 * The host (brackets removed from an IPv6 literal) and port of an
 * http:// or https:// URL, the port from the scheme when it has none.
 * 0, or -1 when the URL has no usable host or port.
 */
int			 conf_url_host_port(const char *url, char *host,
			    size_t hostlen, uint16_t *port);
/* An upstream's replicas: how many, and replica i's settings. */
size_t			 conf_replicas(const struct upstream_conf *);
const char		*conf_replica_url(const struct upstream_conf *, size_t);
const char		*conf_replica_resolve(const struct upstream_conf *,
			    size_t);
int			 conf_replica_weight(const struct upstream_conf *,
			    size_t);
/* Adds a url line: 0, or -1 when there are too many. */
int			 conf_replica_add(struct upstream_conf *, const char *url,
			    int weight);
size_t			 conf_sandbox_port(const struct depotd_conf *,
			    uint16_t *port);
/* The distinct ports of the upstreams' URLs, at most max: how many. */
size_t			 conf_upstream_ports(const struct depotd_conf *,
			    uint16_t *ports, size_t max);
/*
 * master_resolve.c: fills each upstream's resolve list (the frontends
 * resolve nothing).  A name that does not resolve is logged and left
 * empty: its model routes answer 502 until a reload resolves it.  A
 * CA bundle that cannot be read is logged too.
 */
void			 conf_resolve_upstreams(struct depotd_conf *);
/* Does a libpq conninfo (key=value or URI) carry a password? */
int			 conf_conninfo_has_password(const char *);
void			 conf_free(struct depotd_conf *);
void			 conf_store(const struct depotd_conf *,
			    struct store_conf *);
/* The settings that changed from a to b but apply only at restart. */
void			 conf_restart_changes(const struct depotd_conf *a,
			    const struct depotd_conf *b, char *, size_t);
/* conf_print.c: -nv, in the depotd.conf(5) grammar, secrets masked */
void			 conf_print(FILE *, const struct depotd_conf *);
/* conf_msg.c: the configuration as typed messages to one role */
struct imsgev;
struct imsg;
void			 conf_send(struct imsgev *, const struct depotd_conf *,
			    int parts, int secrets);
/* Applies one IMSG_CONF_* part to c; -1 when it is not one. */
int			 conf_recv(struct depotd_conf *c, struct imsg *);

#endif
