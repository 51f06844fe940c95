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
 * storage_auth.c: who is calling, decided here and nowhere else.
 *
 * A frontend sends the SHA-256 of the token it was shown.  This helper
 * compares it with the admin key's (in constant time) or looks the key
 * up, and answers with an opaque handle bound to that frontend's
 * channel.  Every later file message names the handle; the owner it
 * stands for never crosses the channel, so a frontend cannot name
 * another tenant's files, and a handle is worth nothing on another
 * channel, after its release, or once idle past HANDLE_IDLE.
 *
 * Answers are cached for AUTH_CACHE_TTL seconds, unknown tokens too
 * (in a table of their own, so a flood of them never pushes out the
 * keys in use).  Lookups by token hash and the admin key's lookups by
 * user and workspace have caches of their own: no string a frontend
 * sends as a hash can name an admin lookup's answer.
 *
 * A frontend keeps an accepted answer, handle and all, for what is
 * left of this cache's entry (auth_result.ttl_ms), so that a key in
 * use costs no message per request (fe_authcache.c); the handle lives
 * until the frontend releases it, unused, or it is revoked.  depotctl
 * key revoke, run against this host, drops the key's cache entries
 * and handles at once and pushes IMSG_AUTH_DROP to each frontend that
 * held one, written before the revocation is answered, so the next
 * request anywhere on this host is refused; another host sharing the
 * database refuses the key within AUTH_CACHE_TTL.  A reload drops
 * every frontend's cache (the admin key may have changed).
 *
 * A handle lent to the broker (storage_auth_delegate) ends with the handle it
 * was lent from: released, lapsed, revoked or gone with its channel,
 * the frontend's handle takes the broker's with it, so a broker that
 * keeps a lease past its request stores nothing more for that caller.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/tree.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "util.h"
#include "storage.h"

#define AUTH_CACHE_TTL		5	/* seconds: revocation elsewhere */
#define AUTH_CACHE_MAX		4096	/* per table */
#define HANDLE_IDLE		300	/* seconds unused before it lapses */
#define HANDLE_SWEEP		30	/* seconds between lapse checks */

enum auth_kind {
	AUTH_KEY,		/* by token hash */
	AUTH_USER,		/* the admin key's user and workspace */
};

/* One answer of the database, kept a few seconds. */
struct auth_entry {
	RB_ENTRY(auth_entry)	 node;
	TAILQ_ENTRY(auth_entry) lru;
	char			 name[SHA256_HEXLEN + 260];
	int			 status;
	struct principal_ref	 ref;
	char			 user_name[128];
	char			 workspace_name[128];
	time_t			 key_expires;	/* wall clock; 0 never */
	int64_t			 until;		/* mono_usec() */
};

RB_HEAD(auth_tree, auth_entry);
TAILQ_HEAD(auth_lru, auth_entry);

struct auth_table {
	struct auth_tree	 tree;
	struct auth_lru	 lru;
	int			 len;
};

/* The answers of one kind of lookup: known, and unknown (negative). */
struct auth_cache {
	struct auth_table	 found;
	struct auth_table	 unknown;
};

struct auth_handle {
	RB_ENTRY(auth_handle)	 node;
	char			 id[HANDLE_LEN];
	struct storage_peer	*peer;
	struct principal_ref	 ref;
	int64_t			 last_used;	/* mono_seconds() */
	struct auth_handle	*parent;	/* lent from, or NULL */
	LIST_HEAD(, auth_handle) children;	/* lent to the broker */
	LIST_ENTRY(auth_handle) sibling;
	int			 dead;		/* its parent went */
};

RB_HEAD(auth_handles, auth_handle);

/* IMSG_AUTH_LOOKUP while the database answers. */
struct auth_request {
	struct storage_request	 req;
	char			 name[SHA256_HEXLEN + 260];
	int			 admin;
};
STORAGE_REQUEST_FIRST(auth_request);

static int	auth_entry_cmp(struct auth_entry *, struct auth_entry *);
static int	auth_handle_cmp(struct auth_handle *, struct auth_handle *);
/* libbsd's tree.h marks its functions __unused, which glibc lacks. */
#ifndef __unused
#define __unused	__attribute__((__unused__))
#define AUTH_UNUSED_DEFINED
#endif
RB_GENERATE_STATIC(auth_tree, auth_entry, node, auth_entry_cmp)
RB_GENERATE_STATIC(auth_handles, auth_handle, node, auth_handle_cmp)
#ifdef AUTH_UNUSED_DEFINED
#undef __unused
#endif

#define AUTH_CACHE_INITIALIZER(c) {					\
	{ RB_INITIALIZER(&(c).found.tree),				\
	    TAILQ_HEAD_INITIALIZER((c).found.lru), 0 },			\
	{ RB_INITIALIZER(&(c).unknown.tree),				\
	    TAILQ_HEAD_INITIALIZER((c).unknown.lru), 0 }		\
}
static struct auth_cache	 by_key = AUTH_CACHE_INITIALIZER(by_key);
static struct auth_cache	 by_user = AUTH_CACHE_INITIALIZER(by_user);
static struct auth_handles	 handles = RB_INITIALIZER(&handles);
static struct event		*ev_lapse;
/* The uploads' end of a handle (storage.c registers it). */
static void			(*handle_gone)(struct storage_peer *,
				    const char *);

static int
auth_entry_cmp(struct auth_entry *a, struct auth_entry *b)
{
	return strcmp(a->name, b->name);
}

static int
auth_handle_cmp(struct auth_handle *a, struct auth_handle *b)
{
	return strcmp(a->id, b->id);
}

/* --- the cache --- */

static void
auth_entry_drop(struct auth_table *t, struct auth_entry *e)
{
	RB_REMOVE(auth_tree, &t->tree, e);
	TAILQ_REMOVE(&t->lru, e, lru);
	t->len--;
	explicit_bzero(e, sizeof(*e));
	free(e);
}

static struct auth_entry *
auth_cache_get(struct auth_table *t, const char *name)
{
	struct auth_entry	 key, *e;

	strlcpy(key.name, name, sizeof(key.name));
	if ((e = RB_FIND(auth_tree, &t->tree, &key)) == NULL)
		return NULL;
	if (e->until <= mono_usec()) {
		auth_entry_drop(t, e);
		return NULL;
	}
	return e;
}

static void
auth_cache_put(struct auth_table *t, const struct auth_entry *n)
{
	struct auth_entry	*e;

	if ((e = RB_FIND(auth_tree, &t->tree, (struct auth_entry *)n)) !=
	    NULL)
		auth_entry_drop(t, e);
	if (t->len >= AUTH_CACHE_MAX)
		auth_entry_drop(t, TAILQ_LAST(&t->lru, auth_lru));
	if ((e = malloc(sizeof(*e))) == NULL)
		return;
	*e = *n;
	RB_INSERT(auth_tree, &t->tree, e);
	TAILQ_INSERT_HEAD(&t->lru, e, lru);
	t->len++;
}

/* The admin key, if the token's hash is its hash. */
static int
auth_is_admin(const char *token_sha256)
{
	char	 hash[SHA256_HEXLEN];
	int	 admin;

	if (storage.conf->admin_key == NULL || storage.conf->admin_key[0] ==
	    '\0')
		return 0;
	sha256_hex(storage.conf->admin_key, strlen(storage.conf->admin_key),
	    hash);
	admin = timingsafe_streq(hash, token_sha256);
	explicit_bzero(hash, sizeof(hash));
	return admin;
}

/* --- handles --- */

void
storage_auth_on_handle_gone(void (*fn)(struct storage_peer *, const char *))
{
	handle_gone = fn;
}

static void
auth_handle_gone(struct storage_peer *p, const char *id)
{
	if (handle_gone != NULL)
		handle_gone(p, id);
}

/*
 * The handles lent from h die with it, uploads and all, at once; they
 * leave the tree at the next lapse check, so that a walk of the tree
 * that frees h never loses its place.
 */
static void
auth_handle_free(struct auth_handle *h)
{
	struct auth_handle	*c;

	RB_REMOVE(auth_handles, &handles, h);
	auth_handle_gone(h->peer, h->id);
	while ((c = LIST_FIRST(&h->children)) != NULL) {
		LIST_REMOVE(c, sibling);
		c->parent = NULL;
		c->dead = 1;
		auth_handle_gone(c->peer, c->id);
	}
	if (h->parent != NULL)
		LIST_REMOVE(h, sibling);
	explicit_bzero(h, sizeof(*h));
	free(h);
}

/*
 * A frontend may cache h: it must forget it before its next request.
 * Written now, not at the loop's next turn, so that it is in the
 * frontend's channel before whatever answer made it leaves ours.
 */
static void
auth_handle_push_drop(struct auth_handle *h)
{
	struct auth_release	 rel;

	if (h->parent != NULL || h->peer == NULL ||
	    storage_peer_is_broker(h->peer))
		return;
	memset(&rel, 0, sizeof(rel));
	strlcpy(rel.handle, h->id, sizeof(rel.handle));
	storage_peer_push(h->peer, IMSG_AUTH_DROP, &rel, sizeof(rel));
}

static void
auth_lapse(evutil_socket_t fd, short what, void *arg)
{
	struct auth_handle	*h, *tmp;
	struct timeval		 tv = { HANDLE_SWEEP, 0 };
	int64_t			 now = mono_seconds();

	RB_FOREACH_SAFE(h, auth_handles, &handles, tmp)
		if (h->dead || now - h->last_used > HANDLE_IDLE) {
			if (!h->dead)
				auth_handle_push_drop(h);
			auth_handle_free(h);
		}
	if (!RB_EMPTY(&handles))
		evtimer_add(ev_lapse, &tv);
}

/* A new handle on p's channel for ref, lent from parent if not NULL. */
static void
auth_handle_new(struct storage_peer *p, const struct principal_ref *ref,
    struct auth_handle *parent, char *out)
{
	struct auth_handle	*h;
	struct timeval		 tv = { HANDLE_SWEEP, 0 };

	if ((h = calloc(1, sizeof(*h))) == NULL)
		fatal("calloc");
	do {
		id_new(h->id, sizeof(h->id), "hdl-");
	} while (RB_INSERT(auth_handles, &handles, h) != NULL);
	h->peer = p;
	h->ref = *ref;
	h->last_used = mono_seconds();
	LIST_INIT(&h->children);
	if ((h->parent = parent) != NULL)
		LIST_INSERT_HEAD(&parent->children, h, sibling);
	strlcpy(out, h->id, HANDLE_LEN);
	if (ev_lapse == NULL)
		ev_lapse = evtimer_new(storage.base, auth_lapse, NULL);
	if (!evtimer_pending(ev_lapse, NULL))
		evtimer_add(ev_lapse, &tv);
}

static struct auth_handle *
auth_handle_find(struct storage_peer *p, const char *id)
{
	struct auth_handle	 key, *h;

	if (strlcpy(key.id, id, sizeof(key.id)) >= sizeof(key.id))
		return NULL;
	h = RB_FIND(auth_handles, &handles, &key);
	if (h == NULL || h->peer != p || h->dead ||
	    mono_seconds() - h->last_used > HANDLE_IDLE)
		return NULL;
	/* Lent, it is good only while the one it was lent from is. */
	if (h->parent != NULL &&
	    mono_seconds() - h->parent->last_used > HANDLE_IDLE)
		return NULL;
	return h;
}

/* In use: and so is the handle it was lent from, for the same request. */
static void
auth_handle_used(struct auth_handle *h)
{
	h->last_used = mono_seconds();
	if (h->parent != NULL)
		h->parent->last_used = h->last_used;
}

/*
 * What the handle stands for, or NULL after answering 401: a handle of
 * another channel, released, lapsed or made up is no handle at all.
 */
const struct principal_ref *
storage_auth_handle(struct storage_peer *p, uint32_t peerid, const char *id)
{
	struct auth_handle	*h;

	if ((h = auth_handle_find(p, id)) == NULL) {
		storage_peer_error(p, peerid, 401,
		    "the request's authentication "
		    "is not valid any more");
		return NULL;
	}
	auth_handle_used(h);
	return &h->ref;
}

/* What the handle stands for, or NULL: no reply is sent. */
const struct principal_ref *
storage_auth_handle_ref(struct storage_peer *p, const char *id)
{
	struct auth_handle	*h;

	if ((h = auth_handle_find(p, id)) == NULL)
		return NULL;
	auth_handle_used(h);
	return &h->ref;
}

int
storage_auth_handle_live(struct storage_peer *p, const char *id)
{
	return auth_handle_find(p, id) != NULL;
}

void
storage_auth_handle_touch(struct storage_peer *p, const char *id)
{
	struct auth_handle	*h;

	if ((h = auth_handle_find(p, id)) != NULL)
		auth_handle_used(h);
}

/*
 * The frontend's cached handle outlives its requests, so a lease's end
 * names the handle lent for it: a frontend may release what it lent,
 * and the broker keeps nothing for that caller past the request.
 */
void
storage_auth_release(struct storage_peer *p, struct imsg *imsg)
{
	struct auth_release	 rel;
	struct auth_handle	 key, *h;

	IMSG_TAKE(imsg, rel);
	rel.handle[sizeof(rel.handle) - 1] = '\0';
	if ((h = auth_handle_find(p, rel.handle)) != NULL) {
		auth_handle_free(h);
		return;
	}
	strlcpy(key.id, rel.handle, sizeof(key.id));
	if ((h = RB_FIND(auth_handles, &handles, &key)) != NULL &&
	    h->parent != NULL && h->parent->peer == p)
		auth_handle_free(h);
}

/*
 * A frontend lends the broker its caller for one lease: a new handle on
 * the broker's channel for the same owner.  The broker's channel table
 * lets it only create files, so the handle cannot read or list; the
 * upload path marks what it creates as code-execution output.
 */
void
storage_auth_delegate(struct storage_peer *p, struct imsg *imsg)
{
	struct auth_release	 del;
	struct auth_result	 ar;
	struct auth_handle	*h;
	struct storage_peer	*broker = storage_peer_broker();

	IMSG_TAKE(imsg, del);
	del.handle[sizeof(del.handle) - 1] = '\0';
	memset(&ar, 0, sizeof(ar));
	if ((h = auth_handle_find(p, del.handle)) == NULL || broker == NULL)
		ar.status = h == NULL ? AUTH_UNKNOWN : AUTH_UNAVAILABLE;
	else {
		h->last_used = mono_seconds();
		auth_handle_new(broker, &h->ref, h, ar.handle);
		/* The broker's share of sessions is counted per key. */
		strlcpy(ar.key_id, h->ref.key_id, sizeof(ar.key_id));
		ar.status = AUTH_OK;
	}
	storage_peer_reply(p, IMSG_AUTH_RESULT, imsg->hdr.peerid, -1, &ar,
	    sizeof(ar));
}

/* Every handle of a revoked key goes, with its uploads. */
void
storage_auth_key_revoked(const char *key_id)
{
	struct auth_entry	*e, *etmp;
	struct auth_handle	*h, *htmp;

	RB_FOREACH_SAFE(e, auth_tree, &by_key.found.tree, etmp)
		if (strcmp(e->ref.key_id, key_id) == 0)
			auth_entry_drop(&by_key.found, e);
	RB_FOREACH_SAFE(h, auth_handles, &handles, htmp)
		if (strcmp(h->ref.key_id, key_id) == 0) {
			auth_handle_push_drop(h);
			auth_handle_free(h);
		}
}

static void
auth_peer_drop_all(struct storage_peer *p)
{
	struct auth_release	 rel;

	if (storage_peer_is_broker(p))
		return;
	memset(&rel, 0, sizeof(rel));
	storage_peer_push(p, IMSG_AUTH_DROP, &rel, sizeof(rel));
}

/*
 * A reload may change the admin key: no frontend answers from what it
 * cached before.  Their handles stay good until released, as a request
 * in flight across a reload always could finish.
 */
void
storage_auth_reloaded(void)
{
	storage_peer_foreach(auth_peer_drop_all);
}

void
storage_auth_peer_lost(struct storage_peer *p)
{
	struct auth_handle	*h, *tmp;

	RB_FOREACH_SAFE(h, auth_handles, &handles, tmp)
		if (h->peer == p)
			auth_handle_free(h);
}

/* --- lookups --- */

/* Answers from a cached or fresh entry; OK makes a handle. */
static void
auth_answer(struct storage_request *r, const struct auth_entry *e, int admin)
{
	struct auth_result	 ar;
	int64_t			 now = mono_usec();

	memset(&ar, 0, sizeof(ar));
	ar.admin = admin;
	ar.status = e->status;
	if (ar.status == AUTH_OK && e->key_expires != 0 &&
	    e->key_expires <= time(NULL))
		ar.status = AUTH_EXPIRED;
	strlcpy(ar.user_name, e->user_name, sizeof(ar.user_name));
	strlcpy(ar.workspace_name, e->workspace_name,
	    sizeof(ar.workspace_name));
	ar.key_expires = e->key_expires;
	/* The frontend's copy lasts no longer than ours. */
	if (e->until > now)
		ar.ttl_ms = (e->until - now) / 1000;
	if (ar.status == AUTH_OK && r->peer != NULL)
		auth_handle_new(r->peer, &e->ref, NULL, ar.handle);
	storage_request_reply(r, IMSG_AUTH_RESULT, -1, &ar, sizeof(ar));
	explicit_bzero(&ar, sizeof(ar));
}

/*
 * Columns: key id, user id, user name, workspace id, state, expiry,
 * workspace name.
 */
static void
auth_entry_from_row(struct auth_entry *e, const PGresult *res)
{
	const char	*state = PQgetvalue(res, 0, 4), *errstr;

	strlcpy(e->ref.key_id, PQgetvalue(res, 0, 0), sizeof(e->ref.key_id));
	strlcpy(e->ref.owner.user_id, PQgetvalue(res, 0, 1),
	    sizeof(e->ref.owner.user_id));
	strlcpy(e->user_name, PQgetvalue(res, 0, 2), sizeof(e->user_name));
	strlcpy(e->ref.owner.workspace_id, PQgetvalue(res, 0, 3),
	    sizeof(e->ref.owner.workspace_id));
	e->key_expires = strtonum(PQgetvalue(res, 0, 5), 0, INT64_MAX,
	    &errstr);
	strlcpy(e->workspace_name, PQgetvalue(res, 0, 6),
	    sizeof(e->workspace_name));
	if (strcmp(state, "revoked") == 0)
		e->status = AUTH_REVOKED;
	else if (strcmp(state, "noworkspace") == 0)
		e->status = AUTH_UNKNOWN;
	else
		e->status = AUTH_OK;
}

/* The admin key's lookups by name, or the lookups by token hash. */
static struct auth_cache *
auth_cache_of(int admin)
{
	return admin ? &by_user : &by_key;
}

static void
auth_looked_up(void *arg, const PGresult *res)
{
	struct auth_request	*r = arg;
	struct auth_entry	 e;

	memset(&e, 0, sizeof(e));
	strlcpy(e.name, r->name, sizeof(e.name));
	e.until = mono_usec() + AUTH_CACHE_TTL * 1000000LL;
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
		if (res != NULL)
			log_warnx("database: %s", PQresultErrorMessage(res));
		e.status = AUTH_UNAVAILABLE;
	} else if (PQntuples(res) == 0) {
		e.status = AUTH_UNKNOWN;
		auth_cache_put(&auth_cache_of(r->admin)->unknown, &e);
	} else {
		auth_entry_from_row(&e, res);
		auth_cache_put(&auth_cache_of(r->admin)->found, &e);
	}
	auth_answer(&r->req, &e, r->admin);
	explicit_bzero(&e, sizeof(e));
	storage_request_end(&r->req);
	explicit_bzero(r, sizeof(*r));
	free(r);
}

/*
 * The frontend waits for an auth result, never a generic error: with
 * no database it must hear "unavailable" (503), not an IMSG_ERROR.
 */
static void
auth_query(struct auth_request *r, const char *sql, int n,
    const char *const *params)
{
	if (storage.db == NULL ||
	    db_query(storage.db, sql, n, params, auth_looked_up, r) == -1)
		auth_looked_up(r, NULL);
}

static void
auth_ask(struct storage_peer *p, uint32_t peerid, struct auth_lookup *al,
    int admin, const char *name)
{
	struct auth_request	*r;
	const char		*params[2];

	if ((r = calloc(1, sizeof(*r))) == NULL)
		fatal("calloc");
	storage_request_begin(&r->req, p, peerid);
	r->admin = admin;
	strlcpy(r->name, name, sizeof(r->name));
	if (admin) {
		params[0] = al->user_name;
		params[1] = al->workspace_name;
		auth_query(r, "select 'admin', u.id, u.name, "
		    "coalesce(w.id, ''), case when w.id is null then "
		    "'noworkspace' else 'ok' end, 0, coalesce(w.name, '') "
		    "from users u left join workspaces w on w.name = $2 "
		    "where u.name = $1", 2,
		    params);
		return;
	}
	params[0] = al->token_sha256;
	auth_query(r, "select k.id, k.user_id, u.name, k.workspace_id, "
	    "case when k.revoked_at is not null then 'revoked' else 'ok' "
	    "end, coalesce(extract(epoch from k.expires_at)::bigint, 0), "
	    "coalesce(w.name, '') from api_keys k join users u on "
	    "u.id = k.user_id left join workspaces w on w.id = "
	    "k.workspace_id where k.token_sha256 = $1", 1, params);
}

/* What sha256_hex writes: 64 lowercase hex digits, nothing else. */
static int
auth_hash_ok(const char *s)
{
	size_t	 i;

	for (i = 0; i < SHA256_HEXLEN - 1; i++)
		if (!(s[i] >= '0' && s[i] <= '9') &&
		    !(s[i] >= 'a' && s[i] <= 'f'))
			return 0;
	return s[i] == '\0';
}

static void
auth_answer_now(struct storage_peer *p, uint32_t peerid, int status,
    int admin)
{
	struct auth_result	 ar;

	memset(&ar, 0, sizeof(ar));
	ar.status = status;
	ar.admin = admin;
	storage_peer_reply(p, IMSG_AUTH_RESULT, peerid, -1, &ar, sizeof(ar));
}

void
storage_auth_lookup(struct storage_peer *p, struct imsg *imsg)
{
	struct auth_lookup	 al;
	struct auth_entry	*e;
	struct auth_cache	*c;
	struct storage_request	 now;
	char			 name[SHA256_HEXLEN + 260];
	int			 admin;

	IMSG_TAKE(imsg, al);
	al.token_sha256[sizeof(al.token_sha256) - 1] = '\0';
	al.user_name[sizeof(al.user_name) - 1] = '\0';
	al.workspace_name[sizeof(al.workspace_name) - 1] = '\0';
	/*
	 * A frontend only ever sends what sha256_hex made, so anything
	 * else comes from a compromised one.  Like the rest of a
	 * frontend's nonsense in a well-framed message, it costs that
	 * request (no handle), not this process and every tenant.
	 */
	if (!auth_hash_ok(al.token_sha256)) {
		log_warnx("storage: a frontend sent a malformed token hash");
		auth_answer_now(p, imsg->hdr.peerid, AUTH_UNKNOWN, 0);
		explicit_bzero(&al, sizeof(al));
		return;
	}
	admin = auth_is_admin(al.token_sha256);
	if (admin && al.user_name[0] == '\0') {
		/* The admin key must still say whom it acts for. */
		auth_answer_now(p, imsg->hdr.peerid, AUTH_OK, 1);
		return;
	}
	if (al.workspace_name[0] == '\0')
		strlcpy(al.workspace_name, "default",
		    sizeof(al.workspace_name));
	/* The user's length keeps "a\nb"+"c" apart from "a"+"b\nc". */
	if (admin)
		snprintf(name, sizeof(name), "%zu:%s\n%s",
		    strlen(al.user_name), al.user_name, al.workspace_name);
	else
		strlcpy(name, al.token_sha256, sizeof(name));
	c = auth_cache_of(admin);
	if ((e = auth_cache_get(&c->found, name)) != NULL ||
	    (e = auth_cache_get(&c->unknown, name)) != NULL) {
		now.peer = p;
		now.peerid = imsg->hdr.peerid;
		auth_answer(&now, e, admin);
	} else
		auth_ask(p, imsg->hdr.peerid, &al, admin, name);
	explicit_bzero(&al, sizeof(al));
}
