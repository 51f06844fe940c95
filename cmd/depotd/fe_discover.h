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
 * fe_discover.h: what each upstream says it is and takes (fe_discover.c).
 */
#ifndef DEPOTD_FE_DISCOVER_H
#define DEPOTD_FE_DISCOVER_H

#include <stdint.h>

struct model_conf;

enum disc_server {
	DISC_NONE,		/* not asked, or no known answer */
	DISC_LLAMACPP,		/* GET /props */
	DISC_VLLM,		/* GET /v1/models with max_model_len */
	DISC_OLLAMA,		/* POST /api/show */
};

struct disc_caps {
	enum disc_server	 server;
	int			 vision;	/* 1, 0, -1 unknown */
	int			 pdf;		/* 1, 0, -1 unknown */
	int64_t			 n_ctx;		/* 0 unknown */
	int			 template;	/* names a chat template */
	char			 source[160];	/* the URL that said so */
};

/* At start and at each reload: forget what was learnt, ask again. */
void		 fe_discover_start(void);
/* What the model's upstream said of it, NULL when nothing. */
const struct disc_caps *fe_discover_caps(const struct model_conf *);
/*
 * A request's copy of its model, with what discovery learnt where the
 * configuration says nothing: no vision makes it text-only and
 * refuses images; no PDF input makes PDFs text.
 */
void		 fe_discover_apply(struct model_conf *);
const char	*fe_discover_server_name(enum disc_server);
/* One line per configured model, for depotctl show models. */
void		 fe_discover_lines(void (*)(void *, const char *), void *);

#endif
