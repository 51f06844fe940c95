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

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "lockdown.h"
#include "depotd.h"
#include "roster.h"
#include "confine.h"

static const enum proc_role confined_roles[] = {
	ROLE_FRONTEND, ROLE_STORAGE, ROLE_BROKER, ROLE_EXTRACT,
};

/*
 * Whatever its store, the storage helper reads the system's
 * configuration (name service, CA certificates) and PostgreSQL's
 * socket directory; its store names the rest (store_ops paths).
 */
static const char *const storage_common[CONFINE_COMMON_MAX + 1] = {
	"/etc", "/usr/share/ca-certificates", "/var/run/postgresql", NULL
};

size_t
confine_storage_common(const char **ro)
{
	size_t	 n;

	for (n = 0; storage_common[n] != NULL; n++)
		ro[n] = storage_common[n];
	ro[n] = NULL;
	return n;
}

/*
 * A role's rules under this configuration: for the frontend, the
 * upstreams' ports, as they are at lockdown.  Valid until the next
 * call.
 */
const struct lockdown_rules *
confine_rules(enum proc_role role, const struct depotd_conf *conf)
{
	static struct lockdown_rules	 rules;
	static uint16_t			 ports[CONF_PORTS_MAX];
	const struct lockdown_rules	*pol;

	if ((pol = lockdown_rules_of(role_name(role))) == NULL)
		return NULL;
	rules = *pol;
	if (rules.tcp_connect == LOCKDOWN_TCP_PORTS) {
		rules.nports = conf_upstream_ports(conf, ports,
		    CONF_PORTS_MAX);
		rules.ports = ports;
	}
	return &rules;
}

/* The user, root and paths the roster and lockdown.c give role. */
static void
print_role_plan(FILE *fp, const struct depotd_conf *conf,
    enum proc_role role)
{
	const struct lockdown_rules	*rules;
	const struct role		*r = roster_role(role);
	const char			*user, *root;

	if ((rules = confine_rules(role, conf)) == NULL)
		return;
	user = roster_user(r->user, conf);
	root = r->chroot == CHROOT_CONF ? conf->chroot : NULL;
	if (role != ROLE_STORAGE) {
		lockdown_print_plan(fp, rules, user, root, NULL, NULL);
		return;
	}
	/* The store's own paths are known once it is set up. */
	lockdown_print_plan(fp, rules, user, root, storage_common, NULL);
	fprintf(fp, "\tplus the paths its store names: %s (a local store's "
	    "directory, read and write; an SFTP store's key files, read)\n",
	    conf->storage_url);
}

void
confine_print_plan(FILE *fp, const struct depotd_conf *conf)
{
	struct lockdown_kernel	 k;
	char			 missing[256];
	size_t			 i;

	lockdown_probe(&k);
	lockdown_missing(&k, missing, sizeof(missing));
	fprintf(fp, "confinement (Landlock ABI %d%s%s):\n", k.landlock_abi,
	    missing[0] ? "; not enforced here: " : "", missing);
	for (i = 0; i < sizeof(confined_roles) / sizeof(confined_roles[0]);
	    i++)
		print_role_plan(fp, conf, confined_roles[i]);
}

/* "complete", or the layers this kernel lacks. */
const char *
confine_status(void)
{
	static char		 text[384];
	struct lockdown_kernel	 k;
	char			 missing[256];

	lockdown_probe(&k);
	lockdown_missing(&k, missing, sizeof(missing));
	if (missing[0] == '\0')
		snprintf(text, sizeof(text), "complete (seccomp, Landlock "
		    "ABI %d)", k.landlock_abi);
	else
		snprintf(text, sizeof(text), "partial: this kernel lacks %s%s",
		    missing, k.landlock_abi < 4 ? "; frontends may connect "
		    "to any TCP port" : "");
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
