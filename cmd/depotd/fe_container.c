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
 * fe_container.c: OpenAI's /v1/containers routes (issue 20): create,
 * list (paged by after), retrieve and delete.  The rows are the
 * storage helper's (storage_container.c); another tenant's container
 * is a 404 as a missing one, since the storage helper finds no row.
 */
#include <sys/types.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <json-c/json.h>

#include "log.h"
#include "util.h"
#include "jsontext.h"
#include "frontend.h"

#define CNTR_BODY_MAX	(64 * 1024)

enum cntr_op {
	CNTR_OP_CREATE,
	CNTR_OP_LIST,
	CNTR_OP_RETRIEVE,
	CNTR_OP_DELETE,
};

struct fe_cntr {
	enum cntr_op		 op;
	char			 id[IDLEN];
	struct evbuffer		*body;
	int			 too_large;
	struct json_object	*items;
	char			 last_id[IDLEN];
};

struct json_object *
fe_container_object(const struct cntr_rec *c)
{
	struct json_object	*o, *ea;

	o = json_object_new_object();
	json_object_object_add(o, "id", json_object_new_string(c->id));
	json_object_object_add(o, "object",
	    json_object_new_string("container"));
	json_object_object_add(o, "name", json_object_new_string(c->name));
	json_object_object_add(o, "created_at",
	    json_object_new_int64(c->created_us / 1000000));
	json_object_object_add(o, "status", json_object_new_string(c->state));
	ea = json_object_new_object();
	json_object_object_add(ea, "anchor",
	    json_object_new_string("last_active_at"));
	json_object_object_add(ea, "minutes",
	    json_object_new_int64(c->expires_minutes));
	json_object_object_add(o, "expires_after", ea);
	json_object_object_add(o, "last_active_at",
	    json_object_new_int64(c->last_active_us / 1000000));
	json_object_object_add(o, "memory_limit",
	    json_object_new_string(c->memory_limit));
	return o;
}

static void
fe_cntr_one(void *arg, struct imsg *imsg)
{
	struct api_req	*ar = arg;
	struct cntr_rec	 c;

	ar->pending = 0;
	if (!fe_reply_storage_ok(ar, imsg, IMSG_CNTR_INFO, sizeof(c)))
		return;
	memcpy(&c, imsg->data, sizeof(c));
	c.id[sizeof(c.id) - 1] = c.name[sizeof(c.name) - 1] = '\0';
	c.state[sizeof(c.state) - 1] = '\0';
	c.memory_limit[sizeof(c.memory_limit) - 1] = '\0';
	fe_reply_json(ar, 200, fe_container_object(&c));
}

static void
fe_cntr_deleted(void *arg, struct imsg *imsg)
{
	struct api_req		*ar = arg;
	struct cntr_rec		 c;
	struct json_object	*o;

	ar->pending = 0;
	if (!fe_reply_storage_ok(ar, imsg, IMSG_CNTR_INFO, sizeof(c)))
		return;
	memcpy(&c, imsg->data, sizeof(c));
	c.id[sizeof(c.id) - 1] = '\0';
	o = json_object_new_object();
	json_object_object_add(o, "id", json_object_new_string(c.id));
	json_object_object_add(o, "object",
	    json_object_new_string("container.deleted"));
	json_object_object_add(o, "deleted", json_object_new_boolean(1));
	fe_reply_json(ar, 200, o);
}

static void
fe_cntr_keyed(struct api_req *ar, uint32_t type, fe_storage_reply_cb cb)
{
	struct fe_cntr	*fc = ar->route;
	struct cntr_key	 k;

	memset(&k, 0, sizeof(k));
	strlcpy(k.handle, ar->who.handle, sizeof(k.handle));
	strlcpy(k.id, fc->id, sizeof(k.id));
	ar->pending = fe_storage_request(type, -1, &k, sizeof(k), cb, ar);
}

/* --- list --- */

static void
fe_cntr_listed(void *arg, struct imsg *imsg)
{
	struct api_req		*ar = arg;
	struct fe_cntr		*fc = ar->route;
	struct cntr_rec		 c;
	struct file_list_end	 end;
	struct json_object	*o, *first;

	if (imsg->hdr.type == IMSG_CNTR_LIST_ITEM) {
		if (imsg->datalen != sizeof(c))
			fatalx("bad container list item");
		memcpy(&c, imsg->data, sizeof(c));
		c.id[sizeof(c.id) - 1] = c.name[sizeof(c.name) - 1] = '\0';
		c.state[sizeof(c.state) - 1] = '\0';
		c.memory_limit[sizeof(c.memory_limit) - 1] = '\0';
		json_object_array_add(fc->items, fe_container_object(&c));
		strlcpy(fc->last_id, c.id, sizeof(fc->last_id));
		return;
	}
	ar->pending = 0;
	if (!fe_reply_storage_ok(ar, imsg, IMSG_CNTR_LIST_END, sizeof(end)))
		return;
	memcpy(&end, imsg->data, sizeof(end));
	o = json_object_new_object();
	json_object_object_add(o, "object", json_object_new_string("list"));
	first = json_object_array_length(fc->items) > 0 ?
	    json_object_object_get(json_object_array_get_idx(fc->items, 0),
	    "id") : NULL;
	json_object_object_add(o, "data", json_object_get(fc->items));
	json_object_object_add(o, "first_id", json_object_get(first));
	json_object_object_add(o, "last_id", fc->last_id[0] ?
	    json_object_new_string(fc->last_id) : NULL);
	json_object_object_add(o, "has_more",
	    json_object_new_boolean(end.has_more));
	fe_reply_json(ar, 200, o);
}

static void
fe_cntr_list(struct api_req *ar)
{
	struct fe_cntr		*fc = ar->route;
	struct cntr_list_req	 l;
	char			 v[64];
	const char		*errstr;
	int			 r;

	memset(&l, 0, sizeof(l));
	strlcpy(l.handle, ar->who.handle, sizeof(l.handle));
	l.limit = 20;
	l.order = ORDER_DESC;
	if ((r = fe_reply_query_param(ar, "limit", v, sizeof(v))) == -1)
		return;
	if (r == 1) {
		l.limit = strtonum(v, 1, 100, &errstr);
		if (errstr != NULL) {
			fe_reply_error(ar, 400, "limit", "limit must be an "
			    "integer from 1 to 100");
			return;
		}
	}
	if ((r = fe_reply_query_param(ar, "order", v, sizeof(v))) == -1)
		return;
	if (r == 1 && strcmp(v, "asc") != 0 && strcmp(v, "desc") != 0) {
		fe_reply_error(ar, 400, "order", "order must be asc or desc");
		return;
	}
	if (r == 1 && strcmp(v, "asc") == 0)
		l.order = ORDER_ASC;
	if ((r = fe_reply_query_param(ar, "after", v, sizeof(v))) == -1)
		return;
	if (r == 1) {
		if (!id_valid(v, "cntr_")) {
			fe_reply_error(ar, 400, "after", "after names no "
			    "container");
			return;
		}
		strlcpy(l.after_id, v, sizeof(l.after_id));
	}
	if ((fc->items = json_object_new_array()) == NULL) {
		fe_reply_error(ar, 503, NULL, "out of memory");
		return;
	}
	ar->pending = fe_storage_request(IMSG_CNTR_LIST, -1, &l, sizeof(l),
	    fe_cntr_listed, ar);
}

/* --- create --- */

static int
fe_cntr_create_fields(struct api_req *ar, struct json_object *b,
    struct cntr_create *cc)
{
	struct json_object	*v, *m;
	int64_t			 mins;

	if (!json_object_object_get_ex(b, "name", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    strlcpy(cc->name, json_object_get_string(v), sizeof(cc->name)) >=
	    sizeof(cc->name)) {
		fe_reply_error(ar, 400, "name", "name must be a string of at "
		    "most %d bytes", CNTR_NAME_MAX - 1);
		return -1;
	}
	if (json_object_object_get_ex(b, "expires_after", &v) && v != NULL) {
		if (!json_object_is_type(v, json_type_object) ||
		    !json_object_object_get_ex(v, "minutes", &m) ||
		    !json_object_is_type(m, json_type_int) ||
		    (mins = json_object_get_int64(m)) < 1 ||
		    mins > 30 * 24 * 60 ||
		    ((m = json_object_object_get(v, "anchor")) != NULL &&
		    strcmp(json_object_get_string(m), "last_active_at") != 0)) {
			fe_reply_error(ar, 400, "expires_after", "expires_after "
			    "must be {anchor: \"last_active_at\", minutes} with "
			    "minutes from 1 to 43200");
			return -1;
		}
		cc->expires_minutes = mins;
	}
	if (json_object_object_get_ex(b, "memory_limit", &v) && v != NULL) {
		if (!json_object_is_type(v, json_type_string) ||
		    (strcmp(json_object_get_string(v), "1g") != 0 &&
		    strcmp(json_object_get_string(v), "4g") != 0 &&
		    strcmp(json_object_get_string(v), "16g") != 0 &&
		    strcmp(json_object_get_string(v), "64g") != 0)) {
			fe_reply_error(ar, 400, "memory_limit", "memory_limit "
			    "must be 1g, 4g, 16g or 64g");
			return -1;
		}
		strlcpy(cc->memory_limit, json_object_get_string(v),
		    sizeof(cc->memory_limit));
	}
	if (json_object_object_get_ex(b, "file_ids", &v) && v != NULL &&
	    (!json_object_is_type(v, json_type_array) ||
	    json_object_array_length(v) > 0)) {
		fe_reply_error(ar, 400, "file_ids", "file_ids at creation are "
		    "not supported yet");
		return -1;
	}
	return 0;
}

static void
fe_cntr_body(struct api_req *ar, const void *data, size_t len)
{
	struct fe_cntr	*fc = ar->route;

	if (fc->too_large)
		return;
	if (evbuffer_get_length(fc->body) + len > CNTR_BODY_MAX ||
	    evbuffer_add(fc->body, data, len) == -1) {
		fc->too_large = 1;
		fe_reply_error(ar, 413, NULL, "the body is larger than %d "
		    "bytes", CNTR_BODY_MAX);
	}
}

static void
fe_cntr_body_end(struct api_req *ar)
{
	struct fe_cntr		*fc = ar->route;
	struct cntr_create	 cc;
	struct json_object	*b;
	size_t			 len;

	if (fc->too_large)
		return;
	len = evbuffer_get_length(fc->body);
	b = json_text_parse_default((const char *)evbuffer_pullup(fc->body,
	    -1), len);
	if (b == NULL || !json_object_is_type(b, json_type_object)) {
		json_object_put(b);
		fe_reply_error(ar, 400, NULL, "the body is not a JSON object");
		return;
	}
	memset(&cc, 0, sizeof(cc));
	strlcpy(cc.handle, ar->who.handle, sizeof(cc.handle));
	if (fe_cntr_create_fields(ar, b, &cc) == 0)
		ar->pending = fe_storage_request(IMSG_CNTR_CREATE, -1, &cc,
		    sizeof(cc), fe_cntr_one, ar);
	json_object_put(b);
}

/* --- routing --- */

static void
fe_cntr_authenticated(struct api_req *ar)
{
	struct fe_cntr	*fc = ar->route;

	switch (fc->op) {
	case CNTR_OP_CREATE:
		if ((fc->body = evbuffer_new()) == NULL) {
			fe_reply_error(ar, 503, NULL, "out of memory");
			return;
		}
		ar->on_body = fe_cntr_body;
		ar->on_body_end = fe_cntr_body_end;
		http_body_accept(ar->req);
		break;
	case CNTR_OP_LIST:
		fe_cntr_list(ar);
		break;
	case CNTR_OP_RETRIEVE:
		fe_cntr_keyed(ar, IMSG_CNTR_GET, fe_cntr_one);
		break;
	case CNTR_OP_DELETE:
		fe_cntr_keyed(ar, IMSG_CNTR_DELETE, fe_cntr_deleted);
		break;
	}
}

static void
fe_cntr_free(struct api_req *ar)
{
	struct fe_cntr	*fc = ar->route;

	if (fc == NULL)
		return;
	if (fc->body != NULL)
		evbuffer_free(fc->body);
	json_object_put(fc->items);
	free(fc);
	ar->route = NULL;
}

static int
fe_cntr_parse_path(struct api_req *ar, struct fe_cntr *fc)
{
	const char	*p = ar->req->path + strlen("/v1/containers");
	enum http_method m = ar->req->method;

	if (*p == '\0' || strcmp(p, "/") == 0) {
		fc->op = m == HTTP_M_POST ? CNTR_OP_CREATE : CNTR_OP_LIST;
		ar->req->route = m == HTTP_M_POST ? "containers.create" :
		    "containers.list";
		return m == HTTP_M_POST || m == HTTP_M_GET ? 0 : 405;
	}
	p++;
	if (strchr(p, '/') != NULL || strlen(p) >= sizeof(fc->id) ||
	    *p == '\0')
		return 404;
	strlcpy(fc->id, p, sizeof(fc->id));
	fc->op = m == HTTP_M_DELETE ? CNTR_OP_DELETE : CNTR_OP_RETRIEVE;
	ar->req->route = m == HTTP_M_DELETE ? "containers.delete" :
	    "containers.retrieve";
	return m == HTTP_M_GET || m == HTTP_M_DELETE ? 0 : 405;
}

/* /v1/containers and /v1/containers/{id}: OpenAI's dialect only. */
void
fe_container_route(struct api_req *ar)
{
	struct fe_cntr	*fc;
	int		 status;

	ar->dialect = DIALECT_OPENAI;
	if ((fc = calloc(1, sizeof(*fc))) == NULL) {
		fe_reply_error(ar, 503, NULL, "out of memory");
		return;
	}
	if ((status = fe_cntr_parse_path(ar, fc)) != 0) {
		free(fc);
		fe_reply_error(ar, status, NULL, status == 405 ?
		    "method %s not allowed here" : "no route for %s",
		    status == 405 ? ar->req->method_str : ar->req->path);
		return;
	}
	ar->route = fc;
	ar->free_route = fe_cntr_free;
	fe_authenticate(ar, fe_cntr_authenticated);
}
