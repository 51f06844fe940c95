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
 * fe_file_object.c: the Files API's file object, in OpenAI's and
 * Anthropic's shapes, as retrieve, upload and list answer it.
 */
#include <sys/types.h>

#include <stdint.h>

#include <json-c/json.h>

#include "util.h"
#include "frontend.h"

static struct json_object *
fe_file_object_time(int64_t usec, int anthropic)
{
	char	 buf[RFC3339_LEN];

	if (usec == 0)
		return NULL;
	if (!anthropic)
		return json_object_new_int64(usec / 1000000);
	time_rfc3339_usec(usec, buf, sizeof(buf));
	return json_object_new_string(buf);
}

struct json_object *
fe_file_object(const struct file_rec *rec, enum dialect d)
{
	struct json_object	*o = json_object_new_object();
	int			 a = d == DIALECT_ANTHROPIC;

	json_object_object_add(o, "id", json_object_new_string(rec->id));
	if (a) {
		json_object_object_add(o, "type",
		    json_object_new_string("file"));
		json_object_object_add(o, "filename",
		    json_object_new_string(rec->filename));
		json_object_object_add(o, "mime_type",
		    json_object_new_string(rec->mime_type));
		json_object_object_add(o, "size_bytes",
		    json_object_new_int64(rec->bytes));
		json_object_object_add(o, "created_at",
		    fe_file_object_time(rec->created_us, 1));
		json_object_object_add(o, "expires_at",
		    fe_file_object_time(rec->expires_us, 1));
		json_object_object_add(o, "downloadable",
		    json_object_new_boolean(1));
		return o;
	}
	json_object_object_add(o, "object", json_object_new_string("file"));
	json_object_object_add(o, "bytes", json_object_new_int64(rec->bytes));
	json_object_object_add(o, "created_at",
	    fe_file_object_time(rec->created_us, 0));
	json_object_object_add(o, "expires_at",
	    fe_file_object_time(rec->expires_us, 0));
	json_object_object_add(o, "filename",
	    json_object_new_string(rec->filename));
	json_object_object_add(o, "purpose",
	    json_object_new_string(rec->purpose));
	json_object_object_add(o, "status",
	    json_object_new_string("processed"));
	json_object_object_add(o, "status_details", NULL);
	return o;
}
