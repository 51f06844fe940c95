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
 * store_url.c: the grammar of each backend's storage URL, shared by the
 * backends and the configuration parser.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_url.h"

#define S3_BUCKET_MAX	63

const char *
local_url_root(const char *url)
{
	if (strncmp(url, "file://", 7) != 0 || url[7] != '/')
		return NULL;
	return url + 7;
}

int
s3_url_parse(const char *url, char **bucket, char **prefix)
{
	const char	*p, *slash;
	size_t		 len, i;

	if (strncmp(url, "s3://", 5) != 0)
		return -1;
	p = url + 5;
	slash = strchr(p, '/');
	len = slash ? (size_t)(slash - p) : strlen(p);
	if (len == 0 || len > S3_BUCKET_MAX)
		return -1;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)p[i]) && p[i] != '-' &&
		    p[i] != '.' && p[i] != '_')
			return -1;
	if ((*bucket = strndup(p, len)) == NULL)
		return -1;
	p += len;
	while (*p == '/')
		p++;
	if ((*prefix = strdup(p)) == NULL)
		return -1;
	len = strlen(*prefix);
	while (len > 0 && (*prefix)[len - 1] == '/')
		(*prefix)[--len] = '\0';
	return 0;
}

int
sftp_url_parse(struct sftp_url *u, const char *url)
{
	const char	*p, *at, *slash, *hend, *errstr;
	char		 portbuf[8];
	size_t		 n;

	if (strncmp(url, "sftp://", 7) != 0)
		return -1;
	p = url + 7;
	if ((slash = strchr(p, '/')) == NULL)
		return -1;
	if ((at = memchr(p, '@', slash - p)) == NULL || at == p)
		return -1;
	u->user = strndup(p, at - p);
	p = at + 1;
	if (*p == '[') {
		if ((hend = memchr(p, ']', slash - p)) == NULL)
			return -1;
		u->host = strndup(p + 1, hend - p - 1);
		p = hend + 1;
	} else {
		hend = memchr(p, ':', slash - p);
		if (hend == NULL)
			hend = slash;
		u->host = strndup(p, hend - p);
		p = hend;
	}
	if (u->host == NULL || u->host[0] == '\0')
		return -1;
	u->port = 22;
	if (*p == ':') {
		n = slash - p - 1;
		if (n == 0 || n >= sizeof(portbuf))
			return -1;
		memcpy(portbuf, p + 1, n);
		portbuf[n] = '\0';
		u->port = strtonum(portbuf, 1, 65535, &errstr);
		if (errstr != NULL)
			return -1;
	} else if (p != slash)
		return -1;
	if ((u->root = strdup(slash)) == NULL)
		return -1;
	n = strlen(u->root);
	while (n > 0 && u->root[n - 1] == '/')
		u->root[--n] = '\0';
	return u->user != NULL ? 0 : -1;
}

void
sftp_url_free(struct sftp_url *u)
{
	free(u->user);
	free(u->host);
	free(u->root);
	memset(u, 0, sizeof(*u));
}


static int
local_url_check(const char *url)
{
	return local_url_root(url) != NULL ? 0 : -1;
}

static int
s3_url_check(const char *url)
{
	char	*bucket = NULL, *prefix = NULL;
	int	 rv;

	rv = s3_url_parse(url, &bucket, &prefix);
	free(bucket);
	free(prefix);
	return rv;
}

/*
 * The configuration asks more than sftp_url_parse: no password in the
 * URL (keys only), and a store root below "/".
 */
static int
sftp_url_check(const char *url)
{
	struct sftp_url	 u;
	const char	*path;
	int		 rv;

	memset(&u, 0, sizeof(u));
	rv = sftp_url_parse(&u, url);
	if (rv == 0 && strchr(u.user, ':') != NULL)
		rv = -1;
	path = strchr(url + strlen("sftp://"), '/');
	if (rv == 0 && (path == NULL || path[1] == '\0'))
		rv = -1;
	sftp_url_free(&u);
	return rv;
}

static const struct {
	const char	*scheme;
	const char	*prefix;
	int		(*check)(const char *);
	const char	*form;
} store_urls[] = {
	{ "file", "file://", local_url_check,
	    "storage URL must be file:///absolute/path" },
	{ "s3", "s3://", s3_url_check,
	    "storage URL must be s3://bucket[/prefix]" },
	{ "sftp", "sftp://", sftp_url_check,
	    "storage URL must be sftp://user@host[:port]/path" },
};

const char *
store_check_url(const char *url, const char **why)
{
	size_t	i;

	*why = NULL;
	for (i = 0; i < sizeof(store_urls) / sizeof(store_urls[0]); i++) {
		if (strncmp(url, store_urls[i].prefix,
		    strlen(store_urls[i].prefix)) != 0)
			continue;
		if (store_urls[i].check(url) == -1) {
			*why = store_urls[i].form;
			return NULL;
		}
		return store_urls[i].scheme;
	}
	return NULL;
}
