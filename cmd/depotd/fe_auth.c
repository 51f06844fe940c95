/*
 * fe_auth.c: who is calling.
 *
 * A key is looked up by its SHA-256 through the storage helper; the
 * answer is cached for a few seconds so that a busy client does not
 * cost a query per request (a revoked key is refused within
 * AUTH_CACHE_TTL seconds).  The admin key comes from the configuration
 * and may act for any user it names.
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

#define AUTH_CACHE_TTL		5
#define AUTH_CACHE_MAX		256

struct auth_entry {
	TAILQ_ENTRY(auth_entry)	 entry;
	char			 key[SHA256_HEXLEN + 256];
	struct auth_result	 res;
	time_t			 expires;
};

static TAILQ_HEAD(auth_cache, auth_entry) cache =
    TAILQ_HEAD_INITIALIZER(cache);
static int			 cache_len;

struct auth_wait {
	void		(*next)(struct api_req *);
	char		 key[SHA256_HEXLEN + 256];
	int		 admin;
};

void
fe_auth_flush(void)
{
	struct auth_entry	*e;

	while ((e = TAILQ_FIRST(&cache)) != NULL) {
		TAILQ_REMOVE(&cache, e, entry);
		explicit_bzero(e, sizeof(*e));
		free(e);
	}
	cache_len = 0;
}

static struct auth_entry *
cache_find(const char *key)
{
	struct auth_entry	*e, *tmp;
	time_t			 now = time(NULL);

	TAILQ_FOREACH_SAFE(e, &cache, entry, tmp) {
		if (e->expires <= now) {
			TAILQ_REMOVE(&cache, e, entry);
			free(e);
			cache_len--;
		} else if (strcmp(e->key, key) == 0)
			return e;
	}
	return NULL;
}

static void
cache_put(const char *key, const struct auth_result *res)
{
	struct auth_entry	*e;

	if (res->status == AUTH_UNAVAILABLE)
		return;
	if (cache_len >= AUTH_CACHE_MAX) {
		e = TAILQ_LAST(&cache, auth_cache);
		TAILQ_REMOVE(&cache, e, entry);
		free(e);
		cache_len--;
	}
	if ((e = calloc(1, sizeof(*e))) == NULL)
		return;
	strlcpy(e->key, key, sizeof(e->key));
	e->res = *res;
	e->expires = time(NULL) + AUTH_CACHE_TTL;
	TAILQ_INSERT_HEAD(&cache, e, entry);
	cache_len++;
}

/* The bearer token or x-api-key, whichever comes first. */
static const char *
credential(const struct http_request *req)
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
has_credential_header(const struct http_request *req)
{
	return http_header_get(req, "authorization") != NULL ||
	    http_header_get(req, "x-api-key") != NULL;
}

static void
auth_apply(struct api_req *ar, const struct auth_result *res,
    struct auth_wait *w)
{
	char	 named[128];
	void	(*next)(struct api_req *) = w->next;

	switch (res->status) {
	case AUTH_OK:
		break;
	case AUTH_UNKNOWN:
		if (w->admin)
			api_error(ar, 400, "user", "no such user or "
			    "workspace");
		else
			api_error(ar, 401, NULL, "invalid API key");
		return;
	case AUTH_EXPIRED:
		api_error(ar, 401, NULL, "API key expired");
		return;
	case AUTH_REVOKED:
		api_error(ar, 401, NULL, "API key revoked");
		return;
	default:
		api_error(ar, 503, NULL, "authentication is unavailable: "
		    "the database is down");
		return;
	}
	strlcpy(ar->who.owner.user_id, res->user_id,
	    sizeof(ar->who.owner.user_id));
	strlcpy(ar->who.owner.workspace_id, res->workspace_id,
	    sizeof(ar->who.owner.workspace_id));
	strlcpy(ar->who.key_id, res->key_id, sizeof(ar->who.key_id));
	strlcpy(ar->who.user_name, res->user_name, sizeof(ar->who.user_name));
	strlcpy(ar->req->log_user, res->user_name,
	    sizeof(ar->req->log_user));
	if (!w->admin && http_query_param(ar->req->query, "user", named,
	    sizeof(named), NULL) >= 0 && strcmp(named, res->user_name) != 0) {
		api_error(ar, 403, "user", "this key cannot act for another "
		    "user");
		return;
	}
	next(ar);
}

static void
lookup_done(void *arg, struct imsg *imsg)
{
	struct api_req		*ar = arg;
	struct auth_wait	*w = ar->auth;
	struct auth_result	 res;

	ar->call = 0;
	ar->auth = NULL;
	if (imsg->hdr.type != IMSG_AUTH_RESULT ||
	    imsg->datalen != sizeof(res))
		fatalx("bad auth reply");
	memcpy(&res, imsg->data, sizeof(res));
	cache_put(w->key, &res);
	auth_apply(ar, &res, w);
	explicit_bzero(w, sizeof(*w));
	free(w);
}

static void
auth_lookup(struct api_req *ar, struct auth_lookup *al, struct auth_wait *w)
{
	struct auth_entry	*e;

	if ((e = cache_find(w->key)) != NULL) {
		auth_apply(ar, &e->res, w);
		explicit_bzero(w, sizeof(*w));
		free(w);
		return;
	}
	ar->auth = w;
	ar->call = fe_storage_call(IMSG_AUTH_LOOKUP, -1, al, sizeof(*al),
	    lookup_done, ar);
}

/*
 * The admin key acts for the user it names.  The lookup of that user
 * (and workspace, "default" unless named) goes through the same cache
 * as keys.
 */
void
fe_auth_admin_user(struct api_req *ar, const char *user,
    const char *workspace, void (*next)(struct api_req *))
{
	struct auth_lookup	 al;
	struct auth_wait	*w;

	if ((w = calloc(1, sizeof(*w))) == NULL) {
		api_error(ar, 503, NULL, "out of memory");
		return;
	}
	w->next = next;
	w->admin = ar->who.admin = 1;
	memset(&al, 0, sizeof(al));
	strlcpy(al.user_name, user, sizeof(al.user_name));
	strlcpy(al.workspace_name, workspace ? workspace : "",
	    sizeof(al.workspace_name));
	snprintf(w->key, sizeof(w->key), "admin:%s:%s", al.user_name,
	    al.workspace_name);
	auth_lookup(ar, &al, w);
}

static void
admin_request(struct api_req *ar, void (*next)(struct api_req *))
{
	char	 user[128], ws[128];

	ws[0] = '\0';
	http_query_param(ar->req->query, "workspace", ws, sizeof(ws), NULL);
	if (http_query_param(ar->req->query, "user", user, sizeof(user),
	    NULL) >= 1) {
		fe_auth_admin_user(ar, user, ws, next);
		return;
	}
	ar->who.admin = 1;
	/* An upload may name the user in its form instead. */
	if (ar->req->method == HTTP_M_POST &&
	    strcmp(ar->req->path, "/v1/files") == 0) {
		next(ar);
		return;
	}
	api_error(ar, 400, "user", "the admin key must name a user");
}

void
fe_authenticate(struct api_req *ar, void (*next)(struct api_req *))
{
	struct auth_lookup	 al;
	struct auth_wait	*w;
	const char		*token = credential(ar->req);

	if (token == NULL) {
		api_error(ar, 401, NULL, has_credential_header(ar->req) ?
		    "malformed credential: use Authorization: Bearer <key>" :
		    "missing API key: send Authorization: Bearer <key> or "
		    "x-api-key");
		return;
	}
	if (fe.conf->admin_key != NULL &&
	    timingsafe_streq(token, fe.conf->admin_key)) {
		admin_request(ar, next);
		return;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		api_error(ar, 503, NULL, "out of memory");
		return;
	}
	w->next = next;
	memset(&al, 0, sizeof(al));
	sha256_hex(token, strlen(token), al.token_sha256);
	strlcpy(w->key, al.token_sha256, sizeof(w->key));
	auth_lookup(ar, &al, w);
	explicit_bzero(&al, sizeof(al));
}
