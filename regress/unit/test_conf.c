/*
 * test_conf.c: parse_config through the API, the JSON the master sends
 * each child (exact round trip, secrets only where the mask allows),
 * conf_store and the conninfo password detector.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
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
	"http { max-header-size 8K idle-timeout 2m }\n"
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
	T_EQ_INT(c->max_header_size, 8192, "max-header-size 8K");
	T_EQ_INT(c->idle_timeout, 120, "idle-timeout 2m");
	T_EQ_INT(c->header_timeout, 10, "header-timeout default");
	T_EQ_INT(c->sandbox, SANDBOX_URL, "sandbox URL");
	u = TAILQ_FIRST(&c->upstreams);
	T_OK(u != NULL && u->api == API_ANTHROPIC && u->timeout == 30,
	    "upstream api anthropic, timeout 30");
	m = TAILQ_FIRST(&c->models);
	T_OK(m != NULL && m->text_only && !m->native_code_execution &&
	    strcmp(m->remote_name, "m1:big") == 0, "model m1 options");
}

static void
test_round_trip(const struct depotd_conf *c)
{
	struct depotd_conf	*back;
	char			*json, *json2, *p1, *p2;

	json = conf_to_json(c, CONF_SECRETS_ALL);
	T_OK(json != NULL, "conf_to_json");
	back = json != NULL ? conf_from_json(json) : NULL;
	T_OK(back != NULL, "conf_from_json reads what conf_to_json wrote");
	if (back == NULL) {
		free(json);
		return;
	}
	json2 = conf_to_json(back, CONF_SECRETS_ALL);
	T_OK(json2 != NULL && strcmp(json, json2) == 0,
	    "JSON round trip is exact");
	p1 = printed(c);
	p2 = printed(back);
	T_OK(p1 != NULL && p2 != NULL && strcmp(p1, p2) == 0,
	    "round-tripped configuration prints the same");
	T_OK(memcmp(&TAILQ_FIRST(&c->listens)->ss,
	    &TAILQ_FIRST(&back->listens)->ss,
	    sizeof(struct sockaddr_storage)) == 0,
	    "listen sockaddr survives the round trip byte for byte");
	T_EQ_STR(back->database, c->database, "database with all secrets");
	T_EQ_STR(back->admin_key, "ADMIN-KEY-0123456789", "admin key");
	T_EQ_STR(TAILQ_FIRST(&back->upstreams)->api_key, "UPSTREAM-KEY",
	    "upstream api-key");
	free(p1);
	free(p2);
	free(json);
	free(json2);
	conf_free(back);
}

static void
test_masks(const struct depotd_conf *c)
{
	struct depotd_conf	*fe;
	char			*json;

	json = conf_to_json(c, CONF_SECRETS_FRONTEND);
	T_OK(json != NULL && strstr(json, "DB-PASSWORD") == NULL,
	    "frontend JSON leaves out the database password");
	T_OK(json != NULL && strstr(json, "S3-SECRET-VALUE") == NULL &&
	    strstr(json, "SESSION") == NULL,
	    "frontend JSON leaves out the S3 secret and session token");
	T_OK(json != NULL && strstr(json, "SANDBOX-TOKEN") == NULL,
	    "frontend JSON leaves out the sandbox token");
	T_OK(json != NULL && strstr(json, "ADMIN-KEY-0123456789") == NULL,
	    "frontend JSON leaves out the admin key (storage decides)");
	fe = json != NULL ? conf_from_json(json) : NULL;
	T_OK(fe != NULL && fe->database == NULL &&
	    fe->storage.secret_key == NULL && fe->storage.access_key == NULL,
	    "frontend configuration has no storage credentials");
	T_OK(fe != NULL && TAILQ_FIRST(&fe->upstreams)->api_key != NULL,
	    "frontend configuration has the upstream key");
	conf_free(fe);
	free(json);

	json = conf_to_json(c, CONF_SECRETS_STORAGE);
	T_OK(json != NULL && strstr(json, "DB-PASSWORD") != NULL &&
	    strstr(json, "S3-SECRET-VALUE") != NULL,
	    "storage JSON has the database password and S3 secret");
	T_OK(json != NULL && strstr(json, "ADMIN-KEY-0123456789") != NULL,
	    "storage JSON has the admin key");
	T_OK(json != NULL && strstr(json, "UPSTREAM-KEY") == NULL &&
	    strstr(json, "SANDBOX-TOKEN") == NULL,
	    "storage JSON has no frontend or broker secrets");
	free(json);

	json = conf_to_json(c, CONF_SECRETS_BROKER);
	T_OK(json != NULL && strstr(json, "SANDBOX-TOKEN") != NULL &&
	    strstr(json, "DB-PASSWORD") == NULL &&
	    strstr(json, "ADMIN-KEY") == NULL,
	    "broker JSON has only the sandbox token");
	free(json);
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

static void
test_bad_json(void)
{
	static const char *bad[] = {
		"", "not json", "[]", "{}", "{\"prefork\": \"two\"}",
	};
	struct depotd_conf	*c, *ok;
	char			*json, *cut;
	size_t			 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c = conf_from_json(bad[i]);
		T_OK(c == NULL, "conf_from_json refuses '%s'", bad[i]);
		conf_free(c);
	}
	ok = parse_text("database \"dbname=x\"\nstorage \"file:///x\"\n");
	json = ok != NULL ? conf_to_json(ok, CONF_SECRETS_ALL) : NULL;
	if (json == NULL) {
		T_OK(0, "minimal configuration serialises");
		conf_free(ok);
		return;
	}
	/* Dropping a required key must be refused, not defaulted. */
	cut = strstr(json, "\"max_headers\"");
	T_OK(cut != NULL, "JSON names max_headers");
	if (cut != NULL) {
		memcpy(cut, "\"max_hxaders\"", 13);
		c = conf_from_json(json);
		T_OK(c == NULL, "conf_from_json refuses a missing field");
		conf_free(c);
	}
	free(json);
	conf_free(ok);
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
		conf_free(c);
	}
	test_bad_json();
	test_conninfo();
	test_parse_errors();
	return t_done();
}
