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
 * storage_cntr.h: what storage_container.c and storage_container_attach.c
 * share: the SQL of a container's life and its row as a struct cntr_rec.
 */
#ifndef DEPOTD_STORAGE_CNTR_H
#define DEPOTD_STORAGE_CNTR_H

#define CNTR_LAPSED							\
	"(last_active_at + make_interval(mins => expires_minutes) <= now() " \
	"or expires_at <= now())"
#define CNTR_LIVE	"(state = 'running' and not " CNTR_LAPSED ")"
#define CNTR_OWNED	"user_id = $2 and workspace_id = $3"
#define CNTR_COLS							\
	"id, name, case when state = 'running' and " CNTR_LAPSED	\
	" then 'expired' else state end, memory_limit, "		\
	"coalesce(session_id, ''), expires_minutes, "			\
	"(extract(epoch from created_at) * 1000000)::bigint, "		\
	"(extract(epoch from last_active_at) * 1000000)::bigint, "	\
	"(extract(epoch from least(expires_at, last_active_at + "	\
	"make_interval(mins => expires_minutes))) * 1000000)::bigint"

void	 storage_cntr_from_row(struct cntr_rec *, const PGresult *, int row);

#endif
