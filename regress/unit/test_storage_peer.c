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
 * test_storage_peer.c: the storage helper takes no child's word for
 * who the caller is.
 *
 *	test_storage_peer DEPOTD CONF ALICE_TOKEN ALICE_FILE BOB_FILE ADMIN
 *
 * Acts as the master of a real storage helper (DEPOTD -P storage) on
 * the database and store of CONF, and hands it three channels: two
 * frontends and a broker.  Then plays a compromised frontend: it names
 * another tenant's file, uses another channel's handle, a released one
 * and a made-up one, and asks for a user without the admin key; each
 * must get an error and no data.  The same requests done properly get
 * the data, so that the refusals are not just a broken helper.  Then
 * what the helper caches and for how long, changing the database behind
 * its back as another host would.  Last, the broker asks for a file and
 * gets nothing.  Run by regress/files/trust.sh, which has depotd, its
 * database and the two files.
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

#include <libpq-fe.h>

#include "t.h"
#include "peer.h"
#include "imsg.h"
#include "log.h"
#include "util.h"
#include "privdrop.h"
#include "depotd.h"
#include "roster.h"

#define master	 peer_master
static char		*conninfo;	/* the helper's database */

/*
 * The master's part of start-up, as master_proc.c does it: who the helper
 * runs as, then the parts and secrets its roster row names.
 */
static void
send_config(struct event_base *base, int fd, const char *conffile)
{
	const struct role	*r = roster_role(ROLE_STORAGE);
	struct depotd_conf	*conf;
	struct proc_conf_msg	 pc;
	struct privuser		 pu;

	if ((conf = parse_config(conffile, 0)) == NULL)
		errx(1, "%s: bad configuration", conffile);
	if ((conninfo = strdup(conf->database)) == NULL)
		err(1, "strdup");
	if (priv_lookup(roster_user(r->user, conf), &pu) == -1)
		errx(1, "no user %s", roster_user(r->user, conf));
	memset(&pc, 0, sizeof(pc));
	strlcpy(pc.user, pu.name, sizeof(pc.user));
	pc.uid = pu.uid;
	pc.gid = pu.gid;
	peer_configure(base, fd, ROLE_STORAGE, conf, &pc);
	conf_free(conf);
}

#define channel(role, instance, ib)	peer_channel(role, instance, ib)
#define next_msg(ib, imsg)		peer_next(ib, imsg, 10000)

/* What a request got back: its first reply's type, status and fd. */
struct answer {
	uint32_t		 type;
	int			 status;	/* IMSG_ERROR's */
	int			 fd;
	int			 items;		/* list items */
	struct auth_result	 auth;
	struct file_rec		 rec;
	char			 seen[64][IDLEN]; /* ids listed */
};

static void
ask(struct imsgbuf *ib, uint32_t type, const void *data, size_t len,
    struct answer *a)
{
	static uint32_t	 next_id = 1;
	struct imsg	 imsg;
	struct error_msg em;
	uint32_t	 id = next_id++;

	memset(a, 0, sizeof(*a));
	a->fd = -1;
	imsg_compose(ib, type, id, 0, -1, data, len);
	if (imsgbuf_flush(ib) == -1)
		err(1, "imsgbuf_flush");
	while (next_msg(ib, &imsg)) {
		if (imsg.hdr.peerid != id) {
			imsg_free(&imsg);
			continue;
		}
		a->type = imsg.hdr.type;
		a->fd = imsg_get_fd(&imsg);
		if (a->type == IMSG_ERROR && imsg.datalen == sizeof(em)) {
			memcpy(&em, imsg.data, sizeof(em));
			a->status = em.status;
		} else if (a->type == IMSG_AUTH_RESULT &&
		    imsg.datalen == sizeof(a->auth))
			memcpy(&a->auth, imsg.data, sizeof(a->auth));
		else if (imsg.datalen == sizeof(a->rec))
			memcpy(&a->rec, imsg.data, sizeof(a->rec));
		if (a->type == IMSG_FILE_LIST_ITEM) {
			if (a->items < 64)
				strlcpy(a->seen[a->items], a->rec.id, IDLEN);
			a->items++;
			imsg_free(&imsg);
			continue;
		}
		imsg_free(&imsg);
		return;
	}
	a->type = IMSG_NONE;
}

static void
lookup(struct imsgbuf *ib, const char *token, const char *user,
    struct answer *a)
{
	struct auth_lookup	 al;

	memset(&al, 0, sizeof(al));
	sha256_hex(token, strlen(token), al.token_sha256);
	strlcpy(al.user_name, user, sizeof(al.user_name));
	ask(ib, IMSG_AUTH_LOOKUP, &al, sizeof(al), a);
}

static void
keyed(struct imsgbuf *ib, uint32_t type, const char *handle, const char *id,
    struct answer *a)
{
	struct file_key		 fk;
	struct file_open	 fo;

	memset(&fk, 0, sizeof(fk));
	strlcpy(fk.handle, handle, sizeof(fk.handle));
	strlcpy(fk.id, id, sizeof(fk.id));
	if (type != IMSG_FILE_OPEN) {
		ask(ib, type, &fk, sizeof(fk), a);
		return;
	}
	memset(&fo, 0, sizeof(fo));
	fo.key = fk;
	fo.range_first = fo.range_last = -1;
	ask(ib, type, &fo, sizeof(fo), a);
}

static void
list_limit(struct imsgbuf *ib, const char *handle, int limit,
    struct answer *a)
{
	struct file_list_req	*l;

	if ((l = calloc(1, sizeof(*l))) == NULL)
		err(1, "calloc");
	strlcpy(l->handle, handle, sizeof(l->handle));
	l->limit = limit;
	ask(ib, IMSG_FILE_LIST, l, sizeof(*l), a);
	free(l);
}

static void
list(struct imsgbuf *ib, const char *handle, struct answer *a)
{
	list_limit(ib, handle, 1000, a);
}

static int
listed(const struct answer *a, const char *id)
{
	int	 i;

	for (i = 0; i < a->items && i < 64; i++)
		if (strcmp(a->seen[i], id) == 0)
			return 1;
	return 0;
}

/* Refused: an error, no descriptor, no record. */
static int
refused(struct answer *a)
{
	int	 ok = a->type == IMSG_ERROR && a->fd == -1 && a->items == 0;

	if (a->fd != -1)
		close(a->fd);
	return ok;
}

static void
test_tenants(struct imsgbuf *fa, const char *alice, const char *alice_file,
    const char *bob_file, char *ha)
{
	struct answer	 a;
	int		 i;

	/* The helper's database pool connects in the background. */
	for (i = 0; i < 100; i++) {
		lookup(fa, alice, "", &a);
		if (a.type != IMSG_AUTH_RESULT ||
		    a.auth.status != AUTH_UNAVAILABLE)
			break;
		usleep(100000);
	}
	T_OK(a.type == IMSG_AUTH_RESULT && a.auth.status == AUTH_OK &&
	    strncmp(a.auth.handle, "hdl-", 4) == 0 && !a.auth.admin,
	    "alice's key gets a handle");
	strlcpy(ha, a.auth.handle, HANDLE_LEN);
	keyed(fa, IMSG_FILE_GET, ha, alice_file, &a);
	T_OK(a.type == IMSG_FILE_INFO && strcmp(a.rec.id, alice_file) == 0,
	    "alice's handle reads alice's file");
	keyed(fa, IMSG_FILE_GET, ha, bob_file, &a);
	T_OK(refused(&a) && a.status == 404,
	    "alice's handle naming bob's file: 404, no record");
	keyed(fa, IMSG_FILE_OPEN, ha, bob_file, &a);
	T_OK(refused(&a) && a.status == 404,
	    "opening bob's file under alice's handle: 404, no descriptor");
	keyed(fa, IMSG_FILE_DELETE, ha, bob_file, &a);
	T_OK(refused(&a) && a.status == 404,
	    "deleting bob's file under alice's handle: 404");
	list(fa, ha, &a);
	T_OK(a.type == IMSG_FILE_LIST_END && listed(&a, alice_file) &&
	    !listed(&a, bob_file), "alice's listing has hers, not bob's");
	lookup(fa, alice, "bob", &a);
	T_OK(a.auth.status == AUTH_OK, "alice's key naming bob: looked up");
	keyed(fa, IMSG_FILE_GET, a.auth.handle, bob_file, &a);
	T_OK(refused(&a) && a.status == 404,
	    "a key naming another user still only reaches its own files");
}

static void
test_channels(struct imsgbuf *fa, struct imsgbuf *fb, const char *ha,
    const char *alice_file)
{
	struct answer		 a;
	struct file_create	 fc;

	keyed(fb, IMSG_FILE_GET, ha, alice_file, &a);
	T_OK(refused(&a) && a.status == 401,
	    "another frontend using alice's handle: 401, no record");
	keyed(fb, IMSG_FILE_OPEN, ha, alice_file, &a);
	T_OK(refused(&a), "another frontend opening with it: no descriptor");
	list(fb, ha, &a);
	T_OK(refused(&a), "another frontend listing with it: no items");
	memset(&fc, 0, sizeof(fc));
	strlcpy(fc.handle, ha, sizeof(fc.handle));
	strlcpy(fc.rec.filename, "intruder.txt", sizeof(fc.rec.filename));
	ask(fb, IMSG_FILE_CREATE, &fc, sizeof(fc), &a);
	T_OK(refused(&a), "another frontend creating with it: no descriptor");
	keyed(fb, IMSG_FILE_DELETE, ha, alice_file, &a);
	T_OK(refused(&a), "another frontend deleting with it: refused");
	keyed(fa, IMSG_FILE_GET, ha, alice_file, &a);
	T_OK(a.type == IMSG_FILE_INFO, "alice's file is still there");
	keyed(fa, IMSG_FILE_GET, "hdl-0123456789abcdef0123456789abcdef",
	    alice_file, &a);
	T_OK(refused(&a) && a.status == 401, "a made-up handle: 401");
}

static void
test_admin(struct imsgbuf *fa, const char *admin, const char *bob_file)
{
	struct answer	 a;

	lookup(fa, "dpt-not-the-admin-key-0123456789", "bob", &a);
	T_OK(a.type == IMSG_AUTH_RESULT && a.auth.status != AUTH_OK &&
	    a.auth.handle[0] == '\0',
	    "a lookup naming bob without the admin key gets no handle");
	lookup(fa, admin, "", &a);
	T_OK(a.auth.status == AUTH_OK && a.auth.admin &&
	    a.auth.handle[0] == '\0',
	    "the admin key naming nobody: admin, but no handle yet");
	lookup(fa, admin, "bob", &a);
	T_OK(a.auth.status == AUTH_OK && a.auth.admin &&
	    a.auth.handle[0] != '\0', "the admin key naming bob: a handle");
	keyed(fa, IMSG_FILE_GET, a.auth.handle, bob_file, &a);
	T_OK(a.type == IMSG_FILE_INFO, "the admin's handle for bob reads "
	    "bob's file");
}

/* A lookup whose "hash" is whatever a compromised frontend sends. */
static void
lookup_raw(struct imsgbuf *ib, const char *hash, struct answer *a)
{
	struct auth_lookup	 al;

	memset(&al, 0, sizeof(al));
	memcpy(al.token_sha256, hash, strlen(hash) < sizeof(al.token_sha256) ?
	    strlen(hash) : sizeof(al.token_sha256) - 1);
	ask(ib, IMSG_AUTH_LOOKUP, &al, sizeof(al), a);
}

static int
no_handle(const struct answer *a)
{
	return a->type == IMSG_AUTH_RESULT && a->auth.status != AUTH_OK &&
	    a->auth.handle[0] == '\0' && !a->auth.admin;
}

/*
 * Only 64 lowercase hex digits are a token's hash: the admin key's
 * answer for bob, cached under bob's name just now, is not what a
 * frontend gets by sending that name as a hash.
 */
static void
test_hash_forms(struct imsgbuf *fa, const char *alice, const char *bob_file)
{
	struct answer	 a;
	char		 hash[SHA256_HEXLEN], *p;

	lookup_raw(fa, "3:bob\ndefault", &a);
	T_OK(no_handle(&a), "a \"hash\" naming the admin's cached lookup "
	    "for bob gets no handle (status %d)", a.auth.status);
	if (a.auth.handle[0] != '\0') {
		keyed(fa, IMSG_FILE_GET, a.auth.handle, bob_file, &a);
		T_OK(refused(&a), "and reads none of bob's files");
	}
	sha256_hex(alice, strlen(alice), hash);
	for (p = hash; *p != '\0'; p++)
		if (*p >= 'a' && *p <= 'f')
			*p -= 'a' - 'A';
	lookup_raw(fa, hash, &a);
	T_OK(no_handle(&a), "alice's hash in upper case: no handle");
	sha256_hex(alice, strlen(alice), hash);
	hash[63] = '\0';
	lookup_raw(fa, hash, &a);
	T_OK(no_handle(&a), "63 of its 64 digits: no handle");
	sha256_hex(alice, strlen(alice), hash);
	hash[10] = 'g';
	lookup_raw(fa, hash, &a);
	T_OK(no_handle(&a), "a digit that is not hex: no handle");
	lookup(fa, alice, "", &a);
	T_OK(a.auth.status == AUTH_OK && a.auth.handle[0] != '\0',
	    "alice's real hash still gets her handle");
}

/* A frontend's nonsense is refused, and the helper lives on. */
static void
test_nonsense(struct imsgbuf *fa, const char *ha)
{
	struct answer	 a;

	list_limit(fa, ha, 0, &a);
	T_OK(refused(&a) && a.status == 400, "a listing of 0 files: 400");
	list_limit(fa, ha, 1000000, &a);
	T_OK(refused(&a) && a.status == 400,
	    "a listing of a million files: 400");
	list(fa, ha, &a);
	T_OK(a.type == IMSG_FILE_LIST_END,
	    "the helper still answers the same channel");
}

static void
test_release(struct imsgbuf *fa, const char *ha, const char *alice_file)
{
	struct auth_release	 rel;
	struct answer		 a;

	memset(&rel, 0, sizeof(rel));
	strlcpy(rel.handle, ha, sizeof(rel.handle));
	imsg_compose(fa, IMSG_AUTH_RELEASE, 0, 0, -1, &rel, sizeof(rel));
	keyed(fa, IMSG_FILE_GET, ha, alice_file, &a);
	T_OK(refused(&a) && a.status == 401, "a released handle: 401");
}

/* Runs one statement on the database, as another host would. */
static void
sql(PGconn *pg, const char *q, const char *token)
{
	PGresult	*res;
	const char	*params[1];
	char		 hash[SHA256_HEXLEN];

	sha256_hex(token, strlen(token), hash);
	params[0] = hash;
	res = PQexecParams(pg, q, 1, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		errx(1, "%s: %s", q, PQresultErrorMessage(res));
	PQclear(res);
}

/* A key for the first key's user and workspace, behind the helper's back. */
#define SQL_KEY_INSERT						\
	"insert into api_keys (id, prefix, token_sha256, user_id, "	\
	"workspace_id) select 'key-' || md5($1), 'dpt-cache', $1, "	\
	"user_id, workspace_id from api_keys order by created_at limit 1"

static int
status_of(struct imsgbuf *ib, const char *token)
{
	struct answer	 a;

	lookup(ib, token, "", &a);
	return a.type == IMSG_AUTH_RESULT ? a.auth.status : -1;
}

/*
 * What the helper caches, and for how long: a flood of unknown tokens
 * must not push the keys in use out, a negative answer is cached too,
 * and a change made on another host shows within AUTH_CACHE_TTL (5 s).
 */
static void
test_cache(struct imsgbuf *fa)
{
	PGconn	*pg;
	char	 good[64], late[64], flood[64];
	int	 i, unknown = 0;

	pg = PQconnectdb(conninfo);
	if (PQstatus(pg) != CONNECTION_OK)
		errx(1, "database: %s", PQerrorMessage(pg));
	snprintf(good, sizeof(good), "dpt-cache-good-%d", (int)getpid());
	snprintf(late, sizeof(late), "dpt-cache-late-%d", (int)getpid());
	sql(pg, SQL_KEY_INSERT, good);
	T_OK(status_of(fa, good) == AUTH_OK, "a fresh key is looked up");
	T_OK(status_of(fa, late) == AUTH_UNKNOWN, "an unknown token: unknown");
	for (i = 0; i < 600; i++) {
		snprintf(flood, sizeof(flood), "dpt-flood-%d-%d", (int)getpid(),
		    i);
		unknown += status_of(fa, flood) == AUTH_UNKNOWN;
	}
	T_OK(unknown == 600, "600 more unknown tokens: all unknown");
	/* Another host revokes the key and creates the unknown one. */
	sql(pg, "update api_keys set revoked_at = now() where "
	    "token_sha256 = $1", good);
	sql(pg, SQL_KEY_INSERT, late);
	T_OK(status_of(fa, good) == AUTH_OK,
	    "the flood did not push the key in use out of the cache");
	T_OK(status_of(fa, late) == AUTH_UNKNOWN,
	    "the unknown answer is cached: no query per repeat");
	sleep(6);
	T_OK(status_of(fa, good) == AUTH_REVOKED,
	    "a key revoked on another host is refused within 5 s");
	T_OK(status_of(fa, late) == AUTH_OK,
	    "a token unknown 5 s ago is looked up again");
	sql(pg, "delete from api_keys where token_sha256 = $1", good);
	sql(pg, "delete from api_keys where token_sha256 = $1", late);
	PQfinish(pg);
}

/*
 * The broker's channel carries nothing yet (proto.c): a file message on
 * it gets no answer and, as for any message outside a channel between
 * depotd's own processes, ends the helper; the master would take that
 * as a lost child and stop.  Run last.  1 when the helper is gone (and
 * reaped).
 */
static void
delegate(struct imsgbuf *ib, const char *handle, struct answer *a)
{
	struct auth_release	 rel;

	memset(&rel, 0, sizeof(rel));
	strlcpy(rel.handle, handle, sizeof(rel.handle));
	ask(ib, IMSG_AUTH_DELEGATE, &rel, sizeof(rel), a);
}

static void
create_as(struct imsgbuf *ib, const char *handle, struct answer *a)
{
	struct file_create	 fc;

	memset(&fc, 0, sizeof(fc));
	strlcpy(fc.handle, handle, sizeof(fc.handle));
	strlcpy(fc.rec.filename, "out.txt", sizeof(fc.rec.filename));
	strlcpy(fc.rec.mime_type, "text/plain", sizeof(fc.rec.mime_type));
	strlcpy(fc.rec.purpose, "assistants", sizeof(fc.rec.purpose));
	fc.rec.source = SOURCE_UPLOAD;
	ask(ib, IMSG_FILE_CREATE, &fc, sizeof(fc), a);
}

static void
release(struct imsgbuf *ib, const char *handle)
{
	struct auth_release	 rel;

	memset(&rel, 0, sizeof(rel));
	strlcpy(rel.handle, handle, sizeof(rel.handle));
	imsg_compose(ib, IMSG_AUTH_RELEASE, 0, 0, -1, &rel, sizeof(rel));
	if (imsgbuf_flush(ib) == -1)
		err(1, "imsgbuf_flush");
}

static void
commit_as(struct imsgbuf *ib, const char *handle, const char *id,
    struct answer *a)
{
	struct file_commit	 fc;

	memset(&fc, 0, sizeof(fc));
	strlcpy(fc.key.handle, handle, sizeof(fc.key.handle));
	strlcpy(fc.key.id, id, sizeof(fc.key.id));
	fc.bytes = 2;
	sha256_hex("hi", 2, fc.sha256);
	ask(ib, IMSG_FILE_COMMIT, &fc, sizeof(fc), a);
}

/*
 * A lent handle ends with the one it was lent from: a broker that
 * keeps it past the request creates and commits nothing more, and an
 * upload it had under way goes too.
 */
static void
test_lent_ends(struct imsgbuf *fa, struct imsgbuf *bk, const char *alice,
    const char *ha, const char *hd)
{
	struct answer	 a;
	char		 id[IDLEN], fresh[HANDLE_LEN];

	create_as(bk, hd, &a);
	T_OK(a.type == IMSG_FILE_CREATED && a.fd != -1,
	    "while alice's handle lives, the broker's creates an upload");
	if (a.fd != -1) {
		if (write(a.fd, "hi", 2) != 2)
			err(1, "write");
		close(a.fd);
	}
	strlcpy(id, a.rec.id, sizeof(id));
	release(fa, ha);
	commit_as(bk, hd, id, &a);
	T_OK(refused(&a) && a.status == 401, "alice's frontend releases her "
	    "handle: the broker's upload under the lent one is refused "
	    "(%d)", a.status);
	create_as(bk, hd, &a);
	T_OK(refused(&a) && a.status == 401,
	    "and the lent handle creates nothing more (%d)", a.status);
	lookup(fa, alice, "", &a);
	strlcpy(fresh, a.auth.handle, sizeof(fresh));
	keyed(fa, IMSG_FILE_GET, fresh, id, &a);
	T_OK(refused(&a) && a.status == 404,
	    "nor is that upload a file of alice's (%d)", a.status);
}

/*
 * A frontend lends the broker its caller for code execution: the
 * broker may then create files for that caller, marked as output,
 * and nothing with a handle of a frontend's channel.
 */
static void
test_delegation(struct imsgbuf *fa, struct imsgbuf *fb, struct imsgbuf *bk,
    const char *alice)
{
	struct answer		 a;
	struct file_commit	 fc;
	char			 ha[HANDLE_LEN], hd[HANDLE_LEN], id[IDLEN];

	lookup(fa, alice, "", &a);
	strlcpy(ha, a.auth.handle, sizeof(ha));
	create_as(bk, ha, &a);
	T_OK(refused(&a) && a.status == 401,
	    "the broker creating under a frontend's handle: 401");
	delegate(fb, ha, &a);
	T_OK(a.type == IMSG_AUTH_RESULT && a.auth.status != AUTH_OK &&
	    a.auth.handle[0] == '\0',
	    "another frontend cannot lend alice's handle");
	delegate(fa, ha, &a);
	T_OK(a.type == IMSG_AUTH_RESULT && a.auth.status == AUTH_OK &&
	    strncmp(a.auth.handle, "hdl-", 4) == 0 &&
	    strcmp(a.auth.handle, ha) != 0,
	    "alice's frontend lends her handle: a new one");
	strlcpy(hd, a.auth.handle, sizeof(hd));
	create_as(fa, hd, &a);
	T_OK(refused(&a) && a.status == 401,
	    "the lent handle is worth nothing on the frontend's channel");
	create_as(bk, hd, &a);
	T_OK(a.type == IMSG_FILE_CREATED && a.fd != -1 &&
	    a.rec.source == SOURCE_CODE_EXECUTION &&
	    strcmp(a.rec.purpose, "code_execution_output") == 0,
	    "the broker creates under it, as code-execution output (%s)",
	    a.rec.purpose);
	if (a.fd == -1)
		return;
	if (write(a.fd, "hi", 2) != 2)
		err(1, "write");
	close(a.fd);
	strlcpy(id, a.rec.id, sizeof(id));
	memset(&fc, 0, sizeof(fc));
	strlcpy(fc.key.handle, hd, sizeof(fc.key.handle));
	strlcpy(fc.key.id, id, sizeof(fc.key.id));
	fc.bytes = 2;
	sha256_hex("hi", 2, fc.sha256);
	strlcpy(fc.purpose, "assistants", sizeof(fc.purpose));
	ask(bk, IMSG_FILE_COMMIT, &fc, sizeof(fc), &a);
	T_OK(a.type == IMSG_FILE_INFO && strcmp(a.rec.id, id) == 0,
	    "and commits it");
	keyed(fa, IMSG_FILE_GET, ha, id, &a);
	T_OK(a.type == IMSG_FILE_INFO && strcmp(a.rec.purpose,
	    "code_execution_output") == 0 && a.rec.bytes == 2,
	    "alice sees it, as code_execution_output whatever the commit "
	    "said (%s)", a.rec.purpose);
	test_lent_ends(fa, bk, alice, ha, hd);
}

static int
test_broker(struct imsgbuf *bk, pid_t pid, const char *ha,
    const char *alice_file)
{
	struct answer	 a;
	int		 i, status, gone = 0;

	keyed(bk, IMSG_FILE_GET, ha, alice_file, &a);
	T_OK(a.type == IMSG_NONE && a.fd == -1,
	    "the broker asking for alice's file gets no answer");
	for (i = 0; i < 50 && !gone; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			gone = 1;
		else
			usleep(100000);
	}
	T_OK(gone, "a file message on the broker's channel stops the helper");
	return gone;
}

int
main(int argc, char *argv[])
{
	struct event_base	*base;
	struct imsgbuf		 fa, fb, bk;
	char			 ha[HANDLE_LEN];
	int			 fd, status, ready = 0, gone = 0;
	pid_t			 pid;

	if (argc != 7)
		errx(1, "usage: test_storage_peer depotd conf alice-token "
		    "alice-file bob-file admin-key");
	signal(SIGPIPE, SIG_IGN);
	log_init("test_storage_peer", 1, 0);
	if ((base = event_base_new()) == NULL)
		errx(1, "event_base_new");
	pid = peer_spawn(argv[1], "storage", &fd);
	send_config(base, fd, argv[2]);
	channel(ROLE_FRONTEND, 0, &fa);
	channel(ROLE_FRONTEND, 1, &fb);
	channel(ROLE_BROKER, 0, &bk);
	ready = peer_start();
	T_OK(ready, "the storage helper starts under a test master");
	if (ready) {
		test_tenants(&fa, argv[3], argv[4], argv[5], ha);
		test_channels(&fa, &fb, ha, argv[4]);
		test_admin(&fa, argv[6], argv[5]);
		test_hash_forms(&fa, argv[3], argv[5]);
		test_nonsense(&fa, ha);
		test_release(&fa, ha, argv[4]);
		test_cache(&fa);
		test_delegation(&fa, &fb, &bk, argv[3]);
		gone = test_broker(&bk, pid, ha, argv[4]);
	}
	/* Our own child only, and only while it is not yet reaped. */
	if (!gone && pid > 1) {
		kill(pid, SIGTERM);
		waitpid(pid, &status, 0);
	}
	return t_done();
}
