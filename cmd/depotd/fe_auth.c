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
 * fe_auth.c: who is calling, as the storage helper answers it.
 *
 * The frontend holds no key and no admin key: it sends the SHA-256 of
 * the presented token (and, for the admin key, the user named) and
 * gets back an opaque handle, valid on this frontend's channel; every
 * file call names it.  The answer is kept for a few seconds
 * (fe_authcache.c), so that the next request with the same key sends
 * no message; a request holds a reference to it, and the handle is
 * released once the answer has left the cache and no request uses it.
 * Revocation is the storage helper's business: it pushes the handles
 * it revoked (IMSG_AUTH_DROP), and its channel is served before any
 * client's (child.c), so a revoked key is refused by the next request.
 *
 * Failed attempts are counted per client address: past AUTH_FAIL_MAX
 * within AUTH_FAIL_WINDOW seconds an address is answered 429 without
 * asking the storage helper, so guessing keys costs no database work.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "log.h"
#include "util.h"
#include "frontend.h"
#include "fe_authcache.h"

#define AUTH_FAIL_MAX		20
#define AUTH_FAIL_WINDOW	60	/* seconds */
#define AUTH_FAIL_ADDRS		1024	/* addresses remembered */

/* Failed attempts of one client address in the current window. */
struct fe_auth_fails {
	TAILQ_ENTRY(fe_auth_fails) entry;
	char			 addr[64];
	int			 count;
	int64_t			 since;		/* mono_seconds() */
};

TAILQ_HEAD(fe_auth_fail_list, fe_auth_fails);
static struct fe_auth_fail_list	 fails = TAILQ_HEAD_INITIALIZER(fails);
static int			 nfails;

struct fe_auth_wait {
	void		(*next)(struct api_req *);
	int		 named;		/* the lookup named a user */
	char		 user[128];	/* as asked: the cache's name */
	char		 workspace[128];
};

/* "addr:port" or "[v6]:port" less the port. */
static void
fe_auth_address(const struct http_request *req, char *buf, size_t len)
{
	char	*colon;

	strlcpy(buf, req->peer, len);
	if ((colon = strrchr(buf, ':')) != NULL)
		*colon = '\0';
}

static struct fe_auth_fails *
fe_auth_fails_of(const char *addr)
{
	struct fe_auth_fails	*f, *tmp;
	int64_t			 now = mono_seconds();

	TAILQ_FOREACH_SAFE(f, &fails, entry, tmp) {
		if (now - f->since >= AUTH_FAIL_WINDOW) {
			TAILQ_REMOVE(&fails, f, entry);
			free(f);
			nfails--;
		} else if (strcmp(f->addr, addr) == 0)
			return f;
	}
	return NULL;
}

static int
fe_auth_throttled(const struct http_request *req)
{
	struct fe_auth_fails	*f;
	char			 addr[64];

	if (nfails == 0)
		return 0;
	fe_auth_address(req, addr, sizeof(addr));
	return (f = fe_auth_fails_of(addr)) != NULL &&
	    f->count >= AUTH_FAIL_MAX;
}

static void
fe_auth_failed(const struct http_request *req)
{
	struct fe_auth_fails	*f;
	char			 addr[64];

	fe_auth_address(req, addr, sizeof(addr));
	if ((f = fe_auth_fails_of(addr)) == NULL) {
		if (nfails >= AUTH_FAIL_ADDRS) {
			f = TAILQ_LAST(&fails, fe_auth_fail_list);
			TAILQ_REMOVE(&fails, f, entry);
			free(f);
			nfails--;
		}
		if ((f = calloc(1, sizeof(*f))) == NULL)
			return;
		strlcpy(f->addr, addr, sizeof(f->addr));
		f->since = mono_seconds();
		nfails++;
	} else
		TAILQ_REMOVE(&fails, f, entry);
	TAILQ_INSERT_HEAD(&fails, f, entry);
	f->count++;
}

/* The bearer token or x-api-key, whichever comes first. */
static const char *
fe_auth_credential(const struct http_request *req)
{
	const char	*v;

	if ((v = http_header_get(req, "authorization")) != NULL) {
		if (strncasecmp(v, "Bearer ", 7) != 0)
			return NULL;
		v += 7;
		v += strspn(v, " ");
		return *v ? v : NULL;
	}
	if ((v = http_header_get(req, "x-api-key")) != NULL && *v)
		return v;
	return NULL;
}

static int
fe_auth_has_header(const struct http_request *req)
{
	return http_header_get(req, "authorization") != NULL ||
	    http_header_get(req, "x-api-key") != NULL;
}

/* The admin key that named nobody yet. */
static void
fe_auth_admin_unnamed(struct api_req *ar, void (*next)(struct api_req *))
{
	/* An upload may name the user in its form instead. */
	if (ar->req->method == HTTP_M_POST &&
	    strcmp(ar->req->path, "/v1/files") == 0) {
		next(ar);
		return;
	}
	fe_reply_error(ar, 400, "user", "the admin key must name a user");
}

static int
fe_auth_refused(struct api_req *ar, const struct auth_result *res)
{
	switch (res->status) {
	case AUTH_OK:
		return 0;
	case AUTH_UNKNOWN:
		if (res->admin)
			fe_reply_error(ar, 400, "user", "no such user or "
			    "workspace");
		else
			fe_reply_error(ar, 401, NULL, "invalid API key");
		break;
	case AUTH_EXPIRED:
		fe_reply_error(ar, 401, NULL, "API key expired");
		break;
	case AUTH_REVOKED:
		fe_reply_error(ar, 401, NULL, "API key revoked");
		break;
	default:
		fe_reply_error(ar, 503, NULL, "authentication is unavailable: "
		    "the database is down");
		return 1;
	}
	if (!res->admin)
		fe_auth_failed(ar->req);
	return 1;
}

static void
fe_auth_apply(struct api_req *ar, const struct auth_result *res,
    const struct fe_auth_wait *w)
{
	char	 named[128];

	if (fe_auth_refused(ar, res))
		return;
	ar->who.admin = res->admin;
	if (res->handle[0] == '\0') {
		if (!res->admin || w->named)
			fatalx("storage: an accepted lookup without a handle");
		fe_auth_admin_unnamed(ar, w->next);
		return;
	}
	strlcpy(ar->who.handle, res->handle, sizeof(ar->who.handle));
	strlcpy(ar->who.user_name, res->user_name, sizeof(ar->who.user_name));
	strlcpy(ar->who.workspace_name, res->workspace_name,
	    sizeof(ar->who.workspace_name));
	strlcpy(ar->req->log_user, res->user_name,
	    sizeof(ar->req->log_user));
	if (!res->admin && http_query_param(ar->req->query, "user", named,
	    sizeof(named), NULL) >= 0 && strcmp(named, res->user_name) != 0) {
		fe_reply_error(ar, 403, "user", "this key cannot act for another "
		    "user");
		return;
	}
	w->next(ar);
}

static void
fe_auth_looked_up(void *arg, struct imsg *imsg)
{
	struct api_req		*ar = arg;
	struct fe_auth_wait	*w;
	struct auth_result	 res;
	char			 name[FE_AUTHCACHE_NAME];

	ar->pending = 0;
	w = ar->auth;
	ar->auth = NULL;
	if (imsg->hdr.type != IMSG_AUTH_RESULT ||
	    imsg->datalen != sizeof(res))
		fatalx("bad auth reply");
	memcpy(&res, imsg->data, sizeof(res));
	res.handle[sizeof(res.handle) - 1] = '\0';
	res.user_name[sizeof(res.user_name) - 1] = '\0';
	res.workspace_name[sizeof(res.workspace_name) - 1] = '\0';
	/* Only what carries a handle is kept; a failure is asked again. */
	if (res.handle[0] != '\0') {
		fe_authcache_name(name, sizeof(name), ar->who.token_sha256,
		    res.admin ? w->user : NULL, w->workspace);
		ar->who.cached = fe_authcache_put(name, &res, mono_usec());
		explicit_bzero(name, sizeof(name));
	}
	fe_auth_apply(ar, &res, w);
	explicit_bzero(&res, sizeof(res));
	explicit_bzero(w, sizeof(*w));
	free(w);
}

/* The request is done with its handle; the cache may keep it. */
static void
fe_auth_drop_ref(struct api_req *ar)
{
	struct auth_release	 rel;

	if (ar->who.cached != NULL)
		fe_authcache_unref(ar->who.cached);
	else if (ar->who.handle[0] != '\0' && fe_storage_up()) {
		/* Not cached (out of memory): released as it used to be. */
		memset(&rel, 0, sizeof(rel));
		strlcpy(rel.handle, ar->who.handle, sizeof(rel.handle));
		fe_storage_send(IMSG_AUTH_RELEASE, &rel, sizeof(rel));
	}
	ar->who.cached = NULL;
	ar->who.handle[0] = '\0';
}

/* Neither cached nor used by any request: the storage helper frees it. */
static void
fe_auth_release_handle(const char *handle)
{
	struct auth_release	 rel;

	if (!fe_storage_up())
		return;
	memset(&rel, 0, sizeof(rel));
	strlcpy(rel.handle, handle, sizeof(rel.handle));
	fe_storage_send(IMSG_AUTH_RELEASE, &rel, sizeof(rel));
}

void
fe_auth_init(void)
{
	fe_authcache_init(FE_AUTHCACHE_MAX, fe_auth_release_handle);
}

/* A cached answer: no message. */
static int
fe_auth_hit(struct api_req *ar, const char *user, const char *workspace,
    void (*next)(struct api_req *))
{
	struct fe_authcache_entry	*e;
	struct fe_auth_wait		 w;
	char				 name[FE_AUTHCACHE_NAME];
	int64_t				 now = mono_usec();
	time_t				 wall = time(NULL);

	/* An API key's answer is the hash's alone; the admin key's is not. */
	if ((e = fe_authcache_get(ar->who.token_sha256, now, wall)) == NULL &&
	    user != NULL && user[0] != '\0') {
		fe_authcache_name(name, sizeof(name), ar->who.token_sha256,
		    user, workspace);
		e = fe_authcache_get(name, now, wall);
		explicit_bzero(name, sizeof(name));
	}
	if (e == NULL)
		return 0;
	memset(&w, 0, sizeof(w));
	w.next = next;
	w.named = user != NULL && user[0] != '\0';
	ar->who.cached = e;
	fe_auth_apply(ar, &e->res, &w);
	return 1;
}

static void
fe_auth_ask(struct api_req *ar, const char *user, const char *workspace,
    void (*next)(struct api_req *))
{
	struct auth_lookup	 al;
	struct fe_auth_wait	*w;

	/* Asked again (the admin key naming its user in a form). */
	fe_auth_drop_ref(ar);
	if (fe_auth_hit(ar, user, workspace, next))
		return;
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		fe_reply_error(ar, 503, NULL, "out of memory");
		return;
	}
	w->next = next;
	w->named = user != NULL && user[0] != '\0';
	strlcpy(w->user, user ? user : "", sizeof(w->user));
	strlcpy(w->workspace, workspace ? workspace : "", sizeof(w->workspace));
	memset(&al, 0, sizeof(al));
	strlcpy(al.token_sha256, ar->who.token_sha256,
	    sizeof(al.token_sha256));
	strlcpy(al.user_name, user ? user : "", sizeof(al.user_name));
	strlcpy(al.workspace_name, workspace ? workspace : "",
	    sizeof(al.workspace_name));
	ar->auth = w;
	ar->pending = fe_storage_request(IMSG_AUTH_LOOKUP, -1, &al, sizeof(al),
	    fe_auth_looked_up, ar);
	explicit_bzero(&al, sizeof(al));
}

/* The admin key acts for the user (and workspace, "default") it names. */
void
fe_auth_admin_user(struct api_req *ar, const char *user,
    const char *workspace, void (*next)(struct api_req *))
{
	fe_auth_ask(ar, user, workspace, next);
}

void
fe_authenticate(struct api_req *ar, void (*next)(struct api_req *))
{
	const char	*token = fe_auth_credential(ar->req);
	char		 user[128], ws[128];

	if (token == NULL) {
		fe_reply_error(ar, 401, NULL, fe_auth_has_header(ar->req) ?
		    "malformed credential: use Authorization: Bearer <key>" :
		    "missing API key: send Authorization: Bearer <key> or "
		    "x-api-key");
		return;
	}
	if (fe_auth_throttled(ar->req)) {
		fe_reply_error(ar, 429, NULL, "too many failed authentication "
		    "attempts from this address; retry in a minute");
		return;
	}
	sha256_hex(token, strlen(token), ar->who.token_sha256);
	user[0] = ws[0] = '\0';
	http_query_param(ar->req->query, "workspace", ws, sizeof(ws), NULL);
	if (http_query_param(ar->req->query, "user", user, sizeof(user),
	    NULL) < 1)
		user[0] = '\0';
	fe_auth_ask(ar, user, ws, next);
}

/*
 * The request is over.  Its handle stays while cached: what the request
 * left under it (an upload's intent, a lease) its route ended itself.
 */
void
fe_auth_release(struct api_req *ar)
{
	fe_auth_drop_ref(ar);
}
