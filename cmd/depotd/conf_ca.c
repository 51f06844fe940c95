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
 * conf_ca.c: the CA bundle an https upstream is checked against.  The
 * frontend may open no file once locked down, and reloads come after
 * that, so the master opens the bundle (the upstream's ca-file or the
 * system's) at every configuration it sends, and the frontend reads
 * the descriptor into memory for CURLOPT_CAINFO_BLOB.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "config.h"
#include "conf_int.h"

/* Who a bundle is for, in a log line: the sandbox's link has no name. */
static const char *
ca_owner(const struct upstream_conf *u, char *buf, size_t len)
{
	if (u->name[0] == '\0')
		return "sandbox";
	snprintf(buf, len, "upstream \"%s\"", u->name);
	return buf;
}

int
conf_ca_open(const struct upstream_conf *u)
{
	char		 who[96];	/* upstream "NAME", NAME < 64 */
	const char	*path;
	struct stat	 sb;
	int		 fd;

	if (strncmp(u->url, "https://", 8) != 0)
		return -1;
	path = u->ca_file[0] != '\0' ? u->ca_file : DEPOTD_CA_BUNDLE;
	/* Non-blocking, so that naming a FIFO cannot hang the master. */
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) == -1) {
		log_warn("%s: ca-file %s", ca_owner(u, who, sizeof(who)), path);
		return -1;
	}
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode) ||
	    sb.st_size > CONF_CA_MAX) {
		log_warnx("%s: ca-file %s is not a regular file "
		    "of at most %d bytes", ca_owner(u, who, sizeof(who)), path,
		    CONF_CA_MAX);
		close(fd);
		return -1;
	}
	return fd;
}

/* Reads fd to its end, at most CONF_CA_MAX bytes; closes it. */
void
conf_ca_read(struct upstream_conf *u, int fd)
{
	char	*buf;
	size_t	 len = 0;
	ssize_t	 n = 0;

	free(u->ca_pem);
	u->ca_pem = NULL;
	u->ca_len = 0;
	if ((buf = malloc(CONF_CA_MAX + 1)) == NULL) {
		log_warn("upstream \"%s\": CA bundle", u->name);
		close(fd);
		return;
	}
	while (len <= CONF_CA_MAX &&
	    (n = read(fd, buf + len, CONF_CA_MAX + 1 - len)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			log_warn("upstream \"%s\": reading its CA bundle",
			    u->name);
			break;
		}
		len += n;
	}
	close(fd);
	if (n == -1 || len == 0 || len > CONF_CA_MAX) {
		if (n != -1)
			log_warnx("upstream \"%s\": CA bundle empty or over "
			    "%d bytes", u->name, CONF_CA_MAX);
		free(buf);
		return;
	}
	u->ca_pem = realloc(buf, len);
	if (u->ca_pem == NULL)
		u->ca_pem = buf;
	u->ca_len = len;
}
