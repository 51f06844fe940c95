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
 * store_url.h: the storage URLs of the three backends.  Their grammar
 * lives apart from the backends, with nothing but libc under it, so
 * that the configuration parser checks a URL with the very code the
 * backend will parse it with.
 */
#ifndef DEPOT_STORE_URL_H
#define DEPOT_STORE_URL_H

/*
 * Checks url as the configuration must: the scheme's name ("file",
 * "s3", "sftp"), or NULL with *why saying what the URL must look like
 * (*why NULL: no backend has the scheme).
 */
const char	*store_check_url(const char *url, const char **why);

/* "file:///absolute/path": the path, or NULL. */
const char	*local_url_root(const char *url);

/*
 * "s3://bucket[/prefix]": the bucket (1 to 63 of A-Z a-z 0-9 - . _)
 * and the prefix without slashes at its ends, both malloc'd.  0, or -1
 * (free what was set either way).
 */
int		 s3_url_parse(const char *url, char **bucket, char **prefix);

/* "sftp://user@host[:port]/path", host possibly "[v6]". */
struct sftp_url {
	char	*user;
	char	*host;
	int	 port;
	char	*root;		/* absolute, no trailing slash; "" for "/" */
};

int		 sftp_url_parse(struct sftp_url *, const char *);
void		 sftp_url_free(struct sftp_url *);

#endif
