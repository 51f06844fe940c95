/* fuzz-sources: lib/http_query.c */
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
 * fuzz_query.c: query strings as callers send them to GET /v1/files
 * (limit, order, after, page, ids repeated or comma-separated) through
 * http_query_param, the decoder every route uses.  Each parameter is
 * read into a buffer of a size the input chooses, every occurrence in
 * turn; the decoded value must fit and never carry a NUL inside.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"

static const char *names[] = {
	"limit", "order", "after", "after_id", "before_id", "page", "ids",
	"ids[]", "purpose", "user", "workspace", "beta", "",
};

static void
read_all(const char *query, const char *name, size_t buflen)
{
	char		*buf;
	const char	*from = NULL;
	ssize_t		 n;
	int		 rounds = 0;

	if ((buf = malloc(buflen)) == NULL)
		return;
	while ((n = http_query_param(query, name, buf, buflen, &from)) != -1) {
		if (n >= 0) {
			if ((size_t)n >= buflen || buf[n] != '\0' ||
			    strlen(buf) != (size_t)n)
				abort();
		}
		/* Each match moves on: no query yields more than its length. */
		if (++rounds > (int)strlen(query) + 1)
			abort();
		if (from == NULL)
			break;
	}
	free(buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	*query;
	size_t	 i, buflen;

	if (size < 1)
		return 0;
	buflen = 1 + data[0] % 64;
	if ((query = malloc(size)) == NULL)
		return 0;
	memcpy(query, data + 1, size - 1);
	query[size - 1] = '\0';
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		read_all(query, names[i], buflen);
	free(query);
	return 0;
}
