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
 * broker.h: the sandbox broker's parts: the process and its channels
 * (broker.c), leases of backend sessions (broker_lease.c), the outputs
 * they store (broker_output.c) and HTTP requests to the backend
 * (broker_sbx.c).
 */
#ifndef DEPOTD_BROKER_H
#define DEPOTD_BROKER_H

#include <sys/queue.h>

#include "depotd.h"
#include "broker_sbx.h"

struct event;
struct json_object;
struct broker_peer;
struct broker_lease;
struct broker_output;

/* The stored outputs of a run: {stored: [...], skipped: [...]}. */
typedef void	(*broker_output_done_cb)(struct broker_lease *,
		    struct json_object *);

/* One backend session, for one request of one frontend. */
struct broker_lease {
	TAILQ_ENTRY(broker_lease) entry;	/* every lease */
	TAILQ_ENTRY(broker_lease) peer_entry;	/* its frontend's */
	struct broker_peer	*peer;
	uint32_t		 peerid;	/* the frontend's number */
	char			 session[130];	/* "" until created */
	char			 handle[HANDLE_LEN];
	char			 key_id[IDLEN];	/* the caller's API key */
	int			 admitted;	/* counts against its key */
	struct sbx_request	*request;	/* at most one at a time */
	char			*input;		/* the next Execute's */
	size_t			 inlen;
	struct json_object	*exec_req;	/* waiting on the baseline */
	struct json_object	*result;	/* the last result block */
	struct json_object	*listing;	/* files before the run */
	struct json_object	*produced;	/* by the last run */
	struct broker_output	*output;	/* storing them */
	/* A container's lease: its session outlives the lease. */
	char			 grant[GRANT_LEN];	/* awaited */
	struct event		*grant_wait;
	char			 container[IDLEN];	/* "" none */
	int64_t			 idle_seconds;	/* for its new session */
	int64_t			 life_seconds;
};
TAILQ_HEAD(broker_lease_list, broker_lease);

struct broker_peer {
	enum proc_role		 role;
	int			 instance;
	struct imsgev		 iev;
	struct broker_lease_list leases;
};

struct broker {
	struct depotd_conf	*conf;
	struct sbx_backend	 backend;
};
extern struct broker broker;

/* broker_lease.c */
void	 broker_dispatch_frontend(struct broker_peer *, struct imsg *);
void	 broker_lease_peer_gone(struct broker_peer *);
int	 broker_lease_count(void);
int	 broker_lease_end_all(void);
void	 broker_lease_destroy_session(const char *session);
void	 broker_lease_grant_arrived(void);

/* broker_grant.c */
void	 broker_grant_add(struct imsg *);
int	 broker_grant_take(const char *nonce, int frontend,
	    struct cntr_grant *);

/* broker_output.c */
void	 broker_output_storage_attach(struct imsgev *);
void	 broker_dispatch_storage(struct imsg *);
void	 broker_output_store(struct broker_lease *,
	    struct json_object *produced, broker_output_done_cb);
void	 broker_output_cancel(struct broker_lease *);
void	 broker_output_release(const char *handle);
void	 broker_output_tell(uint32_t type, const void *, size_t);

#endif
