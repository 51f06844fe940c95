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
 * fe_extract.c: a frontend's calls to the extract child (fe_model.h).
 *
 * Each call has a number that travels as the imsg peer id.  The answer
 * carries the read end of pdftotext's output; a call cancelled before
 * it came has its answer dropped, and the descriptor closed, which
 * ends the jail's pdftotext with SIGPIPE.
 */
#include <sys/types.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calltab.h"
#include "log.h"
#include "child.h"
#include "fe_model.h"

struct ex_call {
	struct call_entry	 ce;
	void			(*cb)(void *, int);
	void			*arg;
};

static struct calltab	 ex_calls = CALLTAB_INITIALIZER(ex_calls);
static struct imsgev	 extract_iev;
static int		 extract_attached;

static struct ex_call *
ex_find(uint32_t id)
{
	return CALL_OF(calltab_find(&ex_calls, id), struct ex_call, ce);
}

static void
frontend_dispatch_extract(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	struct extract_res	 res;
	struct ex_call		*c;
	int			 fd;

	/* proto.c: only IMSG_EXTRACTED, of its size. */
	if ((c = ex_find(imsg->hdr.peerid)) == NULL)
		return;		/* cancelled; imsg_free closes the fd */
	memcpy(&res, imsg->data, sizeof(res));
	fd = imsg_get_fd(imsg);
	if (res.status != 0 && fd != -1) {
		close(fd);
		fd = -1;
	}
	calltab_remove(&ex_calls, &c->ce);
	c->cb(c->arg, fd);
	free(c);
}

/*
 * The extract child is gone: every call in flight fails, and so does
 * every later one.  PDFs then get no text; the frontend goes on.
 */
static void
fe_extract_closed(struct imsgev *iev, const char *why, void *arg)
{
	struct ex_call	*c;

	log_warnx("lost the extract child: %s", why);
	extract_attached = 0;
	imsgev_clear(&extract_iev);
	while ((c = CALL_OF(calltab_take_any(&ex_calls), struct ex_call,
	    ce)) != NULL) {
		c->cb(c->arg, -1);
		free(c);
	}
}

void
fe_extract_attach(int fd)
{
	if (extract_attached)
		fatalx("a second extract channel");
	child_peer_init(&extract_iev, ROLE_EXTRACT, fd,
	    frontend_dispatch_extract, fe_extract_closed, NULL);
	extract_attached = 1;
}

uint32_t
fe_extract(int pdf_fd, int pages, int timeout, void (*cb)(void *, int),
    void *arg)
{
	struct extract_req	 req;
	struct ex_call		*c;

	if (!extract_attached) {
		close(pdf_fd);
		cb(arg, -1);
		return 0;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL)
		fatal("calloc");
	c->cb = cb;
	c->arg = arg;
	memset(&req, 0, sizeof(req));
	req.pages = pages;
	req.timeout = timeout;
	calltab_add(&ex_calls, &c->ce);
	if (imsgev_compose(&extract_iev, IMSG_EXTRACT, c->ce.id, 0, pdf_fd,
	    &req, sizeof(req)) == -1)
		fatal("imsg_compose");
	return c->ce.id;
}

void
fe_extract_cancel(uint32_t id)
{
	struct ex_call	*c;

	if ((c = ex_find(id)) != NULL) {
		calltab_remove(&ex_calls, &c->ce);
		free(c);
	}
}
