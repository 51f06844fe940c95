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
 * fe_count.h: POST /v1/messages/count_tokens counted by the model's
 * own upstream (fe_count.c).
 */
#ifndef DEPOTD_FE_COUNT_H
#define DEPOTD_FE_COUNT_H

#include <stdint.h>

struct api_req;
struct json_object;
struct model_conf;

/* status: what the caller got; tokens: the count, -1 when none. */
typedef void	(*fe_count_done_cb)(void *arg, int status, int64_t tokens);

struct fe_count;
/*
 * Counts the Messages request req (file references already resolved)
 * with the upstream's tokenizer, and answers the caller: 200
 * {input_tokens}, or a 400 when the upstream exposes no tokenizer, a
 * 502 when it fails.  done runs once, after the answer; NULL when the
 * caller was answered already (done does not run).
 */
struct fe_count	*fe_count_start(struct api_req *, const struct model_conf *,
		    struct json_object *req, fe_count_done_cb, void *);
/* No answer and no callback after this. */
void		 fe_count_free(struct fe_count *);

#endif
