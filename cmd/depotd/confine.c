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
 * confine.c: the confinement of depotd's children as the master sees
 * it: the paths each role needs under the configuration, the plan
 * `depotd -n -v' prints, and the layers this kernel lacks.
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>

#include "log.h"
#include "lockdown.h"
#include "depotd.h"
#include "confine.h"

static const enum proc_role confined_roles[] = {
	ROLE_FRONTEND, ROLE_STORAGE, ROLE_BROKER,
};

/*
 * The storage helper reads the system's configuration (name service,
 * CA certificates, the PostgreSQL socket directory) and its SFTP keys,
 * and reads and writes the local store.  ro holds 6 entries, rw 2.
 */
void
confine_storage_paths(const struct depotd_conf *conf,
    const char *ro[CONFINE_RO_MAX], const char *rw[CONFINE_RW_MAX])
{
	int	 n = 0;

	memset(ro, 0, CONFINE_RO_MAX * sizeof(*ro));
	memset(rw, 0, CONFINE_RW_MAX * sizeof(*rw));
	ro[n++] = "/etc";
	ro[n++] = "/usr/share/ca-certificates";
	ro[n++] = "/var/run/postgresql";
	if (conf->storage.identity[0] != '\0')
		ro[n++] = conf->storage.identity;
	if (conf->storage.known_hosts[0] != '\0')
		ro[n++] = conf->storage.known_hosts;
	if (strncmp(conf->storage_url, "file://", 7) == 0)
		rw[0] = conf->storage_url + 7;
}

void
confine_print_plan(FILE *fp, const struct depotd_conf *conf)
{
	const struct lockdown_rules	*pol;
	const char			*ro[CONFINE_RO_MAX];
	const char			*rw[CONFINE_RW_MAX];
	struct lockdown_kernel		 k;
	char				 missing[256];
	size_t				 i;

	lockdown_probe(&k);
	lockdown_missing(&k, missing, sizeof(missing));
	fprintf(fp, "confinement (Landlock ABI %d%s%s):\n", k.landlock_abi,
	    missing[0] ? "; not enforced here: " : "", missing);
	for (i = 0; i < sizeof(confined_roles) / sizeof(confined_roles[0]);
	    i++) {
		if ((pol = lockdown_rules_of(role_name(confined_roles[i]))) ==
		    NULL)
			continue;
		if (confined_roles[i] == ROLE_STORAGE) {
			confine_storage_paths(conf, ro, rw);
			lockdown_print_plan(fp, pol, conf->storage_user, NULL,
			    ro, rw);
		} else
			lockdown_print_plan(fp, pol, conf->user, conf->chroot,
			    NULL, NULL);
	}
}

/* "complete", or the layers this kernel lacks. */
const char *
confine_status(void)
{
	static char		 text[320];
	struct lockdown_kernel	 k;
	char			 missing[256];

	lockdown_probe(&k);
	lockdown_missing(&k, missing, sizeof(missing));
	if (missing[0] == '\0')
		snprintf(text, sizeof(text), "complete (seccomp, Landlock "
		    "ABI %d)", k.landlock_abi);
	else
		snprintf(text, sizeof(text), "partial: this kernel lacks %s",
		    missing);
	return text;
}

/* At start: say which layer the children will go without. */
void
confine_log_kernel(void)
{
	const char	*status = confine_status();

	if (strncmp(status, "complete", 8) == 0)
		log_debug("confinement %s", status);
	else
		log_warnx("confinement %s", status);
}
