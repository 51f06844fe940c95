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
 * fe_catalog.c: GET /v1/models and /v1/models/{id}: the configured
 * models, so that the SDKs' models.list() and models.retrieve() work.
 * The dialect is the headers' (as for the Files API): OpenAI's list
 * object, or Anthropic's page with has_more, first_id and last_id.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "log.h"
#include "util.h"
#include "frontend.h"
#include "fe_model.h"

/* When this frontend learnt of its models: their "created" time. */
static int64_t
catalog_created(void)
{
	static int64_t	 created;

	if (created == 0)
		created = now_usec();
	return created;
}

static struct json_object *
catalog_model_object(const struct model_conf *m, enum dialect d)
{
	struct json_object	*o = json_object_new_object();
	char			 t[RFC3339_LEN];

	if (d == DIALECT_ANTHROPIC) {
		time_rfc3339_usec(catalog_created() / 1000000 * 1000000, t,
		    sizeof(t));
		json_object_object_add(o, "type",
		    json_object_new_string("model"));
		json_object_object_add(o, "id",
		    json_object_new_string(m->name));
		json_object_object_add(o, "display_name",
		    json_object_new_string(m->name));
		json_object_object_add(o, "created_at",
		    json_object_new_string(t));
		return o;
	}
	json_object_object_add(o, "id", json_object_new_string(m->name));
	json_object_object_add(o, "object", json_object_new_string("model"));
	json_object_object_add(o, "created",
	    json_object_new_int64(catalog_created() / 1000000));
	json_object_object_add(o, "owned_by", json_object_new_string("depotd"));
	return o;
}

void
fe_catalog_not_found(struct api_req *ar, const char *name)
{
	struct json_object	*root, *err;
	char			 msg[256];

	if (ar->dialect == DIALECT_ANTHROPIC) {
		fe_reply_error(ar, 404, "model", "model: %s", name);
		return;
	}
	snprintf(msg, sizeof(msg), "The model '%s' does not exist", name);
	err = json_object_new_object();
	json_object_object_add(err, "message", json_object_new_string(msg));
	json_object_object_add(err, "type",
	    json_object_new_string("not_found_error"));
	json_object_object_add(err, "param", json_object_new_string("model"));
	json_object_object_add(err, "code",
	    json_object_new_string("model_not_found"));
	root = json_object_new_object();
	json_object_object_add(root, "error", err);
	fe_reply_json(ar, 404, root);
}

static void
catalog_list(struct api_req *ar)
{
	const struct model_conf	*m, *first = NULL, *last = NULL;
	struct json_object	*root, *data;
	int			 a = ar->dialect == DIALECT_ANTHROPIC;

	root = json_object_new_object();
	data = json_object_new_array();
	TAILQ_FOREACH(m, &fe.conf->models, entry) {
		json_object_array_add(data, catalog_model_object(m,
		    ar->dialect));
		if (first == NULL)
			first = m;
		last = m;
	}
	if (!a)
		json_object_object_add(root, "object",
		    json_object_new_string("list"));
	json_object_object_add(root, "data", data);
	if (a) {
		json_object_object_add(root, "has_more",
		    json_object_new_boolean(0));
		json_object_object_add(root, "first_id", first ?
		    json_object_new_string(first->name) : NULL);
		json_object_object_add(root, "last_id", last ?
		    json_object_new_string(last->name) : NULL);
	}
	fe_reply_json(ar, 200, root);
}

/* The name after /v1/models/, percent-decoded (names may hold '/'). */
static int
catalog_name(const char *p, char *out, size_t len)
{
	size_t		 n = 0;
	unsigned int	 c;

	for (; *p != '\0'; p++) {
		if (n + 1 >= len)
			return -1;
		if (*p == '%') {
			if (sscanf(p + 1, "%2x", &c) != 1 || c == 0 ||
			    strspn(p + 1, "0123456789abcdefABCDEF") < 2)
				return -1;
			out[n++] = (char)c;
			p += 2;
		} else
			out[n++] = *p;
	}
	out[n] = '\0';
	return n > 0 ? 0 : -1;
}

static void
catalog_authenticated(struct api_req *ar)
{
	const struct model_conf	*m;
	const char		*p = ar->req->path + strlen("/v1/models");
	char			 name[256];

	if (*p == '\0' || strcmp(p, "/") == 0) {
		catalog_list(ar);
		return;
	}
	if (catalog_name(p + 1, name, sizeof(name)) == -1) {
		fe_reply_error(ar, 404, "model", "no such model");
		return;
	}
	TAILQ_FOREACH(m, &fe.conf->models, entry)
		if (strcmp(m->name, name) == 0) {
			fe_reply_json(ar, 200, catalog_model_object(m,
			    ar->dialect));
			return;
		}
	fe_catalog_not_found(ar, name);
}

void
fe_catalog_route(struct api_req *ar)
{
	const char	*p = ar->req->path + strlen("/v1/models");

	ar->req->route = *p == '\0' || strcmp(p, "/") == 0 ? "models.list" :
	    "models.retrieve";
	if (ar->req->method != HTTP_M_GET) {
		fe_reply_error(ar, 405, NULL, "use GET");
		return;
	}
	fe_authenticate(ar, catalog_authenticated);
}
