/*
 * api.c: the routes of the code-execution protocol, version 1.
 *
 *	POST   /sessions			CreateSession
 *	POST   /sessions/{id}/exec		Execute
 *	DELETE /sessions/{id}			DestroySession
 *	GET    /sessions/{id}/files/list	ListFiles
 *	GET    /sessions/{id}/files		GetFile
 *	POST   /sessions/{id}/files		PutFile (multipart)
 *	GET    /health				liveness, session count
 *
 * A program's failure is a 200 with its return code; statuses are for
 * the protocol's own errors.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "http.h"
#include "log.h"
#include "multipart.h"
#include "util.h"
#include "sandboxd.h"

#define API_MAX_JSON	(4 * 1024 * 1024)

enum api_route {
	R_NONE,
	R_CREATE,
	R_EXEC,
	R_PUT,
};

struct api_req {
	struct http_request	*req;
	enum api_route		 route;
	char			 sid[ID_BUFSIZE];
	char			*body;
	size_t			 len;
	int			 replied;
	void			*exec;
	int			 exec_done;
	char			 tool[64];
	char			 tool_use_id[256];
	/* PutFile */
	struct multipart	*mp;
	int			 tmpfd;
	char			 tmpname[64];
	int64_t			 written;
	int			 part;		/* 1 file, 2 path, 0 other */
	int			 have_file;
	char			 filename[4096];
	char			 path[4096];
	size_t			 pathlen;
	int			 put_status;
	const char		*put_error;
};

static void
api_error(struct http_request *req, int status, const char *message)
{
	struct json_object	*o, *e;
	const char		*type, *s;

	switch (status) {
	case 401:
		type = "authentication_error";
		break;
	case 403:
		type = "permission_error";
		break;
	case 404:
		type = "not_found_error";
		break;
	case 413:
		type = "request_too_large";
		break;
	case 503:
		type = "overloaded_error";
		break;
	default:
		type = status >= 500 ? "api_error" : "invalid_request_error";
	}
	o = json_object_new_object();
	e = json_object_new_object();
	json_object_object_add(e, "type", json_object_new_string(type));
	json_object_object_add(e, "message", json_object_new_string(message));
	json_object_object_add(o, "type", json_object_new_string("error"));
	json_object_object_add(o, "error", e);
	/* What clients of the reference backend read. */
	json_object_object_add(o, "detail", json_object_new_string(message));
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	http_reply(req, status, "application/json", s, strlen(s));
	json_object_put(o);
}

static void
api_json(struct http_request *req, int status, struct json_object *o)
{
	const char	*s;

	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	http_reply(req, status, "application/json", s, strlen(s));
	json_object_put(o);
}

static int
api_authorized(struct http_request *req)
{
	const char	*h;

	if (sbx_conf->token == NULL)
		return 1;
	if ((h = http_header_get(req, "authorization")) == NULL ||
	    strncasecmp(h, "Bearer ", 7) != 0)
		return 0;
	h += 7;
	while (*h == ' ')
		h++;
	return timingsafe_streq(h, sbx_conf->token);
}

/* "/sessions/ID/rest" -> sid = ID, returns "/rest" or "" or NULL. */
static const char *
api_split(const char *path, char *sid, size_t sidlen)
{
	const char	*p, *slash;
	size_t		 n;

	if (strncmp(path, "/sessions/", 10) != 0)
		return NULL;
	p = path + 10;
	slash = strchr(p, '/');
	n = slash ? (size_t)(slash - p) : strlen(p);
	if (n == 0 || n >= sidlen)
		return NULL;
	memcpy(sid, p, n);
	sid[n] = '\0';
	return slash ? slash : "";
}

static struct session *
api_session(struct api_req *a)
{
	struct session	*s;

	if ((s = session_find(a->sid)) == NULL) {
		api_error(a->req, 404, "no such session");
		return NULL;
	}
	session_touch(s);
	return s;
}

/* Parses the JSON body; an empty body is an empty object. */
static struct json_object *
api_body_json(struct api_req *a)
{
	struct json_tokener	*tok;
	struct json_object	*o;

	if (a->len == 0)
		return json_object_new_object();
	if ((tok = json_tokener_new()) == NULL)
		return NULL;
	o = json_tokener_parse_ex(tok, a->body, a->len);
	if (o != NULL && (json_tokener_get_error(tok) != json_tokener_success
	    || tok->char_offset != (int)a->len)) {
		/* Trailing garbage after the object. */
		size_t i;

		for (i = tok->char_offset; i < a->len; i++)
			if (strchr(" \t\r\n", a->body[i]) == NULL) {
				json_object_put(o);
				o = NULL;
				break;
			}
	}
	json_tokener_free(tok);
	if (o != NULL && !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		o = NULL;
	}
	return o;
}

/* An optional integer field; -1 on a wrong type. */
static int
api_int_field(struct json_object *o, const char *name, int64_t *v,
    int *present)
{
	struct json_object	*f;
	double			 d;

	*present = 0;
	if (!json_object_object_get_ex(o, name, &f) || f == NULL)
		return 0;
	*present = 1;
	if (json_object_is_type(f, json_type_int)) {
		*v = json_object_get_int64(f);
		return 0;
	}
	if (json_object_is_type(f, json_type_double)) {
		d = json_object_get_double(f);
		if (d != (double)(int64_t)d)
			return -1;
		*v = (int64_t)d;
		return 0;
	}
	return -1;
}

static int
api_clamp(int64_t v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : (int)v;
}

static void
api_create(struct api_req *a)
{
	struct json_object	*body;
	struct session		*s;
	const char		*why;
	int64_t			 idle, life;
	int			 p1, p2;

	if ((body = api_body_json(a)) == NULL) {
		api_error(a->req, 400, "the body is not a JSON object");
		return;
	}
	idle = sbx_conf->limits.idle_default;
	life = sbx_conf->limits.life_default;
	if (api_int_field(body, "idle_timeout_seconds", &idle, &p1) == -1 ||
	    api_int_field(body, "max_lifetime_seconds", &life, &p2) == -1) {
		json_object_put(body);
		api_error(a->req, 422, "lifetime hints must be integers");
		return;
	}
	json_object_put(body);
	if (session_count() >= sbx_conf->limits.max_sessions) {
		log_warnx("create: at capacity (%d sessions)",
		    session_count());
		api_error(a->req, 503, "at capacity: too many sessions");
		return;
	}
	/* Hints are clamped, not refused; the reply says what was granted. */
	idle = api_clamp(idle, 1, sbx_conf->limits.idle_max);
	life = api_clamp(life, 1, sbx_conf->limits.life_max);
	if ((s = session_create(idle, life, &why)) == NULL) {
		log_warnx("create: %s", why);
		api_error(a->req, 503, why);
		return;
	}
	log_info("create %s idle %llds lifetime %llds", session_id(s),
	    (long long)idle, (long long)life);
	api_json(a->req, 201, session_describe(s));
}

static const char *
api_result_type(const char *tool)
{
	if (strcmp(tool, "code_execution") == 0)
		return "code_execution_result";
	if (strcmp(tool, "bash_code_execution") == 0)
		return "bash_code_execution_result";
	return "text_editor_code_execution_result";
}

static void
api_exec_done(const struct exec_result *r, void *arg)
{
	struct api_req		*a = arg;
	struct json_object	*o, *block, *content, *v;
	char			 type[96];
	int			 rc = -1;

	a->exec = NULL;
	a->exec_done = 1;
	if (r->status != 200) {
		log_warnx("exec %s: %s", a->sid, r->error);
		api_error(a->req, r->status, r->error);
		return;
	}
	content = json_object_new_object();
	json_object_object_add(content, "type",
	    json_object_new_string(api_result_type(a->tool)));
	if (json_object_object_get_ex(r->reply, "stdout", &v) &&
	    json_object_is_type(v, json_type_string))
		json_object_object_add(content, "stdout", json_object_get(v));
	else
		json_object_object_add(content, "stdout",
		    json_object_new_string(""));
	if (json_object_object_get_ex(r->reply, "stderr", &v) &&
	    json_object_is_type(v, json_type_string))
		json_object_object_add(content, "stderr", json_object_get(v));
	else
		json_object_object_add(content, "stderr",
		    json_object_new_string(""));
	if (json_object_object_get_ex(r->reply, "return_code", &v) &&
	    json_object_is_type(v, json_type_int))
		rc = json_object_get_int(v);
	json_object_object_add(content, "return_code",
	    json_object_new_int(rc));
	json_object_object_add(content, "content",
	    json_object_get(r->produced));

	block = json_object_new_object();
	snprintf(type, sizeof(type), "%s_tool_result", a->tool);
	json_object_object_add(block, "type", json_object_new_string(type));
	json_object_object_add(block, "tool_use_id",
	    json_object_new_string(a->tool_use_id));
	json_object_object_add(block, "content", content);

	o = json_object_new_object();
	json_object_object_add(o, "tool_use_id",
	    json_object_new_string(a->tool_use_id));
	json_object_object_add(o, "execution_time_ms",
	    json_object_new_int64(r->elapsed_ms));
	json_object_object_add(o, "result_block", block);
	log_info("exec %s %s rc %d %lld ms %zu files", a->sid, a->tool, rc,
	    (long long)r->elapsed_ms, json_object_array_length(r->produced));
	api_json(a->req, 200, o);
}

static size_t
utf8_chars(const char *s)
{
	size_t	 n = 0;

	for (; *s != '\0'; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

/* Checks input against the tool; NULL when fine, else the message. */
static const char *
api_check_input(const char *tool, struct json_object *input)
{
	struct json_object	*f;
	const char		*field;

	if (strcmp(tool, "code_execution") == 0)
		field = "code";
	else if (strcmp(tool, "bash_code_execution") == 0)
		field = "command";
	else if (strcmp(tool, "text_editor_code_execution") == 0)
		field = "command";
	else
		return "unknown tool; expected code_execution, "
		    "bash_code_execution or text_editor_code_execution";
	if (!json_object_is_type(input, json_type_object))
		return "input must be an object";
	if (!json_object_object_get_ex(input, field, &f) ||
	    !json_object_is_type(f, json_type_string))
		return strcmp(field, "code") == 0 ?
		    "input.code must be a string" :
		    "input.command must be a string";
	if (utf8_chars(json_object_get_string(f)) > SBX_MAX_CODE_CHARS)
		return "code or command longer than 200000 characters";
	return NULL;
}

static void
api_exec(struct api_req *a)
{
	struct json_object	*body, *tool, *input, *id, *request;
	struct session		*s;
	const char		*why;
	int64_t			 timeout = sbx_conf->limits.exec_timeout;
	int			 present;

	if ((body = api_body_json(a)) == NULL) {
		api_error(a->req, 400, "the body is not a JSON object");
		return;
	}
	if (!json_object_object_get_ex(body, "tool", &tool) ||
	    !json_object_is_type(tool, json_type_string) ||
	    strlcpy(a->tool, json_object_get_string(tool),
	    sizeof(a->tool)) >= sizeof(a->tool)) {
		json_object_put(body);
		api_error(a->req, 422, "tool must be a string naming a tool");
		return;
	}
	if (!json_object_object_get_ex(body, "input", &input))
		input = NULL;
	if ((why = api_check_input(a->tool, input)) != NULL) {
		json_object_put(body);
		api_error(a->req, 422, why);
		return;
	}
	if (api_int_field(body, "timeout_seconds", &timeout, &present) == -1 ||
	    timeout < 1 || timeout > SBX_EXEC_TIMEOUT_MAX) {
		json_object_put(body);
		api_error(a->req, 422, "timeout_seconds must be an integer "
		    "from 1 to 120");
		return;
	}
	if (json_object_object_get_ex(body, "tool_use_id", &id) &&
	    json_object_is_type(id, json_type_string))
		strlcpy(a->tool_use_id, json_object_get_string(id),
		    sizeof(a->tool_use_id));
	else
		id_new(a->tool_use_id, sizeof(a->tool_use_id), "toolu_");
	if ((s = api_session(a)) == NULL) {
		json_object_put(body);
		return;
	}
	request = json_object_new_object();
	json_object_object_add(request, "tool", json_object_get(tool));
	json_object_object_add(request, "input", json_object_get(input));
	json_object_put(body);
	a->exec = session_exec(s, request, (int)timeout, api_exec_done, a);
	/* It may have finished already (a runner that could not start). */
	if (a->exec_done)
		a->exec = NULL;
	json_object_put(request);
}

static void
api_destroy(struct api_req *a)
{
	struct session	*s;

	/* Idempotent: a session already gone is what the caller wanted. */
	if ((s = session_find(a->sid)) != NULL)
		session_destroy(s, "deleted");
	else
		log_info("destroy %s: no such session", a->sid);
	http_reply(a->req, 204, NULL, NULL, 0);
}

/* The path query parameter, confined; replies and returns -1 on error. */
static int
api_path_param(struct api_req *a, const char *dflt, char *rel, size_t len)
{
	char	 raw[4096];
	ssize_t	 n;

	n = http_query_param(a->req->query, "path", raw, sizeof(raw), NULL);
	if (n == -2) {
		api_error(a->req, 400, "bad path parameter");
		return -1;
	}
	if (n == -1) {
		if (dflt == NULL) {
			api_error(a->req, 400, "the path parameter is "
			    "required");
			return -1;
		}
		strlcpy(raw, dflt, sizeof(raw));
	}
	if (ws_clean_path(raw, rel, len) == -1) {
		api_error(a->req, 403, "path outside the workspace");
		return -1;
	}
	return 0;
}

static void
api_open_error(struct api_req *a, const char *what)
{
	switch (errno) {
	case ENOENT:
		api_error(a->req, 404, "no such file");
		break;
	case ENOTDIR:
		api_error(a->req, 400, "a path component is not a "
		    "directory");
		break;
	case EXDEV:
	case ELOOP:
	case EACCES:
	case EPERM:
		api_error(a->req, 403, "path outside the workspace");
		break;
	default:
		log_warn("%s %s", what, a->sid);
		api_error(a->req, 500, "cannot open the path");
	}
}

static void
api_list(struct api_req *a)
{
	struct session		*s;
	struct ws_listing	 l;
	struct json_object	*o, *files, *f;
	char			 rel[4096], t[RFC3339_LEN];
	size_t			 i;

	if ((s = api_session(a)) == NULL ||
	    api_path_param(a, ".", rel, sizeof(rel)) == -1)
		return;
	if (ws_list(session_rootfd(s), rel, &l) == -1) {
		api_open_error(a, "list");
		return;
	}
	files = json_object_new_array();
	for (i = 0; i < l.n; i++) {
		const struct ws_entry *e = &l.entries[i];

		f = json_object_new_object();
		json_object_object_add(f, "path",
		    json_object_new_string(e->path));
		json_object_object_add(f, "size_bytes",
		    json_object_new_int64(e->size));
		json_object_object_add(f, "mime_type",
		    json_object_new_string(ws_mime_type(e->path)));
		time_rfc3339_usec((int64_t)e->mtime.tv_sec * 1000000 +
		    e->mtime.tv_nsec / 1000, t, sizeof(t));
		json_object_object_add(f, "modified_at",
		    json_object_new_string(t));
		json_object_array_add(files, f);
	}
	o = json_object_new_object();
	json_object_object_add(o, "files", files);
	if (l.truncated)
		json_object_object_add(o, "truncated",
		    json_object_new_boolean(1));
	log_info("list %s %s: %zu files", a->sid, rel, l.n);
	ws_listing_free(&l);
	api_json(a->req, 200, o);
}

static void
api_get(struct api_req *a)
{
	struct session	*s;
	struct stat	 st;
	char		 rel[4096];
	int		 fd;

	if ((s = api_session(a)) == NULL ||
	    api_path_param(a, NULL, rel, sizeof(rel)) == -1)
		return;
	/* Non-blocking: a fifo planted by the code must not hang us. */
	fd = ws_open(session_rootfd(s), rel, O_RDONLY | O_NONBLOCK | O_NOCTTY,
	    0);
	if (fd == -1) {
		api_open_error(a, "get");
		return;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		close(fd);
		api_error(a->req, 400, S_ISDIR(st.st_mode) ?
		    "the path is a directory" : "not a regular file");
		return;
	}
	log_info("get %s %s: %lld bytes", a->sid, rel, (long long)st.st_size);
	http_reply_file(a->req, 200, ws_mime_type(rel), fd, 0, st.st_size);
}

static void
api_put_discard(struct api_req *a)
{
	if (a->tmpfd != -1) {
		close(a->tmpfd);
		a->tmpfd = -1;
	}
	if (a->tmpname[0] != '\0') {
		unlinkat(sbx_conf->uploads_fd, a->tmpname, 0);
		a->tmpname[0] = '\0';
	}
}

static int
put_part_begin(void *arg, const struct multipart_part *p)
{
	struct api_req	*a = arg;

	a->part = 0;
	if (strcmp(p->name, "file") == 0) {
		if (a->have_file) {
			a->put_status = 400;
			a->put_error = "more than one file part";
			return -1;
		}
		a->have_file = 1;
		a->part = 1;
		strlcpy(a->filename, p->filename, sizeof(a->filename));
	} else if (strcmp(p->name, "path") == 0) {
		a->part = 2;
		a->pathlen = 0;
		a->path[0] = '\0';
	}
	return 0;
}

static int
put_part_data(void *arg, const void *data, size_t len)
{
	struct api_req	*a = arg;
	const char	*p = data;
	ssize_t		 n;

	if (a->part == 2) {
		if (a->pathlen + len >= sizeof(a->path)) {
			a->put_status = 400;
			a->put_error = "path too long";
			return -1;
		}
		memcpy(a->path + a->pathlen, data, len);
		a->pathlen += len;
		a->path[a->pathlen] = '\0';
		return 0;
	}
	if (a->part != 1)
		return 0;
	if (a->written + (int64_t)len > sbx_conf->limits.max_put) {
		a->put_status = 413;
		a->put_error = "file larger than the backend's cap";
		return -1;
	}
	while (len > 0) {
		if ((n = write(a->tmpfd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			log_warn("put %s: write", a->sid);
			a->put_status = 500;
			a->put_error = "cannot store the file";
			return -1;
		}
		p += n;
		len -= n;
		a->written += n;
	}
	return 0;
}

static int
put_part_end(void *arg)
{
	return 0;
}

static const struct multipart_cb put_cb = {
	put_part_begin, put_part_data, put_part_end
};

static void
api_put_begin(struct api_req *a)
{
	const char	*why, *ctype;
	char		 rnd[ID_BUFSIZE];

	if (session_find(a->sid) == NULL) {
		api_error(a->req, 404, "no such session");
		return;
	}
	if (a->req->content_length > sbx_conf->limits.max_put + 65536) {
		api_error(a->req, 413, "file larger than the backend's cap");
		return;
	}
	ctype = http_header_get(a->req, "content-type");
	if ((a->mp = multipart_new(ctype ? ctype : "", &put_cb, a,
	    &why)) == NULL) {
		api_error(a->req, 400, why);
		return;
	}
	id_new(rnd, sizeof(rnd), "up-");
	strlcpy(a->tmpname, rnd, sizeof(a->tmpname));
	a->tmpfd = openat(sbx_conf->uploads_fd, a->tmpname,
	    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (a->tmpfd == -1) {
		log_warn("put: temporary file");
		a->tmpname[0] = '\0';
		api_error(a->req, 500, "cannot store the file");
		return;
	}
	http_body_accept(a->req);
}

static void
api_put_fail(struct api_req *a, int status, const char *message)
{
	api_put_discard(a);
	if (!a->req->replied)
		api_error(a->req, status, message);
	a->replied = 1;
}

static void
api_put_end(struct api_req *a)
{
	struct session	*s;
	struct json_object *o;
	const char	*target, *leaf, *base;
	char		 joined[8192], rel[4096];
	int		 dirfd;

	if (multipart_finish(a->mp) == -1) {
		api_put_fail(a, 400, multipart_error(a->mp));
		return;
	}
	if (!a->have_file) {
		api_put_fail(a, 400, "no file part");
		return;
	}
	target = a->pathlen > 0 ? a->path : a->filename;
	if (*target == '\0') {
		api_put_fail(a, 400, "no path and no filename");
		return;
	}
	if (target[strlen(target) - 1] == '/') {
		/* A directory was named: keep the upload's own name. */
		base = strrchr(a->filename, '/');
		base = base ? base + 1 : a->filename;
		snprintf(joined, sizeof(joined), "%s%s", target, base);
		target = joined;
	}
	if (ws_clean_path(target, rel, sizeof(rel)) == -1) {
		api_put_fail(a, 403, "path outside the workspace");
		return;
	}
	if (strcmp(rel, ".") == 0) {
		api_put_fail(a, 400, "the path names the workspace itself");
		return;
	}
	if ((s = api_session(a)) == NULL) {
		api_put_discard(a);
		return;
	}
	if ((dirfd = ws_open_parent(session_rootfd(s), rel, &leaf)) == -1) {
		api_put_discard(a);
		api_open_error(a, "put");
		return;
	}
	close(a->tmpfd);
	a->tmpfd = -1;
	if (renameat(sbx_conf->uploads_fd, a->tmpname, dirfd, leaf) == -1) {
		int saved = errno;

		close(dirfd);
		api_put_discard(a);
		if (saved == EISDIR || saved == ENOTEMPTY || saved == EEXIST)
			api_error(a->req, 400, "the path is a directory");
		else {
			errno = saved;
			api_open_error(a, "put");
		}
		return;
	}
	a->tmpname[0] = '\0';
	close(dirfd);
	log_info("put %s %s: %lld bytes", a->sid, rel, (long long)a->written);
	o = json_object_new_object();
	json_object_object_add(o, "path", json_object_new_string(rel));
	json_object_object_add(o, "size_bytes",
	    json_object_new_int64(a->written));
	api_json(a->req, 201, o);
}

static void
api_route(struct api_req *a)
{
	struct http_request	*req = a->req;
	const char		*rest;

	if (strcmp(req->path, "/health") == 0 && req->method == HTTP_M_GET) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "status",
		    json_object_new_string("ok"));
		json_object_object_add(o, "sessions",
		    json_object_new_int(session_count()));
		api_json(req, 200, o);
		return;
	}
	if (strcmp(req->path, "/sessions") == 0) {
		if (req->method != HTTP_M_POST) {
			api_error(req, 405, "method not allowed");
			return;
		}
		req->route = "create";
		a->route = R_CREATE;
		http_body_accept(req);
		return;
	}
	if ((rest = api_split(req->path, a->sid, sizeof(a->sid))) == NULL) {
		api_error(req, 404, "no such route");
		return;
	}
	if (*rest == '\0' && req->method == HTTP_M_DELETE) {
		req->route = "destroy";
		api_destroy(a);
	} else if (strcmp(rest, "/exec") == 0 && req->method == HTTP_M_POST) {
		req->route = "exec";
		a->route = R_EXEC;
		http_body_accept(req);
	} else if (strcmp(rest, "/files/list") == 0 &&
	    req->method == HTTP_M_GET) {
		req->route = "list";
		api_list(a);
	} else if (strcmp(rest, "/files") == 0 && req->method == HTTP_M_GET) {
		req->route = "get";
		api_get(a);
	} else if (strcmp(rest, "/files") == 0 && req->method == HTTP_M_POST) {
		req->route = "put";
		a->route = R_PUT;
		api_put_begin(a);
	} else if (*rest == '\0' || strcmp(rest, "/exec") == 0 ||
	    strcmp(rest, "/files") == 0 || strcmp(rest, "/files/list") == 0)
		api_error(req, 405, "method not allowed");
	else
		api_error(req, 404, "no such route");
}

static int
api_is_files_path(const char *path)
{
	size_t	 n = strlen(path);

	return n >= 6 && strcmp(path + n - 6, "/files") == 0;
}

static void
api_on_request(struct http_request *req, void *arg)
{
	struct api_req	*a;

	if ((a = calloc(1, sizeof(*a))) == NULL) {
		api_error(req, 500, "out of memory");
		return;
	}
	a->req = req;
	a->tmpfd = -1;
	req->arg = a;
	if (!api_authorized(req)) {
		api_error(req, 401, "missing or wrong bearer token");
		return;
	}
	if (req->method == HTTP_M_POST && req->content_length > API_MAX_JSON &&
	    !api_is_files_path(req->path)) {
		api_error(req, 413, "request body too large");
		return;
	}
	api_route(a);
}

static void
api_on_body(struct http_request *req, const void *data, size_t len,
    void *arg)
{
	struct api_req	*a = req->arg;
	char		*p;

	if (a == NULL || a->replied || req->replied)
		return;
	if (a->route == R_PUT) {
		if (multipart_feed(a->mp, data, len) == -1) {
			if (a->put_status == 0) {
				a->put_status = 400;
				a->put_error = multipart_error(a->mp);
			}
			api_put_fail(a, a->put_status, a->put_error);
		}
		return;
	}
	if (a->len + len > API_MAX_JSON) {
		a->replied = 1;
		api_error(req, 413, "request body too large");
		return;
	}
	if ((p = realloc(a->body, a->len + len + 1)) == NULL) {
		a->replied = 1;
		api_error(req, 500, "out of memory");
		return;
	}
	a->body = p;
	memcpy(a->body + a->len, data, len);
	a->len += len;
	a->body[a->len] = '\0';
}

static void
api_on_body_end(struct http_request *req, void *arg)
{
	struct api_req	*a = req->arg;

	if (a == NULL || a->replied || req->replied)
		return;
	switch (a->route) {
	case R_CREATE:
		api_create(a);
		break;
	case R_EXEC:
		api_exec(a);
		break;
	case R_PUT:
		api_put_end(a);
		break;
	default:
		break;
	}
}

static void
api_on_free(struct http_request *req, void *arg)
{
	struct api_req	*a = req->arg;

	if (a == NULL)
		return;
	if (a->exec != NULL)
		session_exec_cancel(a->exec);
	api_put_discard(a);
	if (a->mp != NULL)
		multipart_free(a->mp);
	free(a->body);
	free(a);
	req->arg = NULL;
}

void
api_handler(struct http_handler *h)
{
	memset(h, 0, sizeof(*h));
	h->on_request = api_on_request;
	h->on_body = api_on_body;
	h->on_body_end = api_on_body_end;
	h->on_free = api_on_free;
}
