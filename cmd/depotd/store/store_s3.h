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
 * store_s3.h: what the S3 store's files share: the store's state, the
 * request engine (s3_req.c), the writer (s3_put.c) and the helpers of
 * the store operations (store_s3.c).
 */
#ifndef DEPOT_STORE_S3_H
#define DEPOT_STORE_S3_H

#include <sys/queue.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "store.h"

#define S3_MIB			(1024 * 1024)
#define S3_PART_MIN		(5 * S3_MIB)

struct s3_req;
typedef void	(*s3_req_cb)(struct s3_req *);
typedef size_t	(*s3_req_sink)(struct s3_req *, char *, size_t);

struct s3 {
	struct store		*st;
	struct curlev		*curl;
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
	TAILQ_HEAD(, s3_req)	 queue;
};

/* One S3 request, retried as a whole. */
struct s3_req {
	TAILQ_ENTRY(s3_req)	 entry;
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
	s3_req_sink		 sink;		/* 2xx body goes here if set */
	int			 no_retry;	/* set once a sink took bytes */
	int			 start_failed;
	s3_req_cb		 done;
	void			*arg;
};

/* s3_req.c: requests, signed, queued behind max_transfers, retried. */
struct s3_req	*s3_req_new(struct s3 *, const char *method, const char *key,
		    const char *query, s3_req_cb, void *);
/* Runs the request now, or queues it behind the transfer limit. */
void		 s3_req_start(struct s3_req *);
void		 s3_req_free(struct s3_req *);
/* 0 for a 2xx answer, else ENOENT, EACCES or EIO. */
int		 s3_req_error(struct s3_req *);
void		 s3_req_log(struct s3_req *, const char *what);
/* The object key of ref under the prefix; NULL with errno set. */
char		*s3_req_key(struct s3 *, const char *ref);
/* The text of the first <tag> in an XML answer; malloc'd. */
char		*s3_req_xml_text(const char *xml, const char *tag);

/* s3_put.c: the writer. */
int		 s3_put_begin(struct store *, const char *ref, int *fd,
		    struct store_xfer **);
void		 s3_put_commit(struct store_xfer *, off_t, store_done_cb,
		    void *);
void		 s3_put_abort(struct store_xfer *);

/* s3_get.c: the reader. */
void		 s3_get(struct store *, const char *ref, off_t offset,
		    off_t length, store_open_cb, void *);

#endif
