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
 * master_control.c: the master's control socket, for depotctl.
 *
 * Only root may talk to it (checked with SO_PEERCRED, whatever the
 * socket's mode).  Commands the master can answer itself are answered
 * here; the rest (users, keys, sweep, database status) go to the
 * storage helper, and its replies are relayed back by client number.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "calltab.h"
#include "log.h"
#include "util.h"
#include "depotd.h"
#include "master.h"
#include "confine.h"

struct ctl_conn {
	struct call_entry	 ce;		/* id: the client's number */
	struct imsgev		 iev;
	int			 waiting;	/* a relayed command runs */
	const struct child_proc	*answerer;	/* the child it went to */
	uint32_t		 reload;	/* generation awaited, or 0 */
};

/* The clients, by the number their relayed commands carry. */
static struct calltab		 ctl_conns = CALLTAB_INITIALIZER(ctl_conns);
static struct event		*ev_control;
static char			 control_path[1024];
static int			 control_fd = -1;

static struct ctl_conn *
control_find(uint32_t id)
{
	return CALL_OF(calltab_find(&ctl_conns, id), struct ctl_conn, ce);
}

static void
control_close(struct ctl_conn *c)
{
	calltab_remove(&ctl_conns, &c->ce);
	imsgev_clear(&c->iev);
	free(c);
}

static void
control_line(struct ctl_conn *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
control_line(struct ctl_conn *c, const char *fmt, ...)
{
	char	 line[CTL_LINE_MAX];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	imsgev_compose(&c->iev, IMSG_CTL_LINE, 0, 0, -1, line,
	    strlen(line) + 1);
}

static void
control_end(struct ctl_conn *c, int status)
{
	int32_t	 s = status;

	imsgev_compose(&c->iev, IMSG_CTL_END, 0, 0, -1, &s, sizeof(s));
}

static void
control_forward(struct ctl_conn *c, const struct ctl_cmd *cmd)
{
	struct child_proc	*storage = master_storage();

	if (storage == NULL || !storage->ready) {
		control_line(c, "storage helper not ready");
		control_end(c, 1);
		return;
	}
	c->waiting = 1;
	c->answerer = storage;
	imsgev_compose(&storage->iev, IMSG_CTL_CMD, c->ce.id, 0, -1, cmd,
	    sizeof(*cmd));
}

/* A frontend knows what discovery learnt: the first one that is up. */
static void
control_forward_frontend(struct ctl_conn *c, const struct ctl_cmd *cmd)
{
	struct child_proc	*cp;

	TAILQ_FOREACH(cp, &master.children, entry)
		if (cp->role == ROLE_FRONTEND && cp->ready && cp->pid > 0)
			break;
	if (cp == NULL) {
		control_line(c, "no frontend ready");
		control_end(c, 1);
		return;
	}
	c->waiting = 1;
	c->answerer = cp;
	imsgev_compose(&cp->iev, IMSG_CTL_CMD, c->ce.id, 0, -1, cmd,
	    sizeof(*cmd));
}

static void
control_status(struct ctl_conn *c, const struct ctl_cmd *cmd)
{
	struct child_proc	*cp;
	time_t			 now = time(NULL);

	control_line(c, "%-10s %-8s %-8s %s", "ROLE", "INSTANCE", "PID",
	    "UPTIME");
	control_line(c, "%-10s %-8d %-8d %llds", "master", 0, (int)getpid(),
	    (long long)(now - master.started));
	TAILQ_FOREACH(cp, &master.children, entry)
		control_line(c, "%-10s %-8d %-8d %llds%s", role_name(cp->role),
		    cp->instance, (int)cp->pid,
		    (long long)(now - cp->started),
		    cp->pid == 0 ? " (being replaced)" :
		    cp->ready ? "" : " (starting)");
	control_line(c, "confinement %s", confine_status());
	control_forward(c, cmd);
}

static void
control_command(struct ctl_conn *c, const struct ctl_cmd *cmd)
{
	char	 why[512];

	switch (cmd->type) {
	case CTL_STATUS:
		control_status(c, cmd);
		break;
	case CTL_RELOAD:
		/* Answered once every child has applied it. */
		if ((c->reload = master_reload(why, sizeof(why))) != 0) {
			c->waiting = 1;
			break;
		}
		control_line(c, "%s", why);
		control_end(c, 1);
		break;
	case CTL_LOG_VERBOSE:
	case CTL_LOG_BRIEF:
		master_set_verbose(cmd->type == CTL_LOG_VERBOSE ? 2 : 0);
		log_info("log %s", cmd->type == CTL_LOG_VERBOSE ?
		    "verbose" : "brief");
		control_line(c, "logging %s", cmd->type == CTL_LOG_VERBOSE ?
		    "verbose" : "brief");
		control_end(c, 0);
		break;
	case CTL_USER_ADD:
	case CTL_USER_LIST:
	case CTL_WORKSPACE_ADD:
	case CTL_WORKSPACE_LIST:
	case CTL_KEY_CREATE:
	case CTL_KEY_LIST:
	case CTL_KEY_REVOKE:
	case CTL_SWEEP:
	case CTL_CONTAINER_LIST:
	case CTL_CONTAINER_SHOW:
	case CTL_CONTAINER_DESTROY:
	case CTL_LIMITS_SET:
	case CTL_LIMITS_SHOW:
	case CTL_USAGE:
		control_forward(c, cmd);
		break;
	case CTL_SHOW_MODELS:
		control_forward_frontend(c, cmd);
		break;
	default:
		control_line(c, "unknown command");
		control_end(c, 1);
		break;
	}
}

static void
master_dispatch_control(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	struct ctl_conn	*c = arg;
	struct ctl_cmd	 cmd;

	/* proto_ctl_request checked type and size; one command at a time. */
	if (c->waiting) {
		log_warnx("control: bad message, disconnecting client");
		control_close(c);
		return;
	}
	memcpy(&cmd, imsg->data, sizeof(cmd));
	control_command(c, &cmd);
	explicit_bzero(&cmd, sizeof(cmd));
}

static void
control_closed(struct imsgev *iev, const char *why, void *arg)
{
	control_close(arg);
}

void
master_control_relay(const struct child_proc *cp, struct imsg *imsg)
{
	struct ctl_conn	*c;

	if ((c = control_find(imsg->hdr.peerid)) == NULL)
		return;		/* the client left meanwhile */
	/* Only the child the command went to answers it. */
	if (!c->waiting || c->answerer != cp) {
		log_warnx("control: a reply from %s %d for a command not its "
		    "own, dropped", role_name(cp->role), cp->instance);
		return;
	}
	imsgev_compose(&c->iev, imsg->hdr.type, 0, 0, -1, imsg->data,
	    imsg->datalen);
	if (imsg->hdr.type == IMSG_CTL_END)
		c->waiting = 0;
}

void
master_control_reload_acked(uint32_t generation)
{
	struct call_entry	*e;
	struct ctl_conn		*c;

	for (e = calltab_first(&ctl_conns); e != NULL;
	    e = calltab_next(&ctl_conns, e)) {
		c = CALL_OF(e, struct ctl_conn, ce);
		if (c->reload == 0 || c->reload > generation)
			continue;
		control_line(c, "reloaded %s", master.conffile);
		control_end(c, 0);
		c->reload = 0;
		c->waiting = 0;
	}
}

static void
control_accept(evutil_socket_t fd, short what, void *arg)
{
	struct ctl_conn	*c;
	struct ucred	 cred;
	socklen_t	 len = sizeof(cred);
	int		 s;

	if ((s = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) == -1)
		return;
	if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1 ||
	    cred.uid != 0) {
		log_warnx("control: refused a client that is not root");
		close(s);
		return;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		close(s);
		return;
	}
	if (imsgev_init(&c->iev, master.base, s, master_dispatch_control,
	    control_closed, c) == -1) {
		close(s);
		free(c);
		return;
	}
	/* A client that breaks the protocol is disconnected, not fatal. */
	imsgev_set_channel(&c->iev, &proto_ctl_request);
	calltab_add(&ctl_conns, &c->ce);
}

/* 1 when a process accepts connections on path: binding would steal it. */
int
master_control_in_use(const char *path)
{
	struct sockaddr_un	 sun;
	int			 fd, rv;

	if (unix_addr(&sun, path) == -1)
		return 0;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return 0;
	rv = connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0;
	close(fd);
	return rv;
}

void
master_control_init(const char *path)
{
	struct sockaddr_un	 sun;
	mode_t			 old;

	if (unix_addr(&sun, path) == -1)
		fatalx("control socket path too long: %s", path);
	strlcpy(control_path, path, sizeof(control_path));
	control_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0);
	if (control_fd == -1)
		fatal("socket");
	if (unlink(path) == -1 && errno != ENOENT)
		fatal("unlink %s", path);
	old = umask(S_IRWXG | S_IRWXO);
	if (bind(control_fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		fatal("bind %s", path);
	umask(old);
	if (chmod(path, S_IRUSR | S_IWUSR) == -1 || listen(control_fd, 16) == -1)
		fatal("control socket %s", path);
	ev_control = event_new(master.base, control_fd, EV_READ | EV_PERSIST,
	    control_accept, NULL);
	event_add(ev_control, NULL);
	master.started = time(NULL);
}

void
master_control_cleanup(void)
{
	if (control_fd != -1) {
		close(control_fd);
		unlink(control_path);
		control_fd = -1;
	}
}
