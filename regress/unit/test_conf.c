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
	"files { max-size 1G retention 30d sweep-interval 0 }\n"
	"http { max-header-size 8K idle-timeout 2m body-timeout 90\n"
	"    min-body-rate 4K max-connections-per-address 7 }\n"
	"sandbox \"https://sbx.example\" { token \"SANDBOX-TOKEN\" }\n"
	"admin-key \"ADMIN-KEY-0123456789\"\n"
	"upstream \"up\" { url \"https://api.example/v1\" api anthropic "
	"api-key \"UPSTREAM-KEY\" timeout 30 }\n"
	"model \"m1\" upstream \"up\" { text-only remote-name \"m1:big\" }\n"
	"model \"m2\" upstream \"up\"\n";

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
	T_OK(u != NULL && u->api == API_ANTHROPIC && u->timeout == 30,
	    "upstream api anthropic, timeout 30");
	m = TAILQ_FIRST(&c->models);
	T_OK(m != NULL && m->text_only && !m->native_code_execution &&
	    strcmp(m->remote_name, "m1:big") == 0, "model m1 options");
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
	    !wire_has(w, len, "sandbox.example"),
	    "a frontend is sent nothing of the sandbox");
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

int
main(void)
{
	struct depotd_conf	*c;

	c = parse_text(full_conf);
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
	return t_done();
}
