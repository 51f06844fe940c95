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
 * fe_reply.c: the two dialects, and errors in each provider's own
 * envelope so that each SDK raises its proper exception.
 */
#include <sys/types.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "log.h"
#include "frontend.h"
#include "fe_model.h"

/*
 * Anthropic when the request carries anthropic-version, or an
 * anthropic-beta with a value starting files-api.
 */
enum dialect
fe_reply_dialect(const struct http_request *req)
{
	const char	*beta, *p;

	if (http_header_get(req, "anthropic-version") != NULL)
		return DIALECT_ANTHROPIC;
	if ((beta = http_header_get(req, "anthropic-beta")) == NULL)
		return DIALECT_OPENAI;
	for (p = beta; p != NULL; p = strchr(p, ',')) {
		if (*p == ',')
			p++;
		p += strspn(p, " \t");
		if (strncmp(p, "files-api", 9) == 0)
			return DIALECT_ANTHROPIC;
	}
	return DIALECT_OPENAI;
}

/*
 * OpenAI's code for a 413 is the Files API's, file_too_large, when the
 * file is what was too large (param "file", an upload); a model
 * route's body over its cap has none.
 */
static int
openai_file_too_large(int status, const char *param)
{
	return status == 413 && param != NULL && strcmp(param, "file") == 0;
}

/*
 * The answer when there is no memory left to make one: constant text,
 * so that a request the frontend cannot allocate for still ends with
 * a 503 in its dialect (frontend.h).
 */
static void
fe_reply_nomem(struct api_req *ar)
{
	static const char	 openai[] = "{\"error\":{\"message\":"
	    "\"out of memory\",\"type\":\"server_error\",\"param\":null,"
	    "\"code\":null}}";
	static const char	 anthropic[] = "{\"type\":\"error\",\"error\":"
	    "{\"type\":\"api_error\",\"message\":\"out of memory\"}}";

	if (ar->dialect == DIALECT_ANTHROPIC)
		http_reply(ar->req, 503, "application/json", anthropic,
		    sizeof(anthropic) - 1);
	else
		http_reply(ar->req, 503, "application/json", openai,
		    sizeof(openai) - 1);
}

void
fe_reply_json(struct api_req *ar, int status, struct json_object *obj)
{
	const char	*text = NULL;
	size_t		 len;

	if (obj != NULL)
		text = json_object_to_json_string_length(obj,
		    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
		    &len);
	if (text == NULL)
		fe_reply_nomem(ar);
	else
		http_reply(ar->req, status, "application/json", text, len);
	json_object_put(obj);
}

/* json_object_object_add with every part checked; -1 puts v. */
static int
add(struct json_object *o, const char *key, struct json_object *v,
    int nullable)
{
	if (o == NULL || (v == NULL && !nullable) ||
	    json_object_object_add(o, key, v) == -1) {
		json_object_put(v);
		return -1;
	}
	return 0;
}

/*
 * The error envelope with its types given: OpenAI's type and code
 * (NULL: null), Anthropic's type.
 */
static void
fe_reply_error_body(struct api_req *ar, int status, const char *param,
    const char *oa_type, const char *oa_code, const char *an_type,
    const char *msg)
{
	struct json_object	*root, *err;

	err = json_object_new_object();
	root = json_object_new_object();
	if (ar->dialect == DIALECT_ANTHROPIC) {
		if (add(root, "type", json_object_new_string("error"), 0) ||
		    add(err, "type", json_object_new_string(an_type), 0) ||
		    add(err, "message", json_object_new_string(msg), 0))
			goto nomem;
	} else {
		if (add(err, "message", json_object_new_string(msg), 0) ||
		    add(err, "type", json_object_new_string(oa_type), 0) ||
		    add(err, "param", param ? json_object_new_string(param) :
		    NULL, param == NULL) ||
		    add(err, "code", oa_code ? json_object_new_string(oa_code) :
		    NULL, oa_code == NULL))
			goto nomem;
	}
	if (add(root, "error", err, 0) == -1) {
		err = NULL;	/* put by add */
		goto nomem;
	}
	fe_reply_json(ar, status, root);
	return;
nomem:
	json_object_put(err);
	json_object_put(root);
	fe_reply_nomem(ar);
}

void
fe_reply_error(struct api_req *ar, int status, const char *param,
    const char *fmt, ...)
{
	char			 msg[512];
	va_list			 ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fe_reply_error_body(ar, status, param, wire_error_type_openai(status),
	    openai_file_too_large(status, param) ? "file_too_large" : NULL,
	    wire_error_type_anthropic(status), msg);
}

void
fe_reply_error_typed(struct api_req *ar, int status, const char *oa_type,
    const char *oa_code, const char *an_type, const char *msg)
{
	fe_reply_error_body(ar, status, NULL, oa_type, oa_code, an_type, msg);
}

static void
fe_reply_storage_error(struct api_req *ar, struct imsg *imsg)
{
	struct error_msg	 em;

	if (imsg->hdr.type != IMSG_ERROR || imsg->datalen != sizeof(em)) {
		fe_reply_error(ar, 500, NULL, "unexpected reply from storage");
		return;
	}
	memcpy(&em, imsg->data, sizeof(em));
	em.message[sizeof(em.message) - 1] = '\0';
	if (em.status == 429 || em.status == 503)
		http_reply_header(ar->req, "retry-after", "1");
	fe_reply_error(ar, em.status, NULL, "%s", em.message);
}

/*
 * Every reply from storage is either the one expected or an error;
 * an error is answered here.  Anything else is a broken helper.
 */
int
fe_reply_storage_ok(struct api_req *ar, struct imsg *imsg, uint32_t want,
    size_t size)
{
	if (imsg->hdr.type == IMSG_ERROR) {
		fe_reply_storage_error(ar, imsg);
		return 0;
	}
	if (imsg->hdr.type != want || imsg->datalen != size)
		fatalx("unexpected storage reply %u", imsg->hdr.type);
	return 1;
}

/*
 * A query parameter into buf: 1 when present, 0 when absent; when it
 * does not decode or fit, the 400 is answered here and -1 returned.
 */
int
fe_reply_query_param(struct api_req *ar, const char *name, char *buf,
    size_t len)
{
	ssize_t	 n = http_query_param(ar->req->query, name, buf, len, NULL);

	if (n == -2) {
		fe_reply_error(ar, 400, name, "%s is malformed", name);
		return -1;
	}
	return n >= 0;
}
