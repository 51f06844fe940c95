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
 * test_conf.c: parse_config through the API, the typed messages the
 * master sends each role (exact round trip, only the roster's parts and
 * secrets), conf_store and the conninfo password detector.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "config.h"
#include "store/store.h"
#include "conf_int.h"
#include "roster.h"
#include "t.h"

static const char full_conf[] =
	"sk = \"S3-SECRET-VALUE\"\n"
	"listen on 127.0.0.1 port 8081\n"
	"listen on ::1 port 8082\n"
	"prefork 3\n"
	"database \"host=/tmp dbname=depot password=DB-PASSWORD\" pool 5\n"
	"storage \"s3://bucket/prefix\" {\n"
	"\tendpoint \"http://127.0.0.1:7480\" region \"eu-west-1\"\n"
	"\taccess-key \"AKID\" secret-key $sk session-token \"SESSION\"\n"
	"\tpath-style part-size 8M max-transfers 4\n"
	"}\n"
	"files { max-size 1G retention 30d sweep-interval 0\n"
	"    extract-pages 7 extract-size 2M }\n"
	"http { max-header-size 8K idle-timeout 2m body-timeout 90\n"
	"    min-body-rate 4K max-connections-per-address 7\n"
	"    max-request-size 48M }\n"
	"sandbox \"https://sbx.example\" { token \"SANDBOX-TOKEN\"\n"
	"    exec-timeout 2m max-output-files 3 max-output-size 5M\n"
	"    max-sessions 9 }\n"
	"max-tool-iterations 12\n"
	"admin-key \"ADMIN-KEY-0123456789\"\n"
	"upstream \"up\" { url \"https://api.example/v1\" api anthropic "
	"api-key \"UPSTREAM-KEY\" timeout 30\n"
	"    connect-timeout 4 idle-timeout 45s ca-file $ca\n"
	"    anthropic-version \"2099-01-01\" }\n"
	"upstream \"oa\" { url \"http://[::1]:8000/v1\" responses }\n"
	"model \"m1\" upstream \"up\" { text-only remote-name \"m1:big\" }\n"
	"model \"m2\" upstream \"up\"\n"
	"model \"m3\" upstream \"oa\" { pdf-as-text max-tokens 2048\n"
	"    max-tool-iterations 3 }\n";

#define CA_PEM	"-----BEGIN CERTIFICATE-----\nTEST-CA\n" \
		"-----END CERTIFICATE-----\n"
static char	*ca_path;	/* the ca-file of upstream "up" */

/* Writes text to a fresh mode-600 file; returns its malloc'd path. */
static char *
write_conf(const char *text)
{
	char	*path;
	int	 fd;

	if ((path = strdup("/tmp/test_conf.XXXXXX")) == NULL)
		return NULL;
	if ((fd = mkstemp(path)) == -1) {
		free(path);
		return NULL;
	}
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		close(fd);
		unlink(path);
		free(path);
		return NULL;
	}
	close(fd);
	return path;
}

static struct depotd_conf *
parse_text(const char *text)
{
	struct depotd_conf	*c;
	char			*path;

	if ((path = write_conf(text)) == NULL)
		return NULL;
	c = parse_config(path, 0);
	unlink(path);
	free(path);
	return c;
}

static char *
printed(const struct depotd_conf *c)
{
	char	*buf = NULL;
	size_t	 len = 0;
	FILE	*fp;

	if ((fp = open_memstream(&buf, &len)) == NULL)
		return NULL;
	conf_print(fp, c);
	fclose(fp);
	return buf;
}

static void
test_parsed_fields(const struct depotd_conf *c)
{
	const struct listen_conf	*l;
	const struct upstream_conf	*u;
	const struct model_conf		*m;

	l = TAILQ_FIRST(&c->listens);
	T_OK(l != NULL && l->ss.ss_family == AF_INET &&
	    ntohs(((const struct sockaddr_in *)&l->ss)->sin_port) == 8081,
	    "first listen is IPv4 port 8081");
	l = l != NULL ? TAILQ_NEXT(l, entry) : NULL;
	T_OK(l != NULL && l->ss.ss_family == AF_INET6 && l->port == 8082,
	    "second listen is IPv6 port 8082");
	T_EQ_INT(c->prefork, 3, "prefork");
	T_EQ_INT(c->db_pool, 5, "database pool");
	T_EQ_STR(c->storage.secret_key, "S3-SECRET-VALUE",
	    "secret-key from a macro");
	T_EQ_INT(c->storage.part_size, 8 * 1024 * 1024, "part-size 8M");
	T_EQ_INT(c->storage.path_style, 1, "path-style");
	T_EQ_INT(c->max_size, 1024LL * 1024 * 1024, "max-size 1G");
	T_EQ_INT(c->retention, 30 * 86400, "retention 30d");
	T_EQ_INT(c->sweep_interval, 0, "sweep-interval 0");
	T_EQ_INT(c->http.max_header_bytes, 8192, "max-header-size 8K");
	T_EQ_INT(c->http.idle_timeout, 120, "idle-timeout 2m");
	T_EQ_INT(c->http.header_timeout, 10, "header-timeout default");
	T_EQ_INT(c->http.body_timeout, 90, "body-timeout 90");
	T_EQ_INT(c->http.min_body_rate, 4096, "min-body-rate 4K");
	T_EQ_INT(c->http.max_conns_per_addr, 7,
	    "max-connections-per-address 7");
	T_EQ_INT(c->http.max_conns, 1024, "max-connections default");
	T_EQ_INT(c->sandbox, SANDBOX_URL, "sandbox URL");
	u = TAILQ_FIRST(&c->upstreams);
	T_OK(u != NULL && u->api == DIALECT_ANTHROPIC && u->timeout == 30,
	    "upstream api anthropic, timeout 30");
	m = TAILQ_FIRST(&c->models);
	T_OK(m != NULL && m->text_only && !m->native_code_execution &&
	    strcmp(m->remote_name, "m1:big") == 0, "model m1 options");
	T_OK(u != NULL && u->connect_timeout == 4 && u->idle_timeout == 45 &&
	    strcmp(u->ca_file, ca_path) == 0 &&
	    strcmp(u->anthropic_version, "2099-01-01") == 0 &&
	    !u->native_responses,
	    "upstream connect-timeout, idle-timeout, ca-file, "
	    "anthropic-version");
	u = u != NULL ? TAILQ_NEXT(u, entry) : NULL;
	T_OK(u != NULL && u->api == DIALECT_OPENAI && u->native_responses &&
	    u->connect_timeout == 10 && u->idle_timeout == 60 &&
	    u->timeout == 300 && u->ca_file[0] == '\0',
	    "upstream responses; defaults 10s, 1m, 5m, system CA bundle");
	TAILQ_FOREACH(m, &c->models, entry)
		if (strcmp(m->name, "m3") == 0)
			break;
	T_OK(m != NULL && m->pdf_as_text && m->max_tokens == 2048 &&
	    m->max_tool_iterations == 3 && !m->text_only,
	    "model pdf-as-text, max-tokens, max-tool-iterations");
	T_EQ_INT(c->extract_pages, 7, "extract-pages");
	T_EQ_INT(c->extract_size, 2 * 1024 * 1024, "extract-size 2M");
	T_EQ_INT(c->http.max_request_size, 48 * 1024 * 1024,
	    "max-request-size 48M");
	T_OK(c->exec_timeout == 120 && c->max_output_files == 3 &&
	    c->max_output_size == 5 * 1024 * 1024 && c->max_sessions == 9 &&
	    c->max_tool_iterations == 12,
	    "sandbox exec-timeout, max-output-*, max-sessions; "
	    "max-tool-iterations");
}

/*
 * The bytes conf_send() puts on the wire for parts and secrets, and in
 * *back what a child rebuilds from them (each message checked against
 * the role's channel table first, as a child does).
 */
static int	 wire_refused;	/* parts the last wire() saw refused */

static char *
wire(const struct depotd_conf *c, enum proc_role role, int parts,
    int secrets, size_t *len, struct depotd_conf **back)
{
	const struct imsg_channel	*chan = proto_channel(role, ROLE_MASTER);
	struct event_base		*base = event_base_new();
	struct imsgev			 iev;
	struct imsgbuf			 in;
	struct imsg			 imsg;
	char				*buf = NULL, why[128];
	int				 sv[2];

	*len = 0;
	*back = conf_new();
	wire_refused = 0;
	if (base == NULL || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1 ||
	    imsgev_init(&iev, base, sv[0], NULL, NULL, NULL) == -1 ||
	    imsgbuf_init(&in, sv[1]) == -1)
		return NULL;
	conf_send(&iev, c, parts, secrets);
	if (imsgbuf_flush(&iev.ibuf) == -1)
		return NULL;
	imsgev_clear(&iev);
	while (imsgbuf_read(&in) > 0 || in.rlen > 0) {
		while (imsg_get(&in, &imsg) == 1) {
			buf = realloc(buf, *len + IMSG_HDRSIZE + imsg.datalen);
			memcpy(buf + *len, &imsg.hdr, IMSG_HDRSIZE);
			memcpy(buf + *len + IMSG_HDRSIZE, imsg.data,
			    imsg.datalen);
			*len += IMSG_HDRSIZE + imsg.datalen;
			if (imsg_check(chan, &imsg, why, sizeof(why)) == -1 ||
			    conf_recv(*back, &imsg) == -1)
				wire_refused++;
			imsg_free(&imsg);
		}
		if (in.rlen == 0)
			break;
	}
	imsgbuf_clear(&in);
	close(sv[1]);
	event_base_free(base);
	return buf;
}

static int
wire_has(const char *buf, size_t len, const char *s)
{
	return buf != NULL && memmem(buf, len, s, strlen(s)) != NULL;
}

/* The upstream, model, files and http fields a frontend rebuilt. */
static void
test_upstream_back(const struct depotd_conf *c,
    const struct depotd_conf *back)
{
	const struct upstream_conf	*u, *bu;
	const struct model_conf		*m, *bm;

	u = TAILQ_FIRST(&c->upstreams);
	bu = TAILQ_FIRST(&back->upstreams);
	T_OK(u != NULL && bu != NULL &&
	    bu->connect_timeout == u->connect_timeout &&
	    bu->idle_timeout == u->idle_timeout &&
	    strcmp(bu->ca_file, u->ca_file) == 0 &&
	    strcmp(bu->anthropic_version, "2099-01-01") == 0 &&
	    strcmp(bu->resolve, "api.example:443:192.0.2.1,[2001:db8::1]") ==
	    0, "upstream timeouts, ca-file, version and resolve list arrive");
	T_OK(bu != NULL && bu->ca_pem != NULL &&
	    bu->ca_len == strlen(CA_PEM) &&
	    memcmp(bu->ca_pem, CA_PEM, bu->ca_len) == 0,
	    "the https upstream's ca-file arrives as PEM (IMSG_CONF_CA)");
	bu = bu != NULL ? TAILQ_NEXT(bu, entry) : NULL;
	T_OK(bu != NULL && bu->native_responses && bu->ca_pem == NULL,
	    "the http upstream: responses, and no CA bundle");
	TAILQ_FOREACH(m, &c->models, entry) {
		TAILQ_FOREACH(bm, &back->models, entry)
			if (strcmp(bm->name, m->name) == 0)
				break;
		T_OK(bm != NULL && bm->pdf_as_text == m->pdf_as_text &&
		    bm->max_tokens == m->max_tokens &&
		    bm->max_tool_iterations == m->max_tool_iterations,
		    "model %s: pdf-as-text, max-tokens, max-tool-iterations "
		    "arrive", m->name);
	}
	T_OK(back->extract_pages == 7 && back->extract_size == 2 << 20 &&
	    back->http.max_request_size == 48 << 20,
	    "extract-pages, extract-size and max-request-size arrive");
}

static void
test_round_trip(const struct depotd_conf *c)
{
	struct depotd_conf	*back, *again;
	char			*w1, *w2;
	size_t			 l1, l2;
	int			 all = CONF_PART_STORE | CONF_PART_FILES |
				    CONF_PART_HTTP | CONF_PART_MODELS |
				    CONF_PART_SANDBOX;

	/* A channel that takes every part: the storage's plus the rest. */
	w1 = wire(c, ROLE_FRONTEND, all & ~(CONF_PART_STORE |
	    CONF_PART_SANDBOX), CONF_SECRETS_ALL, &l1, &back);
	T_OK(w1 != NULL && wire_refused == 0, "conf_send to a frontend");
	w2 = wire(back, ROLE_FRONTEND, all & ~(CONF_PART_STORE |
	    CONF_PART_SANDBOX), CONF_SECRETS_ALL, &l2, &again);
	T_OK(w2 != NULL && l1 == l2 && memcmp(w1, w2, l1) == 0,
	    "what a frontend rebuilt sends the same bytes again");
	T_EQ_INT(back->max_size, c->max_size, "max-size arrives");
	T_EQ_INT(back->http.max_header_bytes, 8192, "http limits arrive");
	T_EQ_INT(back->http.idle_timeout, 120, "idle-timeout arrives");
	T_EQ_STR(back->admin_key, "ADMIN-KEY-0123456789", "admin key");
	T_OK(back->http.body_timeout == c->http.body_timeout &&
	    back->http.min_body_rate == c->http.min_body_rate &&
	    back->http.max_conns_per_addr == c->http.max_conns_per_addr,
	    "body window and per-address cap survive the round trip");
	T_EQ_STR(TAILQ_FIRST(&back->upstreams)->api_key, "UPSTREAM-KEY",
	    "upstream api-key");
	T_OK(TAILQ_FIRST(&back->models) != NULL &&
	    strcmp(TAILQ_FIRST(&back->models)->remote_name, "m1:big") == 0,
	    "model arrives");
	test_upstream_back(c, back);
	free(w1);
	free(w2);
	conf_free(back);
	conf_free(again);

	w1 = wire(c, ROLE_STORAGE, CONF_PART_STORE | CONF_PART_FILES,
	    CONF_SECRETS_STORAGE, &l1, &back);
	T_EQ_STR(back->database, c->database, "database reaches storage");
	T_EQ_STR(back->storage.secret_key, "S3-SECRET-VALUE",
	    "S3 secret reaches storage");
	T_EQ_STR(back->storage_url, "s3://bucket/prefix", "storage URL");
	T_EQ_INT(back->storage.part_size, 8 * 1024 * 1024, "part-size");
	T_EQ_INT(back->db_pool, 5, "database pool");
	free(w1);
	conf_free(back);
}

static void
test_masks(const struct depotd_conf *c)
{
	const struct role	*r;
	struct depotd_conf	*back;
	char			*w;
	size_t			 len;

	r = roster_role(ROLE_FRONTEND);
	w = wire(c, ROLE_FRONTEND, r->parts, r->secrets, &len, &back);
	T_OK(w != NULL && !wire_has(w, len, "DB-PASSWORD") &&
	    !wire_has(w, len, "S3-SECRET-VALUE") &&
	    !wire_has(w, len, "SESSION") && !wire_has(w, len, "AKID"),
	    "a frontend is sent no storage credential");
	T_OK(!wire_has(w, len, "s3://bucket") &&
	    !wire_has(w, len, "127.0.0.1:7480"),
	    "a frontend is not told where the store is");
	T_OK(!wire_has(w, len, "SANDBOX-TOKEN") &&
	    !wire_has(w, len, "sbx.example"),
	    "a frontend is not told where the sandbox is, nor its token");
	T_OK(back->sandbox == SANDBOX_URL && back->max_tool_iterations == 12 &&
	    back->sandbox_url[0] == '\0',
	    "a frontend knows there is a sandbox and max-tool-iterations");
	T_OK(!wire_has(w, len, "ADMIN-KEY-0123456789"),
	    "a frontend is not sent the admin key (storage decides)");
	T_OK(back->database == NULL && back->storage.secret_key == NULL &&
	    back->storage_url[0] == '\0',
	    "the frontend's configuration has no storage settings");
	free(w);
	conf_free(back);

	r = roster_role(ROLE_STORAGE);
	w = wire(c, ROLE_STORAGE, r->parts, r->secrets, &len, &back);
	T_OK(wire_has(w, len, "DB-PASSWORD") &&
	    wire_has(w, len, "S3-SECRET-VALUE"),
	    "storage is sent the database password and S3 secret");
	T_OK(wire_has(w, len, "ADMIN-KEY-0123456789"),
	    "storage is sent the admin key");
	T_OK(!wire_has(w, len, "UPSTREAM-KEY") &&
	    !wire_has(w, len, "SANDBOX-TOKEN"),
	    "storage is sent no frontend or broker secret");
	free(w);
	conf_free(back);

	r = roster_role(ROLE_BROKER);
	w = wire(c, ROLE_BROKER, r->parts, r->secrets, &len, &back);
	T_OK(wire_has(w, len, "SANDBOX-TOKEN") &&
	    !wire_has(w, len, "DB-PASSWORD") &&
	    !wire_has(w, len, "ADMIN-KEY") && !wire_has(w, len, "s3://"),
	    "the broker is sent the sandbox and nothing else");
	T_EQ_STR(back->sandbox_token, "SANDBOX-TOKEN", "sandbox token");
	T_EQ_STR(back->sandbox_url, "https://sbx.example", "sandbox URL");
	T_OK(back->exec_timeout == 120 && back->max_output_files == 3 &&
	    back->max_output_size == 5 << 20 && back->max_sessions == 9,
	    "the broker is sent exec-timeout, max-output-*, max-sessions");
	T_OK(TAILQ_EMPTY(&back->upstreams) && !wire_has(w, len, "TEST-CA"),
	    "the broker is sent no upstream and no CA bundle");
	free(w);
	conf_free(back);
}

static void
test_print_masks(const struct depotd_conf *c)
{
	char	*text = printed(c);

	T_OK(text != NULL && strstr(text, "DB-PASSWORD") == NULL &&
	    strstr(text, "password=********") != NULL,
	    "conf_print masks the conninfo password in place");
	T_OK(text != NULL && strstr(text, "S3-SECRET-VALUE") == NULL &&
	    strstr(text, "UPSTREAM-KEY") == NULL &&
	    strstr(text, "ADMIN-KEY") == NULL &&
	    strstr(text, "SANDBOX-TOKEN") == NULL,
	    "conf_print shows no secret");
	free(text);
}

static void
test_store(const struct depotd_conf *c)
{
	struct store_conf	 sc;

	conf_store(c, &sc);
	T_EQ_STR(sc.url, "s3://bucket/prefix", "store url");
	T_EQ_STR(sc.endpoint, "http://127.0.0.1:7480", "store endpoint");
	T_EQ_STR(sc.region, "eu-west-1", "store region");
	T_EQ_STR(sc.access_key, "AKID", "store access key");
	T_EQ_STR(sc.secret_key, "S3-SECRET-VALUE", "store secret key");
	T_EQ_INT(sc.max_transfers, 4, "store max transfers");
	T_EQ_INT(sc.part_size, 8 * 1024 * 1024, "store part size");
}

/* A part the role's table does not list is refused before conf_recv. */
static void
test_wrong_part(const struct depotd_conf *c)
{
	struct depotd_conf	*back;
	char			*w;
	size_t			 len;

	w = wire(c, ROLE_STORAGE, CONF_PART_HTTP, CONF_SECRETS_NONE, &len,
	    &back);
	T_OK(w != NULL && wire_refused == 1,
	    "storage's channel refuses the http part");
	free(w);
	conf_free(back);
}

static void
test_conninfo(void)
{
	T_OK(conf_conninfo_has_password("host=/tmp password=x"),
	    "key=value password");
	T_OK(conf_conninfo_has_password("password = 'a b' dbname=x"),
	    "quoted password with spaces around =");
	T_OK(conf_conninfo_has_password("postgresql://u:p@h/db"),
	    "URI user:password@");
	T_OK(conf_conninfo_has_password("postgres://h/db?password=p"),
	    "URI ?password=");
	T_OK(!conf_conninfo_has_password("host=/tmp dbname=depot user=x"),
	    "no password");
	T_OK(!conf_conninfo_has_password("dbname='password=no'"),
	    "password= inside a quoted value is not a password");
	T_OK(!conf_conninfo_has_password("postgresql://u@h/db"),
	    "URI user without password");
}

static void
test_parse_errors(void)
{
	struct depotd_conf	*c;

	T_OK(parse_config("/nonexistent/depotd.conf", 0) == NULL,
	    "missing file gives NULL");
	c = parse_text("storage \"file:///x\"\n");
	T_OK(c == NULL, "no database gives NULL");
	conf_free(c);
	c = parse_text("database \"dbname=x\"\nstorage \"file:///x\"\n"
	    "model \"m\" upstream \"u\"\n");
	T_OK(c == NULL, "model with unknown upstream gives NULL");
	conf_free(c);
	T_EQ_INT(cmdline_symset("novalue"), -1, "-D without '=' refused");
	T_EQ_INT(cmdline_symset("=x"), -1, "-D without a name refused");
	T_EQ_INT(cmdline_symset("dbname=fromcmdline"), 0, "-D accepted");
	c = parse_text("database \"dbname=x\"\nstorage \"file:///x\"\n"
	    "dbname = \"fromfile\"\nuser $dbname\n");
	T_OK(c != NULL && strcmp(c->user, "fromcmdline") == 0,
	    "-D wins over the file's macro");
	conf_free(c);
	c = parse_text("database \"dbname=x\"\nstorage \"file:///x\"\n");
	T_OK(c != NULL && TAILQ_FIRST(&c->listens) != NULL &&
	    TAILQ_FIRST(&c->listens)->port == 8080 &&
	    strcmp(TAILQ_FIRST(&c->listens)->host, "127.0.0.1") == 0,
	    "no listen means 127.0.0.1 port 8080");
	T_OK(c != NULL && c->sandbox == SANDBOX_NONE && c->prefork == 2,
	    "defaults: no sandbox, prefork 2");
	T_OK(c != NULL && strcmp(c->user, "_depotd") == 0 &&
	    strcmp(c->storage_user, "_depotstore") == 0,
	    "defaults: user _depotd, storage user _depotstore");
	conf_free(c);
	c = parse_text("database \"dbname=x\"\nstorage \"file:///x\"\n"
	    "user \"_fe\"\nstorage user \"_st\"\n");
	T_OK(c != NULL && strcmp(c->user, "_fe") == 0 &&
	    strcmp(c->storage_user, "_st") == 0,
	    "user and storage user are set apart");
	conf_free(c);
}

static void
test_url(void)
{
	char		 host[64];
	uint16_t	 port;

	T_OK(conf_url_host_port("https://api.example/v1", host, sizeof(host),
	    &port) == 0 && strcmp(host, "api.example") == 0 && port == 443,
	    "https without a port: 443");
	T_OK(conf_url_host_port("http://u:p@h:8000/v1?x", host, sizeof(host),
	    &port) == 0 && strcmp(host, "h") == 0 && port == 8000,
	    "userinfo skipped, port 8000");
	T_OK(conf_url_host_port("http://[::1]:11434", host, sizeof(host),
	    &port) == 0 && strcmp(host, "::1") == 0 && port == 11434,
	    "IPv6 literal without brackets");
	T_OK(conf_url_host_port("http://[::1]/v1", host, sizeof(host),
	    &port) == 0 && port == 80, "IPv6 literal, port from the scheme");
	T_OK(conf_url_host_port("http://h:0/", host, sizeof(host), &port) ==
	    -1 && conf_url_host_port("http://h:65536/", host, sizeof(host),
	    &port) == -1 && conf_url_host_port("http:///v1", host,
	    sizeof(host), &port) == -1 && conf_url_host_port("ftp://h/",
	    host, sizeof(host), &port) == -1 &&
	    conf_url_host_port("http://[::1/", host, sizeof(host), &port) ==
	    -1, "port 0, port 65536, no host, ftp, open bracket refused");
}

/* Ports, name resolution and the reload note, on small configurations. */
static void
test_upstream_net(void)
{
	struct depotd_conf	*a, *b;
	struct upstream_conf	*u;
	uint16_t		 ports[CONF_PORTS_MAX];
	char			 later[256];
	size_t			 n;

	a = parse_text("database \"dbname=x\"\nstorage \"file:///x\"\n"
	    "upstream \"l\" { url \"http://localhost:18500/v1\" }\n"
	    "upstream \"v4\" { url \"http://127.0.0.1:18500/v1\" }\n"
	    "upstream \"s\" { url \"https://[::1]/v1\" }\n");
	b = parse_text("database \"dbname=x\"\nstorage \"file:///x\"\n"
	    "upstream \"l\" { url \"http://localhost:18500/v1\" }\n"
	    "upstream \"n\" { url \"http://127.0.0.1:18501/v1\" }\n");
	T_OK(a != NULL && b != NULL, "upstream configurations parse");
	if (a == NULL || b == NULL)
		goto done;
	n = conf_upstream_ports(a, ports, CONF_PORTS_MAX);
	T_OK(n == 2 && ports[0] == 18500 && ports[1] == 443,
	    "upstream ports: 18500 once, then 443 (%zu)", n);
	conf_resolve_upstreams(a);
	u = TAILQ_FIRST(&a->upstreams);
	T_OK(strncmp(u->resolve, "localhost:18500:", 16) == 0 &&
	    (strstr(u->resolve, "127.0.0.1") != NULL ||
	    strstr(u->resolve, "[::1]") != NULL),
	    "localhost resolves to loopback (%s)", u->resolve);
	u = TAILQ_NEXT(u, entry);
	T_OK(u->resolve[0] == '\0' && TAILQ_NEXT(u, entry)->resolve[0] ==
	    '\0', "literal addresses are not resolved");
	conf_restart_changes(a, b, later, sizeof(later));
	T_EQ_STR(later, "new upstream ports", "a new port waits for a restart");
	conf_restart_changes(b, b, later, sizeof(later));
	T_EQ_STR(later, "", "the same ports need no restart");
done:
	conf_free(a);
	conf_free(b);
}

/* A CA bundle over CONF_CA_MAX is not sent; nothing is kept. */
static void
test_ca_limits(void)
{
	struct upstream_conf	 u;
	char			 path[] = "/tmp/test_conf_big.XXXXXX";
	int			 fd, p[2];

	memset(&u, 0, sizeof(u));
	strlcpy(u.name, "big", sizeof(u.name));
	strlcpy(u.url, "https://h/v1", sizeof(u.url));
	if ((fd = mkstemp(path)) == -1 || ftruncate(fd, CONF_CA_MAX + 1) ==
	    -1) {
		T_OK(0, "make a large file");
		return;
	}
	close(fd);
	strlcpy(u.ca_file, path, sizeof(u.ca_file));
	T_EQ_INT(conf_ca_open(&u), -1, "a ca-file over 4 MiB is not opened");
	unlink(path);
	strlcpy(u.ca_file, "/nonexistent/ca.pem", sizeof(u.ca_file));
	T_EQ_INT(conf_ca_open(&u), -1, "a missing ca-file is not opened");
	strlcpy(u.url, "http://h/v1", sizeof(u.url));
	T_EQ_INT(conf_ca_open(&u), -1, "an http upstream needs no CA");
	/* A descriptor that brings nothing: no bundle kept. */
	if (pipe(p) == -1)
		return;
	close(p[1]);
	conf_ca_read(&u, p[0]);
	T_OK(u.ca_pem == NULL && u.ca_len == 0, "an empty bundle is dropped");
}

static void
test_new_errors(void)
{
	static const char *const bad[] = {
		"model \"m\" upstream \"u\" { text-only pdf-as-text }\n",
		"upstream \"v\" { url \"http://h/\" anthropic-version "
		    "\"x\" }\n",
		"upstream \"v\" { url \"http://h/\" api anthropic "
		    "responses }\n",
		"upstream \"v\" { url \"http://h:99999/\" }\n",
		"upstream \"v\" { url \"http://h/\" ca-file \"rel.pem\" }\n",
		"model \"m\" upstream \"u\" { max-tool-iterations 101 }\n",
		"sandbox local { max-sessions 0 }\n",
		"files { extract-pages 0 }\n",
	};
	struct depotd_conf	*c;
	char			 text[512];
	size_t			 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "database \"dbname=x\"\n"
		    "storage \"file:///x\"\n"
		    "upstream \"u\" { url \"http://h/v1\" }\n%s", bad[i]);
		c = parse_text(text);
		T_OK(c == NULL, "refused: %.*s", (int)strcspn(bad[i], "\n"),
		    bad[i]);
		conf_free(c);
	}
	c = parse_text("database \"dbname=x\"\nstorage \"file:///x\"\n"
	    "upstream \"u\" { url \"http://h/v1\" }\n"
	    "model \"m\" upstream \"u\"\n");
	T_OK(c != NULL && c->extract_pages == 50 &&
	    c->extract_size == 1 << 20 && c->http.max_request_size == 32 << 20 &&
	    c->exec_timeout == 60 && c->max_output_files == 20 &&
	    c->max_output_size == 64 << 20 && c->max_sessions == 16 &&
	    c->max_tool_iterations == 8, "defaults: extract 50 pages and 1M, "
	    "32M requests, 60s, 20 files, 64M, 16 sessions, 8 rounds");
	T_OK(c != NULL && strcmp(TAILQ_FIRST(&c->upstreams)->anthropic_version,
	    "2023-06-01") == 0 && TAILQ_FIRST(&c->models)->max_tokens == 4096 &&
	    TAILQ_FIRST(&c->models)->max_tool_iterations == 0,
	    "defaults: anthropic-version 2023-06-01, model max-tokens 4096 "
	    "and max-tool-iterations unset");
	conf_free(c);
}

/* Each port is a Landlock rule of the frontends: at most 64. */
static void
test_many_ports(void)
{
	struct depotd_conf	*c;
	char			*text = NULL;
	size_t			 len = 0;
	FILE			*fp;
	int			 i, n;

	for (n = CONF_PORTS_MAX; n <= CONF_PORTS_MAX + 1; n++) {
		if ((fp = open_memstream(&text, &len)) == NULL)
			return;
		fputs("database \"dbname=x\"\nstorage \"file:///x\"\n", fp);
		for (i = 0; i < n; i++)
			fprintf(fp, "upstream \"u%d\" { url "
			    "\"http://127.0.0.1:%d/v1\" }\n", i, 20000 + i);
		fclose(fp);
		c = parse_text(text);
		T_OK((c != NULL) == (n <= CONF_PORTS_MAX),
		    "upstreams on %d ports: %s", n, n <= CONF_PORTS_MAX ?
		    "accepted" : "refused");
		conf_free(c);
		free(text);
		text = NULL;
	}
}

/* The ca-file of the full configuration, named by the macro $ca. */
static int
write_ca(void)
{
	char	 def[64];

	if ((ca_path = write_conf(CA_PEM)) == NULL)
		return -1;
	snprintf(def, sizeof(def), "ca=%s", ca_path);
	return cmdline_symset(def);
}

/*
 * A key's share of the sandbox sessions, and the transfer timeout:
 * set, defaulted (half of max-sessions, at least one), printed back,
 * sent to the broker, refused out of range.
 */
static void
test_sandbox_shares(void)
{
	static const char base[] = "database \"dbname=x\"\n"
	    "storage \"file:///x\"\n";
	struct depotd_conf	*c, *back;
	char			 text[512], *w;
	size_t			 len;

	snprintf(text, sizeof(text), "%ssandbox \"http://h\" { "
	    "max-sessions 9 max-sessions-per-key 2 transfer-timeout 45s }\n",
	    base);
	c = parse_text(text);
	T_OK(c != NULL && c->max_sessions_per_key == 2 &&
	    conf_sessions_per_key(c) == 2 && c->transfer_timeout == 45,
	    "max-sessions-per-key 2, transfer-timeout 45s");
	if (c != NULL) {
		w = wire(c, ROLE_BROKER, roster_role(ROLE_BROKER)->parts,
		    roster_role(ROLE_BROKER)->secrets, &len, &back);
		T_OK(back != NULL && conf_sessions_per_key(back) == 2 &&
		    back->transfer_timeout == 45,
		    "the broker is sent both");
		free(w);
		conf_free(back);
	}
	conf_free(c);
	snprintf(text, sizeof(text), "%ssandbox \"http://h\" { "
	    "max-sessions 9 }\n", base);
	c = parse_text(text);
	T_OK(c != NULL && conf_sessions_per_key(c) == 4 &&
	    c->transfer_timeout == 300,
	    "defaults: half of max-sessions 9 is 4; transfer-timeout 5m");
	conf_free(c);
	snprintf(text, sizeof(text), "%ssandbox \"http://h\" { "
	    "max-sessions 1 }\n", base);
	c = parse_text(text);
	T_OK(c != NULL && conf_sessions_per_key(c) == 1,
	    "max-sessions 1: a key's share is still 1");
	conf_free(c);
	snprintf(text, sizeof(text), "%ssandbox \"http://h\" { "
	    "max-sessions 2 max-sessions-per-key 5 }\n", base);
	c = parse_text(text);
	T_OK(c != NULL && conf_sessions_per_key(c) == 2,
	    "a share over max-sessions is max-sessions");
	conf_free(c);
	snprintf(text, sizeof(text), "%ssandbox local { "
	    "max-sessions-per-key 0 }\n", base);
	c = parse_text(text);
	T_OK(c == NULL, "refused: max-sessions-per-key 0");
	conf_free(c);
	snprintf(text, sizeof(text), "%ssandbox local { "
	    "transfer-timeout 0 }\n", base);
	c = parse_text(text);
	T_OK(c == NULL, "refused: transfer-timeout 0");
	conf_free(c);
}

int
main(void)
{
	struct depotd_conf	*c;

	T_OK(write_ca() == 0, "a CA file for the full configuration");
	c = parse_text(full_conf);
	if (c != NULL)
		strlcpy(TAILQ_FIRST(&c->upstreams)->resolve,
		    "api.example:443:192.0.2.1,[2001:db8::1]",
		    sizeof(TAILQ_FIRST(&c->upstreams)->resolve));
	T_OK(c != NULL, "full configuration parses");
	if (c != NULL) {
		test_parsed_fields(c);
		test_round_trip(c);
		test_masks(c);
		test_print_masks(c);
		test_store(c);
		test_wrong_part(c);
		conf_free(c);
	}
	test_conninfo();
	test_parse_errors();
	test_url();
	test_upstream_net();
	test_ca_limits();
	test_new_errors();
	test_sandbox_shares();
	test_many_ports();
	if (ca_path != NULL)
		unlink(ca_path);
	return t_done();
}
