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
 * store.c: choosing a blob store by URL, and the reference rules every
 * store shares.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

static const struct store_ops *store_backends[] = {
	&store_local_ops,
	&store_s3_ops,
	&store_sftp_ops,
};

struct store *
store_new(struct event_base *base, const struct store_conf *sc,
    const char **why)
{
	const struct store_ops	*ops = NULL;
	struct store		*st;
	size_t			 i, n;

	for (i = 0; i < sizeof(store_backends) / sizeof(store_backends[0]);
	    i++) {
		n = strlen(store_backends[i]->scheme);
		if (strncmp(sc->url, store_backends[i]->scheme, n) == 0 &&
		    strncmp(sc->url + n, "://", 3) == 0) {
			ops = store_backends[i];
			break;
		}
	}
	if (ops == NULL) {
		*why = "unknown storage URL scheme";
		return NULL;
	}
	if ((st = calloc(1, sizeof(*st))) == NULL) {
		*why = "out of memory";
		return NULL;
	}
	st->ops = ops;
	st->base = base;
	if (ops->init(st, sc) == -1) {
		*why = "storage configuration refused";
		free(st);
		return NULL;
	}
	return st;
}

void
store_free(struct store *st)
{
	if (st == NULL)
		return;
	st->ops->free(st);
	free(st);
}

/*
 * A reference is a relative path of plain segments.  Whatever a store
 * joins it to, it can never climb out.
 */
int
store_ref_valid(const char *ref)
{
	const char	*seg, *end;
	size_t		 len;

	if (ref == NULL || ref[0] == '\0' || ref[0] == '/')
		return 0;
	for (seg = ref; ; seg = end + 1) {
		end = strchr(seg, '/');
		len = end ? (size_t)(end - seg) : strlen(seg);
		if (len == 0 || (len == 1 && seg[0] == '.') ||
		    (len == 2 && seg[0] == '.' && seg[1] == '.'))
			return 0;
		if (memchr(seg, '\\', len) != NULL)
			return 0;
		if (end == NULL)
			return 1;
	}
}

/* Blobs are sharded by the first two hex digits of the id's random part. */
void
store_ref_for_id(char *buf, size_t len, const char *id)
{
	const char	*hex = strchr(id, '-');

	hex = hex ? hex + 1 : id;
	snprintf(buf, len, "%.2s/%s", hex, id);
}
