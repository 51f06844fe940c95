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
 * test_store_s3: the S3 store against a real S3 server (radosgw, started
 * by regress/s3/suite.sh), with DEPOT_S3_ENDPOINT, DEPOT_S3_ACCESS_KEY and
 * DEPOT_S3_SECRET_KEY in the environment.  Without them it reports no
 * check at all.  The test plays the frontend from a second thread that
 * writes or reads the store's socketpair end.
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <err.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <event2/event.h>
#include <openssl/evp.h>

#include "store/s3sign.h"
#include "store/store.h"
#include "t.h"

#define MIB	(1024 * 1024)

static struct event_base	*base;
static const char		*endpoint, *access_key, *secret_key, *region;
static const char		*endpoint_save;
static char			 bucket[64];

/* The bytes of a test object: position-dependent, seeded per object. */
static unsigned char
gen_byte(unsigned seed, off_t i)
{
	uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15ULL + seed;

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 32;
	return x & 0xff;
}

static void
gen_sha256(unsigned seed, off_t off, off_t len, char out[65])
{
	EVP_MD_CTX	*ctx = EVP_MD_CTX_new();
	unsigned char	 buf[65536], md[32];
	off_t		 i, n;
	int		 k;

	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	for (i = 0; i < len; i += n) {
		n = len - i < (off_t)sizeof(buf) ? len - i : (off_t)sizeof(buf);
		for (k = 0; k < n; k++)
			buf[k] = gen_byte(seed, off + i + k);
		EVP_DigestUpdate(ctx, buf, n);
	}
	EVP_DigestFinal_ex(ctx, md, NULL);
	EVP_MD_CTX_free(ctx);
	for (k = 0; k < 32; k++)
		snprintf(out + 2 * k, 3, "%02x", md[k]);
}

/* The frontend's side, in a thread. */
struct peer {
	int		 fd;
	unsigned	 seed;
	off_t		 len;		/* to write */
	off_t		 got;		/* read */
	char		 sha[65];
	volatile int	 done;
	pthread_t	 thread;
};

static void *
writer(void *arg)
{
	struct peer	*p = arg;
	unsigned char	 buf[32768];
	off_t		 i, n;
	ssize_t		 w;
	int		 k;

	for (i = 0; i < p->len; i += n) {
		n = p->len - i < (off_t)sizeof(buf) ? p->len - i :
		    (off_t)sizeof(buf);
		for (k = 0; k < n; k++)
			buf[k] = gen_byte(p->seed, i + k);
		for (k = 0; k < n; k += w)
			if ((w = write(p->fd, buf + k, n - k)) <= 0)
				goto out;
	}
 out:
	close(p->fd);
	p->done = 1;
	return NULL;
}

static void *
reader(void *arg)
{
	struct peer	*p = arg;
	EVP_MD_CTX	*ctx = EVP_MD_CTX_new();
	unsigned char	 buf[32768], md[32];
	ssize_t		 n;
	int		 k;

	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	while ((n = read(p->fd, buf, sizeof(buf))) > 0) {
		EVP_DigestUpdate(ctx, buf, n);
		p->got += n;
	}
	EVP_DigestFinal_ex(ctx, md, NULL);
	EVP_MD_CTX_free(ctx);
	for (k = 0; k < 32; k++)
		snprintf(p->sha + 2 * k, 3, "%02x", md[k]);
	close(p->fd);
	p->done = 1;
	return NULL;
}

/* Results of the store's callbacks. */
struct result {
	int	done;
	int	error;
	int	fd;
	off_t	size;
};

static void
done_cb(void *arg, int error)
{
	struct result *r = arg;

	r->error = error;
	r->done = 1;
}

static void
stat_cb(void *arg, int error, off_t size)
{
	struct result *r = arg;

	r->error = error;
	r->size = size;
	r->done = 1;
}

static void
open_cb(void *arg, int error, int fd, int seekable)
{
	struct result *r = arg;

	r->error = error;
	r->fd = fd;
	r->done = 1;
}

static void
tick(evutil_socket_t fd, short what, void *arg)
{
}

/* Runs the loop until *flag, or for at most secs. */
static void
run_until(volatile int *flag, int secs)
{
	time_t	end = time(NULL) + secs;

	while ((flag == NULL || !*flag) && time(NULL) < end)
		event_base_loop(base, EVLOOP_ONCE);
}

/* A blocking, signed request of the test's own, to set up and inspect. */
static long
s3_raw(const char *method, const char *path, const char *query,
    char **body)
{
	CURL			*c = curl_easy_init();
	struct curl_slist	*hl = NULL;
	struct s3sign_hdr	 h[3];
	struct s3sign_cred	 cred = { access_key, secret_key, region, "s3" };
	struct s3sign_out	 o;
	struct s3sign_req	 r;
	char			 date[17], host[256], *url, *line, *cq;
	FILE			*f;
	size_t			 blen;
	long			 status = -1;

	snprintf(host, sizeof(host), "%s", strstr(endpoint, "://") + 3);
	s3sign_amz_date(date, sizeof(date), time(NULL));
	h[0] = (struct s3sign_hdr){ "host", host };
	h[1] = (struct s3sign_hdr){ "x-amz-date", date };
	h[2] = (struct s3sign_hdr){ "x-amz-content-sha256",
	    S3SIGN_EMPTY_SHA256 };
	r = (struct s3sign_req){ method, path, query, h, 3,
	    S3SIGN_EMPTY_SHA256, date };
	if (s3sign(&r, &cred, &o) == -1)
		return -1;
	cq = s3sign_canonical_query(query);
	if (asprintf(&url, "%s%s%s%s", endpoint, path, cq[0] ? "?" : "",
	    cq) == -1)
		abort();
	if (asprintf(&line, "Authorization: %s", o.authorization) == -1)
		abort();
	hl = curl_slist_append(hl, line);
	free(line);
	if (asprintf(&line, "x-amz-date: %s", date) == -1)
		abort();
	hl = curl_slist_append(hl, line);
	free(line);
	hl = curl_slist_append(hl, "x-amz-content-sha256: "
	    S3SIGN_EMPTY_SHA256);
	*body = NULL;
	f = open_memstream(body, &blen);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, f);
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	fclose(f);
	curl_easy_cleanup(c);
	curl_slist_free_all(hl);
	s3sign_out_free(&o);
	free(url);
	free(cq);
	return status;
}

/* How many multipart uploads the bucket has in progress. */
static int
uploads_in_progress(void)
{
	char	 path[128], *body, *p;
	int	 n = 0;

	snprintf(path, sizeof(path), "/%s", bucket);
	if (s3_raw("GET", path, "uploads", &body) != 200) {
		free(body);
		return -1;
	}
	for (p = body; (p = strstr(p, "<Upload>")) != NULL; p++)
		n++;
	free(body);
	return n;
}

static struct store *
store_open(const char *secret, const char *bkt, int64_t part_size)
{
	struct store_conf	 conf;
	struct store		*st = calloc(1, sizeof(*st));
	char			 url[128];

	memset(&conf, 0, sizeof(conf));
	snprintf(url, sizeof(url), "s3://%s/some/prefix/", bkt);
	conf.url = url;
	conf.endpoint = endpoint;
	conf.region = region;
	conf.access_key = access_key;
	conf.secret_key = secret;
	conf.path_style = 1;
	/* 0: the configuration's default part size, as conf_new sets it. */
	conf.part_size = part_size > 0 ? part_size : 16 * MIB;
	conf.max_transfers = 4;
	st->ops = &store_s3_ops;
	st->base = base;
	if (st->ops->init(st, &conf) == -1) {
		free(st);
		return NULL;
	}
	return st;
}

static void
store_close(struct store *st)
{
	st->ops->free(st);
	free(st);
}

/* Writes len bytes, commits with size; returns the commit's error. */
static int
put(struct store *st, const char *ref, unsigned seed, off_t len, off_t size)
{
	struct store_xfer	*x;
	struct peer		 p = { .seed = seed, .len = len };
	struct result		 r = { 0 };
	int			 error;

	if ((error = st->ops->put_begin(st, ref, &p.fd, &x)) != 0)
		return error;
	pthread_create(&p.thread, NULL, writer, &p);
	st->ops->put_commit(x, size, done_cb, &r);
	run_until(&r.done, 120);
	pthread_join(p.thread, NULL);
	return r.done ? r.error : ETIMEDOUT;
}

static int
stat_ref(struct store *st, const char *ref, off_t *size)
{
	struct result	r = { 0 };

	st->ops->stat(st, ref, stat_cb, &r);
	run_until(&r.done, 60);
	*size = r.size;
	return r.done ? r.error : ETIMEDOUT;
}

/* Reads a range; the digest of what came lands in sha. */
static int
get(struct store *st, const char *ref, off_t off, off_t len, char sha[65],
    off_t *got)
{
	struct result	r = { 0 };
	struct peer	p = { 0 };

	st->ops->get(st, ref, off, len, open_cb, &r);
	run_until(&r.done, 60);
	if (!r.done)
		return ETIMEDOUT;
	if (r.error)
		return r.error;
	p.fd = r.fd;
	pthread_create(&p.thread, NULL, reader, &p);
	run_until(&p.done, 120);
	pthread_join(p.thread, NULL);
	memcpy(sha, p.sha, 65);
	*got = p.got;
	return 0;
}

static int
remove_ref(struct store *st, const char *ref)
{
	struct result	r = { 0 };

	st->ops->remove(st, ref, done_cb, &r);
	run_until(&r.done, 60);
	return r.done ? r.error : ETIMEDOUT;
}

static int
check(struct store *st)
{
	struct result	r = { 0 };

	st->ops->check(st, done_cb, &r);
	run_until(&r.done, 60);
	return r.done ? r.error : ETIMEDOUT;
}

/*
 * A fake S3 on loopback that answers each request with the next status
 * of a script, to see what the store retries.
 */
struct fake {
	int		 lfd;
	const int	*statuses;
	int		 n;
	volatile int	 served;
	pthread_t	 thread;
};

static void *
fake_serve(void *arg)
{
	struct fake	*f = arg;
	char		 buf[8192], resp[256];
	int		 c, i;

	for (i = 0; i < f->n; i++) {
		if ((c = accept(f->lfd, NULL, NULL)) == -1)
			break;
		/* A HEAD has no body: the headers fit one read here. */
		if (read(c, buf, sizeof(buf)) <= 0) {
			close(c);
			break;
		}
		snprintf(resp, sizeof(resp), "HTTP/1.1 %d X\r\n"
		    "Content-Length: 0\r\nConnection: close\r\n\r\n",
		    f->statuses[i]);
		/* A short write is the client's failure to see, not ours. */
		if (write(c, resp, strlen(resp)) == -1)
			warn("fake s3: write");
		close(c);
		f->served++;
	}
	return NULL;
}

static int
fake_check(const int *statuses, int n, int *served)
{
	struct sockaddr_in	 sin;
	socklen_t		 len = sizeof(sin);
	struct fake		 f = { .statuses = statuses, .n = n };
	struct store		*st;
	char			 ep[64];
	int			 error;

	f.lfd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(f.lfd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(f.lfd, 8) == -1 ||
	    getsockname(f.lfd, (struct sockaddr *)&sin, &len) == -1)
		return -1;
	snprintf(ep, sizeof(ep), "http://127.0.0.1:%d", ntohs(sin.sin_port));
	endpoint = ep;
	access_key = "AKIDFAKE";
	st = store_open("fake-secret", "fakebucket", 0);
	pthread_create(&f.thread, NULL, fake_serve, &f);
	error = check(st);
	store_close(st);
	/* Unblock accept() if the store asked less often than scripted. */
	shutdown(f.lfd, SHUT_RDWR);
	close(f.lfd);
	pthread_join(f.thread, NULL);
	*served = f.served;
	endpoint = NULL;
	return error;
}

static void
test_retries(void)
{
	static const int	 s503[] = { 503, 500, 200 };
	static const int	 s429[] = { 429, 200 };
	static const int	 s400[] = { 400, 200 };
	static const int	 s403[] = { 403, 200 };
	int			 served = 0;

	T_EQ_INT(fake_check(s503, 3, &served), 0, "503 then 500 are retried");
	T_EQ_INT(served, 3, "three requests for 503, 500, 200");
	T_EQ_INT(fake_check(s429, 2, &served), 0, "429 is retried");
	T_EQ_INT(served, 2, "two requests for 429, 200");
	T_EQ_INT(fake_check(s400, 2, &served), EIO, "400 is an error");
	T_EQ_INT(served, 1, "400 is not retried");
	T_EQ_INT(fake_check(s403, 2, &served), EACCES, "403 is EACCES");
	T_EQ_INT(served, 1, "403 is not retried");
}

static long
maxrss_kib(void)
{
	struct rusage	ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static void
round_trip(struct store *st, const char *ref, unsigned seed, off_t len)
{
	char	 want[65], got_sha[65];
	off_t	 size = -1, got = -1, off, rlen;

	T_OK(put(st, ref, seed, len, len) == 0, "put of %lld bytes",
	    (long long)len);
	T_EQ_INT(stat_ref(st, ref, &size), 0, "stat after put");
	T_EQ_INT(size, len, "stat size");
	gen_sha256(seed, 0, len, want);
	T_EQ_INT(get(st, ref, 0, len, got_sha, &got), 0, "get whole");
	T_EQ_INT(got, len, "get whole: length");
	T_EQ_STR(got_sha, want, "get whole: sha256");
	if (len < 2)
		return;
	off = len / 3;
	rlen = len / 2;
	gen_sha256(seed, off, rlen, want);
	T_EQ_INT(get(st, ref, off, rlen, got_sha, &got), 0, "get range");
	T_EQ_INT(got, rlen, "get range: length");
	T_EQ_STR(got_sha, want, "get range: sha256");
}

/*
 * put_abort once the upload shows on the server.  Stepped one event at a
 * time, the abort comes while the create's answer (the upload's id) is
 * most likely still unread: the upload must be aborted all the same.
 */
static void
abort_once_listed(struct store *st, const char *ref, int step,
    const char *what)
{
	struct store_xfer	*x;
	struct peer		 p = { .seed = 9, .len = 7 * MIB };
	off_t			 size;
	time_t			 end;
	int			 n;

	n = uploads_in_progress();
	T_OK(n == 0, "%s: no multipart upload before (%d)", what, n);
	T_OK(st->ops->put_begin(st, ref, &p.fd, &x) == 0, "%s: put_begin",
	    what);
	n = 0;
	pthread_create(&p.thread, NULL, writer, &p);
	for (end = time(NULL) + 30; time(NULL) < end && n <= 0; ) {
		if (step)
			event_base_loop(base, EVLOOP_ONCE);
		else
			run_until(NULL, 1);
		n = uploads_in_progress();
	}
	T_OK(n == 1, "%s: a multipart upload is in progress mid-put (%d)",
	    what, n);
	st->ops->put_abort(x);
	for (end = time(NULL) + 30; time(NULL) < end && n != 0; ) {
		run_until(NULL, 1);
		n = uploads_in_progress();
	}
	pthread_join(p.thread, NULL);
	T_OK(n == 0, "%s: put_abort leaves no multipart upload (%d)", what, n);
	T_OK(stat_ref(st, ref, &size) == ENOENT,
	    "%s: put_abort leaves no object", what);
}

static void
test_abort(struct store *st)
{
	abort_once_listed(st, "ab/file-abort", 0, "abort mid-put");
	abort_once_listed(st, "ab/file-abort2", 1, "abort at the create");
}

/* Starts a multipart upload under ref by hand, as a failed put leaves. */
static int
orphan_upload(const char *ref)
{
	char	 path[256], *body;
	long	 status;

	snprintf(path, sizeof(path), "/%s/some/prefix/%s", bucket, ref);
	status = s3_raw("POST", path, "uploads", &body);
	if (status != 200 || body == NULL || strstr(body, "<UploadId>") == NULL)
		status = -1;
	free(body);
	return status == 200 ? 0 : -1;
}

/* The remove the sweep runs for a row a failed put left behind. */
static void
test_remove_uploads(struct store *st)
{
	struct store	*dead;
	off_t		 size;
	int		 i, ok;

	T_EQ_INT(uploads_in_progress(), 0, "no upload before the orphans");
	T_EQ_INT(orphan_upload("ab/file-orphan"), 0, "an orphaned upload");
	T_EQ_INT(orphan_upload("ab/file-orphan2"), 0,
	    "an upload under a longer key");
	T_EQ_INT(uploads_in_progress(), 2, "two uploads in progress");

	endpoint_save = endpoint;
	endpoint = "http://127.0.0.1:9";
	dead = store_open(secret_key, bucket, 0);
	endpoint = endpoint_save;
	T_EQ_INT(remove_ref(dead, "ab/file-orphan"), EIO,
	    "remove with S3 unreachable: EIO, not ENOENT");
	store_close(dead);

	T_EQ_INT(remove_ref(st, "ab/file-orphan"), 0,
	    "remove of a ref with only an upload: done, not ENOENT");
	T_EQ_INT(uploads_in_progress(), 1,
	    "the ref's upload is aborted, the longer key's kept");
	T_EQ_INT(remove_ref(st, "ab/file-orphan"), ENOENT,
	    "remove again: ENOENT");
	T_EQ_INT(remove_ref(st, "ab/file-orphan2"), 0,
	    "remove of the longer key");
	T_EQ_INT(uploads_in_progress(), 0, "no upload left");

	T_OK(put(st, "ab/file-orphan", 11, 1000, 1000) == 0,
	    "an object beside its uploads");
	for (ok = 1, i = 0; i < 2 * 50 + 3; i++)
		if (orphan_upload("ab/file-orphan") != 0)
			ok = 0;
	T_OK(ok, "103 uploads under one key (three pages of listing)");
	T_EQ_INT(remove_ref(st, "ab/file-orphan"), 0,
	    "remove of an object and 103 uploads");
	T_EQ_INT(uploads_in_progress(), 0, "every page's uploads aborted");
	T_EQ_INT(stat_ref(st, "ab/file-orphan", &size), ENOENT,
	    "the object is gone too");
}

static void
test_short(struct store *st)
{
	off_t	size;

	T_EQ_INT(put(st, "ab/file-short", 5, 1000, 2000), EIO,
	    "writer closing early: commit fails");
	T_EQ_INT(stat_ref(st, "ab/file-short", &size), ENOENT,
	    "writer closing early: no object");
	T_EQ_INT(put(st, "ab/file-short", 6, 6 * MIB, 8 * MIB), EIO,
	    "writer closing early after a part: commit fails");
	T_EQ_INT(stat_ref(st, "ab/file-short", &size), ENOENT,
	    "writer closing early after a part: no object");
	T_EQ_INT(uploads_in_progress(), 0,
	    "writer closing early after a part: upload aborted");
	T_EQ_INT(put(st, "ab/file-short", 7, 3000, 2000), EIO,
	    "more bytes than committed: commit fails");
}

int
main(void)
{
	struct store	*st, *bad;
	struct event	*ev;
	struct timeval	 tv = { 0, 20000 };
	char		 path[128], *body;
	long		 rss0, rss1;
	off_t		 size;

	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	base = event_base_new();
	ev = event_new(base, -1, EV_PERSIST, tick, NULL);
	event_add(ev, &tv);
	region = "us-east-1";
	test_retries();

	endpoint = getenv("DEPOT_S3_ENDPOINT");
	access_key = getenv("DEPOT_S3_ACCESS_KEY");
	secret_key = getenv("DEPOT_S3_SECRET_KEY");
	if (getenv("DEPOT_S3_REGION") != NULL)
		region = getenv("DEPOT_S3_REGION");
	if (endpoint == NULL || access_key == NULL || secret_key == NULL) {
		printf("# no S3 server in the environment: "
		    "run regress/s3/suite.sh for the rest\n");
		return t_done();
	}
	snprintf(bucket, sizeof(bucket), "depot-test-%ld-%d", (long)time(NULL),
	    (int)getpid());

	st = store_open(secret_key, bucket, 5 * MIB);
	T_OK(st != NULL, "init");
	if (st == NULL)
		return t_done();
	T_EQ_INT(check(st), ENOENT, "check of a missing bucket: ENOENT");
	snprintf(path, sizeof(path), "/%s", bucket);
	T_EQ_INT(s3_raw("PUT", path, NULL, &body), 200, "create the bucket");
	free(body);
	T_EQ_INT(check(st), 0, "check");
	bad = store_open("not-the-secret", bucket, 0);
	T_EQ_INT(check(bad), EACCES, "check with a wrong secret: EACCES");
	store_close(bad);

	round_trip(st, "ab/file-empty", 1, 0);
	round_trip(st, "ab/file-one", 2, 1);
	round_trip(st, "ab/file-mib", 3, MIB);
	rss0 = maxrss_kib();
	round_trip(st, "ab/file-big", 4, 40 * MIB);
	rss1 = maxrss_kib();
#ifdef __SANITIZE_ADDRESS__
	/* ASan's quarantine and shadow memory make the peak meaningless. */
	printf("# peak RSS grew %ld KiB; not checked under ASan\n",
	    rss1 - rss0);
#else
	/* Three 5 MiB parts in flight, and curl's buffers. */
	T_OK(rss1 - rss0 < 20 * 1024, "peak RSS grew by %ld KiB for 40 MiB",
	    rss1 - rss0);
#endif
	T_EQ_INT(uploads_in_progress(), 0, "no multipart upload left over");

	T_EQ_INT(remove_ref(st, "ab/file-mib"), 0, "remove");
	T_EQ_INT(stat_ref(st, "ab/file-mib", &size), ENOENT,
	    "stat after remove: ENOENT");
	T_EQ_INT(remove_ref(st, "ab/file-mib"), ENOENT,
	    "remove of a missing key: ENOENT");
	T_EQ_INT(put(st, "../escape", 1, 1, 1), EINVAL, "bad ref refused");

	test_short(st);
	test_abort(st);
	test_remove_uploads(st);

	store_close(st);
	event_free(ev);
	event_base_free(base);
	return t_done();
}
