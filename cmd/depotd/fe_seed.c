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
 * fe_seed.c: a request's files go into its sandbox session before the
 * model runs any code: each opened at the storage helper and its
 * descriptor handed to the broker, which streams it with PutFile.  One
 * file at a time, in the order the request names them; the first
 * refusal ends the seeding (and the request gets a 502).
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "fe_model.h"

struct seeding {
	struct api_req		*ar;
	struct fe_broker_lease	*lease;
	const struct fref	*next;
	uint32_t		 open_pending;	/* FILE_OPEN under way */
	int			 seeding;	/* a SEED under way */
	fe_broker_status_cb	 done;
	void			*arg;
};

static void	seed_next(struct seeding *);

static void
seed_end(struct seeding *s, int status, const char *message)
{
	fe_broker_status_cb	 done = s->done;
	void			*arg = s->arg;

	free(s);
	done(arg, status, message);
}

static void
seed_sent(void *arg, int status, const char *message)
{
	struct seeding	*s = arg;

	s->seeding = 0;
	if (status != 0) {
		seed_end(s, status, message);
		return;
	}
	s->next = TAILQ_NEXT(s->next, entry);
	seed_next(s);
}

static void
seed_opened(void *arg, struct imsg *imsg)
{
	struct seeding		*s = arg;
	struct file_opened	 fo;
	char			 msg[256];
	int			 fd;

	s->open_pending = 0;
	if (imsg->hdr.type != IMSG_FILE_OPENED ||
	    imsg->datalen != sizeof(fo) || (fd = imsg_get_fd(imsg)) == -1) {
		snprintf(msg, sizeof(msg), "file %s could not be read for the "
		    "sandbox", s->next->rec.id);
		seed_end(s, 502, msg);
		return;
	}
	memcpy(&fo, imsg->data, sizeof(fo));
	s->seeding = 1;
	fe_broker_seed(s->lease, fd, s->next->seed_name, fo.length, seed_sent,
	    s);
}

static void
seed_next(struct seeding *s)
{
	struct file_open	 fo;

	if (s->next == NULL) {
		seed_end(s, 0, NULL);
		return;
	}
	memset(&fo, 0, sizeof(fo));
	strlcpy(fo.key.handle, s->ar->who.handle, sizeof(fo.key.handle));
	strlcpy(fo.key.id, s->next->rec.id, sizeof(fo.key.id));
	fo.range_first = fo.range_last = -1;
	s->open_pending = fe_storage_request(IMSG_FILE_OPEN, -1, &fo,
	    sizeof(fo), seed_opened, s);
}

struct seeding *
fe_seed(struct api_req *ar, struct fe_broker_lease *lease,
    const struct fref_list *files, fe_broker_status_cb done, void *arg)
{
	struct seeding	*s;

	if (TAILQ_EMPTY(files))
		return NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		fatal("calloc");
	s->ar = ar;
	s->lease = lease;
	s->next = TAILQ_FIRST(files);
	s->done = done;
	s->arg = arg;
	seed_next(s);
	return s;
}

/*
 * Called just before the lease is closed: a file being sent dies with
 * the session, an open under way is dropped when it answers.
 */
void
fe_seed_cancel(struct seeding *s)
{
	if (s == NULL)
		return;
	if (s->open_pending != 0)
		fe_storage_cancel(s->open_pending);
	free(s);
}
