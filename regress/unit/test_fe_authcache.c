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
 * test_fe_authcache.c: a frontend's cache of auth answers: a hit keeps
 * the handle, the table holds at most its bound (least recently used
 * out first), an answer lives no longer than its ttl nor past the key's
 * expiry, failures and one-request answers are not kept, a pushed drop
 * ends the entry at once without a second release, and a handle in use
 * is released only when its last request is over.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "fe_authcache.h"

#define SEC	1000000LL

static char	released[64][HANDLE_LEN];
static int	nreleased;

static void
on_release(const char *handle)
{
	if (nreleased < 64)
		strlcpy(released[nreleased], handle, HANDLE_LEN);
	nreleased++;
}

static int
was_released(const char *handle)
{
	int	 i, n = 0;

	for (i = 0; i < nreleased && i < 64; i++)
		if (strcmp(released[i], handle) == 0)
			n++;
	return n;
}

static struct auth_result
answer(const char *handle, int ttl_ms, int64_t key_expires)
{
	struct auth_result	 res;

	memset(&res, 0, sizeof(res));
	res.status = AUTH_OK;
	strlcpy(res.handle, handle, sizeof(res.handle));
	strlcpy(res.user_name, "alice", sizeof(res.user_name));
	res.ttl_ms = ttl_ms;
	res.key_expires = key_expires;
	return res;
}

static void
name_of(char *buf, int i)
{
	char	 hash[SHA256_HEXLEN];

	snprintf(hash, sizeof(hash), "%064d", i);
	fe_authcache_name(buf, FE_AUTHCACHE_NAME, hash, NULL, NULL);
}

static void
test_hit_and_ttl(void)
{
	struct auth_result		 res = answer("hdl-a", 5000, 0);
	struct fe_authcache_entry	*e, *h;
	char				 n[FE_AUTHCACHE_NAME];

	nreleased = 0;
	name_of(n, 1);
	e = fe_authcache_put(n, &res, 0);
	T_OK(e != NULL && e->refs == 1, "a put holds the asking request");
	fe_authcache_unref(e);
	T_EQ_INT(nreleased, 0, "unused but cached: not released");
	h = fe_authcache_get(n, 4 * SEC, 0);
	T_OK(h == e && strcmp(h->res.handle, "hdl-a") == 0,
	    "a hit within the ttl gives the same handle");
	fe_authcache_unref(h);
	T_OK(fe_authcache_get(n, 5 * SEC, 0) == NULL,
	    "at the ttl's end: a miss");
	T_EQ_INT(was_released("hdl-a"), 1, "and its handle released once");
	T_EQ_INT(fe_authcache_len(), 0, "the table is empty again");
}

static void
test_expiry(void)
{
	struct auth_result		 res = answer("hdl-e", 5000, 1000);
	struct fe_authcache_entry	*e;
	char				 n[FE_AUTHCACHE_NAME];

	nreleased = 0;
	name_of(n, 2);
	fe_authcache_unref(fe_authcache_put(n, &res, 0));
	e = fe_authcache_get(n, SEC, 999);
	T_OK(e != NULL, "before the key's expiry: a hit");
	fe_authcache_unref(e);
	T_OK(fe_authcache_get(n, SEC, 1000) == NULL,
	    "at the key's expiry, inside the ttl: a miss");
	T_EQ_INT(was_released("hdl-e"), 1, "its handle released");
}

static void
test_not_kept(void)
{
	struct auth_result		 res = answer("", 5000, 0);
	struct auth_result		 once = answer("hdl-1", 0, 0);
	struct fe_authcache_entry	*e;
	char				 n[FE_AUTHCACHE_NAME];

	nreleased = 0;
	name_of(n, 3);
	res.status = AUTH_UNKNOWN;
	e = fe_authcache_put(n, &res, 0);
	fe_authcache_unref(e);
	T_OK(fe_authcache_get(n, 0, 0) == NULL, "a failure is not kept");
	e = fe_authcache_put(n, &once, 0);
	T_EQ_INT(fe_authcache_len(), 0, "a ttl of 0: not in the table");
	fe_authcache_unref(e);
	T_EQ_INT(was_released("hdl-1"), 1,
	    "and released when its request is over");
}

static void
test_bound(void)
{
	struct fe_authcache_entry	*e, *held;
	struct auth_result		 res;
	char				 n[FE_AUTHCACHE_NAME], h[HANDLE_LEN];
	int				 i, hits = 0;

	nreleased = 0;
	fe_authcache_init(8, on_release);
	name_of(n, 100);
	res = answer("hdl-100", 5000, 0);
	held = fe_authcache_put(n, &res, 0);	/* kept in use */
	for (i = 101; i < 120; i++) {
		name_of(n, i);
		snprintf(h, sizeof(h), "hdl-%d", i);
		res = answer(h, 5000, 0);
		fe_authcache_unref(fe_authcache_put(n, &res, 0));
		if (i == 115) {
			/* Used: it moves to the front of the queue. */
			name_of(n, 110);
			fe_authcache_unref(fe_authcache_get(n, 0, 0));
		}
	}
	T_EQ_INT(fe_authcache_len(), 8, "20 keys in a table of 8: 8 kept");
	for (i = 112; i < 120; i++) {
		name_of(n, i);
		if ((e = fe_authcache_get(n, 0, 0)) != NULL) {
			hits++;
			fe_authcache_unref(e);
		}
	}
	T_EQ_INT(hits, 7, "the newest kept, but for the one used since");
	name_of(n, 110);
	e = fe_authcache_get(n, 0, 0);
	T_OK(e != NULL, "a key used recently outlives newer ones");
	if (e != NULL)
		fe_authcache_unref(e);
	T_EQ_INT(was_released("hdl-100"), 0,
	    "pushed out while in use: not released yet");
	T_EQ_INT(nreleased, 11, "the 11 others pushed out: released");
	fe_authcache_unref(held);
	T_EQ_INT(was_released("hdl-100"), 1,
	    "released when its request ends");
	fe_authcache_drop("");
	T_EQ_INT(fe_authcache_len(), 0, "a drop of everything empties it");
	T_EQ_INT(nreleased, 20, "and releases what nothing holds");
	fe_authcache_init(FE_AUTHCACHE_MAX, on_release);
}

static void
test_drop(void)
{
	struct auth_result		 res = answer("hdl-r", 5000, 0);
	struct fe_authcache_entry	*e;
	char				 n[FE_AUTHCACHE_NAME];

	nreleased = 0;
	name_of(n, 4);
	e = fe_authcache_put(n, &res, 0);	/* a request in flight */
	T_EQ_INT(fe_authcache_drop("hdl-r"), 1, "a pushed drop finds it");
	T_OK(fe_authcache_get(n, 0, 0) == NULL,
	    "the next request misses at once");
	fe_authcache_unref(e);
	T_EQ_INT(nreleased, 0,
	    "a revoked handle is not released again (the helper freed it)");
	T_EQ_INT(fe_authcache_drop("hdl-nothing"), 0,
	    "a drop of a handle not held touches nothing");
}

static void
test_names(void)
{
	char	 a[FE_AUTHCACHE_NAME], b[FE_AUTHCACHE_NAME];
	char	 hash[SHA256_HEXLEN];

	memset(hash, 'a', 64);
	hash[64] = '\0';
	fe_authcache_name(a, sizeof(a), hash, "a\nb", "c");
	fe_authcache_name(b, sizeof(b), hash, "a", "b\nc");
	T_OK(strcmp(a, b) != 0, "user and workspace cannot trade bytes");
	fe_authcache_name(a, sizeof(a), hash, NULL, "team");
	T_EQ_STR(a, hash, "an API key's name is its hash alone");
	fe_authcache_name(b, sizeof(b), hash, "alice", "");
	T_OK(strcmp(a, b) != 0, "the admin key's names are others");
}

int
main(void)
{
	fe_authcache_init(FE_AUTHCACHE_MAX, on_release);
	test_hit_and_ttl();
	test_expiry();
	test_not_kept();
	test_bound();
	test_drop();
	test_names();
	return t_done();
}
