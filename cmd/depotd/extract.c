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
 * extract.c: the extract process, which turns PDFs into text.
 *
 * It holds no secret and no configuration.  A frontend sends
 * IMSG_EXTRACT with the PDF's descriptor and its bounds; the child
 * starts pdftotext in a bubblewrap jail (extract_jail.c) and answers
 * at once with IMSG_EXTRACTED carrying the read end of the jail's
 * output, so that the text flows to the frontend as it is made and
 * the frontend decides how much of it to read.  A timer kills a jail
 * that outlives its time; SIGCHLD reaps it.  At most EXTRACT_RUNNING
 * jails run at once; more requests wait, up to EXTRACT_QUEUED.
 *
 * It has no Landlock file rules, since they forbid the mounts
 * bubblewrap makes (lockdown_policy.c); see depotd(8).
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "child.h"
#include "extract.h"

#define EXTRACT_RUNNING		4	/* jails at once */
#define EXTRACT_QUEUED		64	/* requests waiting for one */

struct extract_peer {
	int			 instance;	/* the frontend's */
	struct imsgev		 iev;
};

struct extract_job {
	TAILQ_ENTRY(extract_job) entry;
	struct extract_peer	*peer;		/* NULL: the caller left */
	uint32_t		 id;		/* the caller's call number */
	int			 pdf_fd;
	int			 pages;
	int			 timeout;
	pid_t			 pid;		/* 0 while queued */
	struct event		*timer;
};
TAILQ_HEAD(extract_job_list, extract_job);

static struct extract_job_list	 queued = TAILQ_HEAD_INITIALIZER(queued);
static struct extract_job_list	 running = TAILQ_HEAD_INITIALIZER(running);
static int			 nqueued, nrunning;
static struct event	*ev_sigchld;

static void
extract_reply(struct extract_peer *p, uint32_t id, int status, int fd)
{
	struct extract_res	 res;

	memset(&res, 0, sizeof(res));
	res.status = status;
	if (p == NULL || imsgev_compose(&p->iev, IMSG_EXTRACTED, id, 0, fd,
	    &res, sizeof(res)) == -1) {
		if (p != NULL)
			log_warn("imsg_compose");
		if (fd != -1)
			close(fd);
	}
}

static void
extract_job_free(struct extract_job *j)
{
	if (j->timer != NULL)
		event_free(j->timer);
	if (j->pdf_fd != -1)
		close(j->pdf_fd);
	free(j);
}

/* The timer: the whole group, bwrap and what runs in its jail. */
static void
extract_job_expired(evutil_socket_t fd, short what, void *arg)
{
	struct extract_job	*j = arg;

	log_info("extract %u: over %d s, killed", j->id, j->timeout);
	if (j->pid > 1 && kill(-j->pid, SIGKILL) == -1 && errno != ESRCH)
		log_warn("kill %d", (int)j->pid);
}

/* 0 when the jail runs and the caller has its output; -1 otherwise. */
static int
extract_job_start(struct extract_job *j)
{
	struct timeval	 tv = { j->timeout, 0 };
	int		 p[2];

	if (pipe2(p, O_CLOEXEC) == -1) {
		log_warn("pipe2");
		return -1;
	}
	if ((j->pid = extract_jail_start(j->pdf_fd, p[1], j->pages,
	    j->timeout)) == -1) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	close(p[1]);
	close(j->pdf_fd);
	j->pdf_fd = -1;
	if ((j->timer = evtimer_new(child_base(), extract_job_expired,
	    j)) == NULL || evtimer_add(j->timer, &tv) == -1)
		fatalx("evtimer");
	extract_reply(j->peer, j->id, 0, p[0]);
	return 0;
}

/* Starts queued jobs while there is room. */
static void
extract_job_next(void)
{
	struct extract_job	*j;

	while (nrunning < EXTRACT_RUNNING && (j = TAILQ_FIRST(&queued))) {
		TAILQ_REMOVE(&queued, j, entry);
		nqueued--;
		if (j->peer == NULL || extract_job_start(j) == -1) {
			extract_reply(j->peer, j->id, -1, -1);
			extract_job_free(j);
			continue;
		}
		TAILQ_INSERT_TAIL(&running, j, entry);
		nrunning++;
	}
}

static void
on_sigchld(evutil_socket_t sig, short what, void *arg)
{
	struct extract_job	*j;
	pid_t			 pid;
	int			 status;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		TAILQ_FOREACH(j, &running, entry)
			if (j->pid == pid)
				break;
		if (j == NULL)
			continue;
		if (WIFSIGNALED(status) || WEXITSTATUS(status) != 0)
			log_debug("extract %u: %s %d", j->id,
			    WIFSIGNALED(status) ? "signal" : "status",
			    WIFSIGNALED(status) ? WTERMSIG(status) :
			    WEXITSTATUS(status));
		/* What is left in the jail dies with bwrap. */
		TAILQ_REMOVE(&running, j, entry);
		nrunning--;
		extract_job_free(j);
	}
	extract_job_next();
}

/* Bounds the caller's bounds: a frontend is not trusted with them. */
static int
clamp(int v, int max)
{
	return v < 1 ? 1 : v > max ? max : v;
}

static int
programs_there(void)
{
	static int	 logged;
	const char	*missing;

	if (extract_jail_check(&missing) == 0)
		return 1;
	if (!logged)
		log_warnx("%s is missing: PDFs get no text (install "
		    "bubblewrap and poppler-utils)", missing);
	logged = 1;
	return 0;
}

static void
extract_request(struct extract_peer *p, struct imsg *imsg)
{
	struct extract_req	 req;
	struct extract_job	*j;
	int			 fd = imsg_get_fd(imsg);

	memcpy(&req, imsg->data, sizeof(req));
	if (!programs_there() || nqueued >= EXTRACT_QUEUED) {
		if (nqueued >= EXTRACT_QUEUED)
			log_warnx("extract: %d requests waiting; refused",
			    nqueued);
		close(fd);
		extract_reply(p, imsg->hdr.peerid, -1, -1);
		return;
	}
	if ((j = calloc(1, sizeof(*j))) == NULL)
		fatal("calloc");
	j->peer = p;
	j->id = imsg->hdr.peerid;
	j->pdf_fd = fd;
	j->pages = clamp(req.pages, EXTRACT_PAGES_MAX);
	j->timeout = clamp(req.timeout, EXTRACT_TIMEOUT_MAX);
	TAILQ_INSERT_TAIL(&queued, j, entry);
	nqueued++;
	extract_job_next();
}

static void
extract_dispatch_frontend(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	/* proto.c: only IMSG_EXTRACT, with its size and a descriptor. */
	extract_request(arg, imsg);
}

/*
 * A frontend went away: its waiting requests are dropped and its
 * running jails killed, since no one reads what they write.
 */
static void
extract_peer_closed(struct imsgev *iev, const char *why, void *arg)
{
	struct extract_peer	*p = arg;
	struct extract_job	*j;

	TAILQ_FOREACH(j, &queued, entry)
		if (j->peer == p)
			j->peer = NULL;
	TAILQ_FOREACH(j, &running, entry)
		if (j->peer == p) {
			j->peer = NULL;
			if (j->pid > 1)
				kill(-j->pid, SIGKILL);
		}
	imsgev_clear(&p->iev);
	free(p);
	extract_job_next();
}

static void
extract_add_peer(enum proc_role role, int instance, int fd)
{
	struct extract_peer	*p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		fatal("calloc");
	p->instance = instance;
	child_peer_init(&p->iev, role, fd, extract_dispatch_frontend,
	    extract_peer_closed, p);
}

static void
extract_start(void)
{
	ev_sigchld = evsignal_new(child_base(), SIGCHLD, on_sigchld, NULL);
	if (ev_sigchld == NULL || evsignal_add(ev_sigchld, NULL) == -1)
		fatalx("evsignal SIGCHLD");
	programs_there();
}

/* SIGTERM: no jail outlives the child. */
static void
extract_shutdown(void)
{
	struct extract_job	*j;

	TAILQ_FOREACH(j, &running, entry)
		if (j->pid > 1)
			kill(-j->pid, SIGKILL);
}

static const struct child_ops extract_ops = {
	.peer = extract_add_peer,
	.prepare = extract_jail_prepare,
	.start = extract_start,
	.shutdown = extract_shutdown,
};

void
extract_main(int instance, int debug, int verbose)
{
	child_run(ROLE_EXTRACT, instance, &extract_ops, debug, verbose);
}
