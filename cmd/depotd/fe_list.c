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
 * fe_list.c: GET /v1/files, a page of the caller's files in either
 * dialect: the query's cursors and filters, and Anthropic's page tokens.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "log.h"
#include "util.h"
#include "frontend.h"

/* A listing under way: the items arrive one message each. */
struct fe_list {
	struct file_list_req	 req;
	struct json_object	*items;
};

/* --- the query --- */

/* next_page tokens: "page_" + hex of "a:<id>" or "b:<id>". */
static void
list_page_token(char *buf, size_t len, char dir, const char *id)
{
	char	 raw[IDLEN + 4];

	snprintf(raw, sizeof(raw), "%c:%s", dir, id);
	if (len < 6 + 2 * strlen(raw) + 1)
		return;
	memcpy(buf, "page_", 5);
	hex_encode(raw, strlen(raw), buf + 5);
}

static int
list_page_decode(const char *tok, char *dir, char *id, size_t idlen)
{
	char	 raw[IDLEN + 4];
	size_t	 i, n;
	unsigned int v;

	if (strncmp(tok, "page_", 5) != 0)
		return -1;
	tok += 5;
	n = strlen(tok);
	if (n % 2 != 0 || n / 2 >= sizeof(raw))
		return -1;
	for (i = 0; i < n / 2; i++) {
		if (sscanf(tok + 2 * i, "%2x", &v) != 1)
			return -1;
		raw[i] = v;
	}
	raw[n / 2] = '\0';
	if ((raw[0] != 'a' && raw[0] != 'b') || raw[1] != ':' ||
	    !id_valid(raw + 2, "file-"))
		return -1;
	*dir = raw[0];
	strlcpy(id, raw + 2, idlen);
	return 0;
}

/*
 * "ids" repeated or comma-separated, and "ids[]": the Anthropic SDK 1.x
 * encodes arrays in brackets (ids%5B%5D=a&ids%5B%5D=b).
 */
static int
list_ids(struct api_req *ar, struct file_list_req *l)
{
	static const char *const names[] = { "ids", "ids[]" };
	char		 buf[IDLEN * 100 + 100], *p, *tok;
	const char	*from;
	ssize_t		 n;
	size_t		 i;
	int		 asked = 0;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		from = NULL;
		while ((n = http_query_param(ar->req->query, names[i], buf,
		    sizeof(buf), &from)) >= 0) {
			for (p = buf; (tok = strsep(&p, ",")) != NULL; ) {
				if (*tok == '\0')
					continue;
				if (l->nids == 100) {
					fe_reply_error(ar, 400, "ids",
					    "at most 100 ids");
					return -1;
				}
				strlcpy(l->ids[l->nids++], tok, IDLEN);
			}
		}
		if (n == -2) {
			fe_reply_error(ar, 400, "ids", "ids is malformed");
			return -1;
		}
		if (from != NULL)
			asked = 1;
	}
	if (asked && l->nids == 0)
		l->nids = -1;	/* asked for none: an empty page */
	return 0;
}

static int
list_parse(struct api_req *ar, struct file_list_req *l)
{
	char		 buf[256], cursor[IDLEN], dir;
	const char	*errstr;
	int		 a = ar->dialect == DIALECT_ANTHROPIC, r;

	strlcpy(l->handle, ar->who.handle, sizeof(l->handle));
	l->limit = a ? 20 : 100;
	if ((r = fe_reply_query_param(ar, "limit", buf, sizeof(buf))) == -1)
		return -1;
	if (r) {
		l->limit = strtonum(buf, 1, a ? 1000 : 10000, &errstr);
		if (errstr != NULL) {
			fe_reply_error(ar, 400, "limit", "limit must be from 1 to "
			    "%d", a ? 1000 : 10000);
			return -1;
		}
		if (l->limit > 1000)
			l->limit = 1000;
	}
	if ((r = fe_reply_query_param(ar, "order", buf, sizeof(buf))) == -1)
		return -1;
	if (r && strcmp(buf, "asc") != 0 && strcmp(buf, "desc") != 0) {
		fe_reply_error(ar, 400, "order", "order must be asc or desc");
		return -1;
	}
	l->order = r && strcmp(buf, "asc") == 0 ? ORDER_ASC : ORDER_DESC;
	if (fe_reply_query_param(ar, "after", l->after_id, sizeof(l->after_id)) == -1 ||
	    (l->after_id[0] == '\0' && fe_reply_query_param(ar, "after_id",
	    l->after_id, sizeof(l->after_id)) == -1) ||
	    fe_reply_query_param(ar, "before_id", l->before_id,
	    sizeof(l->before_id)) == -1 ||
	    fe_reply_query_param(ar, "purpose", l->purpose, sizeof(l->purpose)) == -1)
		return -1;
	if ((r = fe_reply_query_param(ar, "page", buf, sizeof(buf))) == -1)
		return -1;
	if (r) {
		/* page wins over after_id and before_id. */
		l->after_id[0] = l->before_id[0] = '\0';
		if (list_page_decode(buf, &dir, cursor, sizeof(cursor)) == -1) {
			fe_reply_error(ar, 400, "page", "the page token does not "
			    "decode");
			return -1;
		}
		strlcpy(dir == 'b' ? l->before_id : l->after_id, cursor,
		    IDLEN);
	}
	if (l->after_id[0] && l->before_id[0]) {
		fe_reply_error(ar, 400, "before_id", "use either after_id or "
		    "before_id, not both");
		return -1;
	}
	if ((l->after_id[0] && !id_valid(l->after_id, "file-")) ||
	    (l->before_id[0] && !id_valid(l->before_id, "file-"))) {
		fe_reply_error(ar, 404, l->after_id[0] ? "after_id" : "before_id",
		    "the cursor names no file you can see");
		return -1;
	}
	return list_ids(ar, l);
}

/* --- the page --- */

static void
list_reply(struct api_req *ar, int has_more)
{
	struct fe_list		*al = ar->route;
	struct json_object	*o = json_object_new_object(), *first, *last;
	size_t			 n = json_object_array_length(al->items);
	char			 tok[128];
	int			 a = ar->dialect == DIALECT_ANTHROPIC;

	first = n ? json_object_object_get(json_object_array_get_idx(
	    al->items, 0), "id") : NULL;
	last = n ? json_object_object_get(json_object_array_get_idx(
	    al->items, n - 1), "id") : NULL;
	if (!a)
		json_object_object_add(o, "object",
		    json_object_new_string("list"));
	json_object_object_add(o, "data", al->items);
	al->items = NULL;
	json_object_object_add(o, "first_id", json_object_get(first));
	json_object_object_add(o, "last_id", json_object_get(last));
	json_object_object_add(o, "has_more",
	    json_object_new_boolean(has_more));
	if (a) {
		tok[0] = '\0';
		if (has_more && n > 0) {
			/* Continue the way this page was walked. */
			if (al->req.before_id[0])
				list_page_token(tok, sizeof(tok), 'b',
				    json_object_get_string(first));
			else
				list_page_token(tok, sizeof(tok), 'a',
				    json_object_get_string(last));
		}
		json_object_object_add(o, "next_page", tok[0] ?
		    json_object_new_string(tok) : NULL);
	}
	fe_reply_json(ar, 200, o);
}

static void
list_answered(void *arg, struct imsg *imsg)
{
	struct api_req		*ar = arg;
	struct fe_list		*al = ar->route;
	struct file_rec		 rec;
	struct file_list_end	 end;

	if (imsg->hdr.type == IMSG_FILE_LIST_ITEM) {
		if (imsg->datalen != sizeof(rec))
			fatalx("bad list item");
		memcpy(&rec, imsg->data, sizeof(rec));
		json_object_array_add(al->items, fe_file_object(&rec,
		    ar->dialect));
		return;
	}
	ar->pending = 0;
	if (!fe_reply_storage_ok(ar, imsg, IMSG_FILE_LIST_END, sizeof(end)))
		return;
	memcpy(&end, imsg->data, sizeof(end));
	list_reply(ar, end.has_more);
}

static void
list_free_route(struct api_req *ar)
{
	struct fe_list	*al = ar->route;

	if (al == NULL)
		return;
	if (al->items != NULL)
		json_object_put(al->items);
	free(al);
	ar->route = NULL;
}

static void
list_start(struct api_req *ar)
{
	struct fe_list	*al;

	if ((al = calloc(1, sizeof(*al))) == NULL) {
		fe_reply_error(ar, 503, NULL, "out of memory");
		return;
	}
	ar->route = al;
	ar->free_route = list_free_route;
	if (list_parse(ar, &al->req) == -1)
		return;
	al->items = json_object_new_array();
	if (al->req.nids == -1) {
		list_reply(ar, 0);
		return;
	}
	ar->pending = fe_storage_request(IMSG_FILE_LIST, -1, &al->req,
	    sizeof(al->req), list_answered, ar);
}

/* GET /v1/files */
void
fe_list_route(struct api_req *ar)
{
	fe_authenticate(ar, list_start);
}
