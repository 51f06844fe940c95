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
 * test_store_sftp.c: the SFTP store against a real sshd.
 *
 * regress/sftp/suite.sh starts the server (regress/harness/sshd.sh) and
 * passes it in DEPOT_SFTP_*.  The store runs on a private event base in
 * the main thread; threads play the frontend on the socketpair ends,
 * and the store's root is also a local directory, so the test can look
 * for leftover temporaries directly.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <openssl/evp.h>

#include "log.h"
#include "store/sftp_conn.h"
#include "store/store.h"
#include "t.h"

#define MiB	(1024 * 1024)

static struct event_base	*base;
static const char		*env_root, *env_dir, *env_harness;

struct result {
	volatile int	 done;
	int		 error;
	off_t		 size;
	int		 fd;
};

struct writer {
	pthread_t	 thread;
	int		 fd;
	uint64_t	 total;		/* bytes to write */
	uint64_t	 close_at;	/* stop early here (0: never) */
	uint64_t	 pause_at;	/* wait for resume here (0: never) */
	unsigned	 seed;
	volatile int	 paused, resume, done;
	uint64_t	 written;
};

struct reader {
	pthread_t	 thread;
	int		 fd;
	uint64_t	 pause_at;
	volatile int	 paused, resume, done;
	uint64_t	 n;
	unsigned char	 md[32];
};

static uint64_t
splitmix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Byte pos of stream seed: random access, so ranges can be checked. */
static void
gen(unsigned char *buf, size_t n, uint64_t pos, unsigned seed)
{
	uint64_t	w = 0, b;
	size_t		i;

	for (i = 0; i < n; i++) {
		b = pos + i;
		if (i == 0 || (b & 7) == 0)
			w = splitmix(((uint64_t)seed << 40) ^ (b >> 3));
		buf[i] = w >> ((b & 7) * 8);
	}
}

static void
expected_sha(uint64_t off, uint64_t len, unsigned seed, unsigned char *md)
{
	EVP_MD_CTX	*ctx = EVP_MD_CTX_new();
	unsigned char	 buf[65536];
	size_t		 n;

	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	while (len > 0) {
		n = len < sizeof(buf) ? len : sizeof(buf);
		gen(buf, n, off, seed);
		EVP_DigestUpdate(ctx, buf, n);
		off += n;
		len -= n;
	}
	EVP_DigestFinal_ex(ctx, md, NULL);
	EVP_MD_CTX_free(ctx);
}

static void *
writer_main(void *arg)
{
	struct writer	*w = arg;
	unsigned char	 buf[65536];
	uint64_t	 end = w->close_at ? w->close_at : w->total;
	size_t		 n;
	ssize_t		 r;

	while (w->written < end) {
		if (w->pause_at && w->written >= w->pause_at && !w->resume) {
			w->paused = 1;
			usleep(10000);
			continue;
		}
		n = end - w->written < sizeof(buf) ? end - w->written :
		    sizeof(buf);
		gen(buf, n, w->written, w->seed);
		if ((r = write(w->fd, buf, n)) <= 0)
			break;
		w->written += r;
	}
	close(w->fd);
	w->done = 1;
	return NULL;
}

static void *
reader_main(void *arg)
{
	struct reader	*rd = arg;
	EVP_MD_CTX	*ctx = EVP_MD_CTX_new();
	unsigned char	 buf[65536];
	ssize_t		 r;

	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	for (;;) {
		if (rd->pause_at && rd->n >= rd->pause_at && !rd->resume) {
			rd->paused = 1;
			usleep(10000);
			continue;
		}
		if ((r = read(rd->fd, buf, sizeof(buf))) <= 0)
			break;
		EVP_DigestUpdate(ctx, buf, r);
		rd->n += r;
	}
	EVP_DigestFinal_ex(ctx, rd->md, NULL);
	EVP_MD_CTX_free(ctx);
	close(rd->fd);
	rd->done = 1;
	return NULL;
}

/* Run the loop until *flag is set or secs pass; the flag's value. */
static int
run_until(volatile int *flag, int secs)
{
	struct timeval	tv = { 0, 20000 };
	time_t		end = time(NULL) + secs;

	while (!*flag && time(NULL) < end) {
		event_base_loopexit(base, &tv);
		event_base_dispatch(base);
	}
	return *flag;
}

static void
run_for(int ms)
{
	struct timeval	tv = { ms / 1000, (ms % 1000) * 1000 };

	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

static void
done_cb(void *arg, int error)
{
	struct result	*r = arg;

	r->error = error;
	r->done = 1;
}

static void
stat_cb(void *arg, int error, off_t size)
{
	struct result	*r = arg;

	r->error = error;
	r->size = size;
	r->done = 1;
}

static void
open_cb(void *arg, int error, int fd, int seekable)
{
	struct result	*r = arg;

	r->error = error;
	r->fd = fd;
	r->size = seekable;
	r->done = 1;
}

static void
ref_for(char *buf, size_t len, unsigned seed)
{
	snprintf(buf, len, "%02x/file-%032x", seed & 0xff, seed * 2654435761u);
}

static int
do_check(struct store *st)
{
	struct result	r = { 0 };

	st->ops->check(st, done_cb, &r);
	if (!run_until(&r.done, 30))
		return ETIMEDOUT;
	return r.error;
}

static int
do_stat(struct store *st, const char *ref, off_t *size)
{
	struct result	r = { 0 };

	st->ops->stat(st, ref, stat_cb, &r);
	if (!run_until(&r.done, 30))
		return ETIMEDOUT;
	*size = r.size;
	return r.error;
}

static int
do_remove(struct store *st, const char *ref)
{
	struct result	r = { 0 };

	st->ops->remove(st, ref, done_cb, &r);
	if (!run_until(&r.done, 30))
		return ETIMEDOUT;
	return r.error;
}

static int
do_put(struct store *st, const char *ref, uint64_t n, unsigned seed)
{
	struct store_xfer	*x;
	struct writer		 w = { 0 };
	struct result		 r = { 0 };
	int			 error;

	if ((error = st->ops->put_begin(st, ref, &w.fd, &x)) != 0)
		return error;
	w.total = n;
	w.seed = seed;
	pthread_create(&w.thread, NULL, writer_main, &w);
	run_until(&w.done, 300);
	pthread_join(w.thread, NULL);
	st->ops->put_commit(x, n, done_cb, &r);
	if (!run_until(&r.done, 60))
		return ETIMEDOUT;
	return r.error;
}

/* Read a range through get; its sha256 and length. */
static int
do_get(struct store *st, const char *ref, off_t off, off_t len,
    unsigned char *md, uint64_t *n)
{
	struct result	r = { 0 };
	struct reader	rd = { 0 };

	st->ops->get(st, ref, off, len, open_cb, &r);
	if (!run_until(&r.done, 30))
		return ETIMEDOUT;
	if (r.error)
		return r.error;
	rd.fd = r.fd;
	pthread_create(&rd.thread, NULL, reader_main, &rd);
	run_until(&rd.done, 300);
	pthread_join(rd.thread, NULL);
	memcpy(md, rd.md, 32);
	*n = rd.n;
	return r.size != 0 ? EINVAL : 0;	/* a stream is not seekable */
}

/* The store's temporaries are "<ref>.tmp"; its probes ".depot-check-". */
static int
is_temporary(const char *name)
{
	size_t	 n = strlen(name);

	return n > 4 && strcmp(name + n - 4, ".tmp") == 0;
}

static int
count_tmp(void)
{
	DIR		*d, *sub;
	struct dirent	*de, *se;
	char		 path[4096];
	int		 n = 0;

	if ((d = opendir(env_root)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (is_temporary(de->d_name) ||
		    strstr(de->d_name, ".depot-check-") != NULL)
			n++;
		snprintf(path, sizeof(path), "%s/%s", env_root, de->d_name);
		if ((sub = opendir(path)) == NULL)
			continue;
		while ((se = readdir(sub)) != NULL)
			if (is_temporary(se->d_name))
				n++;
		closedir(sub);
	}
	closedir(d);
	return n;
}

static long
peak_rss_kib(void)
{
	FILE	*f = fopen("/proc/self/status", "r");
	char	 line[256];
	long	 kib = -1;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmHWM: %ld", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

static int
harness(const char *fn)
{
	char	cmd[8192];

	snprintf(cmd, sizeof(cmd), "sh -c '. \"%s\"; %s \"%s\"' >/dev/null",
	    env_harness, fn, env_dir);
	return system(cmd);
}

static int
store_open(struct store *st, const struct store_conf *conf)
{
	memset(st, 0, sizeof(*st));
	st->ops = &store_sftp_ops;
	st->base = base;
	return st->ops->init(st, conf);
}

static void
test_round_trip(struct store *st, uint64_t n, unsigned seed)
{
	unsigned char	 want[32], got[32];
	char		 ref[64], what[128];
	uint64_t	 len;
	off_t		 size = -1;

	ref_for(ref, sizeof(ref), seed);
	snprintf(what, sizeof(what), "%llu bytes", (unsigned long long)n);
	T_EQ_INT(do_put(st, ref, n, seed), 0, "put");
	T_EQ_INT(do_stat(st, ref, &size), 0, "stat after put");
	T_EQ_INT(size, n, "stat size");
	expected_sha(0, n, seed, want);
	T_EQ_INT(do_get(st, ref, 0, n, got, &len), 0, "get whole");
	T_EQ_INT(len, n, "get whole: length");
	T_OK(memcmp(want, got, 32) == 0, "get whole: sha256 of %s", what);
	if (n < 3)
		return;
	expected_sha(n / 3, n / 2, seed, want);
	T_EQ_INT(do_get(st, ref, n / 3, n / 2, got, &len), 0, "get range");
	T_EQ_INT(len, n / 2, "get range: length");
	T_OK(memcmp(want, got, 32) == 0, "get range: sha256 of %s", what);
}

static void
test_concurrent(struct store *st)
{
	struct store_xfer	*x[4];
	struct writer		 w[4];
	struct result		 r[4];
	unsigned char		 want[32], got[32];
	char			 ref[64];
	uint64_t		 len;
	volatile int		 all = 0;
	int			 i, ok;

	memset(w, 0, sizeof(w));
	memset(r, 0, sizeof(r));
	for (i = 0; i < 4; i++) {
		ref_for(ref, sizeof(ref), 100 + i);
		T_EQ_INT(st->ops->put_begin(st, ref, &w[i].fd, &x[i]), 0,
		    "concurrent put_begin");
		w[i].total = 3 * MiB + i;
		w[i].seed = 100 + i;
		pthread_create(&w[i].thread, NULL, writer_main, &w[i]);
	}
	for (i = 0; i < 4; i++) {
		run_until(&w[i].done, 120);
		pthread_join(w[i].thread, NULL);
		st->ops->put_commit(x[i], w[i].total, done_cb, &r[i]);
	}
	for (i = 0; i < 4; i++)
		run_until(&r[i].done, 60);
	for (i = 0, ok = 1; i < 4; i++)
		ok = ok && r[i].done && r[i].error == 0;
	all = ok;
	T_OK(all, "4 concurrent puts all committed");
	for (i = 0; i < 4; i++) {
		ref_for(ref, sizeof(ref), 100 + i);
		expected_sha(0, w[i].total, 100 + i, want);
		T_EQ_INT(do_get(st, ref, 0, -1, got, &len), 0,
		    "get concurrent blob");
		T_OK(len == w[i].total && memcmp(want, got, 32) == 0,
		    "concurrent blob %d intact", i);
	}
}

static void
test_abort(struct store *st)
{
	struct store_xfer	*x;
	struct writer		 w = { 0 };
	struct result		 r = { 0 };
	char			 ref[64];
	off_t			 size;
	int			 i, rc;

	ref_for(ref, sizeof(ref), 200);
	T_EQ_INT(rc = st->ops->put_begin(st, ref, &w.fd, &x), 0, "put_begin");
	if (rc != 0)
		return;	/* x is not a transfer: nothing below can run */
	w.total = 8 * MiB;
	w.pause_at = 1 * MiB;
	w.seed = 200;
	pthread_create(&w.thread, NULL, writer_main, &w);
	run_until(&w.paused, 30);
	for (i = 0; i < 100 && count_tmp() == 0; i++)
		run_for(20);
	T_OK(count_tmp() == 1, "a temporary exists while the put runs");
	st->ops->put_abort(x);
	for (i = 0; i < 250 && count_tmp() != 0; i++)
		run_for(20);
	T_EQ_INT(count_tmp(), 0, "put_abort leaves no temporary");
	w.resume = 1;
	pthread_join(w.thread, NULL);
	T_OK(w.written < w.total, "the writer saw its socket closed");
	T_EQ_INT(do_stat(st, ref, &size), ENOENT, "an aborted ref is absent");

	/* The writer stops short and the frontend still commits. */
	memset(&w, 0, sizeof(w));
	ref_for(ref, sizeof(ref), 201);
	T_EQ_INT(rc = st->ops->put_begin(st, ref, &w.fd, &x), 0, "put_begin");
	if (rc != 0)
		return;	/* x is not a transfer: nothing below can run */
	w.total = 5000;
	w.close_at = 1000;
	w.seed = 201;
	pthread_create(&w.thread, NULL, writer_main, &w);
	run_until(&w.done, 30);
	pthread_join(w.thread, NULL);
	st->ops->put_commit(x, 5000, done_cb, &r);
	run_until(&r.done, 30);
	T_EQ_INT(r.error, EIO, "a short upload fails its commit with EIO");
	T_EQ_INT(count_tmp(), 0, "a short upload leaves no temporary");
	T_EQ_INT(do_stat(st, ref, &size), ENOENT, "a short upload is absent");
}

static void
test_keys(const struct store_conf *base_conf, const char *enc,
    const char *pass)
{
	struct store_conf	conf = *base_conf;
	struct store		st;
	char			kh[4096];
	FILE			*f;

	conf.identity = enc;
	conf.passphrase = pass;
	T_EQ_INT(store_open(&st, &conf), 0, "init with an encrypted key");
	T_EQ_INT(do_check(&st), 0, "encrypted key, right passphrase: check");
	test_round_trip(&st, 1000, 300);
	st.ops->free(&st);

	conf.passphrase = "wrong horse";
	T_EQ_INT(store_open(&st, &conf), 0, "init, wrong passphrase");
	T_EQ_INT(do_check(&st), EACCES, "wrong passphrase: check refused");
	st.ops->free(&st);

	conf.passphrase = NULL;
	T_EQ_INT(store_open(&st, &conf), 0, "init, no passphrase");
	T_EQ_INT(do_check(&st), EACCES, "missing passphrase: check refused");
	st.ops->free(&st);

	conf = *base_conf;
	conf.known_hosts = getenv("DEPOT_SFTP_KNOWN_HOSTS_BAD");
	T_EQ_INT(store_open(&st, &conf), 0, "init, changed host key");
	T_EQ_INT(do_check(&st), EACCES, "changed host key: check refused");
	st.ops->free(&st);

	snprintf(kh, sizeof(kh), "%s/known_hosts_empty", env_dir);
	if ((f = fopen(kh, "w")) != NULL)
		fclose(f);
	conf.known_hosts = kh;
	T_EQ_INT(store_open(&st, &conf), 0, "init, unknown host");
	T_EQ_INT(do_check(&st), EACCES, "unknown host key: check refused");
	st.ops->free(&st);
}

/* Kill sshd in the middle of a download and an upload, then restart. */
static void
test_reconnect(struct store *st, const char *big_ref, uint64_t big)
{
	struct store_xfer	*x;
	struct writer		 w = { 0 };
	struct reader		 rd = { 0 };
	struct result		 g = { 0 }, c = { 0 };
	unsigned char		 want[32], got[32];
	char			 ref[64];
	uint64_t		 len;
	off_t			 size;
	int			 i, error = EIO;

	st->ops->get(st, big_ref, 0, big, open_cb, &g);
	run_until(&g.done, 30);
	T_EQ_INT(g.error, 0, "get before the kill");
	rd.fd = g.fd;
	rd.pause_at = 4 * MiB;
	pthread_create(&rd.thread, NULL, reader_main, &rd);

	ref_for(ref, sizeof(ref), 400);
	T_EQ_INT(st->ops->put_begin(st, ref, &w.fd, &x), 0, "put_begin");
	w.total = 16 * MiB;
	w.pause_at = 2 * MiB;
	w.seed = 400;
	pthread_create(&w.thread, NULL, writer_main, &w);
	run_until(&rd.paused, 60);
	run_until(&w.paused, 60);
	for (i = 0; i < 100 && count_tmp() == 0; i++)
		run_for(20);
	T_OK(rd.paused && w.paused && count_tmp() == 1,
	    "download and upload are under way");

	T_EQ_INT(harness("sshd_stop"), 0, "sshd stopped");
	rd.resume = w.resume = 1;
	run_until(&rd.done, 60);
	pthread_join(rd.thread, NULL);
	T_OK(rd.done && rd.n < big, "the reader saw a short stream "
	    "(%llu of %llu bytes)", (unsigned long long)rd.n,
	    (unsigned long long)big);
	run_until(&w.done, 60);
	pthread_join(w.thread, NULL);
	st->ops->put_commit(x, w.total, done_cb, &c);
	run_until(&c.done, 30);
	T_EQ_INT(c.error, EIO, "the interrupted upload fails with EIO");
	T_EQ_INT(do_stat(st, ref, &size), EIO, "while down, stat fails fast");

	T_EQ_INT(harness("sshd_start"), 0, "sshd restarted");
	for (i = 0; i < 60 && error != 0; i++) {
		error = do_put(st, ref, 100000, 401);
		if (error != 0)
			run_for(500);
	}
	T_EQ_INT(error, 0, "a new put works after the reconnect");
	expected_sha(0, 100000, 401, want);
	T_OK(do_get(st, ref, 0, -1, got, &len) == 0 && len == 100000 &&
	    memcmp(want, got, 32) == 0, "and reads back intact");
	for (i = 0; i < 250 && count_tmp() != 0; i++)
		run_for(20);
	T_EQ_INT(count_tmp(), 0,
	    "the interrupted upload's temporary is removed after reconnect");
}

/* A server that stops answering is given up after the stall limit. */
static void
test_stall(struct store *st)
{
	char		ref[64];
	off_t		size;
	time_t		t0;
	int		i, error = EIO;

	/* test_reconnect left 100000 bytes of stream 401 under ref 400. */
	ref_for(ref, sizeof(ref), 400);
	T_EQ_INT(do_stat(st, ref, &size), 0, "stat before the freeze");
	T_EQ_INT(harness("sshd_freeze"), 0, "sshd connections frozen");
	t0 = time(NULL);
	T_EQ_INT(do_stat(st, ref, &size), EIO,
	    "a stat against a frozen server fails with EIO");
	T_OK(time(NULL) - t0 >= 5 && time(NULL) - t0 <= 15,
	    "after the stall limit (%lld s)", (long long)(time(NULL) - t0));
	T_EQ_INT(harness("sshd_thaw"), 0, "sshd connections thawed");
	for (i = 0; i < 60 && error != 0; i++) {
		error = do_stat(st, ref, &size);
		if (error != 0)
			run_for(500);
	}
	T_EQ_INT(error, 0, "stat works again after the reconnect");
	T_EQ_INT(size, 100000, "and sees the blob");
}

/* Read-ahead a ranged get did not need must not pile up in the session. */
static void
test_ranged_gets(struct store *st)
{
	unsigned char	 want[32], got[32];
	char		 ref[64];
	uint64_t	 len;
	long		 rss0, rss1;
	int		 i, ok = 1;

	ref_for(ref, sizeof(ref), 4);
	expected_sha(5 * MiB, 300 * 1024, 4, want);
	rss0 = peak_rss_kib();
	for (i = 0; i < 120; i++) {
		ok = ok && do_get(st, ref, 5 * MiB, 300 * 1024, got, &len) ==
		    0 && len == 300 * 1024 && memcmp(want, got, 32) == 0;
	}
	rss1 = peak_rss_kib();
	T_OK(ok, "120 ranged gets of 300 KiB in a 40 MiB blob");
#ifdef __SANITIZE_ADDRESS__
	printf("# peak RSS grew %ld KiB; not checked under ASan\n",
	    rss1 - rss0);
#else
	T_OK(rss1 - rss0 < 512, "and peak RSS grew %ld KiB (limit 512 KiB)",
	    rss1 - rss0);
#endif
}

/* URL parsing needs no server: these run in the unit suite as well. */
static void
test_urls(void)
{
	struct sftp_url	u;

	memset(&u, 0, sizeof(u));
	T_EQ_INT(sftp_url_parse(&u, "sftp://depot@files.example:2222/srv/d/"),
	    0, "url with port");
	T_EQ_STR(u.user, "depot", "url user");
	T_EQ_STR(u.host, "files.example", "url host");
	T_EQ_INT(u.port, 2222, "url port");
	T_EQ_STR(u.root, "/srv/d", "url root loses its trailing slash");
	sftp_url_free(&u);
	T_EQ_INT(sftp_url_parse(&u, "sftp://d@[::1]/x"), 0, "url with IPv6");
	T_EQ_STR(u.host, "::1", "IPv6 host without brackets");
	T_EQ_INT(u.port, 22, "default port 22");
	sftp_url_free(&u);
	T_EQ_INT(sftp_url_parse(&u, "sftp://d@h/"), 0, "url of /");
	T_EQ_STR(u.root, "", "root / is the empty prefix");
	sftp_url_free(&u);
	T_EQ_INT(sftp_url_parse(&u, "sftp://h/x"), -1, "no user: refused");
	sftp_url_free(&u);
	T_EQ_INT(sftp_url_parse(&u, "sftp://d@h:0/x"), -1, "port 0: refused");
	sftp_url_free(&u);
	T_EQ_INT(sftp_url_parse(&u, "sftp://d@h:99999/x"), -1,
	    "port 99999: refused");
	sftp_url_free(&u);
	T_EQ_INT(sftp_url_parse(&u, "sftp://d@h"), -1, "no path: refused");
	sftp_url_free(&u);
	T_EQ_INT(sftp_url_parse(&u, "s3://d@h/x"), -1, "other scheme: refused");
	sftp_url_free(&u);
	T_EQ_INT(sftp_url_parse(&u, "sftp://d@/x"), -1, "no host: refused");
	sftp_url_free(&u);
}

int
main(void)
{
	struct store_conf	 conf = { 0 };
	struct store		 st;
	char			 url[4096], ref[64];
	char			*p;
	const char		*enc, *pass;
	long			 rss0, rss1;
	struct timespec		 t0, t1;
	off_t			 size;

	signal(SIGPIPE, SIG_IGN);
	log_init("test_store_sftp", 1, 1);
	test_urls();
	conf.url = getenv("DEPOT_SFTP_URL");
	conf.identity = getenv("DEPOT_SFTP_IDENTITY");
	conf.known_hosts = getenv("DEPOT_SFTP_KNOWN_HOSTS");
	conf.keepalive = 2;
	env_root = getenv("DEPOT_SFTP_ROOT");
	env_dir = getenv("DEPOT_SFTP_DIR");
	env_harness = getenv("DEPOT_SFTP_HARNESS");
	enc = getenv("DEPOT_SFTP_IDENTITY_ENC");
	pass = getenv("DEPOT_SFTP_PASSPHRASE");
	if (conf.url == NULL || env_root == NULL || env_dir == NULL ||
	    env_harness == NULL || enc == NULL || pass == NULL) {
		/* No sshd in the unit runner: regress/sftp runs the rest. */
		printf("# DEPOT_SFTP_* not set: server checks run by "
		    "regress/sftp/suite.sh\n");
		return t_done();
	}
	base = event_base_new();

	conf.url = "sftp://nobody@";
	T_EQ_INT(store_open(&st, &conf), -1, "a URL without path is refused");
	conf.url = getenv("DEPOT_SFTP_URL");
	conf.identity = "";
	T_EQ_INT(store_open(&st, &conf), -1, "an empty identity is refused");
	conf.identity = getenv("DEPOT_SFTP_IDENTITY");
	conf.url = "sftp://127.0.0.1/x";
	T_EQ_INT(store_open(&st, &conf), -1, "a URL without user is refused");
	snprintf(url, sizeof(url), "%s/missing", getenv("DEPOT_SFTP_URL"));
	conf.url = url;
	T_EQ_INT(store_open(&st, &conf), 0, "init, missing root");
	T_EQ_INT(do_check(&st), ENOENT, "check of a missing root: ENOENT");
	st.ops->free(&st);

	/* DIR itself: root-owned, readable but not writable by the user. */
	snprintf(url, sizeof(url), "%s", getenv("DEPOT_SFTP_URL"));
	if ((p = strstr(url, "/store")) != NULL)
		*p = '\0';
	conf.url = url;
	T_EQ_INT(store_open(&st, &conf), 0, "init, read-only root");
	T_EQ_INT(do_check(&st), EACCES, "check of a read-only root: EACCES");
	st.ops->free(&st);

	conf.url = getenv("DEPOT_SFTP_URL");
	T_EQ_INT(store_open(&st, &conf), 0, "init");
	T_EQ_INT(do_check(&st), 0, "check");
	T_EQ_INT(count_tmp(), 0, "check leaves no probe file behind");

	test_round_trip(&st, 0, 1);
	test_round_trip(&st, 1, 2);
	test_round_trip(&st, 1 * MiB, 3);
	rss0 = peak_rss_kib();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	test_round_trip(&st, 40 * MiB, 4);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("# 40 MiB put, stat, get and half get in %.2f s\n",
	    (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	rss1 = peak_rss_kib();
#ifdef __SANITIZE_ADDRESS__
	printf("# 40 MiB moved, peak RSS grew %ld KiB; not checked under "
	    "ASan\n", rss1 - rss0);
#else
	T_OK(rss0 > 0 && rss1 - rss0 < 8 * 1024, "40 MiB moved with peak RSS "
	    "growing %ld KiB (limit 8 MiB)", rss1 - rss0);
#endif

	test_ranged_gets(&st);
	test_concurrent(&st);
	test_abort(&st);

	ref_for(ref, sizeof(ref), 500);
	T_EQ_INT(do_remove(&st, ref), ENOENT, "remove of a missing ref");
	ref_for(ref, sizeof(ref), 2);
	T_EQ_INT(do_remove(&st, ref), 0, "remove");
	T_EQ_INT(do_stat(&st, ref, &size), ENOENT, "stat after remove");
	T_EQ_INT(do_stat(&st, "../etc/passwd", &size), EINVAL,
	    "a ref that climbs is refused");

	test_keys(&conf, enc, pass);

	ref_for(ref, sizeof(ref), 4);
	test_reconnect(&st, ref, 40 * MiB);
	test_stall(&st);
	st.ops->free(&st);
	event_base_free(base);
	return t_done();
}
