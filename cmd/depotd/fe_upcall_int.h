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
 * fe_upcall_int.h: one model call's state, shared by fe_upcall.c (the
 * call and curl's callbacks) and fe_upcall_end.c (its answer to the
 * caller).
 */
#ifndef DEPOTD_FE_UPCALL_INT_H
#define DEPOTD_FE_UPCALL_INT_H

#define ERROR_BODY_MAX		(64 * 1024)	/* what an error may say */
#define UPSTREAM_MESSAGE_MAX	400	/* of it, passed on */
/*
 * A pooled connection idle longer than this is not reused: model
 * servers (uvicorn, llama.cpp) close theirs after 5 s, and a request
 * sent on one closing under it cannot be sent again when its body is
 * read from descriptors, which do not rewind (a body in memory can:
 * upcall_setup).
 */
#define CONN_MAXAGE		2

struct upcall {
	struct api_req		*ar;
	struct upcall_params	 p;
	char			 model[128];
	CURL			*easy;
	int			 running;	/* in the multi */
	int			 inline_body;	/* CURLOPT_POSTFIELDS */
	struct curl_slist	*headers;
	struct curl_slist	*resolve;
	struct event		*idle;
	int			 idle_timeout;
	struct evbuffer		*answer;	/* plain answer or error */
	struct evbuffer		*frame;		/* one event to the caller */
	int64_t			 streamed;	/* bytes of the stream */
	struct sse_parser	*sse;
	struct xstream		*translator;	/* into the caller's wire */
	struct upcall_result	 res;
	int64_t			 start_us;		/* monotonic, usec */
	char			 retry_after[32];
	int			 event_stream;	/* its Content-Type says so */
	int			 started;	/* our SSE reply began */
	int			 fail;		/* status to report */
	char			 fail_message[160];
	int			 reported;
	int			 busy;		/* inside a callback */
	int			 dead;		/* freed while busy */
	upcall_done_cb		 done;
	void			*arg;
	/* The pool (fe_pool.c): the replica called, those tried. */
	struct pool_replica	*replica;
	uint32_t		 tried;
	int			 failovers;
};

int64_t		 upcall_answer_max(void);
int		 upcall_tools_max(void);
void		 upcall_fail(struct upcall *, int, const char *, ...)
		    __attribute__((format(printf, 3, 4)));
void		 upcall_emit_cb(void *, const char *, const char *, size_t);
int64_t		 upcall_sent(const struct upcall *);
void		 upcall_report(struct upcall *, int);
/* The caller's answer from the upstream's, whole or the stream's end. */
void		 upcall_answer(struct upcall *, CURLcode);
void		 upcall_stream_end(struct upcall *, CURLcode);

#endif
