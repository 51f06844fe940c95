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
 * fe_broker.c: a frontend's leases of sandbox sessions.
 *
 * Each lease has a number that travels as the imsg peer id.  One call
 * at a time per lease (the broker runs one at a time); JSON comes and
 * goes in IMSG_SBX_DATA pieces before the message it belongs to.  A
 * closed lease drops whatever the broker still sends for it, and the
 * broker destroys the session.
 *
 * A lease in a container starts at the storage helper, which checks
 * the caller's ownership and grants the container's session to the
 * broker; what we present the broker is the grant's nonce, never a
 * session (broker_grant.c).
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "calltab.h"
#include "log.h"
#include "child.h"
#include "fe_model.h"

struct fe_broker_lease {
	struct call_entry	 ce;		/* id: the lease number */
	struct api_req		*ar;
	uint32_t		 delegate;	/* storage call under way */
	char			 lent[HANDLE_LEN];	/* the broker's */
	struct cntr_rec		 cntr;		/* id "" none */
	char			 grant[GRANT_LEN];	/* for the open */
	fe_broker_status_cb	 status_cb;
	fe_broker_result_cb	 result_cb;
	void			*arg;
	char			*data;		/* pieces of a result */
	size_t			 datalen;
};

static struct calltab		 leases = CALLTAB_INITIALIZER(leases);
static struct imsgev		 broker_iev;
static int			 broker_up;

static struct fe_broker_lease *
fe_broker_find(uint32_t id)
{
	return CALL_OF(calltab_find(&leases, id), struct fe_broker_lease, ce);
}

static void
fe_broker_send(struct fe_broker_lease *l, uint32_t type, int fd,
    const void *data, size_t len)
{
	if (imsgev_compose(&broker_iev, type, l->ce.id, 0, fd, data,
	    len) == -1)
		fatal("imsg_compose");
}

/* The answer ends the call: the callback is taken before it runs. */
static void
fe_broker_status(struct fe_broker_lease *l, struct sbx_status *st)
{
	fe_broker_status_cb	 cb = l->status_cb;

	l->status_cb = NULL;
	st->message[sizeof(st->message) - 1] = '\0';
	if (cb != NULL)
		cb(l->arg, st->status, st->message);
}

static void
fe_broker_result(struct fe_broker_lease *l, struct sbx_status *st)
{
	fe_broker_result_cb	 cb = l->result_cb;
	struct json_object	*res = NULL;

	l->result_cb = NULL;
	st->message[sizeof(st->message) - 1] = '\0';
	if (st->status == 0 && l->data != NULL)
		res = json_tokener_parse(l->data);
	free(l->data);
	l->data = NULL;
	l->datalen = 0;
	if (cb != NULL)
		cb(l->arg, res != NULL ? st->status : 502, res != NULL ?
		    st->message : "the sandbox's answer was unreadable", res);
	json_object_put(res);
}

static void
fe_broker_data(struct fe_broker_lease *l, struct imsg *imsg)
{
	char	*p;

	if (l->datalen + imsg->datalen > SBX_JSON_MAX)
		fatalx("broker: result too large");
	if ((p = realloc(l->data, l->datalen + imsg->datalen + 1)) == NULL)
		fatal("realloc");
	l->data = p;
	memcpy(l->data + l->datalen, imsg->data, imsg->datalen);
	l->datalen += imsg->datalen;
	l->data[l->datalen] = '\0';
}

static void
frontend_dispatch_broker(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	struct fe_broker_lease	*l;
	struct sbx_status	 st;

	if ((l = fe_broker_find(imsg->hdr.peerid)) == NULL)
		return;		/* closed already */
	switch (imsg->hdr.type) {
	case IMSG_SBX_DATA:
		fe_broker_data(l, imsg);
		return;
	case IMSG_SBX_STATUS:
		memcpy(&st, imsg->data, sizeof(st));
		fe_broker_status(l, &st);
		return;
	case IMSG_SBX_RESULT:
		memcpy(&st, imsg->data, sizeof(st));
		fe_broker_result(l, &st);
		return;
	}
}

static void
fe_broker_closed(struct imsgev *iev, const char *why, void *arg)
{
	fatalx("lost the broker: %s", why);
}

void
fe_broker_attach(int fd)
{
	if (broker_up)
		fatalx("a second broker channel");
	child_peer_init(&broker_iev, ROLE_BROKER, fd,
	    frontend_dispatch_broker, fe_broker_closed, NULL);
	broker_up = 1;
}

/* The storage helper lent the broker our caller: now the session. */
static void
fe_broker_delegated(void *arg, struct imsg *imsg)
{
	struct fe_broker_lease	*l = arg;
	struct auth_result	 res;
	struct sbx_open		 o;
	struct sbx_status	 st;

	l->delegate = 0;
	memset(&o, 0, sizeof(o));
	if (imsg->hdr.type == IMSG_AUTH_RESULT) {
		memcpy(&res, imsg->data, sizeof(res));
		if (res.status == AUTH_OK) {
			strlcpy(o.handle, res.handle, sizeof(o.handle));
			strlcpy(l->lent, res.handle, sizeof(l->lent));
			strlcpy(o.key_id, res.key_id, sizeof(o.key_id));
			strlcpy(o.grant, l->grant, sizeof(o.grant));
		}
		explicit_bzero(&res, sizeof(res));
	}
	if (o.handle[0] == '\0') {
		memset(&st, 0, sizeof(st));
		st.status = 502;
		strlcpy(st.message, "the request's files could not be lent to "
		    "the sandbox", sizeof(st.message));
		fe_broker_status(l, &st);
		return;
	}
	fe_broker_send(l, IMSG_SBX_OPEN, -1, &o, sizeof(o));
	explicit_bzero(&o, sizeof(o));
	explicit_bzero(l->grant, sizeof(l->grant));
}

static void
fe_broker_delegate(struct fe_broker_lease *l)
{
	struct auth_release	 del;

	memset(&del, 0, sizeof(del));
	strlcpy(del.handle, l->ar->who.handle, sizeof(del.handle));
	l->delegate = fe_storage_request(IMSG_AUTH_DELEGATE, -1, &del,
	    sizeof(del), fe_broker_delegated, l);
}

/* The storage helper's word on the container: granted, or why not. */
static void
fe_broker_attached(void *arg, struct imsg *imsg)
{
	struct fe_broker_lease	*l = arg;
	struct cntr_attached	 a;
	struct error_msg	 em;
	struct sbx_status	 st;

	l->delegate = 0;
	memset(&st, 0, sizeof(st));
	if (imsg->hdr.type == IMSG_CNTR_ATTACHED) {
		memcpy(&a, imsg->data, sizeof(a));
		a.grant[sizeof(a.grant) - 1] = '\0';
		l->cntr = a.rec;
		l->cntr.id[sizeof(l->cntr.id) - 1] = '\0';
		strlcpy(l->grant, a.grant, sizeof(l->grant));
		explicit_bzero(&a, sizeof(a));
		fe_broker_delegate(l);
		return;
	}
	st.status = 502;
	strlcpy(st.message, "the container could not be looked up",
	    sizeof(st.message));
	if (imsg->hdr.type == IMSG_ERROR && imsg->datalen == sizeof(em)) {
		memcpy(&em, imsg->data, sizeof(em));
		em.message[sizeof(em.message) - 1] = '\0';
		st.status = em.status;
		strlcpy(st.message, em.message, sizeof(st.message));
	}
	fe_broker_status(l, &st);
}

struct fe_broker_lease *
fe_broker_open(struct api_req *ar, const char *container,
    fe_broker_status_cb cb, void *arg)
{
	struct fe_broker_lease	*l;
	struct cntr_key		 k;

	if (!broker_up || !fe_storage_up())
		return NULL;
	if ((l = calloc(1, sizeof(*l))) == NULL)
		fatal("calloc");
	l->ar = ar;
	l->status_cb = cb;
	l->arg = arg;
	calltab_add(&leases, &l->ce);
	if (container == NULL || container[0] == '\0') {
		fe_broker_delegate(l);
		return l;
	}
	memset(&k, 0, sizeof(k));
	strlcpy(k.handle, ar->who.handle, sizeof(k.handle));
	strlcpy(k.id, container, sizeof(k.id));
	l->delegate = fe_storage_request(IMSG_CNTR_ATTACH, -1, &k, sizeof(k),
	    fe_broker_attached, l);
	return l;
}

const struct cntr_rec *
fe_broker_container(const struct fe_broker_lease *l)
{
	return l != NULL && l->cntr.id[0] != '\0' ? &l->cntr : NULL;
}

void
fe_broker_seed(struct fe_broker_lease *l, int fd, const char *name,
    int64_t size, fe_broker_status_cb cb, void *arg)
{
	struct sbx_seed	 s;

	memset(&s, 0, sizeof(s));
	strlcpy(s.name, name, sizeof(s.name));
	s.size = size;
	l->status_cb = cb;
	l->arg = arg;
	fe_broker_send(l, IMSG_SBX_SEED, fd, &s, sizeof(s));
}

void
fe_broker_exec(struct fe_broker_lease *l, struct json_object *req,
    fe_broker_result_cb cb, void *arg)
{
	struct sbx_exec	 e;
	const char	*s;
	size_t		 len, off, n;

	s = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	len = strlen(s);
	l->result_cb = cb;
	l->arg = arg;
	if (len > SBX_JSON_MAX) {
		struct sbx_status st = { 502, "code too large to run" };

		fe_broker_result(l, &st);
		return;
	}
	for (off = 0; off < len; off += n) {
		n = len - off > SBX_DATA_MAX ? SBX_DATA_MAX : len - off;
		fe_broker_send(l, IMSG_SBX_DATA, -1, s + off, n);
	}
	memset(&e, 0, sizeof(e));
	fe_broker_send(l, IMSG_SBX_EXEC, -1, &e, sizeof(e));
}

void
fe_broker_close(struct fe_broker_lease *l)
{
	struct auth_release	 rel;

	if (l == NULL)
		return;
	if (l->delegate != 0)
		fe_storage_cancel(l->delegate);
	else
		fe_broker_send(l, IMSG_SBX_CLOSE, -1, NULL, 0);
	/*
	 * The caller's own handle outlives the request in the cache; what
	 * was lent for this lease ends with it.
	 */
	if (l->lent[0] != '\0' && fe_storage_up()) {
		memset(&rel, 0, sizeof(rel));
		strlcpy(rel.handle, l->lent, sizeof(rel.handle));
		fe_storage_send(IMSG_AUTH_RELEASE, &rel, sizeof(rel));
	}
	calltab_remove(&leases, &l->ce);
	explicit_bzero(l->grant, sizeof(l->grant));
	free(l->data);
	free(l);
}
