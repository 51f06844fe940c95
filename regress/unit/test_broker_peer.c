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
 * test_broker_peer.c: the broker leases backend sessions to frontends
 * and leaves none behind.
 *
 *	test_broker_peer DEPOTD CONF MAX-SESSIONS [UNIX-SOCKET TOKEN-FILE]
 *
 * Acts as the master of a real broker (DEPOTD -P broker) configured by
 * CONF's sandbox line, and as a frontend on a channel to it: opens a
 * lease, seeds a file, runs code that reads it and writes another, and
 * checks what the broker says the run produced; then that closing a
 * lease, or the whole channel, destroys the backend's sessions, that
 * past max-sessions a lease is refused with 503, and that a short file
 * is refused rather than sent short.  The backend's own GET /health
 * tells how many sessions it holds (asked over https with the ca-file
 * of CONF's sandbox).  With a socket and a token file,
 * the broker is pointed at them as the master does for `sandbox local'.
 * With BROKER_PEER_RELOAD naming a second configuration, only this: a
 * lease refused under CONF, a reload to the second, a lease that opens.
 * Run by regress/broker/suite.sh,
 * against depot-sandboxd and against regress/broker/minimal.py.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <err.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>
#include <json-c/json.h>

#include "t.h"
#include "peer.h"
#include "imsg.h"
#include "log.h"
#include "privdrop.h"
#include "depotd.h"
#include "roster.h"

static char		 health_url[1100];
static char		 health_sock[1024];
static char		 health_auth[300];
static char		 health_ca[1024];

/* What the master does for `sandbox local': its socket, its token. */
static void
local_sandbox(struct depotd_conf *conf, const char *sock, const char *tokf)
{
	char	 token[256];
	FILE	*f;

	if ((f = fopen(tokf, "r")) == NULL ||
	    fgets(token, sizeof(token), f) == NULL)
		err(1, "%s", tokf);
	fclose(f);
	token[strcspn(token, "\n")] = '\0';
	snprintf(health_auth, sizeof(health_auth),
	    "Authorization: Bearer %s", token);
	free(conf->sandbox_token);
	if ((conf->sandbox_token = strdup(token)) == NULL)
		err(1, "strdup");
	snprintf(conf->sandbox_url, sizeof(conf->sandbox_url), "unix:%s",
	    sock);
}

/* CONF as the master makes it for the broker; who the broker runs as. */
static struct depotd_conf *
load_config(const char *conffile, char *argv[], struct proc_conf_msg *pc)
{
	const struct role	*r = roster_role(ROLE_BROKER);
	struct depotd_conf	*conf;
	struct privuser		 pu;

	if ((conf = parse_config(conffile, 0)) == NULL)
		errx(1, "%s: bad configuration", conffile);
	if (argv[0] != NULL)
		local_sandbox(conf, argv[0], argv[1]);
	/* As the master does: the broker resolves no name itself. */
	conf_resolve_upstreams(conf);
	if (strncmp(conf->sandbox_url, "unix:", 5) == 0) {
		strlcpy(health_sock, conf->sandbox_url + 5,
		    sizeof(health_sock));
		strlcpy(health_url, "http://sandbox/health",
		    sizeof(health_url));
	} else
		snprintf(health_url, sizeof(health_url), "%s/health",
		    conf->sandbox_url);
	/* Over https, the backend is asked with the broker's CA. */
	strlcpy(health_ca, conf->sandbox_ca_file, sizeof(health_ca));
	if (priv_lookup(roster_user(r->user, conf), &pu) == -1)
		errx(1, "no user %s", roster_user(r->user, conf));
	memset(pc, 0, sizeof(*pc));
	strlcpy(pc->user, pu.name, sizeof(pc->user));
	pc->uid = pu.uid;
	pc->gid = pu.gid;
	/* As the master does: the broker's root holds the socket. */
	if (argv[0] != NULL) {
		strlcpy(pc->chroot, argv[0], sizeof(pc->chroot));
		*strrchr(pc->chroot, '/') = '\0';
		if (priv_lookup(roster_user(RUN_AS_SANDBOX, conf), &pu) == -1)
			errx(1, "no sandbox user");
		pc->sgid = pu.gid;
	}
	return conf;
}

static void
send_config(struct event_base *base, int fd, const char *conffile,
    char *argv[])
{
	struct depotd_conf	*conf;
	struct proc_conf_msg	 pc;

	conf = load_config(conffile, argv, &pc);
	peer_configure(base, fd, ROLE_BROKER, conf, &pc);
	conf_free(conf);
}

/* Generation 2, sent as the master sends a reload: 1 once applied. */
static int
reload_config(const char *conffile)
{
	const struct role	*r = roster_role(ROLE_BROKER);
	struct depotd_conf	*conf;
	struct proc_conf_msg	 pc;
	struct imsg		 imsg;
	char			*none[] = { NULL };
	uint32_t		 gen = 2, acked = 0;

	conf = load_config(conffile, none, &pc);
	imsg_compose(&peer_master, IMSG_CONF_BEGIN, 0, 0, -1, &gen,
	    sizeof(gen));
	imsg_compose(&peer_master, IMSG_CONF_PROC, 0, 0, -1, &pc, sizeof(pc));
	conf_send(&peer_master_iev, conf, r->parts, r->secrets);
	imsg_compose(&peer_master, IMSG_CONF_END, 0, 0, -1, NULL, 0);
	imsgbuf_flush(&peer_master);
	conf_free(conf);
	while (acked != gen && peer_next(&peer_master, &imsg, 10000)) {
		if (imsg.hdr.type == IMSG_CONF_ACK &&
		    imsg.datalen == sizeof(acked))
			memcpy(&acked, imsg.data, sizeof(acked));
		imsg_free(&imsg);
	}
	return acked == gen;
}

/* An Execute may take a while. */
#define next_msg(ib, imsg)	peer_next(ib, imsg, 90000)

struct answer {
	uint32_t		 type;
	struct sbx_status	 st;
	struct json_object	*json;	/* a result's */
};

/* Waits for lease id's STATUS or RESULT, gathering DATA pieces. */
static void
answer(struct imsgbuf *ib, uint32_t id, struct answer *a)
{
	struct imsg	 imsg;
	char		*buf = NULL;
	size_t		 len = 0;

	memset(a, 0, sizeof(*a));
	while (next_msg(ib, &imsg)) {
		if (imsg.hdr.peerid != id) {
			imsg_free(&imsg);
			continue;
		}
		if (imsg.hdr.type == IMSG_SBX_DATA) {
			if ((buf = realloc(buf, len + imsg.datalen + 1)) ==
			    NULL)
				err(1, "realloc");
			memcpy(buf + len, imsg.data, imsg.datalen);
			len += imsg.datalen;
			buf[len] = '\0';
			imsg_free(&imsg);
			continue;
		}
		a->type = imsg.hdr.type;
		if (imsg.datalen == sizeof(a->st))
			memcpy(&a->st, imsg.data, sizeof(a->st));
		imsg_free(&imsg);
		break;
	}
	if (buf != NULL)
		a->json = json_tokener_parse(buf);
	free(buf);
}

static void
send_msg(struct imsgbuf *ib, uint32_t type, uint32_t id, int fd,
    const void *data, size_t len)
{
	if (imsg_compose(ib, type, id, 0, fd, data, len) == -1 ||
	    imsgbuf_flush(ib) == -1)
		err(1, "imsg_compose");
}

/* A lease for the caller's key (as the storage helper names keys). */
static void
open_lease_for(struct imsgbuf *ib, uint32_t id, const char *key,
    struct answer *a)
{
	struct sbx_open	 o;

	memset(&o, 0, sizeof(o));
	strlcpy(o.key_id, key, sizeof(o.key_id));
	send_msg(ib, IMSG_SBX_OPEN, id, -1, &o, sizeof(o));
	answer(ib, id, a);
}

/* Each lease of its own key, so that only max-sessions counts. */
static void
open_lease(struct imsgbuf *ib, uint32_t id, struct answer *a)
{
	char	 key[IDLEN];

	snprintf(key, sizeof(key), "key-test-%u", id);
	open_lease_for(ib, id, key, a);
}

/* A pipe carrying data, whose size is said to be size. */
static void
seed(struct imsgbuf *ib, uint32_t id, const char *name, const char *data,
    int64_t size, struct answer *a)
{
	struct sbx_seed	 s;
	int		 p[2];

	if (pipe(p) == -1)
		err(1, "pipe");
	if (write(p[1], data, strlen(data)) != (ssize_t)strlen(data))
		err(1, "write");
	close(p[1]);
	memset(&s, 0, sizeof(s));
	strlcpy(s.name, name, sizeof(s.name));
	s.size = size;
	send_msg(ib, IMSG_SBX_SEED, id, p[0], &s, sizeof(s));
	answer(ib, id, a);
}

static void
exec_code(struct imsgbuf *ib, uint32_t id, const char *code,
    struct answer *a)
{
	struct json_object	*o, *in;
	struct sbx_exec		 e;
	const char		*s;

	o = json_object_new_object();
	in = json_object_new_object();
	json_object_object_add(in, "code", json_object_new_string(code));
	json_object_object_add(o, "tool",
	    json_object_new_string("code_execution"));
	json_object_object_add(o, "input", in);
	s = json_object_to_json_string(o);
	send_msg(ib, IMSG_SBX_DATA, id, -1, s, strlen(s));
	json_object_put(o);
	memset(&e, 0, sizeof(e));
	send_msg(ib, IMSG_SBX_EXEC, id, -1, &e, sizeof(e));
	answer(ib, id, a);
}

static size_t
collect(char *p, size_t size, size_t n, void *arg)
{
	char	*buf = arg;
	size_t	 have = strlen(buf), len = size * n;

	if (have + len < 4096) {
		memcpy(buf + have, p, len);
		buf[have + len] = '\0';
	}
	return len;
}

/* The backend's session count, -1 if it does not say. */
static int
backend_sessions(void)
{
	struct json_object	*o, *v;
	struct curl_slist	*h = NULL;
	CURL			*c;
	char			 buf[4096] = "";
	int			 n = -1;

	if ((c = curl_easy_init()) == NULL)
		return -1;
	curl_easy_setopt(c, CURLOPT_URL, health_url);
	if (health_sock[0] != '\0')
		curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, health_sock);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, buf);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
	if (health_ca[0] != '\0')
		curl_easy_setopt(c, CURLOPT_CAINFO, health_ca);
	if (health_auth[0] != '\0') {
		h = curl_slist_append(h, health_auth);
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	}
	if (curl_easy_perform(c) == CURLE_OK &&
	    (o = json_tokener_parse(buf)) != NULL) {
		if (json_object_object_get_ex(o, "sessions", &v))
			n = json_object_get_int(v);
		json_object_put(o);
	}
	curl_easy_cleanup(c);
	curl_slist_free_all(h);
	return n;
}

/* Waits up to 10 s for the backend to hold want sessions. */
static int
sessions_become(int want)
{
	int	 i, n = -1;

	for (i = 0; i < 100; i++) {
		if ((n = backend_sessions()) == want)
			return n;
		usleep(100000);
	}
	return n;
}

static const char *
result_field(struct answer *a, const char *key)
{
	struct json_object	*b, *c, *v;

	if (!json_object_object_get_ex(a->json, "result_block", &b) ||
	    !json_object_object_get_ex(b, "content", &c) ||
	    !json_object_object_get_ex(c, key, &v))
		return NULL;
	return json_object_get_string(v);
}

static int
produced(struct answer *a, const char *path)
{
	struct json_object	*list, *f, *v;
	size_t			 i;

	if (!json_object_object_get_ex(a->json, "produced", &list))
		return -1;
	if (path == NULL)
		return json_object_array_length(list);
	for (i = 0; i < json_object_array_length(list); i++) {
		f = json_object_array_get_idx(list, i);
		if (json_object_object_get_ex(f, "path", &v) &&
		    strcmp(json_object_get_string(v), path) == 0)
			return 1;
	}
	return 0;
}

static void
test_run(struct imsgbuf *ib)
{
	struct answer	 a;
	const char	*out;
	int		 base = backend_sessions();

	open_lease(ib, 1, &a);
	T_OK(a.type == IMSG_SBX_STATUS && a.st.status == 0,
	    "a lease opens (status %d: %s)", a.st.status, a.st.message);
	T_EQ_INT(backend_sessions(), base + 1,
	    "the backend holds one session more");
	seed(ib, 1, "data.csv", "x,y\n1,2\n", 8, &a);
	T_OK(a.type == IMSG_SBX_STATUS && a.st.status == 0,
	    "a file is seeded from a pipe (%s)", a.st.message);
	exec_code(ib, 1, "d = open('data.csv').read()\n"
	    "open('out.txt', 'w').write(d.upper())\nprint('rows', "
	    "len(d.splitlines()))", &a);
	T_OK(a.type == IMSG_SBX_RESULT && a.st.status == 0 && a.json != NULL,
	    "code runs (status %d: %s)", a.st.status, a.st.message);
	out = result_field(&a, "stdout");
	T_OK(out != NULL && strstr(out, "rows 2") != NULL,
	    "the run read the seeded file");
	T_OK(produced(&a, "out.txt") == 1,
	    "the written file is named as produced");
	T_OK(produced(&a, "data.csv") == 0,
	    "the seeded file is not named as produced");
	json_object_put(a.json);
	exec_code(ib, 1, "print(open('out.txt').read())", &a);
	out = result_field(&a, "stdout");
	T_OK(out != NULL && strstr(out, "X,Y") != NULL,
	    "state persists between runs in a session");
	T_EQ_INT(produced(&a, NULL), 0, "a run that writes nothing produced "
	    "nothing");
	json_object_put(a.json);
	exec_code(ib, 1, "import sys; print('bad', file=sys.stderr); "
	    "sys.exit(3)", &a);
	T_OK(a.type == IMSG_SBX_RESULT && a.st.status == 0 &&
	    result_field(&a, "return_code") != NULL &&
	    strcmp(result_field(&a, "return_code"), "3") == 0,
	    "a failing program is a result with its return code, not an "
	    "error");
	json_object_put(a.json);
	seed(ib, 1, "short.bin", "abc", 10, &a);
	T_OK(a.type == IMSG_SBX_STATUS && a.st.status == 502,
	    "a file shorter than it says is refused, not sent short");
	send_msg(ib, IMSG_SBX_CLOSE, 1, -1, NULL, 0);
	T_EQ_INT(sessions_become(base), base,
	    "closing the lease destroys its session");
}

static void
test_capacity(struct imsgbuf *ib, int max)
{
	struct answer	 a;
	uint32_t	 id;
	int		 ok = 1, base = backend_sessions();

	for (id = 100; id < 100 + (uint32_t)max; id++) {
		open_lease(ib, id, &a);
		ok &= a.type == IMSG_SBX_STATUS && a.st.status == 0;
	}
	T_OK(ok, "%d leases open at once", max);
	open_lease(ib, id, &a);
	T_OK(a.type == IMSG_SBX_STATUS && a.st.status == 503,
	    "lease %d is refused with 503 (%s)", max + 1, a.st.message);
	send_msg(ib, IMSG_SBX_CLOSE, id, -1, NULL, 0);
	send_msg(ib, IMSG_SBX_CLOSE, 100, -1, NULL, 0);
	open_lease(ib, id + 1, &a);
	T_OK(a.type == IMSG_SBX_STATUS && a.st.status == 0,
	    "after one closes, another opens");
	T_EQ_INT(backend_sessions(), base + max,
	    "the backend holds exactly the open leases");
}

/*
 * One key holds at most max-sessions-per-key (by default half of
 * max-sessions) at once; past it a lease is refused with 429 and
 * another key still gets one.
 */
static void
test_per_key(struct imsgbuf *ib, int max)
{
	struct answer	 a;
	uint32_t	 id;
	int		 ok = 1, share = max / 2 > 0 ? max / 2 : 1;
	int		 base = backend_sessions();

	for (id = 200; id < 200 + (uint32_t)share; id++) {
		open_lease_for(ib, id, "key-greedy", &a);
		ok &= a.type == IMSG_SBX_STATUS && a.st.status == 0;
	}
	T_OK(ok, "one key opens %d leases (half of max-sessions %d)", share,
	    max);
	open_lease_for(ib, id, "key-greedy", &a);
	T_OK(a.type == IMSG_SBX_STATUS && a.st.status == 429,
	    "its next lease is refused with 429 (%d: %s)", a.st.status,
	    a.st.message);
	send_msg(ib, IMSG_SBX_CLOSE, id, -1, NULL, 0);
	T_EQ_INT(backend_sessions(), base + share,
	    "the refused lease made no session at the backend");
	open_lease_for(ib, id + 1, "key-modest", &a);
	T_OK(a.type == IMSG_SBX_STATUS && a.st.status == 0,
	    "another key still gets one (%d: %s)", a.st.status,
	    a.st.message);
	send_msg(ib, IMSG_SBX_CLOSE, 200, -1, NULL, 0);
	open_lease_for(ib, id + 2, "key-greedy", &a);
	T_OK(a.type == IMSG_SBX_STATUS && a.st.status == 0,
	    "once one of its leases closes, the first key gets another");
	for (id = 201; id < 200 + (uint32_t)share; id++)
		send_msg(ib, IMSG_SBX_CLOSE, id, -1, NULL, 0);
	send_msg(ib, IMSG_SBX_CLOSE, 200 + share + 1, -1, NULL, 0);
	send_msg(ib, IMSG_SBX_CLOSE, 200 + share + 2, -1, NULL, 0);
	T_EQ_INT(sessions_become(base), base, "and every one of them goes");
}

/*
 * A lease refused under the first configuration (a backend whose
 * certificate its ca-file refuses), then one that opens once a reload
 * brings the right CA bundle.
 */
static void
test_reload(struct imsgbuf *ib, const char *conffile)
{
	struct answer	 a;
	int		 before;

	open_lease(ib, 1, &a);
	T_OK(a.type == IMSG_SBX_STATUS && a.st.status == 502,
	    "before the reload a lease is refused with 502 (%s)",
	    a.st.message);
	T_OK(reload_config(conffile), "the broker applies a reload");
	before = backend_sessions();
	T_OK(before >= 0, "the backend answers");
	open_lease(ib, 2, &a);
	T_OK(a.type == IMSG_SBX_STATUS && a.st.status == 0,
	    "after the reload a lease opens (status %d: %s)", a.st.status,
	    a.st.message);
	T_EQ_INT(backend_sessions(), before + 1,
	    "the backend holds its session");
	send_msg(ib, IMSG_SBX_CLOSE, 2, -1, NULL, 0);
	T_EQ_INT(sessions_become(before), before,
	    "closing the lease destroys its session");
}


/* As the storage helper: grant container id to frontend fe, as nonce. */
static void
grant(struct imsgbuf *st, const char *nonce, int fe, const char *id)
{
	struct cntr_grant	 g;

	memset(&g, 0, sizeof(g));
	strlcpy(g.grant, nonce, sizeof(g.grant));
	g.frontend = fe;
	strlcpy(g.id, id, sizeof(g.id));
	g.idle_seconds = 600;
	g.life_seconds = 3600;
	send_msg(st, IMSG_CNTR_GRANT, 0, -1, &g, sizeof(g));
}

static void
send_open_grant(struct imsgbuf *ib, uint32_t id, const char *nonce)
{
	struct sbx_open	 o;

	memset(&o, 0, sizeof(o));
	snprintf(o.key_id, sizeof(o.key_id), "key-grant-%u", id);
	strlcpy(o.grant, nonce, sizeof(o.grant));
	send_msg(ib, IMSG_SBX_OPEN, id, -1, &o, sizeof(o));
}

/* The session the broker reports it made for a container, or "". */
static void
bound(struct imsgbuf *st, char *session, size_t len)
{
	struct imsg		 imsg;
	struct cntr_bound	 b;

	session[0] = '\0';
	while (session[0] == '\0' && peer_next(st, &imsg, 10000)) {
		if (imsg.hdr.type == IMSG_CNTR_BOUND &&
		    imsg.datalen == sizeof(b)) {
			memcpy(&b, imsg.data, sizeof(b));
			b.session[sizeof(b.session) - 1] = '\0';
			strlcpy(session, b.session, len);
		}
		imsg_free(&imsg);
	}
}

#define NONCE_A	"grt_0123456789abcdef0123456789abcdef"
#define NONCE_B	"grt_fedcba9876543210fedcba9876543210"
#define CNTR_A	"cntr_00000000000000000000000000000001"

/* A compromised frontend names sessions it was not granted. */
static void
test_grants(struct imsgbuf *fe, struct imsgbuf *fe1, struct imsgbuf *st)
{
	struct answer		 a;
	struct cntr_destroy	 d;
	char			 session[CNTR_SESSION_MAX];
	int			 before = backend_sessions();

	/*
	 * On frontend 1: a nonce never granted, and frontend 0's.  Each
	 * waits out the broker's wait for its grant, so they are answered
	 * last, meanwhile frontend 0 uses its own.
	 */
	grant(st, NONCE_B, 0, CNTR_A);
	send_open_grant(fe1, 300, "grt_00000000000000000000000000000000");
	send_open_grant(fe1, 301, NONCE_B);
	grant(st, NONCE_A, 0, CNTR_A);
	send_open_grant(fe, 302, NONCE_A);
	answer(fe, 302, &a);
	T_OK(a.type == IMSG_SBX_STATUS && a.st.status == 0,
	    "the grant opens the container's lease for its frontend (%d %s)",
	    a.st.status, a.st.message);
	bound(st, session, sizeof(session));
	T_OK(session[0] != '\0', "the container's new session is reported");
	send_msg(fe, IMSG_SBX_CLOSE, 302, -1, NULL, 0);
	send_open_grant(fe, 303, NONCE_A);
	answer(fe1, 300, &a);
	T_OK(a.type == IMSG_SBX_STATUS && a.st.status == 403,
	    "a grant never made opens nothing (%d)", a.st.status);
	answer(fe1, 301, &a);
	T_OK(a.type == IMSG_SBX_STATUS && a.st.status == 403,
	    "another frontend's grant opens nothing (%d)", a.st.status);
	answer(fe, 303, &a);
	T_OK(a.type == IMSG_SBX_STATUS && a.st.status == 403,
	    "a grant opens once (%d)", a.st.status);
	T_EQ_INT(backend_sessions(), before + 1, "only the granted lease "
	    "made a session, and it outlives its lease");
	/* As a frontend does with a refused lease. */
	send_msg(fe1, IMSG_SBX_CLOSE, 300, -1, NULL, 0);
	send_msg(fe1, IMSG_SBX_CLOSE, 301, -1, NULL, 0);
	send_msg(fe, IMSG_SBX_CLOSE, 303, -1, NULL, 0);
	memset(&d, 0, sizeof(d));
	strlcpy(d.session, session, sizeof(d.session));
	send_msg(st, IMSG_CNTR_DESTROY, 0, -1, &d, sizeof(d));
	T_EQ_INT(sessions_become(before), before, "the storage helper's "
	    "word destroys it");
}

int
main(int argc, char *argv[])
{
	struct event_base	*base;
	struct imsgbuf		 fe, fe1, st;
	int			 fd, status, ready = 0, max, before;
	const char		*reload = getenv("BROKER_PEER_RELOAD");
	pid_t			 pid;

	if (argc != 4 && argc != 6)
		errx(1, "usage: test_broker_peer depotd conf max-sessions "
		    "[socket token-file]");
	max = atoi(argv[3]);
	signal(SIGPIPE, SIG_IGN);
	log_init("test_broker_peer", 1, 0);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if ((base = event_base_new()) == NULL)
		errx(1, "event_base_new");
	pid = peer_spawn(argv[1], "broker", &fd);
	send_config(base, fd, argv[2], argv + 4);
	peer_channel(ROLE_FRONTEND, 0, &fe);
	peer_channel(ROLE_FRONTEND, 1, &fe1);
	peer_channel(ROLE_STORAGE, 0, &st);
	ready = peer_start();
	T_OK(ready, "the broker starts under a test master");
	if (ready && reload != NULL)
		test_reload(&fe, reload);
	else if (ready) {
		before = backend_sessions();
		T_OK(before >= 0, "the backend answers");
		test_run(&fe);
		test_grants(&fe, &fe1, &st);
		test_per_key(&fe, max);
		test_capacity(&fe, max);
		/* A frontend that dies takes its leases with it. */
		close(fe.fd);
		imsgbuf_clear(&fe);
		T_EQ_INT(sessions_become(before), before, "the channel's end "
		    "destroys every session it leased");
		T_OK(kill(pid, 0) == 0, "the broker is still up");
	}
	if (pid > 1) {
		kill(pid, SIGTERM);
		waitpid(pid, &status, 0);
	}
	return t_done();
}
