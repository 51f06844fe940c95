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
 * fe_upcall.h: one call to a model upstream (fe_upcall.c), and the
 * route's view of how it went.
 */
#ifndef DEPOTD_FE_UPSTREAM_H
#define DEPOTD_FE_UPSTREAM_H

#include "fe_model.h"

/* What the call is to do. */
struct upcall_params {
	const char	*upstream;	/* its name in the configuration */
	enum wire	 caller;	/* the caller's wire */
	enum wire	 wire;		/* the upstream's */
	const char	*model;		/* the name the caller asked for */
	int		 stream;
	int		 usage;		/* chat caller's include_usage */
	struct upstream_body	*body;		/* the route keeps it */
	/*
	 * The answer is not the caller's: a 200 is handed to done as
	 * JSON (upcall_result.answer), an error as its status and
	 * message; nothing is sent to the caller.  Not with stream.
	 */
	int		 collect;
};

/* How it went, for the route's log line and metrics. */
struct upcall_result {
	int		 upstream_status;	/* 0: no answer */
	int		 status;		/* what the caller got */
	int64_t		 tokens_in;		/* -1 unknown */
	int64_t		 tokens_out;
	int64_t		 ttfb_us;		/* -1: no byte came */
	int64_t		 sent;			/* request bytes sent */
	char		 replica[256];		/* the last called, "" none */
	/* collect: the upstream's answer (during done only), or why not */
	struct json_object *answer;
	int64_t		 answer_len;		/* its bytes as sent */
	char		 message[160];
	char		 retry_after[32];
};

struct upcall;
typedef void	(*upcall_done_cb)(void *arg, const struct upcall_result *);

/*
 * Calls the upstream and answers the caller from what it says, in the
 * caller's envelope.  done runs once, when the caller has been answered
 * (or the answer ended); not after upcall_free.  NULL when no call
 * could start (the caller was answered; done does not run).
 */
struct upcall	*upcall_start(struct api_req *, const struct upcall_params *,
		    upcall_done_cb, void *);
/* Cancels a call under way: the upstream sees the close. */
void		 upcall_free(struct upcall *);
/* What happened so far (for a request that ends early). */
void		 upcall_result(const struct upcall *, struct upcall_result *);

/*
 * fe_retry_after.c: an upstream's Retry-After (len bytes at v, not
 * NUL-terminated) as the seconds the caller is told, in out; out is
 * left alone when the value is neither seconds nor an HTTP-date.
 */
void		 retry_after_seconds(const char *v, size_t len, char *out,
		    size_t outlen);

/* The frontend's curl multi handle, made at the first call. */
void		 upcall_init(void);

#endif
