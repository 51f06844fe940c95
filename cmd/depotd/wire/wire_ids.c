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
 * wire_ids.c: an answer's id in the caller's dialect.  A Messages
 * answer's id begins "msg_", a chat completion's "chatcmpl-", a
 * response's "resp_", whatever the upstream sent: llama-server's
 * Messages endpoint, for one, answers with its chat completion's id.
 * An upstream id already in the dialect is kept, so that the caller's
 * id can be found in the upstream's logs.
 */
#include <stddef.h>
#include <string.h>

#include <json-c/json.h>

#include "util.h"
#include "wire.h"

const char *
wire_id_prefix(enum wire w)
{
	switch (w) {
	case WIRE_CHAT:
		return "chatcmpl-";
	case WIRE_RESPONSES:
		return "resp_";
	case WIRE_MESSAGES:
		break;
	}
	return "msg_";
}

/*
 * The id for an answer whose upstream id is up (NULL: none), written
 * into buf (len at least ID_BUFSIZE): up itself when it is in the
 * dialect and fits, else a new one.
 */
void
wire_id_choose(enum wire w, const char *up, char *buf, size_t len)
{
	const char	*prefix = wire_id_prefix(w);
	size_t		 plen = strlen(prefix);

	if (up != NULL && strncmp(up, prefix, plen) == 0 &&
	    strlen(up) > plen && strlen(up) < len &&
	    strspn(up + plen, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == strlen(up + plen)) {
		strlcpy(buf, up, len);
		return;
	}
	id_new(buf, len, prefix);
}

/* obj's "id" (an answer's, a chunk's), put in dialect w. */
void
wire_id_fix(enum wire w, struct json_object *obj)
{
	struct json_object	*v;
	char			 id[ID_BUFSIZE];

	if (!json_object_is_type(obj, json_type_object))
		return;
	v = NULL;
	json_object_object_get_ex(obj, "id", &v);
	wire_id_choose(w, json_object_is_type(v, json_type_string) ?
	    json_object_get_string(v) : NULL, id, sizeof(id));
	json_object_object_add(obj, "id", json_object_new_string(id));
}
