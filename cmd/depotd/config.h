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

#include "store.h"

#define DEPOTD_CONF		"/etc/depotd.conf"
#define DEPOTD_SOCKET		"/run/depotd.sock"
#define DEPOTD_USER		"_depotd"
#define DEPOTD_STORAGE_USER	"_depotstore"

struct listen_conf {
	TAILQ_ENTRY(listen_conf)	 entry;
	struct sockaddr_storage		 ss;
	socklen_t			 sslen;
	char				 host[256];	/* as written */
	uint16_t			 port;
};

enum api_kind {
	API_OPENAI,
	API_ANTHROPIC,
};

struct upstream_conf {
	TAILQ_ENTRY(upstream_conf)	 entry;
	char				 name[64];
	char				 url[1024];
	enum api_kind			 api;
	char				*api_key;	/* secret, may be NULL */
	int				 timeout;	/* seconds */
};

struct model_conf {
	TAILQ_ENTRY(model_conf)		 entry;
	char				 name[128];
	char				 upstream[64];
	char				 remote_name[128]; /* "" = name */
	int				 text_only;
	int				 native_code_execution;
};

enum sandbox_mode {
	SANDBOX_NONE,
	SANDBOX_LOCAL,
	SANDBOX_URL,
};

struct depotd_conf {
	TAILQ_HEAD(, listen_conf)	 listens;
	int				 prefork;
	char				 user[64];
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

	/* http { ... } */
	int				 max_header_size;
	int				 max_headers;
	int				 header_timeout;
	int				 idle_timeout;
	int				 max_connections;

	enum sandbox_mode		 sandbox;
	char				 sandbox_url[1024];
	char				*sandbox_token;	/* secret */
	char				 sandbox_dir[1024]; /* local: workspaces */
	int				 max_tool_iterations;

	char				*admin_key;	/* secret */

	TAILQ_HEAD(, upstream_conf)	 upstreams;
	TAILQ_HEAD(, model_conf)	 models;
};

/* What a role may see of the configuration (conf_to_json). */
#define CONF_SECRETS_NONE	0x00
#define CONF_SECRETS_STORAGE	0x01	/* database, storage credentials */
#define CONF_SECRETS_FRONTEND	0x02	/* admin key, upstream keys */
#define CONF_SECRETS_BROKER	0x04	/* sandbox token */
#define CONF_SECRETS_ALL	0x07

/* parse.y */
struct depotd_conf	*parse_config(const char *file, int verbose);
int			 cmdline_symset(const char *);
/* conf.c */
struct depotd_conf	*conf_new(void);
/* Does a libpq conninfo (key=value or URI) carry a password? */
int			 conf_conninfo_has_password(const char *);
void			 conf_free(struct depotd_conf *);
void			 conf_print(FILE *, const struct depotd_conf *);
/* Serialises for a child; secrets outside mask are left out. */
char			*conf_to_json(const struct depotd_conf *, int mask);
struct depotd_conf	*conf_from_json(const char *);
void			 conf_store(const struct depotd_conf *,
			    struct store_conf *);

#endif
