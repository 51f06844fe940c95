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
 * master_reload.c: a new configuration for the running daemon (SIGHUP,
 * `depotctl reload'): parsed, sent to every child, and what applies
 * only at restart kept as it started.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "depotd.h"
#include "master.h"

/*
 * What applies only at restart stays as it started in the running
 * configuration, since a frontend started again in its slot takes
 * its listening sockets and its root from it.
 */
static void
keep_restart_only(struct depotd_conf *old, struct depotd_conf *conf)
{
	struct listen_conf	*lc;

	while ((lc = TAILQ_FIRST(&conf->listens)) != NULL) {
		TAILQ_REMOVE(&conf->listens, lc, entry);
		free(lc);
	}
	while ((lc = TAILQ_FIRST(&old->listens)) != NULL) {
		TAILQ_REMOVE(&old->listens, lc, entry);
		TAILQ_INSERT_TAIL(&conf->listens, lc, entry);
	}
	strlcpy(conf->chroot, old->chroot, sizeof(conf->chroot));
}

/*
 * Parses the file into a new configuration and sends it to the
 * children only when it parsed.  What applies only at restart (see
 * conf_restart_changes) is named in the log; the children keep running
 * with what they started with for those.  The reload is complete when
 * every child has acknowledged the new generation (conf_acked).
 */
uint32_t
master_reload(char *why, size_t whylen)
{
	struct depotd_conf	*conf;
	struct child_proc	*cp;
	char			 later[256];

	if ((conf = parse_config(master.conffile, master.verbose)) == NULL) {
		snprintf(why, whylen, "%s has errors; keeping the running "
		    "configuration", master.conffile);
		log_warnx("reload failed: %s", why);
		return 0;
	}
	conf_resolve_upstreams(conf);
	/* The running sandbox stays; its URL and token carry over. */
	if (master.conf->sandbox == SANDBOX_LOCAL &&
	    conf->sandbox == SANDBOX_LOCAL) {
		strlcpy(conf->sandbox_url, master.conf->sandbox_url,
		    sizeof(conf->sandbox_url));
		free(conf->sandbox_token);
		conf->sandbox_token = master.conf->sandbox_token;
		master.conf->sandbox_token = NULL;
	}
	conf_restart_changes(master.conf, conf, later, sizeof(later));
	if (later[0] != '\0')
		log_warnx("reload: %s take effect at restart", later);
	keep_restart_only(master.conf, conf);
	conf_free(master.conf);
	master.conf = conf;
	master.generation++;
	TAILQ_FOREACH(cp, &master.children, entry)
		if (cp->fd != -1)
			master_proc_send_conf(cp, conf, master.generation);
	snprintf(why, whylen, "reloaded %s", master.conffile);
	return master.generation;
}
