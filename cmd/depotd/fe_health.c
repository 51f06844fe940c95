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
 * fe_health.c: GET /healthz: the storage helper asked whether the
 * database and the blob store answer, and the frontend's own word.
 */
#include <sys/types.h>

#include <string.h>

#include <json-c/json.h>

#include "log.h"
#include "frontend.h"

int
fe_health_read(struct api_req *ar, struct imsg *imsg, struct health_msg *hm)
{
	ar->pending = 0;
	if (imsg->hdr.type != IMSG_HEALTH || imsg->datalen != sizeof(*hm))
		fatalx("bad health reply");
	memcpy(hm, imsg->data, sizeof(*hm));
	return hm->db_up && hm->store_up;
}

static void
fe_health_done(void *arg, struct imsg *imsg)
{
	struct api_req		*ar = arg;
	struct health_msg	 hm;
	struct json_object	*o, *procs;
	int			 ok = fe_health_read(ar, imsg, &hm);

	o = json_object_new_object();
	json_object_object_add(o, "status",
	    json_object_new_string(ok ? "ok" : "unavailable"));
	procs = json_object_new_object();
	json_object_object_add(procs, "frontend", json_object_new_string("up"));
	json_object_object_add(procs, "storage", json_object_new_string("up"));
	json_object_object_add(o, "processes", procs);
	json_object_object_add(o, "frontend", json_object_new_int(fe.instance));
	json_object_object_add(o, "database",
	    json_object_new_string(hm.db_up ? "up" : "down"));
	json_object_object_add(o, "store",
	    json_object_new_string(hm.store_up ? "up" : "down"));
	fe_reply_json(ar, ok ? 200 : 503, o);
}

void
fe_health_route(struct api_req *ar)
{
	ar->req->route = "healthz";
	if (ar->req->method != HTTP_M_GET && ar->req->method != HTTP_M_HEAD) {
		fe_reply_error(ar, 405, NULL, "use GET");
		return;
	}
	ar->pending = fe_storage_request(IMSG_HEALTH_REQ, -1, NULL, 0,
	    fe_health_done, ar);
}
