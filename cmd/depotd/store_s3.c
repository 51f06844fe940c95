/*
 * store_s3.c: blobs in an S3 bucket, moved by curl inside the storage
 * helper's event loop.
 *
 * The frontend gets one end of a socketpair.  For a write the helper
 * reads the other end into slots of one part each, at most 16 MiB of
 * them (or one part, if parts are bigger): an object that ends before
 * the first slot fills goes up in one PUT when the frontend commits; a
 * bigger one becomes a multipart upload, a part per full slot, several
 * in flight at once when parts are small.  Reading stops while every
 * slot holds a part, so memory stays bounded and the frontend feels
 * back-pressure.  A part stays in memory until S3 took it, which is
 * what makes a part upload safe to retry.  For a read curl writes into
 * the socket and is paused while the socket is full.
 *
 * S3 publishes an object only when its PUT or CompleteMultipartUpload
 * succeeds, so writes go straight to the final key; every failure of a
 * multipart upload aborts it.
 */
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <event2/buffer.h>
#include <event2/event.h>

#include "curlev.h"
#include "log.h"
#include "s3sign.h"
#include "store.h"

#define S3_MIB			(1024 * 1024)
#define S3_PART_DEFAULT		(16 * S3_MIB)
#define S3_PART_MIN		(5 * S3_MIB)
#define S3_PART_MAX		(5LL * 1024 * S3_MIB)
#define S3_TRANSFERS_DEFAULT	16
#define S3_ATTEMPTS		5
#define S3_BACKOFF_MS		100
#define S3_RESP_MAX		(64 * 1024)
#define S3_SIGNED_BODY_MAX	(64 * 1024)
#define S3_UPLOAD_MEMORY	(16 * S3_MIB)	/* per upload, in parts */
#define S3_SLOTS_MAX		(S3_UPLOAD_MEMORY / S3_PART_MIN)
#define S3_IO_BUFFER		(256 * 1024)	/* curl's own buffers */
#define S3_LIST_MAX		50	/* uploads per page: fits S3_RESP_MAX */

struct s3req;
typedef void	(*s3req_cb)(struct s3req *);
typedef size_t	(*s3req_sink)(struct s3req *, char *, size_t);

struct s3 {
	struct store		*st;
	struct curlev		*cev;
	char			*bucket;
	char			*prefix;	/* "" or without slashes at ends */
	char			*origin;	/* scheme://host[:port] */
	char			*host;		/* host[:port], as in origin */
	char			*base_path;	/* "/bucket" path-style, else "" */
	char			*region;
	char			*access_key;
	char			*secret_key;	/* secret */
	char			*session_token;	/* secret */
	size_t			 part_size;
	int			 max_transfers;
	int			 active;
	TAILQ_HEAD(, s3req)	 queue;
};

/* One S3 request, retried as a whole. */
struct s3req {
	TAILQ_ENTRY(s3req)	 entry;
	struct s3		*s3;
	CURL			*easy;
	struct curl_slist	*hdrs;
	const char		*method;
	char			*key;		/* object key, NULL: the bucket */
	char			*query;		/* raw pairs, or NULL */
	char			 range[64];
	const char		*content_type;
	const char		*body;		/* not owned */
	size_t			 body_len;
	size_t			 body_off;
	int			 has_body;
	long			 status;
	CURLcode		 cc;
	char			*resp;
	size_t			 resp_len;
	char			 etag[128];
	int			 attempts;
	int			 running;
	int			 queued;
	struct event		*retry_ev;
	s3req_sink		 sink;		/* 2xx body goes here if set */
	int			 no_retry;	/* set once a sink took bytes */
	int			 start_failed;
	s3req_cb		 done;
	void			*arg;
};

/* One part's bytes, kept until S3 took them so a retry can resend. */
struct s3slot {
	struct store_xfer	*x;
	char			*buf;		/* part_size mapped, or NULL */
	size_t			 len;
	int			 part;		/* its number once full, or 0 */
	struct s3req		*req;		/* its upload, while running */
};

struct store_xfer {
	struct s3		*s3;
	char			*key;
	int			 fd;		/* our end of the socketpair */
	struct event		*rev;
	struct s3slot		 slot[S3_SLOTS_MAX];
	int			 nslots;
	int			 fill;		/* slot being read into, or -1 */
	off_t			 total;
	int			 eof;
	int			 failed;	/* errno, 0 while all is well */
	int			 abandoned;	/* put_abort: nobody to report to */
	int			 committing;
	off_t			 want;
	store_done_cb		 cb;
	void			*arg;
	char			*upload_id;
	char			**etags;	/* by part number - 1 */
	int			 nparts;	/* numbered so far */
	char			*xml;		/* the completion's body */
	int			 completed;
	struct s3req		*req;		/* create, PUT, complete, abort */
};

struct s3get {
	struct s3		*s3;
	struct s3req		*req;
	int			 fd;		/* ours */
	int			 peer;		/* the frontend's, until handed */
	struct event		*wev;
	struct evbuffer		*pending;
	int			 opened;
	int			 paused;
	int			 req_done;
	store_open_cb		 cb;
	void			*arg;
};

/* stat, remove and check share this: a HEAD, and for remove more. */
struct s3op {
	struct s3		*s3;
	char			*key;
	store_done_cb		 done_cb;
	store_stat_cb		 stat_cb;
	void			*arg;
	char			**uploads;	/* remove: ids left to abort */
	int			 nuploads;
	int			 aborted;
	char			*key_marker;	/* remove: listing's next page */
	char			*id_marker;
};

static void	s3req_start(struct s3req *);
static void	s3_dispatch(struct s3 *);
static void	xfer_step(struct store_xfer *);

static int
http_errno(long status)
{
	if (status >= 200 && status < 300)
		return 0;
	if (status == 404)
		return ENOENT;
	if (status == 401 || status == 403)
		return EACCES;
	return EIO;
}

static int
s3req_error(struct s3req *req)
{
	if (req->cc != CURLE_OK)
		return EIO;
	return http_errno(req->status);
}

static void
s3req_log(struct s3req *req, const char *what)
{
	if (req->cc != CURLE_OK)
		log_warnx("s3: %s %s %s/%s: %s", what, req->method,
		    req->s3->bucket, req->key ? req->key : "",
		    curl_easy_strerror(req->cc));
	else
		log_warnx("s3: %s %s %s/%s: HTTP %ld", what, req->method,
		    req->s3->bucket, req->key ? req->key : "", req->status);
}

static struct s3req *
s3req_new(struct s3 *s3, const char *method, const char *key,
    const char *query, s3req_cb done, void *arg)
{
	struct s3req	*req;

	if ((req = calloc(1, sizeof(*req))) == NULL)
		return NULL;
	req->s3 = s3;
	req->method = method;
	req->done = done;
	req->arg = arg;
	if ((key != NULL && (req->key = strdup(key)) == NULL) ||
	    (query != NULL && (req->query = strdup(query)) == NULL) ||
	    (req->easy = curl_easy_init()) == NULL) {
		free(req->key);
		free(req->query);
		free(req);
		return NULL;
	}
	return req;
}

static void
s3req_free(struct s3req *req)
{
	struct s3	*s3;

	if (req == NULL)
		return;
	s3 = req->s3;
	if (req->running) {
		curlev_remove(s3->cev, req->easy);
		s3->active--;
	}
	if (req->queued)
		TAILQ_REMOVE(&s3->queue, req, entry);
	if (req->retry_ev != NULL)
		event_free(req->retry_ev);
	curl_easy_cleanup(req->easy);
	curl_slist_free_all(req->hdrs);
	free(req->key);
	free(req->query);
	free(req->resp);
	free(req);
	if (s3->active < s3->max_transfers)
		s3_dispatch(s3);
}

static size_t
s3req_header(char *data, size_t size, size_t n, void *arg)
{
	struct s3req	*req = arg;
	size_t		 len = size * n, vlen;

	if (len >= 5 && strncasecmp(data, "HTTP/", 5) == 0) {
		/* A new response (after a 100 Continue): forget the old. */
		req->resp_len = 0;
		req->etag[0] = '\0';
	} else if (len > 5 && strncasecmp(data, "etag:", 5) == 0) {
		data += 5;
		len -= 5;
		while (len > 0 && (*data == ' ' || *data == '\t')) {
			data++;
			len--;
		}
		for (vlen = len; vlen > 0 && (data[vlen - 1] == '\r' ||
		    data[vlen - 1] == '\n' || data[vlen - 1] == ' '); vlen--)
			;
		if (vlen < sizeof(req->etag)) {
			memcpy(req->etag, data, vlen);
			req->etag[vlen] = '\0';
		}
	}
	return size * n;
}

static size_t
s3req_write(char *data, size_t size, size_t n, void *arg)
{
	struct s3req	*req = arg;
	size_t		 len = size * n, keep;
	char		*p;

	curl_easy_getinfo(req->easy, CURLINFO_RESPONSE_CODE, &req->status);
	if (req->sink != NULL && req->status >= 200 && req->status < 300)
		return req->sink(req, data, len);
	/* Error documents and small XML answers; the rest is dropped. */
	keep = len;
	if (req->resp_len + keep > S3_RESP_MAX)
		keep = S3_RESP_MAX - req->resp_len;
	if (keep > 0) {
		if ((p = realloc(req->resp, req->resp_len + keep + 1)) == NULL)
			return 0;
		req->resp = p;
		memcpy(req->resp + req->resp_len, data, keep);
		req->resp_len += keep;
		req->resp[req->resp_len] = '\0';
	}
	return len;
}

static size_t
s3req_read(char *data, size_t size, size_t n, void *arg)
{
	struct s3req	*req = arg;
	size_t		 len = size * n;

	if (len > req->body_len - req->body_off)
		len = req->body_len - req->body_off;
	memcpy(data, req->body + req->body_off, len);
	req->body_off += len;
	return len;
}

static int
s3req_seek(void *arg, curl_off_t off, int origin)
{
	struct s3req	*req = arg;

	if (origin != SEEK_SET || off < 0 || (size_t)off > req->body_len)
		return CURL_SEEKFUNC_FAIL;
	req->body_off = off;
	return CURL_SEEKFUNC_OK;
}

/* Temporary trouble: worth another attempt after a pause. */
static int
s3req_transient(struct s3req *req)
{
	switch (req->cc) {
	case CURLE_OK:
		return req->status >= 500 || req->status == 429;
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_SSL_CONNECT_ERROR:
		return 1;
	default:
		return 0;
	}
}

static void
s3req_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct s3req	*req = arg;

	if (req->start_failed)
		req->done(req);
	else
		s3req_start(req);
}

/*
 * A request that cannot even start still reports from the loop, never
 * from inside the call that started it: callers need not be reentrant.
 */
static void
s3req_fail_later(struct s3req *req)
{
	struct timeval	tv = { 0, 0 };

	req->cc = CURLE_FAILED_INIT;
	req->start_failed = 1;
	if (req->retry_ev == NULL)
		req->retry_ev = evtimer_new(req->s3->st->base, s3req_retry_cb,
		    req);
	if (req->retry_ev == NULL || evtimer_add(req->retry_ev, &tv) == -1)
		fatalx("s3: cannot schedule an event");
}

static void
s3req_finished(void *arg, CURLcode cc)
{
	struct s3req	*req = arg;
	struct s3	*s3 = req->s3;
	struct timeval	 tv;
	long		 ms;

	req->running = 0;
	s3->active--;
	req->cc = cc;
	curl_easy_getinfo(req->easy, CURLINFO_RESPONSE_CODE, &req->status);
	if (s3req_transient(req) && !req->no_retry &&
	    req->attempts < S3_ATTEMPTS) {
		s3req_log(req, "retrying");
		/* Exponential backoff, with full jitter on the upper half. */
		ms = S3_BACKOFF_MS << (req->attempts - 1);
		ms = ms / 2 + arc4random_uniform(ms / 2 + 1);
		tv.tv_sec = ms / 1000;
		tv.tv_usec = (ms % 1000) * 1000;
		if (req->retry_ev == NULL)
			req->retry_ev = evtimer_new(s3->st->base,
			    s3req_retry_cb, req);
		if (req->retry_ev != NULL &&
		    evtimer_add(req->retry_ev, &tv) == 0) {
			s3_dispatch(s3);
			return;
		}
	}
	req->done(req);
	s3_dispatch(s3);
}

static int
s3req_sign(struct s3req *req, const char *path)
{
	struct s3		*s3 = req->s3;
	struct s3sign_hdr	 h[7];
	struct s3sign_cred	 cred = { s3->access_key, s3->secret_key,
	    s3->region, "s3" };
	struct s3sign_req	 sr;
	struct s3sign_out	 out;
	char			 date[17], hash[65], *line;
	size_t			 n = 0, i;
	int			 rv = -1;

	s3sign_amz_date(date, sizeof(date), time(NULL));
	if (!req->has_body)
		strlcpy(hash, S3SIGN_EMPTY_SHA256, sizeof(hash));
	else if (req->body_len <= S3_SIGNED_BODY_MAX)
		s3sign_sha256_hex(req->body, req->body_len, hash);
	else
		strlcpy(hash, "UNSIGNED-PAYLOAD", sizeof(hash));
	h[n++] = (struct s3sign_hdr){ "host", s3->host };
	h[n++] = (struct s3sign_hdr){ "x-amz-date", date };
	h[n++] = (struct s3sign_hdr){ "x-amz-content-sha256", hash };
	if (s3->session_token != NULL)
		h[n++] = (struct s3sign_hdr){ "x-amz-security-token",
		    s3->session_token };
	if (req->range[0] != '\0')
		h[n++] = (struct s3sign_hdr){ "range", req->range };
	if (req->content_type != NULL)
		h[n++] = (struct s3sign_hdr){ "content-type",
		    req->content_type };
	sr = (struct s3sign_req){ req->method, path, req->query, h, n, hash,
	    date };
	if (s3sign(&sr, &cred, &out) == -1)
		return -1;
	curl_slist_free_all(req->hdrs);
	req->hdrs = NULL;
	for (i = 0; i < n; i++) {
		if (asprintf(&line, "%s: %s", h[i].name, h[i].value) == -1)
			goto done;
		req->hdrs = curl_slist_append(req->hdrs, line);
		freezero(line, strlen(line));
	}
	if (asprintf(&line, "Authorization: %s", out.authorization) == -1)
		goto done;
	req->hdrs = curl_slist_append(req->hdrs, line);
	free(line);
	/* No 100-continue round trip; S3 answers errors early anyway. */
	req->hdrs = curl_slist_append(req->hdrs, "Expect:");
	rv = 0;
 done:
	s3sign_out_free(&out);
	return rv;
}

static int
s3req_setup(struct s3req *req)
{
	struct s3	*s3 = req->s3;
	CURL		*c = req->easy;
	char		*enc = NULL, *path = NULL, *cq = NULL, *url = NULL;
	int		 rv = -1;

	curl_easy_reset(c);
	req->status = 0;
	req->resp_len = 0;
	req->body_off = 0;
	req->etag[0] = '\0';
	if (req->key != NULL) {
		if ((enc = s3sign_uri_encode(req->key, 1)) == NULL)
			goto done;
		if (asprintf(&path, "%s/%s", s3->base_path, enc) == -1)
			path = NULL;
	} else
		path = strdup(s3->base_path[0] ? s3->base_path : "/");
	if (path == NULL || (cq = s3sign_canonical_query(req->query)) == NULL)
		goto done;
	if (asprintf(&url, "%s%s%s%s", s3->origin, path, cq[0] ? "?" : "",
	    cq) == -1) {
		url = NULL;
		goto done;
	}
	if (s3req_sign(req, path) == -1)
		goto done;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, req->hdrs);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 120L);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, s3req_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, req);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, s3req_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, req);
	/*
	 * Fewer, larger callbacks than the default 16 and 64 KiB, in the
	 * direction the bytes go only: curl allocates the download buffer
	 * for every request, and each part upload in flight has its own.
	 */
	if (strcmp(req->method, "GET") == 0)
		curl_easy_setopt(c, CURLOPT_BUFFERSIZE, S3_IO_BUFFER);
	if (strcmp(req->method, "HEAD") == 0)
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	else if (strcmp(req->method, "PUT") == 0) {
		curl_easy_setopt(c, CURLOPT_UPLOAD_BUFFERSIZE, S3_IO_BUFFER);
		curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE,
		    (curl_off_t)req->body_len);
	} else if (strcmp(req->method, "POST") == 0) {
		curl_easy_setopt(c, CURLOPT_POST, 1L);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
		    (curl_off_t)req->body_len);
	} else if (strcmp(req->method, "GET") != 0)
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, req->method);
	curl_easy_setopt(c, CURLOPT_READFUNCTION, s3req_read);
	curl_easy_setopt(c, CURLOPT_READDATA, req);
	curl_easy_setopt(c, CURLOPT_SEEKFUNCTION, s3req_seek);
	curl_easy_setopt(c, CURLOPT_SEEKDATA, req);
	rv = 0;
 done:
	free(enc);
	free(path);
	free(cq);
	free(url);
	return rv;
}

/* Runs the request now, or queues it behind the transfer limit. */
static void
s3req_start(struct s3req *req)
{
	struct s3	*s3 = req->s3;

	if (s3->active >= s3->max_transfers) {
		req->queued = 1;
		TAILQ_INSERT_TAIL(&s3->queue, req, entry);
		return;
	}
	req->attempts++;
	if (s3req_setup(req) == -1 ||
	    curlev_add(s3->cev, req->easy, s3req_finished, req) == -1) {
		log_warnx("s3: %s %s/%s: cannot start the request",
		    req->method, s3->bucket, req->key ? req->key : "");
		s3req_fail_later(req);
		return;
	}
	req->running = 1;
	s3->active++;
}

static void
s3_dispatch(struct s3 *s3)
{
	struct s3req	*req;

	while (s3->active < s3->max_transfers &&
	    (req = TAILQ_FIRST(&s3->queue)) != NULL) {
		TAILQ_REMOVE(&s3->queue, req, entry);
		req->queued = 0;
		s3req_start(req);
	}
}

static char *
s3_key(struct s3 *s3, const char *ref)
{
	char	*key;

	if (!store_ref_valid(ref)) {
		errno = EINVAL;
		return NULL;
	}
	if (asprintf(&key, "%s%s%s", s3->prefix, s3->prefix[0] ? "/" : "",
	    ref) == -1)
		return NULL;
	return key;
}

/* The text of the first <tag> in an XML answer; malloc'd. */
static char *
xml_text(const char *xml, const char *tag)
{
	char		 open[64], close[64];
	const char	*a, *b;

	if (xml == NULL)
		return NULL;
	snprintf(open, sizeof(open), "<%s>", tag);
	snprintf(close, sizeof(close), "</%s>", tag);
	if ((a = strstr(xml, open)) == NULL)
		return NULL;
	a += strlen(open);
	if ((b = strstr(a, close)) == NULL)
		return NULL;
	return strndup(a, b - a);
}

/*
 * Writes.
 */

/*
 * Parts an upload may hold at once: S3_UPLOAD_MEMORY, or one part.
 * s3_init refuses parts under S3_PART_MIN, so this is S3_SLOTS_MAX at most.
 */
static int
xfer_nslots(const struct s3 *s3)
{
	size_t	n = S3_UPLOAD_MEMORY / s3->part_size;

	return n < 1 ? 1 : n;
}

static int
xfer_parts_running(const struct store_xfer *x)
{
	int	i, n = 0;

	for (i = 0; i < x->nslots; i++)
		if (x->slot[i].req != NULL)
			n++;
	return n;
}

static void
xfer_cancel_parts(struct store_xfer *x)
{
	int	i;

	for (i = 0; i < x->nslots; i++) {
		if (x->slot[i].req != NULL) {
			s3req_free(x->slot[i].req);
			x->slot[i].req = NULL;
		}
	}
}

static void
xfer_free(struct store_xfer *x)
{
	int	i;

	s3req_free(x->req);
	xfer_cancel_parts(x);
	if (x->rev != NULL)
		event_free(x->rev);
	if (x->fd != -1)
		close(x->fd);
	for (i = 0; i < x->nslots; i++)
		if (x->slot[i].buf != NULL)
			munmap(x->slot[i].buf, x->s3->part_size);
	for (i = 0; i < x->nparts; i++)
		free(x->etags[i]);
	free(x->etags);
	free(x->upload_id);
	free(x->xml);
	free(x->key);
	free(x);
}

static void
xfer_fail(struct store_xfer *x, int error)
{
	if (x->failed == 0)
		x->failed = error;
	/* Parts still going up are wasted: the upload will be aborted. */
	xfer_cancel_parts(x);
	/* Further bytes are useless: make the frontend's writes fail. */
	if (x->rev != NULL) {
		event_free(x->rev);
		x->rev = NULL;
	}
	if (x->fd != -1) {
		close(x->fd);
		x->fd = -1;
	}
}

static void
xfer_report(struct store_xfer *x, int error)
{
	store_done_cb	 cb = x->cb;
	void		*arg = x->arg;

	xfer_free(x);
	cb(arg, error);
}

static void
xfer_req_done(struct store_xfer *x, struct s3req *req)
{
	x->req = NULL;
	s3req_free(req);
	xfer_step(x);
}

static void
xfer_aborted(struct s3req *req)
{
	struct store_xfer	*x = req->arg;

	if (s3req_error(req) != 0 && s3req_error(req) != ENOENT)
		s3req_log(req, "abort multipart upload");
	free(x->upload_id);
	x->upload_id = NULL;
	xfer_req_done(x, req);
}

static void
xfer_created(struct s3req *req)
{
	struct store_xfer	*x = req->arg;

	if (s3req_error(req) != 0 ||
	    (x->upload_id = xml_text(req->resp, "UploadId")) == NULL) {
		s3req_log(req, "create multipart upload");
		xfer_fail(x, EIO);
	}
	xfer_req_done(x, req);
}

/* The slot is free again: reading may go on if it waited for one. */
static void
xfer_slot_freed(struct store_xfer *x, struct s3slot *s)
{
	s->len = 0;
	s->part = 0;
	if (x->fill == -1 && x->rev != NULL && !x->eof)
		event_add(x->rev, NULL);
}

static void
xfer_part_done(struct s3req *req)
{
	struct s3slot		*s = req->arg;
	struct store_xfer	*x = s->x;

	s->req = NULL;
	if (s3req_error(req) != 0 || req->etag[0] == '\0') {
		s3req_log(req, "upload part");
		xfer_fail(x, EIO);
	} else if ((x->etags[s->part - 1] = strdup(req->etag)) == NULL)
		xfer_fail(x, ENOMEM);
	else
		xfer_slot_freed(x, s);
	s3req_free(req);
	xfer_step(x);
}

static void
xfer_put_done(struct s3req *req)
{
	struct store_xfer	*x = req->arg;
	int			 error;

	if ((error = s3req_error(req)) != 0) {
		s3req_log(req, "put");
		xfer_fail(x, error == ENOENT ? EIO : error);
	} else
		x->completed = 1;
	xfer_req_done(x, req);
}

static void
xfer_completed(struct s3req *req)
{
	struct store_xfer	*x = req->arg;

	/* S3 may answer 200 and still put an <Error> in the body. */
	if (s3req_error(req) != 0 || req->resp == NULL ||
	    strstr(req->resp, "<Error>") != NULL) {
		s3req_log(req, "complete multipart upload");
		xfer_fail(x, EIO);
	} else {
		x->completed = 1;
		free(x->upload_id);
		x->upload_id = NULL;
	}
	xfer_req_done(x, req);
}

static int
xfer_send(struct store_xfer *x, const char *method, const char *query,
    s3req_cb done, const char *body, size_t len, const char *content_type)
{
	struct s3req	*req;

	if ((req = s3req_new(x->s3, method, x->key, query, done, x)) == NULL)
		return -1;
	req->content_type = content_type;
	req->body = body;
	req->body_len = len;
	req->has_body = body != NULL;
	x->req = req;
	s3req_start(req);
	return 0;
}

/* The slot holds a whole part (or the last one): number it. */
static int
xfer_part_ready(struct store_xfer *x, struct s3slot *s)
{
	char	**etags;

	if ((etags = reallocarray(x->etags, x->nparts + 1,
	    sizeof(*etags))) == NULL)
		return -1;
	x->etags = etags;
	x->etags[x->nparts] = NULL;
	s->part = ++x->nparts;
	return 0;
}

static int
xfer_part_start(struct store_xfer *x, struct s3slot *s)
{
	struct s3req	*req;
	char		 q[1024];

	snprintf(q, sizeof(q), "partNumber=%d&uploadId=%s", s->part,
	    x->upload_id);
	if ((req = s3req_new(x->s3, "PUT", x->key, q, xfer_part_done, s))
	    == NULL)
		return -1;
	req->body = s->buf;
	req->body_len = s->len;
	req->has_body = 1;
	s->req = req;
	s3req_start(req);
	return 0;
}

/* Numbered parts not yet going up go now, once the upload exists. */
static void
xfer_parts_start(struct store_xfer *x)
{
	int	i;

	for (i = 0; i < x->nslots && !x->failed; i++) {
		if (x->slot[i].part == 0 || x->slot[i].req != NULL)
			continue;
		if (x->upload_id == NULL) {
			if (x->req == NULL && xfer_send(x, "POST", "uploads",
			    xfer_created, NULL, 0, NULL) == -1)
				xfer_fail(x, ENOMEM);
			return;
		}
		if (xfer_part_start(x, &x->slot[i]) == -1)
			xfer_fail(x, ENOMEM);
	}
}

static void
xfer_complete(struct store_xfer *x)
{
	char	*xml = NULL, q[1024];
	size_t	 len = 0;
	FILE	*f;
	int	 i;

	if ((f = open_memstream(&xml, &len)) == NULL) {
		xfer_fail(x, ENOMEM);
		return;
	}
	fputs("<CompleteMultipartUpload>", f);
	for (i = 0; i < x->nparts; i++)
		fprintf(f, "<Part><PartNumber>%d</PartNumber><ETag>%s</ETag>"
		    "</Part>", i + 1, x->etags[i]);
	fputs("</CompleteMultipartUpload>", f);
	if (fclose(f) != 0) {
		free(xml);
		xfer_fail(x, ENOMEM);
		return;
	}
	free(x->xml);
	x->xml = xml;
	snprintf(q, sizeof(q), "uploadId=%s", x->upload_id);
	if (xfer_send(x, "POST", q, xfer_completed, x->xml, len,
	    "application/xml") == -1)
		xfer_fail(x, ENOMEM);
}

/* After a failure: abort the upload if there is one, then report. */
static void
xfer_step_failed(struct store_xfer *x)
{
	char	q[1024];

	if (x->upload_id != NULL) {
		snprintf(q, sizeof(q), "uploadId=%s", x->upload_id);
		if (xfer_send(x, "DELETE", q, xfer_aborted, NULL, 0, NULL) == 0)
			return;
		log_warnx("s3: %s/%s: cannot abort the multipart upload",
		    x->s3->bucket, x->key);
		free(x->upload_id);
		x->upload_id = NULL;
	}
	if (x->abandoned)
		xfer_free(x);
	else if (x->committing)
		xfer_report(x, x->failed);
}

/* The frontend closed and committed: what is left, then the end. */
static void
xfer_finish(struct store_xfer *x)
{
	struct s3slot	*s = x->fill != -1 ? &x->slot[x->fill] : NULL;

	if (x->total != x->want) {
		log_warnx("s3: %s/%s: got %lld bytes, expected %lld",
		    x->s3->bucket, x->key, (long long)x->total,
		    (long long)x->want);
		xfer_fail(x, EIO);
	} else if (x->nparts == 0) {
		/* It all fit in one part: a plain PUT. */
		if (xfer_send(x, "PUT", NULL, xfer_put_done,
		    s != NULL && s->buf != NULL ? s->buf : "",
		    s != NULL ? s->len : 0, NULL) == -1)
			xfer_fail(x, ENOMEM);
	} else if (s != NULL && s->len > 0) {
		x->fill = -1;
		if (xfer_part_ready(x, s) == -1)
			xfer_fail(x, ENOMEM);
		else
			xfer_parts_start(x);
	} else if (xfer_parts_running(x) == 0)
		xfer_complete(x);
}

/*
 * The write's state machine, run whenever something ended: parts go
 * up as they fill, several at once; once the frontend has both closed
 * its end and committed, the single PUT or the last part and the
 * completion.
 */
static void
xfer_step(struct store_xfer *x)
{
	if (x->abandoned && x->failed == 0)
		xfer_fail(x, ECANCELED);
	if (x->failed) {
		if (x->req == NULL)
			xfer_step_failed(x);
		return;
	}
	if (x->req != NULL)
		return;
	if (x->completed) {
		xfer_report(x, 0);
		return;
	}
	xfer_parts_start(x);
	if (!x->failed && x->req == NULL && x->eof && x->committing)
		xfer_finish(x);
	if (x->failed && x->req == NULL)
		xfer_step_failed(x);
}

/*
 * A slot's buffer is mapped at its full part size on first use: only
 * the pages written count, a part never moves as it grows, and unmapping
 * gives the memory back at once, where malloc would keep it in its heap.
 */
static int
xfer_slot_map(struct store_xfer *x, struct s3slot *s)
{
	void	*p;

	if (s->buf != NULL)
		return 0;
	p = mmap(NULL, x->s3->part_size, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	s->buf = p;
	return 0;
}

/* A slot to read into: the one filling, or a free one, or -1. */
static int
xfer_fill_slot(struct store_xfer *x)
{
	int	i;

	if (x->fill != -1)
		return x->fill;
	for (i = 0; i < x->nslots; i++)
		if (x->slot[i].part == 0)
			return x->fill = i;
	return -1;
}

static void
xfer_readable(evutil_socket_t fd, short what, void *arg)
{
	struct store_xfer	*x = arg;
	struct s3slot		*s;
	ssize_t			 n;

	for (;;) {
		if (xfer_fill_slot(x) == -1) {
			/* Every slot holds a part: wait until one is up. */
			event_del(x->rev);
			break;
		}
		s = &x->slot[x->fill];
		if (xfer_slot_map(x, s) == -1) {
			xfer_fail(x, ENOMEM);
			break;
		}
		n = read(x->fd, s->buf + s->len, x->s3->part_size - s->len);
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n == -1) {
			log_warn("s3: %s/%s: read", x->s3->bucket, x->key);
			xfer_fail(x, EIO);
			break;
		}
		if (n == 0) {
			x->eof = 1;
			event_del(x->rev);
			break;
		}
		s->len += n;
		x->total += n;
		if (s->len == x->s3->part_size) {
			x->fill = -1;
			if (xfer_part_ready(x, s) == -1) {
				xfer_fail(x, ENOMEM);
				break;
			}
			/* Not xfer_step: that may free x on failure. */
			xfer_parts_start(x);
			if (x->failed)
				break;
		}
	}
	xfer_step(x);
}

static int
s3_put_begin(struct store *st, const char *ref, int *fdp,
    struct store_xfer **xp)
{
	struct s3		*s3 = st->priv;
	struct store_xfer	*x;
	int			 sv[2], i;

	if ((x = calloc(1, sizeof(*x))) == NULL)
		return ENOMEM;
	x->s3 = s3;
	x->fd = -1;
	x->fill = -1;
	x->nslots = xfer_nslots(s3);
	for (i = 0; i < x->nslots; i++)
		x->slot[i].x = x;
	if ((x->key = s3_key(s3, ref)) == NULL) {
		free(x);
		return EINVAL;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1) {
		xfer_free(x);
		return errno;
	}
	x->fd = sv[0];
	if (fcntl(x->fd, F_SETFL, O_NONBLOCK) == -1 ||
	    (x->rev = event_new(st->base, x->fd, EV_READ | EV_PERSIST,
	    xfer_readable, x)) == NULL || event_add(x->rev, NULL) == -1) {
		close(sv[1]);
		xfer_free(x);
		return EIO;
	}
	*fdp = sv[1];
	*xp = x;
	return 0;
}

static void
s3_put_commit(struct store_xfer *x, off_t size, store_done_cb cb, void *arg)
{
	x->committing = 1;
	x->want = size;
	x->cb = cb;
	x->arg = arg;
	xfer_step(x);
}

static void
s3_put_abort(struct store_xfer *x)
{
	x->abandoned = 1;
	if (x->req != NULL) {
		s3req_free(x->req);
		x->req = NULL;
	}
	xfer_step(x);
}

/*
 * Reads.
 */

static void
get_free(struct s3get *g)
{
	s3req_free(g->req);
	if (g->wev != NULL)
		event_free(g->wev);
	if (g->pending != NULL)
		evbuffer_free(g->pending);
	if (g->fd != -1)
		close(g->fd);
	if (g->peer != -1)
		close(g->peer);
	free(g);
}

static void
get_open(struct s3get *g)
{
	int	peer = g->peer;

	g->opened = 1;
	g->peer = -1;
	g->cb(g->arg, 0, peer, 0);
}

/* Like evbuffer_write, but a gone reader is no SIGPIPE. */
static int
get_flush(struct s3get *g)
{
	size_t		 len = evbuffer_get_length(g->pending);
	ssize_t		 n;
	unsigned char	*p;

	if (len == 0)
		return 0;
	if ((p = evbuffer_pullup(g->pending, len)) == NULL)
		return -1;
	n = send(g->fd, p, len, MSG_NOSIGNAL);
	if (n == -1)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	evbuffer_drain(g->pending, n);
	return 0;
}

static void
get_writable(evutil_socket_t fd, short what, void *arg)
{
	struct s3get	*g = arg;

	if (get_flush(g) == -1) {
		/* The frontend went away. */
		get_free(g);
		return;
	}
	if (evbuffer_get_length(g->pending) > 0)
		return;
	event_del(g->wev);
	if (g->req_done)
		get_free(g);
	else if (g->paused) {
		g->paused = 0;
		curlev_unpause(g->s3->cev, g->req->easy);
	}
}

static size_t
get_sink(struct s3req *req, char *data, size_t len)
{
	struct s3get	*g = req->arg;
	ssize_t		 n;

	/* Bytes are going out: a retry could no longer start over. */
	req->no_retry = 1;
	if (!g->opened)
		get_open(g);
	if (evbuffer_get_length(g->pending) > 0) {
		g->paused = 1;
		return CURL_WRITEFUNC_PAUSE;
	}
	n = send(g->fd, data, len, MSG_NOSIGNAL);
	if (n == -1) {
		if (errno != EAGAIN && errno != EINTR)
			return 0;
		n = 0;
	}
	if ((size_t)n < len) {
		if (evbuffer_add(g->pending, data + n, len - n) == -1)
			return 0;
		event_add(g->wev, NULL);
	}
	return len;
}

static void
get_done(struct s3req *req)
{
	struct s3get	*g = req->arg;
	int		 error = s3req_error(req);

	g->req = NULL;
	g->req_done = 1;
	if (!g->opened) {
		if (error == 0)
			get_open(g);
		else {
			if (error != ENOENT)
				s3req_log(req, "get");
			g->cb(g->arg, error, -1, 0);
		}
	} else if (error != 0)
		s3req_log(req, "get, stream cut");
	s3req_free(req);
	/* On error, closing early tells the frontend the stream is short. */
	if (error != 0 || evbuffer_get_length(g->pending) == 0)
		get_free(g);
}

static void
s3_get(struct store *st, const char *ref, off_t offset, off_t length,
    store_open_cb cb, void *arg)
{
	struct s3	*s3 = st->priv;
	struct s3get	*g;
	char		*key = NULL;
	int		 sv[2], error = ENOMEM;

	if ((g = calloc(1, sizeof(*g))) == NULL)
		goto fail;
	g->s3 = s3;
	g->fd = g->peer = -1;
	g->cb = cb;
	g->arg = arg;
	if ((key = s3_key(s3, ref)) == NULL) {
		error = EINVAL;
		goto fail;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1) {
		error = errno;
		goto fail;
	}
	g->fd = sv[0];
	g->peer = sv[1];
	if (fcntl(g->fd, F_SETFL, O_NONBLOCK) == -1 ||
	    (g->pending = evbuffer_new()) == NULL ||
	    (g->wev = event_new(st->base, g->fd, EV_WRITE | EV_PERSIST,
	    get_writable, g)) == NULL ||
	    (g->req = s3req_new(s3, length == 0 ? "HEAD" : "GET", key, NULL,
	    get_done, g)) == NULL)
		goto fail;
	free(key);
	g->req->sink = get_sink;
	if (length > 0)
		snprintf(g->req->range, sizeof(g->req->range),
		    "bytes=%lld-%lld", (long long)offset,
		    (long long)(offset + length - 1));
	else if (length < 0 && offset > 0)
		snprintf(g->req->range, sizeof(g->req->range), "bytes=%lld-",
		    (long long)offset);
	s3req_start(g->req);
	return;
 fail:
	free(key);
	if (g != NULL)
		get_free(g);
	cb(arg, error, -1, 0);
}

/*
 * HEAD, DELETE and the bucket check.
 */

static void
op_free(struct s3op *op)
{
	int	i;

	for (i = 0; i < op->nuploads; i++)
		free(op->uploads[i]);
	free(op->uploads);
	free(op->key_marker);
	free(op->id_marker);
	free(op->key);
	free(op);
}

static void
stat_done(struct s3req *req)
{
	struct s3op	*op = req->arg;
	curl_off_t	 len = -1;
	int		 error = s3req_error(req);

	if (error == 0)
		curl_easy_getinfo(req->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T,
		    &len);
	if (error == 0 && len < 0)
		error = EIO;
	if (error != 0 && error != ENOENT)
		s3req_log(req, "stat");
	s3req_free(req);
	op->stat_cb(op->arg, error, error ? 0 : (off_t)len);
	op_free(op);
}

static struct s3op *
op_new(struct s3 *s3, const char *ref, void *arg)
{
	struct s3op	*op;

	if ((op = calloc(1, sizeof(*op))) == NULL)
		return NULL;
	op->s3 = s3;
	op->arg = arg;
	if (ref != NULL && (op->key = s3_key(s3, ref)) == NULL) {
		free(op);
		return NULL;
	}
	return op;
}

static int
op_send(struct s3op *op, const char *method, const char *query,
    s3req_cb done)
{
	struct s3req	*req;

	if ((req = s3req_new(op->s3, method, op->key, query, done, op)) == NULL)
		return -1;
	s3req_start(req);
	return 0;
}

static void
s3_stat(struct store *st, const char *ref, store_stat_cb cb, void *arg)
{
	struct s3op	*op;

	if ((op = op_new(st->priv, ref, arg)) == NULL) {
		cb(arg, store_ref_valid(ref) ? ENOMEM : EINVAL, 0);
		return;
	}
	op->stat_cb = cb;
	if (op_send(op, "HEAD", NULL, stat_done) == -1) {
		op_free(op);
		cb(arg, ENOMEM, 0);
	}
}

static void
remove_finish(struct s3op *op, int error)
{
	op->done_cb(op->arg, error);
	op_free(op);
}

static void
remove_deleted(struct s3req *req)
{
	struct s3op	*op = req->arg;
	int		 error = s3req_error(req);

	if (error != 0)
		s3req_log(req, "remove");
	s3req_free(req);
	remove_finish(op, error ? EIO : 0);
}

/*
 * DELETE answers 204 whether the key existed or not; a HEAD first tells
 * the caller ENOENT.  A race with another remover is harmless.
 */
static void
remove_headed(struct s3req *req)
{
	struct s3op	*op = req->arg;
	int		 error = s3req_error(req);

	if (error != 0 && error != ENOENT)
		s3req_log(req, "remove, head");
	s3req_free(req);
	if (error == ENOENT)
		remove_finish(op, op->nuploads > 0 ? 0 : ENOENT);
	else if (error != 0)
		remove_finish(op, EIO);
	else if (op_send(op, "DELETE", NULL, remove_deleted) == -1)
		remove_finish(op, ENOMEM);
}

static void	remove_next(struct s3op *);

static void
remove_aborted(struct s3req *req)
{
	struct s3op	*op = req->arg;
	int		 error = s3req_error(req);

	/* NoSuchUpload: someone else finished it off. */
	if (error != 0 && error != ENOENT) {
		s3req_log(req, "remove, abort multipart upload");
		s3req_free(req);
		remove_finish(op, EIO);
		return;
	}
	s3req_free(req);
	op->aborted++;
	remove_next(op);
}

/* Abort the uploads found, one at a time, then the object. */
static void
remove_next(struct s3op *op)
{
	char	*q;
	int	 rv;

	if (op->aborted == op->nuploads) {
		if (op_send(op, "HEAD", NULL, remove_headed) == -1)
			remove_finish(op, ENOMEM);
		return;
	}
	if (asprintf(&q, "uploadId=%s", op->uploads[op->aborted]) == -1) {
		remove_finish(op, ENOMEM);
		return;
	}
	rv = op_send(op, "DELETE", q, remove_aborted);
	free(q);
	if (rv == -1)
		remove_finish(op, ENOMEM);
}

/* &amp; and friends back to characters, in place. */
static void
xml_unescape(char *s)
{
	static const struct {
		const char	*ent;
		char		 c;
	} ents[] = { { "&amp;", '&' }, { "&lt;", '<' }, { "&gt;", '>' },
	    { "&quot;", '"' }, { "&apos;", '\'' } };
	char	*r, *w;
	size_t	 i, n;

	for (r = w = s; *r; ) {
		for (i = 0; *r == '&' && i < sizeof(ents) / sizeof(ents[0]);
		    i++) {
			n = strlen(ents[i].ent);
			if (strncmp(r, ents[i].ent, n) == 0)
				break;
		}
		if (*r == '&' && i < sizeof(ents) / sizeof(ents[0])) {
			*w++ = ents[i].c;
			r += strlen(ents[i].ent);
		} else
			*w++ = *r++;
	}
	*w = '\0';
}

/* The text of <tag> in xml, unescaped; malloc'd. */
static char *
xml_value(const char *xml, const char *tag)
{
	char	*v;

	if ((v = xml_text(xml, tag)) != NULL)
		xml_unescape(v);
	return v;
}

/* Keeps the UploadId of every <Upload> whose Key is exactly ours. */
static int
remove_collect(struct s3op *op, const char *xml)
{
	const char	*a, *b;
	char		*upload, *key, *id, **ids;
	int		 rv = 0;

	for (a = xml; rv == 0 && (a = strstr(a, "<Upload>")) != NULL; a = b) {
		if ((b = strstr(a, "</Upload>")) == NULL)
			return -1;
		if ((upload = strndup(a, b - a)) == NULL)
			return -1;
		key = xml_value(upload, "Key");
		id = xml_value(upload, "UploadId");
		free(upload);
		if (key == NULL || id == NULL || id[0] == '\0')
			rv = -1;
		else if (strcmp(key, op->key) == 0 && (ids = reallocarray(
		    op->uploads, op->nuploads + 1, sizeof(*ids))) != NULL) {
			op->uploads = ids;
			op->uploads[op->nuploads++] = id;
			id = NULL;
		} else if (strcmp(key, op->key) == 0)
			rv = -1;
		free(key);
		free(id);
	}
	return rv;
}

static int	remove_list(struct s3op *);

/* Another page when the listing is truncated; -1 if it cannot advance. */
static int
remove_list_more(struct s3op *op, const char *xml)
{
	char	*km, *im;

	km = xml_value(xml, "NextKeyMarker");
	im = xml_value(xml, "NextUploadIdMarker");
	if (km == NULL || km[0] == '\0' || (op->key_marker != NULL &&
	    strcmp(km, op->key_marker) == 0 && im != NULL &&
	    op->id_marker != NULL && strcmp(im, op->id_marker) == 0)) {
		free(km);
		free(im);
		return -1;
	}
	free(op->key_marker);
	free(op->id_marker);
	op->key_marker = km;
	op->id_marker = im;
	return remove_list(op);
}

static void
remove_listed(struct s3req *req)
{
	struct s3op	*op = req->arg;
	char		*trunc = NULL;
	int		 error = s3req_error(req), more;

	/* A cut answer lacks the closing tag: never trust half a list. */
	if (error != 0 || req->resp == NULL ||
	    strstr(req->resp, "</ListMultipartUploadsResult>") == NULL ||
	    remove_collect(op, req->resp) == -1) {
		s3req_log(req, "remove, list multipart uploads");
		s3req_free(req);
		remove_finish(op, EIO);
		return;
	}
	trunc = xml_value(req->resp, "IsTruncated");
	more = trunc != NULL && strcmp(trunc, "true") == 0;
	free(trunc);
	if (more && remove_list_more(op, req->resp) == -1) {
		s3req_log(req, "remove, list multipart uploads, next page");
		s3req_free(req);
		remove_finish(op, EIO);
		return;
	}
	s3req_free(req);
	if (!more)
		remove_next(op);
}

static int
remove_list(struct s3op *op)
{
	struct s3req	*req;
	char		*q;
	int		 n;

	if (op->key_marker != NULL)
		n = asprintf(&q, "uploads&prefix=%s&max-uploads=%d"
		    "&key-marker=%s&upload-id-marker=%s", op->key,
		    S3_LIST_MAX, op->key_marker,
		    op->id_marker ? op->id_marker : "");
	else
		n = asprintf(&q, "uploads&prefix=%s&max-uploads=%d", op->key,
		    S3_LIST_MAX);
	if (n == -1)
		return -1;
	req = s3req_new(op->s3, "GET", NULL, q, remove_listed, op);
	free(q);
	if (req == NULL)
		return -1;
	s3req_start(req);
	return 0;
}

/*
 * Everything the store may hold for ref goes: multipart uploads that a
 * failed write could not abort (the sweep retries them through here),
 * then the object.
 */
static void
s3_remove(struct store *st, const char *ref, store_done_cb cb, void *arg)
{
	struct s3op	*op;

	if ((op = op_new(st->priv, ref, arg)) == NULL) {
		cb(arg, store_ref_valid(ref) ? ENOMEM : EINVAL);
		return;
	}
	op->done_cb = cb;
	if (remove_list(op) == -1) {
		op_free(op);
		cb(arg, ENOMEM);
	}
}

static void
check_done(struct s3req *req)
{
	struct s3op	*op = req->arg;
	int		 error = s3req_error(req);

	if (error != 0) {
		s3req_log(req, "check bucket");
		if (error != EACCES && error != ENOENT)
			error = EIO;
	}
	s3req_free(req);
	op->done_cb(op->arg, error);
	op_free(op);
}

static void
s3_check(struct store *st, store_done_cb cb, void *arg)
{
	struct s3op	*op;

	if ((op = op_new(st->priv, NULL, arg)) == NULL) {
		cb(arg, ENOMEM);
		return;
	}
	op->done_cb = cb;
	if (op_send(op, "HEAD", NULL, check_done) == -1) {
		op_free(op);
		cb(arg, ENOMEM);
	}
}

/*
 * Configuration.
 */

static int
s3_parse_url(struct s3 *s3, const char *url)
{
	const char	*p, *slash;
	size_t		 len;

	if (strncmp(url, "s3://", 5) != 0)
		return -1;
	p = url + 5;
	slash = strchr(p, '/');
	len = slash ? (size_t)(slash - p) : strlen(p);
	if (len == 0 || len > 63)
		return -1;
	if ((s3->bucket = strndup(p, len)) == NULL)
		return -1;
	p += len;
	while (*p == '/')
		p++;
	if ((s3->prefix = strdup(p)) == NULL)
		return -1;
	len = strlen(s3->prefix);
	while (len > 0 && s3->prefix[len - 1] == '/')
		s3->prefix[--len] = '\0';
	return 0;
}

/* Origin, Host and path prefix for path-style or virtual-host access. */
static int
s3_parse_endpoint(struct s3 *s3, const char *endpoint, int path_style)
{
	const char	*hp, *end;
	char		*scheme = NULL, *hostport = NULL;
	int		 rv = -1;

	if (endpoint == NULL || *endpoint == '\0') {
		if (asprintf(&hostport, "s3.%s.amazonaws.com", s3->region)
		    == -1)
			return -1;
		scheme = strdup("https");
	} else {
		if ((hp = strstr(endpoint, "://")) == NULL)
			return -1;
		scheme = strndup(endpoint, hp - endpoint);
		hp += 3;
		end = hp + strcspn(hp, "/");
		hostport = strndup(hp, end - hp);
	}
	if (scheme == NULL || hostport == NULL || hostport[0] == '\0')
		goto done;
	if (path_style) {
		s3->host = hostport;
		hostport = NULL;
		if (asprintf(&s3->base_path, "/%s", s3->bucket) == -1)
			s3->base_path = NULL;
	} else {
		if (asprintf(&s3->host, "%s.%s", s3->bucket, hostport) == -1)
			s3->host = NULL;
		s3->base_path = strdup("");
	}
	if (s3->host == NULL || s3->base_path == NULL ||
	    asprintf(&s3->origin, "%s://%s", scheme, s3->host) == -1) {
		s3->origin = NULL;
		goto done;
	}
	rv = 0;
 done:
	free(scheme);
	free(hostport);
	return rv;
}

static void
s3_free(struct store *st)
{
	struct s3	*s3 = st->priv;

	if (s3 == NULL)
		return;
	curlev_free(s3->cev);
	free(s3->bucket);
	free(s3->prefix);
	free(s3->origin);
	free(s3->host);
	free(s3->base_path);
	free(s3->region);
	free(s3->access_key);
	if (s3->secret_key != NULL)
		freezero(s3->secret_key, strlen(s3->secret_key));
	if (s3->session_token != NULL)
		freezero(s3->session_token, strlen(s3->session_token));
	free(s3);
	st->priv = NULL;
}

static int
s3_init(struct store *st, const struct store_conf *conf)
{
	struct s3	*s3;

	if ((s3 = calloc(1, sizeof(*s3))) == NULL)
		return -1;
	st->priv = s3;
	s3->st = st;
	TAILQ_INIT(&s3->queue);
	s3->part_size = conf->part_size > 0 ? conf->part_size :
	    S3_PART_DEFAULT;
	s3->max_transfers = conf->max_transfers > 0 ? conf->max_transfers :
	    S3_TRANSFERS_DEFAULT;
	if (conf->part_size > 0 && (conf->part_size < S3_PART_MIN ||
	    conf->part_size > S3_PART_MAX)) {
		log_warnx("s3: part size must be between 5M and 5G");
		goto fail;
	}
	if (s3_parse_url(s3, conf->url) == -1) {
		log_warnx("s3: bad storage URL, want s3://bucket/prefix");
		goto fail;
	}
	if (conf->access_key == NULL || conf->secret_key == NULL) {
		log_warnx("s3: %s: access key and secret key needed",
		    s3->bucket);
		goto fail;
	}
	if ((s3->region = strdup(conf->region && conf->region[0] ?
	    conf->region : "us-east-1")) == NULL ||
	    (s3->access_key = strdup(conf->access_key)) == NULL ||
	    (s3->secret_key = strdup(conf->secret_key)) == NULL ||
	    (conf->session_token != NULL && conf->session_token[0] &&
	    (s3->session_token = strdup(conf->session_token)) == NULL))
		goto fail;
	if (s3_parse_endpoint(s3, conf->endpoint, conf->path_style) == -1) {
		log_warnx("s3: %s: bad endpoint, want scheme://host[:port]",
		    s3->bucket);
		goto fail;
	}
	if ((s3->cev = curlev_new(st->base)) == NULL)
		goto fail;
	return 0;
 fail:
	s3_free(st);
	return -1;
}

const struct store_ops store_s3_ops = {
	.scheme = "s3",
	.init = s3_init,
	.check = s3_check,
	.put_begin = s3_put_begin,
	.put_commit = s3_put_commit,
	.put_abort = s3_put_abort,
	.stat = s3_stat,
	.get = s3_get,
	.remove = s3_remove,
	.free = s3_free,
};
