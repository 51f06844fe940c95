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
 * broker_sbx.h: HTTP requests to a sandbox backend speaking the
 * code-execution protocol, version 1 (SPEC.md section 7), on libcurl's
 * multi interface in the broker's event loop.
 */
#ifndef DEPOTD_BROKER_SBX_H
#define DEPOTD_BROKER_SBX_H

#include <stddef.h>
#include <stdint.h>

struct curlev;
struct json_object;

/* Where the backend is: "unix:/path" or an http(s) base URL. */
struct sbx_backend {
	struct curlev	*curl;
	char		 base[1024];	/* URL prefix of every path */
	char		 sock[1024];	/* unix socket, "" for a URL */
	const char	*token;		/* bearer, or NULL */
	const char	*resolve;	/* CURLOPT_RESOLVE entry, or NULL */
	const char	*ca_pem;	/* CA bundle for https, or NULL */
	size_t		 ca_len;
	long		 transfer_timeout; /* PutFile, GetFile: seconds */
};

/* A request's status when it passed its timeout (err says so too). */
#define SBX_TIMEDOUT	504

struct sbx_request;

/*
 * The end of a request: status is the backend's HTTP status, 0 when it
 * could not be reached (err says why), SBX_TIMEDOUT past its timeout.
 * body is the parsed JSON answer when there was one; it is the
 * callback's to keep (json_object_get) past the request.  bytes: for
 * sbx_get, what was written.
 */
typedef void	(*sbx_done_cb)(void *arg, long status,
		    struct json_object *body, int64_t bytes, const char *err);

int		 sbx_backend_set(struct sbx_backend *, const char *url,
		    const char *token);
/* A JSON request; req may be NULL (no body).  timeout in seconds. */
struct sbx_request	*sbx_json(struct sbx_backend *, const char *method,
		    const char *path, struct json_object *req, long timeout,
		    sbx_done_cb, void *);
/* PutFile: name in the workspace, size bytes from fd (owned). */
struct sbx_request	*sbx_put(struct sbx_backend *, const char *session,
		    const char *name, int fd, int64_t size, sbx_done_cb,
		    void *);
/*
 * GetFile: the bytes into fd (owned, closed at the end), at most cap;
 * tap, if set, sees each piece as it is written.
 */
typedef void	(*sbx_tap_cb)(void *arg, const void *, size_t);
struct sbx_request	*sbx_get(struct sbx_backend *, const char *session,
		    const char *path, int fd, int64_t cap, sbx_tap_cb,
		    sbx_done_cb, void *);
/* Whether a backend's session id is one we put into a path. */
int		 sbx_session_ok(const char *);
/* "/sessions/ID" then rest into buf; -1 for a bad id or no room. */
int		 sbx_session_path(char *buf, size_t len, const char *session,
		    const char *rest);
/* Stops a request; its callback never runs. */
void		 sbx_cancel(struct sbx_request *);

#endif
