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
 * test_store_url.c: the storage URLs as the configuration checks them
 * (store_check_url) and as the backends parse them, and the local paths
 * each backend declares for the helper's Landlock rules.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "store/store.h"
#include "store/store_url.h"
#include "t.h"

static void
url_ok(const char *url, const char *scheme)
{
	const char	*why = "unset";

	T_EQ_STR(store_check_url(url, &why), scheme, url);
	T_OK(why == NULL, "%s: no complaint", url);
}

static void
url_bad(const char *url, const char *form)
{
	const char	*why = NULL;

	T_OK(store_check_url(url, &why) == NULL, "%s refused", url);
	if (form == NULL)
		T_OK(why == NULL, "%s: unknown scheme, no form", url);
	else
		T_EQ_STR(why, form, url);
}

static void
test_check(void)
{
	const char	*file = "storage URL must be file:///absolute/path";
	const char	*s3 = "storage URL must be s3://bucket[/prefix]";
	const char	*sftp = "storage URL must be "
			    "sftp://user@host[:port]/path";
	char		 url[128];

	url_ok("file:///var/depot", "file");
	url_bad("file://var/depot", file);
	url_ok("s3://depot-files/prod/blobs", "s3");
	url_ok("s3://depot.files_1", "s3");
	url_bad("s3:///prefix", s3);
	url_bad("s3://", s3);
	url_bad("s3://bad@bucket/x", s3);
	snprintf(url, sizeof(url), "s3://%0*d/x", 64, 0);
	url_bad(url, s3);
	snprintf(url, sizeof(url), "s3://%0*d/x", 63, 0);
	url_ok(url, "s3");
	url_ok("sftp://depot@files.example:2222/srv/depot", "sftp");
	url_ok("sftp://depot@[::1]:2222/srv/depot", "sftp");
	url_bad("sftp://files.example/srv/depot", sftp);
	url_bad("sftp://depot:secret@files.example/srv", sftp);
	url_bad("sftp://depot@files.example/", sftp);
	url_bad("sftp://depot@files.example", sftp);
	url_bad("sftp://depot@files.example:0/x", sftp);
	url_bad("sftp://depot@:22/x", sftp);
	url_bad("ftp://files.example/depot", NULL);
	url_bad("", NULL);
}

static void
test_parse(void)
{
	char	*bucket = NULL, *prefix = NULL;

	T_EQ_INT(s3_url_parse("s3://b//p/q//", &bucket, &prefix), 0,
	    "s3 url parses");
	T_EQ_STR(bucket, "b", "s3 bucket");
	T_EQ_STR(prefix, "p/q", "s3 prefix without slashes at its ends");
	free(bucket);
	free(prefix);
	bucket = prefix = NULL;
	T_EQ_INT(s3_url_parse("s3://b", &bucket, &prefix), 0,
	    "s3 url without a prefix");
	T_EQ_STR(prefix, "", "empty prefix");
	free(bucket);
	free(prefix);
	T_EQ_STR(local_url_root("file:///srv/depot"), "/srv/depot",
	    "file url root");
	T_OK(local_url_root("sftp:///srv") == NULL, "not a file url");
}

/* What each backend asks Landlock for; none of them connects at init. */
static void
test_paths(void)
{
	struct event_base	*base = event_base_new();
	struct store_conf	 sc;
	struct store		*st;
	const char		*ro[STORE_PATHS_MAX + 1];
	const char		*rw[STORE_PATHS_MAX + 1];
	const char		*why;
	char			 dir[] = "/tmp/test_store_url.XXXXXX", url[64];

	T_OK(base != NULL && mkdtemp(dir) != NULL, "set-up");
	memset(&sc, 0, sizeof(sc));
	snprintf(url, sizeof(url), "file://%s", dir);
	sc.url = url;
	T_OK((st = store_new(base, &sc, &why)) != NULL, "file store");
	if (st != NULL) {
		st->ops->paths(st, ro, rw);
		T_OK(ro[0] == NULL, "file store reads nothing else");
		T_EQ_STR(rw[0], dir, "file store writes its root");
		T_OK(rw[1] == NULL, "and only that");
		store_free(st);
	}
	rmdir(dir);

	memset(&sc, 0, sizeof(sc));
	sc.url = "sftp://depot@127.0.0.1:22/srv/depot";
	sc.identity = "/etc/depotd/id_ed25519";
	sc.known_hosts = "/etc/depotd/known_hosts";
	T_OK((st = store_new(base, &sc, &why)) != NULL, "sftp store");
	if (st != NULL) {
		st->ops->paths(st, ro, rw);
		T_EQ_STR(ro[0], sc.identity, "sftp store reads its key");
		T_EQ_STR(ro[1], sc.known_hosts, "and its known hosts");
		T_OK(ro[2] == NULL && rw[0] == NULL, "and writes nothing");
		store_free(st);
	}

	memset(&sc, 0, sizeof(sc));
	sc.url = "s3://bucket/prefix";
	sc.access_key = "AK";
	sc.secret_key = "SK";
	/* What conf_new() gives every configuration. */
	sc.part_size = 16 * 1024 * 1024;
	sc.max_transfers = 8;
	T_OK((st = store_new(base, &sc, &why)) != NULL, "s3 store");
	if (st != NULL) {
		st->ops->paths(st, ro, rw);
		T_OK(ro[0] == NULL && rw[0] == NULL, "s3 store: no paths");
		store_free(st);
	}
	event_base_free(base);
}

int
main(void)
{
	test_check();
	test_parse();
	test_paths();
	return t_done();
}
