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
 * fe_retry_after.c: Retry-After as a caller of depotd gets it.  RFC 9110
 * lets an upstream send either seconds or an HTTP-date; the caller
 * gets seconds, a date becoming the seconds left until then, so that
 * its clock and the upstream's need not agree.
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "fe_upcall.h"

void
retry_after_seconds(const char *v, size_t len, char *out, size_t outlen)
{
	char	 date[64];
	time_t	 when, now;
	size_t	 i;

	for (i = 0; i < len && v[i] >= '0' && v[i] <= '9'; i++)
		;
	if (len > 0 && i == len && len < outlen) {
		memcpy(out, v, len);
		out[len] = '\0';
		return;
	}
	if (len == 0 || len >= sizeof(date))
		return;
	memcpy(date, v, len);
	date[len] = '\0';
	if ((when = curl_getdate(date, NULL)) == -1)
		return;
	now = time(NULL);
	snprintf(out, outlen, "%lld",
	    when > now ? (long long)(when - now) : 0LL);
}
