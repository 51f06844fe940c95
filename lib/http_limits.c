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
 * http_limits.c: the HTTP layer's default limits, the one copy of them:
 * depotd's configuration starts from these too.  A file of its own so
 * that what reads the configuration links without the server.
 */
#include <sys/types.h>

#include "http.h"

void
http_limits_default(struct http_limits *l)
{
	l->max_header_bytes = 16 * 1024;
	l->max_headers = 100;
	l->max_uri = 8 * 1024;
	l->header_timeout = 10;
	l->idle_timeout = 60;
	l->body_timeout = 60;
	l->min_body_rate = 1024;
	l->linger_timeout = 5;
	l->max_conns = 1024;
	l->max_conns_per_addr = 64;
	l->read_watermark = 1024 * 1024;
	l->write_watermark = 256 * 1024;
	l->max_request_size = 32LL * 1024 * 1024;
}
