/*
 * conf.c: the configuration object: defaults, units, printing in the
 * depotd.conf(5) grammar, and the JSON form the master hands to each
 * child with only the secrets that child may hold.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netdb.h>

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "config.h"

#define SECRET_PLACEHOLDER	"********"

struct unit {
	char		 suffix;
	int64_t		 factor;
};

/*
 * Largest first: printing picks the largest exact unit.  Parsing is
 * parse_size() and parse_duration() in lib/util.c, which read these.
 */
static const struct unit size_units[] = {
	{ 'T', 1024LL * 1024 * 1024 * 1024 },
	{ 'G', 1024LL * 1024 * 1024 },
	{ 'M', 1024LL * 1024 },
	{ 'K', 1024LL },
};

static const struct unit duration_units[] = {
	{ 'w', 7LL * 86400 },
	{ 'd', 86400 },
	{ 'h', 3600 },
	{ 'm', 60 },
	{ 's', 1 },
};

struct depotd_conf *
conf_new(void)
{
	struct depotd_conf	*c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	TAILQ_INIT(&c->listens);
	TAILQ_INIT(&c->upstreams);
	TAILQ_INIT(&c->models);
	c->prefork = 2;
	strlcpy(c->user, DEPOTD_USER, sizeof(c->user));
	strlcpy(c->control_socket, DEPOTD_SOCKET, sizeof(c->control_socket));
	c->db_pool = 4;
	strlcpy(c->storage.region, "us-east-1", sizeof(c->storage.region));
	c->storage.part_size = 16LL * 1024 * 1024;
	c->storage.max_transfers = 8;
	c->storage.keepalive = 30;
	c->max_size = 512LL * 1024 * 1024;
	c->retention = 0;
	c->sweep_interval = 3600;
	c->max_filename = 255;
	c->max_uploads_per_key = 8;
	c->writing_grace = 86400;
	c->max_header_size = 16 * 1024;
	c->max_headers = 100;
	c->header_timeout = 10;
	c->idle_timeout = 60;
	c->max_connections = 1024;
	c->sandbox = SANDBOX_NONE;
	c->max_tool_iterations = 8;
	return c;
}

static void
wipe(char **s)
{
	if (*s != NULL)
		freezero(*s, strlen(*s));
	*s = NULL;
}

void
conf_free(struct depotd_conf *c)
{
	struct listen_conf	*l;
	struct upstream_conf	*u;
	struct model_conf	*m;

	if (c == NULL)
		return;
	while ((l = TAILQ_FIRST(&c->listens)) != NULL) {
		TAILQ_REMOVE(&c->listens, l, entry);
		free(l);
	}
	while ((u = TAILQ_FIRST(&c->upstreams)) != NULL) {
		TAILQ_REMOVE(&c->upstreams, u, entry);
		wipe(&u->api_key);
		free(u);
	}
	while ((m = TAILQ_FIRST(&c->models)) != NULL) {
		TAILQ_REMOVE(&c->models, m, entry);
		free(m);
	}
	wipe(&c->database);
	wipe(&c->storage.access_key);
	wipe(&c->storage.secret_key);
	wipe(&c->storage.session_token);
	wipe(&c->storage.passphrase);
	wipe(&c->sandbox_token);
	wipe(&c->admin_key);
	freezero(c, sizeof(*c));
}

static void
print_units(FILE *fp, int64_t v, const struct unit *units, size_t nunits,
    int bare_ones)
{
	size_t	 i;

	for (i = 0; v != 0 && i < nunits; i++) {
		if (units[i].factor == 1 && bare_ones)
			break;
		if (v % units[i].factor == 0) {
			fprintf(fp, "%" PRId64 "%c", v / units[i].factor,
			    units[i].suffix);
			return;
		}
	}
	fprintf(fp, "%" PRId64, v);
}

static void
print_size(FILE *fp, int64_t v)
{
	print_units(fp, v, size_units,
	    sizeof(size_units) / sizeof(size_units[0]), 1);
}

static void
print_duration(FILE *fp, int64_t v)
{
	print_units(fp, v, duration_units,
	    sizeof(duration_units) / sizeof(duration_units[0]), 0);
}

static void
print_quoted(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', fp);
		fputc(*s, fp);
	}
	fputc('"', fp);
}

/*
 * Walks a conninfo and calls found() for each password value as the
 * span [start, end).  Handles "key = 'quoted value'" lists and
 * postgres:// URIs (user:password@ and ?password=).  Returns the number
 * of passwords seen.
 */
static int
conninfo_passwords(const char *s, void (*found)(void *, size_t, size_t),
    void *arg)
{
	const char	*p, *key, *at, *slash, *colon, *q;
	size_t		 keylen;
	int		 n = 0;

	if (strncmp(s, "postgresql://", 13) == 0 ||
	    strncmp(s, "postgres://", 11) == 0) {
		p = strstr(s, "://") + 3;
		slash = p + strcspn(p, "/?");
		at = memchr(p, '@', slash - p);
		if (at != NULL && (colon = memchr(p, ':', at - p)) != NULL) {
			if (found != NULL)
				found(arg, colon + 1 - s, at - s);
			n++;
		}
		if ((q = strchr(slash, '?')) == NULL)
			return n;
		for (p = q + 1; *p != '\0'; p += *p == '&') {
			key = p;
			p += strcspn(p, "&");
			if (strncmp(key, "password=", 9) == 0) {
				if (found != NULL)
					found(arg, key + 9 - s, p - s);
				n++;
			}
		}
		return n;
	}
	for (p = s;;) {
		while (isspace((unsigned char)*p))
			p++;
		if (*p == '\0')
			return n;
		key = p;
		while (*p != '\0' && *p != '=' && !isspace((unsigned char)*p))
			p++;
		keylen = p - key;
		while (isspace((unsigned char)*p))
			p++;
		if (*p != '=')
			return n;	/* libpq will refuse it anyway */
		p++;
		while (isspace((unsigned char)*p))
			p++;
		q = p;
		if (*p == '\'') {
			for (p++; *p != '\0' && *p != '\''; p++)
				if (*p == '\\' && p[1] != '\0')
					p++;
			if (*p == '\'')
				p++;
		} else {
			while (*p != '\0' && !isspace((unsigned char)*p))
				p++;
		}
		if (keylen == 8 && strncmp(key, "password", 8) == 0) {
			if (found != NULL)
				found(arg, q - s, p - s);
			n++;
		}
	}
}

int
conf_conninfo_has_password(const char *conninfo)
{
	return conninfo_passwords(conninfo, NULL, NULL) > 0;
}

struct mask_state {
	const char	*src;
	size_t		 copied;
	FILE		*out;
};

static void
mask_span(void *arg, size_t start, size_t end)
{
	struct mask_state	*ms = arg;

	fwrite(ms->src + ms->copied, 1, start - ms->copied, ms->out);
	fputs(SECRET_PLACEHOLDER, ms->out);
	ms->copied = end;
}

/* The conninfo with each password replaced by the placeholder. */
static char *
conninfo_masked(const char *conninfo)
{
	struct mask_state	 ms;
	char			*buf = NULL;
	size_t			 len = 0;

	if ((ms.out = open_memstream(&buf, &len)) == NULL)
		return NULL;
	ms.src = conninfo;
	ms.copied = 0;
	conninfo_passwords(conninfo, mask_span, &ms);
	fputs(conninfo + ms.copied, ms.out);
	if (fclose(ms.out) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void
print_listens(FILE *fp, const struct depotd_conf *c)
{
	const struct listen_conf	*l;

	TAILQ_FOREACH(l, &c->listens, entry)
		fprintf(fp, "listen on %s port %u\n", l->host, l->port);
}

static void
print_database(FILE *fp, const struct depotd_conf *c)
{
	char	*masked;

	if (c->database == NULL)
		return;
	fputs("database ", fp);
	if ((masked = conninfo_masked(c->database)) != NULL) {
		print_quoted(fp, masked);
		free(masked);
	} else
		print_quoted(fp, SECRET_PLACEHOLDER);
	fprintf(fp, " pool %d\n", c->db_pool);
}

static void
print_secret(FILE *fp, const char *keyword, const char *secret)
{
	if (secret != NULL)
		fprintf(fp, "\t%s \"%s\"\n", keyword, SECRET_PLACEHOLDER);
}

static void
print_storage(FILE *fp, const struct depotd_conf *c)
{
	if (c->storage_url[0] == '\0')
		return;
	fputs("storage ", fp);
	print_quoted(fp, c->storage_url);
	if (strncmp(c->storage_url, "s3://", 5) == 0) {
		fputs(" {\n", fp);
		if (c->storage.endpoint[0] != '\0') {
			fputs("\tendpoint ", fp);
			print_quoted(fp, c->storage.endpoint);
			fputc('\n', fp);
		}
		fputs("\tregion ", fp);
		print_quoted(fp, c->storage.region);
		fputc('\n', fp);
		if (c->storage.access_key != NULL) {
			fputs("\taccess-key ", fp);
			print_quoted(fp, c->storage.access_key);
			fputc('\n', fp);
		}
		print_secret(fp, "secret-key", c->storage.secret_key);
		print_secret(fp, "session-token", c->storage.session_token);
		if (c->storage.path_style)
			fputs("\tpath-style\n", fp);
		fputs("\tpart-size ", fp);
		print_size(fp, c->storage.part_size);
		fprintf(fp, "\n\tmax-transfers %d\n}\n",
		    c->storage.max_transfers);
	} else if (strncmp(c->storage_url, "sftp://", 7) == 0) {
		fputs(" {\n\tidentity ", fp);
		print_quoted(fp, c->storage.identity);
		fputc('\n', fp);
		print_secret(fp, "passphrase", c->storage.passphrase);
		fputs("\tknown-hosts ", fp);
		print_quoted(fp, c->storage.known_hosts);
		fputs("\n\tkeepalive ", fp);
		print_duration(fp, c->storage.keepalive);
		fputs("\n}\n", fp);
	} else
		fputc('\n', fp);
}

static void
print_files_http(FILE *fp, const struct depotd_conf *c)
{
	fputs("files {\n\tmax-size ", fp);
	print_size(fp, c->max_size);
	fputs("\n\tretention ", fp);
	print_duration(fp, c->retention);
	fputs("\n\tsweep-interval ", fp);
	print_duration(fp, c->sweep_interval);
	fprintf(fp, "\n\tmax-filename %d\n\tmax-uploads-per-key %d\n",
	    c->max_filename, c->max_uploads_per_key);
	fputs("\twriting-grace ", fp);
	print_duration(fp, c->writing_grace);
	fputs("\n}\n", fp);

	fputs("http {\n\tmax-header-size ", fp);
	print_size(fp, c->max_header_size);
	fprintf(fp, "\n\tmax-headers %d\n\theader-timeout ", c->max_headers);
	print_duration(fp, c->header_timeout);
	fputs("\n\tidle-timeout ", fp);
	print_duration(fp, c->idle_timeout);
	fprintf(fp, "\n\tmax-connections %d\n}\n", c->max_connections);
}

static void
print_sandbox(FILE *fp, const struct depotd_conf *c)
{
	switch (c->sandbox) {
	case SANDBOX_NONE:
		fputs("no sandbox\n", fp);
		break;
	case SANDBOX_LOCAL:
		fputs("sandbox local", fp);
		if (c->sandbox_dir[0] != '\0')
			fprintf(fp, " { directory \"%s\" }", c->sandbox_dir);
		fputc('\n', fp);
		break;
	case SANDBOX_URL:
		fputs("sandbox ", fp);
		print_quoted(fp, c->sandbox_url);
		if (c->sandbox_token != NULL)
			fprintf(fp, " {\n\ttoken \"%s\"\n}",
			    SECRET_PLACEHOLDER);
		fputc('\n', fp);
		break;
	}
	fprintf(fp, "max-tool-iterations %d\n", c->max_tool_iterations);
}

static void
print_upstreams_models(FILE *fp, const struct depotd_conf *c)
{
	const struct upstream_conf	*u;
	const struct model_conf		*m;

	TAILQ_FOREACH(u, &c->upstreams, entry) {
		fputs("upstream ", fp);
		print_quoted(fp, u->name);
		fputs(" {\n\turl ", fp);
		print_quoted(fp, u->url);
		fprintf(fp, "\n\tapi %s\n",
		    u->api == API_ANTHROPIC ? "anthropic" : "openai");
		print_secret(fp, "api-key", u->api_key);
		fputs("\ttimeout ", fp);
		print_duration(fp, u->timeout);
		fputs("\n}\n", fp);
	}
	TAILQ_FOREACH(m, &c->models, entry) {
		fputs("model ", fp);
		print_quoted(fp, m->name);
		fputs(" upstream ", fp);
		print_quoted(fp, m->upstream);
		if (m->remote_name[0] == '\0' && !m->text_only &&
		    !m->native_code_execution) {
			fputc('\n', fp);
			continue;
		}
		fputs(" {\n", fp);
		if (m->remote_name[0] != '\0') {
			fputs("\tremote-name ", fp);
			print_quoted(fp, m->remote_name);
			fputc('\n', fp);
		}
		if (m->text_only)
			fputs("\ttext-only\n", fp);
		if (m->native_code_execution)
			fputs("\tnative-code-execution\n", fp);
		fputs("}\n", fp);
	}
}

void
conf_print(FILE *fp, const struct depotd_conf *c)
{
	print_listens(fp, c);
	fprintf(fp, "prefork %d\nuser ", c->prefork);
	print_quoted(fp, c->user);
	if (c->chroot[0] != '\0') {
		fputs("\nchroot ", fp);
		print_quoted(fp, c->chroot);
	}
	fputs("\ncontrol socket ", fp);
	print_quoted(fp, c->control_socket);
	fputc('\n', fp);
	print_database(fp, c);
	print_storage(fp, c);
	print_files_http(fp, c);
	print_sandbox(fp, c);
	if (c->admin_key != NULL)
		fprintf(fp, "admin-key \"%s\"\n", SECRET_PLACEHOLDER);
	print_upstreams_models(fp, c);
}

void
conf_store(const struct depotd_conf *c, struct store_conf *sc)
{
	memset(sc, 0, sizeof(*sc));
	sc->url = c->storage_url;
	sc->endpoint = c->storage.endpoint;
	sc->region = c->storage.region;
	sc->access_key = c->storage.access_key;
	sc->secret_key = c->storage.secret_key;
	sc->session_token = c->storage.session_token;
	sc->path_style = c->storage.path_style;
	sc->part_size = c->storage.part_size;
	sc->max_transfers = c->storage.max_transfers;
	sc->identity = c->storage.identity;
	sc->passphrase = c->storage.passphrase;
	sc->known_hosts = c->storage.known_hosts;
	sc->keepalive = c->storage.keepalive;
}

/* JSON ---------------------------------------------------------------- */

/*
 * json-c keeps its own copies of the strings, secrets among them: wipe
 * every string in the tree before it is freed.
 */
static void
json_wipe(json_object *o)
{
	size_t	 i;

	switch (json_object_get_type(o)) {
	case json_type_string:
		explicit_bzero((char *)json_object_get_string(o),
		    json_object_get_string_len(o));
		break;
	case json_type_array:
		for (i = 0; i < json_object_array_length(o); i++)
			json_wipe(json_object_array_get_idx(o, i));
		break;
	case json_type_object: {
		json_object_object_foreach(o, key, value) {
			(void)key;
			json_wipe(value);
		}
		break;
	}
	default:
		break;
	}
}

static void
json_str(json_object *o, const char *key, const char *value)
{
	if (value != NULL)
		json_object_object_add(o, key, json_object_new_string(value));
}

static void
json_int(json_object *o, const char *key, int64_t value)
{
	json_object_object_add(o, key, json_object_new_int64(value));
}

static json_object *
json_listens(const struct depotd_conf *c)
{
	const struct listen_conf	*l;
	json_object			*a, *o;
	char				 addr[NI_MAXHOST];

	a = json_object_new_array();
	TAILQ_FOREACH(l, &c->listens, entry) {
		if (getnameinfo((const struct sockaddr *)&l->ss, l->sslen,
		    addr, sizeof(addr), NULL, 0, NI_NUMERICHOST) != 0)
			continue;
		o = json_object_new_object();
		json_str(o, "host", l->host);
		json_str(o, "addr", addr);
		json_int(o, "port", l->port);
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *
json_storage(const struct depotd_conf *c, int mask)
{
	json_object	*o = json_object_new_object();

	json_str(o, "url", c->storage_url);
	json_str(o, "endpoint", c->storage.endpoint);
	json_str(o, "region", c->storage.region);
	if (mask & CONF_SECRETS_STORAGE) {
		json_str(o, "access_key", c->storage.access_key);
		json_str(o, "secret_key", c->storage.secret_key);
		json_str(o, "session_token", c->storage.session_token);
		json_str(o, "passphrase", c->storage.passphrase);
	}
	json_int(o, "path_style", c->storage.path_style);
	json_int(o, "part_size", c->storage.part_size);
	json_int(o, "max_transfers", c->storage.max_transfers);
	json_str(o, "identity", c->storage.identity);
	json_str(o, "known_hosts", c->storage.known_hosts);
	json_int(o, "keepalive", c->storage.keepalive);
	return o;
}

static json_object *
json_upstreams(const struct depotd_conf *c, int mask)
{
	const struct upstream_conf	*u;
	json_object			*a, *o;

	a = json_object_new_array();
	TAILQ_FOREACH(u, &c->upstreams, entry) {
		o = json_object_new_object();
		json_str(o, "name", u->name);
		json_str(o, "url", u->url);
		json_str(o, "api", u->api == API_ANTHROPIC ? "anthropic" :
		    "openai");
		if (mask & CONF_SECRETS_FRONTEND)
			json_str(o, "api_key", u->api_key);
		json_int(o, "timeout", u->timeout);
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *
json_models(const struct depotd_conf *c)
{
	const struct model_conf	*m;
	json_object		*a, *o;

	a = json_object_new_array();
	TAILQ_FOREACH(m, &c->models, entry) {
		o = json_object_new_object();
		json_str(o, "name", m->name);
		json_str(o, "upstream", m->upstream);
		json_str(o, "remote_name", m->remote_name);
		json_int(o, "text_only", m->text_only);
		json_int(o, "native_code_execution",
		    m->native_code_execution);
		json_object_array_add(a, o);
	}
	return a;
}

static const char *
sandbox_mode_name(enum sandbox_mode mode)
{
	return mode == SANDBOX_LOCAL ? "local" :
	    mode == SANDBOX_URL ? "url" : "none";
}

char *
conf_to_json(const struct depotd_conf *c, int mask)
{
	json_object	*o;
	const char	*text;
	char		*result;

	o = json_object_new_object();
	json_object_object_add(o, "listen", json_listens(c));
	json_int(o, "prefork", c->prefork);
	json_str(o, "user", c->user);
	json_str(o, "chroot", c->chroot);
	json_str(o, "control_socket", c->control_socket);
	if (mask & CONF_SECRETS_STORAGE)
		json_str(o, "database", c->database);
	json_int(o, "db_pool", c->db_pool);
	json_object_object_add(o, "storage", json_storage(c, mask));
	json_int(o, "max_size", c->max_size);
	json_int(o, "retention", c->retention);
	json_int(o, "sweep_interval", c->sweep_interval);
	json_int(o, "max_filename", c->max_filename);
	json_int(o, "max_uploads_per_key", c->max_uploads_per_key);
	json_int(o, "writing_grace", c->writing_grace);
	json_int(o, "max_header_size", c->max_header_size);
	json_int(o, "max_headers", c->max_headers);
	json_int(o, "header_timeout", c->header_timeout);
	json_int(o, "idle_timeout", c->idle_timeout);
	json_int(o, "max_connections", c->max_connections);
	json_str(o, "sandbox", sandbox_mode_name(c->sandbox));
	json_str(o, "sandbox_url", c->sandbox_url);
	if (mask & CONF_SECRETS_BROKER)
		json_str(o, "sandbox_token", c->sandbox_token);
	json_int(o, "max_tool_iterations", c->max_tool_iterations);
	/* The storage helper decides who is admin; frontends never know. */
	if (mask & CONF_SECRETS_STORAGE)
		json_str(o, "admin_key", c->admin_key);
	json_object_object_add(o, "upstreams", json_upstreams(c, mask));
	json_object_object_add(o, "models", json_models(c));

	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	result = text != NULL ? strdup(text) : NULL;
	/* The text may hold secrets: wipe json-c's copy too. */
	if (text != NULL)
		explicit_bzero((char *)text, strlen(text));
	json_wipe(o);
	json_object_put(o);
	return result;
}

/*
 * Readers for conf_from_json: each returns -1 when the key is missing
 * or of the wrong type, so a truncated message is refused whole.
 */
static int
get_int(json_object *o, const char *key, int64_t min, int64_t max,
    int64_t *out)
{
	json_object	*v;
	int64_t		 n;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_int))
		return -1;
	n = json_object_get_int64(v);
	if (n < min || n > max)
		return -1;
	*out = n;
	return 0;
}

#define GET_INT(o, key, min, max, dst) do {				\
	int64_t get_int_v;						\
	if (get_int((o), (key), (min), (max), &get_int_v) == -1)	\
		goto fail;						\
	(dst) = get_int_v;						\
} while (0)

static int
get_str(json_object *o, const char *key, char *buf, size_t len)
{
	json_object	*v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return -1;
	if (strlcpy(buf, json_object_get_string(v), len) >= len)
		return -1;
	return 0;
}

/* A secret may be absent (masked); present, it must be a string. */
static int
get_secret(json_object *o, const char *key, char **out)
{
	json_object	*v;

	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return -1;
	if ((*out = strdup(json_object_get_string(v))) == NULL)
		return -1;
	return 0;
}

static int
listens_from_json(struct depotd_conf *c, json_object *a)
{
	struct listen_conf	*l;
	struct addrinfo		 hints, *ai;
	json_object		*o;
	char			 addr[NI_MAXHOST];
	int64_t			 port;
	size_t			 i;

	if (!json_object_is_type(a, json_type_array))
		return -1;
	for (i = 0; i < json_object_array_length(a); i++) {
		o = json_object_array_get_idx(a, i);
		if ((l = calloc(1, sizeof(*l))) == NULL)
			return -1;
		TAILQ_INSERT_TAIL(&c->listens, l, entry);
		if (get_str(o, "host", l->host, sizeof(l->host)) == -1 ||
		    get_str(o, "addr", addr, sizeof(addr)) == -1 ||
		    get_int(o, "port", 1, 65535, &port) == -1)
			return -1;
		memset(&hints, 0, sizeof(hints));
		hints.ai_socktype = SOCK_STREAM;
		hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
		if (getaddrinfo(addr, NULL, &hints, &ai) != 0)
			return -1;
		memcpy(&l->ss, ai->ai_addr, ai->ai_addrlen);
		l->sslen = ai->ai_addrlen;
		freeaddrinfo(ai);
		l->port = port;
		if (l->ss.ss_family == AF_INET)
			((struct sockaddr_in *)&l->ss)->sin_port = htons(port);
		else
			((struct sockaddr_in6 *)&l->ss)->sin6_port =
			    htons(port);
	}
	return 0;
}

static int
storage_from_json(struct depotd_conf *c, json_object *o)
{
	if (get_str(o, "url", c->storage_url, sizeof(c->storage_url)) ||
	    get_str(o, "endpoint", c->storage.endpoint,
	    sizeof(c->storage.endpoint)) ||
	    get_str(o, "region", c->storage.region,
	    sizeof(c->storage.region)) ||
	    get_str(o, "identity", c->storage.identity,
	    sizeof(c->storage.identity)) ||
	    get_str(o, "known_hosts", c->storage.known_hosts,
	    sizeof(c->storage.known_hosts)) ||
	    get_secret(o, "access_key", &c->storage.access_key) ||
	    get_secret(o, "secret_key", &c->storage.secret_key) ||
	    get_secret(o, "session_token", &c->storage.session_token) ||
	    get_secret(o, "passphrase", &c->storage.passphrase))
		return -1;
	GET_INT(o, "path_style", 0, 1, c->storage.path_style);
	GET_INT(o, "part_size", 0, INT64_MAX, c->storage.part_size);
	GET_INT(o, "max_transfers", 0, INT32_MAX, c->storage.max_transfers);
	GET_INT(o, "keepalive", 0, INT32_MAX, c->storage.keepalive);
	return 0;
fail:
	return -1;
}

static int
upstreams_from_json(struct depotd_conf *c, json_object *a)
{
	struct upstream_conf	*u;
	json_object		*o;
	char			 api[16];
	size_t			 i;

	if (!json_object_is_type(a, json_type_array))
		return -1;
	for (i = 0; i < json_object_array_length(a); i++) {
		o = json_object_array_get_idx(a, i);
		if ((u = calloc(1, sizeof(*u))) == NULL)
			return -1;
		TAILQ_INSERT_TAIL(&c->upstreams, u, entry);
		if (get_str(o, "name", u->name, sizeof(u->name)) ||
		    get_str(o, "url", u->url, sizeof(u->url)) ||
		    get_str(o, "api", api, sizeof(api)) ||
		    get_secret(o, "api_key", &u->api_key))
			return -1;
		if (strcmp(api, "anthropic") == 0)
			u->api = API_ANTHROPIC;
		else if (strcmp(api, "openai") == 0)
			u->api = API_OPENAI;
		else
			return -1;
		GET_INT(o, "timeout", 0, INT32_MAX, u->timeout);
	}
	return 0;
fail:
	return -1;
}

static int
models_from_json(struct depotd_conf *c, json_object *a)
{
	struct model_conf	*m;
	json_object		*o;
	size_t			 i;

	if (!json_object_is_type(a, json_type_array))
		return -1;
	for (i = 0; i < json_object_array_length(a); i++) {
		o = json_object_array_get_idx(a, i);
		if ((m = calloc(1, sizeof(*m))) == NULL)
			return -1;
		TAILQ_INSERT_TAIL(&c->models, m, entry);
		if (get_str(o, "name", m->name, sizeof(m->name)) ||
		    get_str(o, "upstream", m->upstream,
		    sizeof(m->upstream)) ||
		    get_str(o, "remote_name", m->remote_name,
		    sizeof(m->remote_name)))
			return -1;
		GET_INT(o, "text_only", 0, 1, m->text_only);
		GET_INT(o, "native_code_execution", 0, 1,
		    m->native_code_execution);
	}
	return 0;
fail:
	return -1;
}

static int
scalars_from_json(struct depotd_conf *c, json_object *o)
{
	char	 mode[16];

	GET_INT(o, "prefork", 1, 64, c->prefork);
	GET_INT(o, "db_pool", 1, 64, c->db_pool);
	GET_INT(o, "max_size", 0, INT64_MAX, c->max_size);
	GET_INT(o, "retention", 0, INT64_MAX, c->retention);
	GET_INT(o, "sweep_interval", 0, INT64_MAX, c->sweep_interval);
	GET_INT(o, "max_filename", 0, INT32_MAX, c->max_filename);
	GET_INT(o, "max_uploads_per_key", 0, INT32_MAX,
	    c->max_uploads_per_key);
	GET_INT(o, "writing_grace", 0, INT64_MAX, c->writing_grace);
	GET_INT(o, "max_header_size", 0, INT32_MAX, c->max_header_size);
	GET_INT(o, "max_headers", 0, INT32_MAX, c->max_headers);
	GET_INT(o, "header_timeout", 0, INT32_MAX, c->header_timeout);
	GET_INT(o, "idle_timeout", 0, INT32_MAX, c->idle_timeout);
	GET_INT(o, "max_connections", 0, INT32_MAX, c->max_connections);
	GET_INT(o, "max_tool_iterations", 0, INT32_MAX,
	    c->max_tool_iterations);
	if (get_str(o, "user", c->user, sizeof(c->user)) ||
	    get_str(o, "chroot", c->chroot, sizeof(c->chroot)) ||
	    get_str(o, "control_socket", c->control_socket,
	    sizeof(c->control_socket)) ||
	    get_str(o, "sandbox_url", c->sandbox_url,
	    sizeof(c->sandbox_url)) ||
	    get_str(o, "sandbox", mode, sizeof(mode)) ||
	    get_secret(o, "database", &c->database) ||
	    get_secret(o, "sandbox_token", &c->sandbox_token) ||
	    get_secret(o, "admin_key", &c->admin_key))
		return -1;
	if (strcmp(mode, "local") == 0)
		c->sandbox = SANDBOX_LOCAL;
	else if (strcmp(mode, "url") == 0)
		c->sandbox = SANDBOX_URL;
	else if (strcmp(mode, "none") == 0)
		c->sandbox = SANDBOX_NONE;
	else
		return -1;
	return 0;
fail:
	return -1;
}

struct depotd_conf *
conf_from_json(const char *text)
{
	struct depotd_conf	*c;
	json_object		*o, *v;
	int			 ok;

	if ((o = json_tokener_parse(text)) == NULL)
		return NULL;
	if ((c = conf_new()) == NULL) {
		json_object_put(o);
		return NULL;
	}
	ok = json_object_is_type(o, json_type_object) &&
	    scalars_from_json(c, o) == 0 &&
	    json_object_object_get_ex(o, "listen", &v) &&
	    listens_from_json(c, v) == 0 &&
	    json_object_object_get_ex(o, "storage", &v) &&
	    storage_from_json(c, v) == 0 &&
	    json_object_object_get_ex(o, "upstreams", &v) &&
	    upstreams_from_json(c, v) == 0 &&
	    json_object_object_get_ex(o, "models", &v) &&
	    models_from_json(c, v) == 0;
	json_wipe(o);
	json_object_put(o);
	if (!ok) {
		conf_free(c);
		return NULL;
	}
	return c;
}
