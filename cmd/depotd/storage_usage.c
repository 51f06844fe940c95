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
 * storage_usage.c: the model requests' usage rows, from the frontends'
 * batches into PostgreSQL in batches.
 *
 * A frontend sends up to USAGE_BATCH records in one message; each names
 * the handle of its request, and the owner (key, user, workspace) is
 * the handle's, so that a frontend can write rows of its own callers
 * only.  Rows are kept until USAGE_ROWS are waiting or FLUSH_MS passed,
 * then written by one INSERT of unnest()ed arrays; one write is in
 * flight at a time.  Past USAGE_KEEP waiting rows (the database is
 * down) the newest are dropped, and counted in the log.
 */
#include <sys/types.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "util.h"
#include "storage.h"

#define FLUSH_MS	100
#define USAGE_ROWS	USAGE_BATCH	/* written at once when waiting */
#define USAGE_KEEP	65536		/* rows held while the db is away */
#define USAGE_COLS	12

struct usage_row {
	struct principal_ref	 who;
	struct usage_rec	 rec;
};

static struct usage_row	*rows;		/* waiting */
static int		 nrows, maxrows;
static int		 writing;
static int64_t		 dropped;
static struct event	*ev_usage;

/* A frontend's text, cut at its end and at anything but print. */
static void
usage_clean(char *s, size_t len)
{
	size_t	 i;

	s[len - 1] = '\0';
	for (i = 0; s[i] != '\0'; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] == 0x7f)
			s[i] = '?';
}

static void
usage_keep(const struct principal_ref *who, struct usage_rec *rec)
{
	if (nrows >= USAGE_KEEP) {
		dropped++;
		return;
	}
	if (nrows == maxrows) {
		maxrows = maxrows ? maxrows * 2 : USAGE_ROWS;
		if ((rows = reallocarray(rows, maxrows, sizeof(*rows))) ==
		    NULL)
			fatal("reallocarray");
	}
	usage_clean(rec->model, sizeof(rec->model));
	usage_clean(rec->replica, sizeof(rec->replica));
	rows[nrows].who = *who;
	rows[nrows].rec = *rec;
	nrows++;
}

static void	usage_write(void);

void
storage_usage_batch(struct storage_peer *p, struct imsg *imsg)
{
	const struct principal_ref	*who;
	struct usage_rec		 rec;
	size_t				 i, n;

	if (imsg->datalen % sizeof(rec) != 0)
		fatalx("storage: usage batch of %zu bytes", imsg->datalen);
	n = imsg->datalen / sizeof(rec);
	for (i = 0; i < n; i++) {
		memcpy(&rec, (char *)imsg->data + i * sizeof(rec),
		    sizeof(rec));
		rec.handle[sizeof(rec.handle) - 1] = '\0';
		/* Released or lapsed: not a caller of this frontend's. */
		if ((who = storage_auth_handle_ref(p, rec.handle)) == NULL)
			continue;
		usage_keep(who, &rec);
	}
	if (nrows >= USAGE_ROWS)
		usage_write();
}

static const char USAGE_SQL[] =
    "insert into usage (key_id, user_id, workspace_id, model, replica, "
    "tokens_in, tokens_out, status, ttfb_us, duration_us, host, at) "
    "select k, u, w, m, r, ti, tou, s, tt, d, $11, "
    "to_timestamp(a / 1000000.0) from unnest($1::text[], $2::text[], "
    "$3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], "
    "$8::int[], $9::bigint[], $10::bigint[], $12::bigint[]) "
    "as x(k, u, w, m, r, ti, tou, s, tt, d, a)";

static void
usage_written(void *arg, const PGresult *res)
{
	int	 n = (int)(intptr_t)arg;

	writing = 0;
	if (res == NULL || PQresultStatus(res) != PGRES_COMMAND_OK) {
		log_warnx("usage: %d rows kept for later: %s", n, res ==
		    NULL ? "database unavailable" :
		    PQresultErrorMessage(res));
		return;
	}
	memmove(rows, rows + n, (nrows - n) * sizeof(*rows));
	nrows -= n;
}

/* -1 (unknown) is SQL null. */
static const char *
num_or_null(char *buf, int64_t v)
{
	if (v < 0)
		return NULL;
	snprintf(buf, 24, "%" PRId64, v);
	return buf;
}

static void
usage_columns(int n, const char **col[USAGE_COLS], char *num)
{
	const struct usage_row	*r;
	char			*b;
	int			 i;

	for (i = 0; i < n; i++) {
		r = &rows[i];
		b = num + i * 6 * 24;
		col[0][i] = r->who.key_id;
		col[1][i] = r->who.owner.user_id;
		col[2][i] = r->who.owner.workspace_id;
		col[3][i] = r->rec.model;
		col[4][i] = r->rec.replica;
		col[5][i] = num_or_null(b, r->rec.tokens_in);
		col[6][i] = num_or_null(b + 24, r->rec.tokens_out);
		col[7][i] = num_or_null(b + 48, r->rec.status);
		col[8][i] = num_or_null(b + 72, r->rec.ttfb_us);
		col[9][i] = num_or_null(b + 96, r->rec.duration_us < 0 ? 0 :
		    r->rec.duration_us);
		col[11][i] = num_or_null(b + 120, r->rec.time_us);
	}
}

static void
usage_write(void)
{
	const char	**col[USAGE_COLS];
	const char	 *params[USAGE_COLS];
	char		 *arr[USAGE_COLS], *num;
	int		  i, n = nrows > USAGE_KEEP / 16 ? USAGE_KEEP / 16 : nrows;

	if (writing || n == 0 || !db_up(storage.db))
		return;
	memset(arr, 0, sizeof(arr));
	for (i = 0; i < USAGE_COLS; i++)
		if ((col[i] = calloc(n, sizeof(char *))) == NULL)
			fatal("calloc");
	if ((num = calloc(n, 6 * 24)) == NULL)
		fatal("calloc");
	usage_columns(n, col, num);
	for (i = 0; i < USAGE_COLS; i++)
		if (i != 10 && (arr[i] = db_batch_array(col[i], n)) == NULL)
			fatal("db_batch_array");
	for (i = 0; i < USAGE_COLS; i++)
		params[i] = arr[i];
	params[10] = storage.host;
	if (db_query(storage.db, USAGE_SQL, USAGE_COLS, params, usage_written,
	    (void *)(intptr_t)n) == 0)
		writing = 1;
	for (i = 0; i < USAGE_COLS; i++) {
		free(arr[i]);
		free(col[i]);
	}
	free(num);
}

static void
usage_timer(evutil_socket_t fd, short what, void *arg)
{
	struct timeval	 tv = { 0, FLUSH_MS * 1000 };

	if (dropped > 0) {
		log_warnx("usage: %" PRId64 " rows dropped while the "
		    "database was away", dropped);
		dropped = 0;
	}
	usage_write();
	evtimer_add(ev_usage, &tv);
}

void
storage_usage_init(void)
{
	struct timeval	 tv = { 0, FLUSH_MS * 1000 };

	if ((ev_usage = evtimer_new(storage.base, usage_timer, NULL)) ==
	    NULL)
		fatal("evtimer_new");
	evtimer_add(ev_usage, &tv);
}
