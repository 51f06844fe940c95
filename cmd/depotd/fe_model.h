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
 * fe_model.h: the model routes' parts, all in the frontend.
 *
 *   fe_model.c	POST /v1/chat/completions, /v1/responses, /v1/messages:
 *			body, parse, model lookup, and the order of the rest
 *   fe_catalog.c	GET /v1/models and /v1/models/{id}, both dialects
 *   fe_upcall.c	one call to an upstream on libcurl's multi interface,
 *			with errors mapped into the caller's dialect
 *   fe_refs.c		file references: found, resolved under the caller's
 *			visibility, and rewritten inline or as text
 *   fe_upstream_body.c		an upstream request body of memory pieces and file
 *			descriptors sent as base64, with a known length
 *   fe_extract.c	PDF to text, asked of the extract child
 *   xlate_*.c		requests and answers between the three wire formats
 *   xstream_*.c	the same for streamed answers, event by event
 *   lib/sse.c		the server-sent-events parser
 *
 * The hub format is chat completions: a Responses request to an
 * Anthropic upstream goes Responses -> chat -> Messages, and its
 * answer comes back the other way.
 */
#ifndef DEPOTD_MODEL_H
#define DEPOTD_MODEL_H

#include <sys/types.h>
#include <stdint.h>

#include "config.h"
#include "jsontext.h"
#include "frontend.h"

struct json_object;
struct event_base;

/* The wire formats a caller or an upstream speaks. */
enum wire {
	WIRE_CHAT,		/* OpenAI chat completions */
	WIRE_RESPONSES,		/* OpenAI Responses */
	WIRE_MESSAGES,		/* Anthropic Messages */
};

#define JSON_DEPTH_MAX		JSON_TEXT_DEPTH_MAX	/* jsontext.h */

/* xlate.c: whole requests and whole answers. */

/*
 * A new request in wire "to" made from req in wire "from" (from == to:
 * a copy, every unknown field kept).  The model field is left as the
 * caller wrote it; the route sets the remote name.  model gives the
 * defaults a target needs (max_tokens for Messages).  NULL with a
 * message in err when the request cannot be expressed (the caller's
 * 400).
 */
struct json_object *xlate_request(enum wire from, enum wire to,
	    struct json_object *req, const struct model_conf *model,
	    char *err, size_t errlen);
/*
 * A caller's answer in wire "to" made from an upstream's answer in
 * "from"; model is the name the caller asked for.  NULL with err when
 * the upstream's answer is malformed (the caller's 502).
 */
struct json_object *xlate_response(enum wire from, enum wire to,
	    struct json_object *resp, const char *model,
	    char *err, size_t errlen);
/* Tokens in and out from an answer's usage; -1 when absent. */
void	 xlate_usage(enum wire, struct json_object *resp, int64_t *in,
	    int64_t *out);

/* wire_words.c: the providers' words for stop reasons and errors. */
#define WIRE_TOKENS_MAX	((int64_t)1 << 48)	/* past any model's count */
/*
 * A token count as an upstream sent it: -1 when it is none (absent, not
 * an integer, negative), else at most WIRE_TOKENS_MAX, so that the few
 * a usage holds add up without overflow.
 */
int64_t		 wire_tokens(struct json_object *);
const char	*stop_to_chat(const char *);
const char	*stop_to_messages(const char *);
const char	*anthropic_error_type(int status);

/* xstream_*.c: streamed answers. */

/*
 * Emits one server-sent event to the caller: event is the "event:"
 * line (NULL: none, as chat completions sends), data the "data:" line.
 */
typedef void	(*xstream_emit_cb)(void *arg, const char *event,
		    const char *data, size_t len);
struct xstream;
struct xstream	*xstream_new(enum wire from, enum wire to, const char *model,
		    xstream_emit_cb, void *arg);
/*
 * One event from the upstream (event "" when it had no "event:" line).
 * -1 when the upstream's stream is malformed; the caller then sends
 * xstream_error and ends.
 */
int		 xstream_event(struct xstream *, const char *event,
		    const char *data, size_t len);
/*
 * Whole blocks (a Messages caller) or output items (Responses) sent
 * first, as the provider streams its own server tools, before what the
 * translator is fed next: the native blocks of the gateway's code runs.
 * list (an array) is not taken.  -1 when the caller's wire has none
 * (chat, or a pass-through) or the model's own output already began.
 */
int		 xstream_prepend(struct xstream *, struct json_object *list);
/*
 * Bounds on one answer: max_bytes of event data in all (the writer
 * keeps no more than that), max_tools tool calls (at most
 * XSTREAM_TOOLS_MAX); 0 leaves a bound as it was.  Past either the
 * next xstream_event is -1 and xstream_limit says which.
 */
#define XSTREAM_TOOLS_MAX	128
#define XSTREAM_OVER_SIZE	1
#define XSTREAM_OVER_TOOLS	2
void		 xstream_limits(struct xstream *, int64_t max_bytes,
		    int max_tools);
int		 xstream_limit(const struct xstream *);
/* The upstream ended: closing events if due; -1 if it ended early. */
int		 xstream_end(struct xstream *);
void		 xstream_usage(const struct xstream *, int64_t *in,
		    int64_t *out);
void		 xstream_free(struct xstream *);
/* An error event in the caller's wire (after the status went out). */
void		 xstream_error(enum wire to, int status, const char *message,
		    xstream_emit_cb, void *arg);

/*
 * xstream_replay.c: a whole chat.completion fed to a translator made
 * from WIRE_CHAT as the chunks a stream would have carried.
 */
int		 xstream_replay(struct xstream *, struct json_object *);

/* fe_upstream_body.c: an upstream request body. */
struct upstream_body;
struct upstream_body	*upstream_body_new(struct event_base *);
/*
 * A placeholder string, to be put in the JSON where the base64 of fd's
 * size bytes belongs (inside a string value).  The body owns fd.
 */
const char	*upstream_body_placeholder(struct upstream_body *, int fd, int64_t size);
/* The same, naming the file (its id) the descriptor reads. */
const char	*upstream_body_placeholder_tagged(struct upstream_body *, int fd,
		    int64_t size, const char *tag);
/*
 * For a JSON sent again (a code-execution round): the same
 * placeholders; a regular file's is bound already (a duplicate of its
 * descriptor, read with pread), every other one is to be bound to a
 * fresh descriptor of the file its tag names.  NULL: out of memory or
 * descriptors.
 */
struct upstream_body	*upstream_body_again(const struct upstream_body *, struct event_base *);
size_t		 upstream_body_nfiles(const struct upstream_body *);
const char	*upstream_body_file_tag(const struct upstream_body *, size_t);
/* 1 when the i-th placeholder has its descriptor. */
int		 upstream_body_file_bound(const struct upstream_body *, size_t);
void		 upstream_body_bind(struct upstream_body *, size_t, int fd);
/* Serialises obj, cutting it at the placeholders.  0 or -1. */
int		 upstream_body_set_json(struct upstream_body *, struct json_object *);
int64_t		 upstream_body_length(const struct upstream_body *);
/*
 * CURLOPT_READFUNCTION (arg: the ubody).  Returns CURL_READFUNC_PAUSE
 * when a descriptor has nothing yet; the wake-up callback then runs
 * once it has, and the owner unpauses the transfer.
 */
size_t		 upstream_body_read(char *, size_t, size_t, void *);
void		 upstream_body_on_wake(struct upstream_body *, void (*)(void *), void *);
/* Bytes of the body already read by curl (for the log). */
int64_t		 upstream_body_sent(const struct upstream_body *);
void		 upstream_body_free(struct upstream_body *);

/* fe_refs.c: the request's file references. */

/* One resolved file, in the order the request first names it. */
struct fref {
	TAILQ_ENTRY(fref)	 entry;
	struct file_rec		 rec;
	int			 container_upload; /* named only as such */
	char			 seed_name[SBX_NAME_MAX]; /* in the sandbox */
};
TAILQ_HEAD(fref_list, fref);

struct refs;
/*
 * ok: 1 when every reference resolved and body was rewritten; 0 when
 * refs already replied (400 naming the id, or 502).
 */
typedef void	(*refs_done_cb)(void *arg, int ok);
/*
 * Finds every file reference in body (wire: the caller's), resolves
 * each under ar->who, and rewrites the blocks in place: natively read
 * files become inline base64 whose data is a ubody placeholder; for a
 * text-only model (or a PDF under pdf-as-text) text, extracted text or
 * the omission marker.  sandbox: container_upload blocks become the
 * sandbox marker instead of documents.
 */
struct refs	*refs_resolve(struct api_req *, enum wire,
		    struct json_object *body, const struct model_conf *,
		    struct upstream_body *, int sandbox, refs_done_cb, void *);
struct fref_list *refs_files(struct refs *);
/* Cancels whatever is in flight; no callback after this. */
void		 refs_free(struct refs *);

/* fe_extract.c: PDF to text in the extract child. */
void		 fe_extract_attach(int fd);
/*
 * Takes ownership of pdf_fd.  cb gets a pipe carrying the text (the
 * callee closes it), or -1 when extraction failed.  Returns a call
 * number for fe_extract_cancel, 0 when the child is not there (cb
 * has then run with -1).
 */
uint32_t	 fe_extract(int pdf_fd, int pages, int timeout,
		    void (*cb)(void *arg, int fd), void *arg);
void		 fe_extract_cancel(uint32_t);

/*
 * fe_seed.c: the request's files into the sandbox, in order, each under
 * a name of its own (seed_names, in fe_refs_rewrite.c, gives them: the
 * stored name's last segment, then name-2.ext, name-3.ext on a clash).
 */
void		 seed_names(struct fref_list *);
struct seeding;
struct sbx_lease;
typedef void	(*sbx_status_cb)(void *arg, int status, const char *message);
/* NULL, and no callback, when there is no file to seed. */
struct seeding	*fe_seed(struct api_req *, struct sbx_lease *,
		    const struct fref_list *, sbx_status_cb, void *);
void		 fe_seed_cancel(struct seeding *);

/* fe_broker.c: sandbox sessions leased from the broker. */
/* sbx_status_cb: 0, or what the request should get (502, 503). */
/*
 * result: {result_block, produced, outputs: [{path, filename, file_id,
 * size_bytes, mime_type}], skipped: [{path, reason}]}, NULL on failure.
 */
typedef void	(*sbx_result_cb)(void *arg, int status, const char *message,
		    struct json_object *result);
void		 fe_broker_attach(int fd);
/*
 * A session for the request: the caller's storage handle is delegated
 * to the broker (for the run's outputs), then the session is created.
 * NULL when there is no broker (cb not called).
 */
struct sbx_lease *fe_sbx_open(struct api_req *, sbx_status_cb, void *);
/* Takes ownership of fd; size bytes are sent under name. */
void		 fe_sbx_seed(struct sbx_lease *, int fd, const char *name,
		    int64_t size, sbx_status_cb, void *);
/* req: {tool, input, tool_use_id?}. */
void		 fe_sbx_exec(struct sbx_lease *, struct json_object *req,
		    sbx_result_cb, void *);
/* The session is destroyed; no callback runs after this. */
void		 fe_sbx_close(struct sbx_lease *);

/*
 * tools.c: the gateway's code-execution tool in each wire format: the
 * caller's declaration taken out, the function the model sees, its
 * calls found in an answer, a round appended to the transcript, and a
 * result rendered as text.
 */
#define TOOL_CODE_EXECUTION	"code_execution"
/*
 * Takes every {"type":"otari_code_execution"} (and provider-native
 * code-execution declaration, *native then set) out of req's tools.
 * 1 when there was one.
 */
int		 tools_take_declaration(enum wire, struct json_object *req,
		    int *native);
void		 tools_declare(enum wire, struct json_object *req);
/*
 * The code_execution calls in an answer: [{id, code}]; *foreign counts
 * the calls of the caller's own tools.  NULL when the answer is not one
 * of the wire's.
 */
struct json_object *tools_calls(enum wire, struct json_object *answer,
		    int *foreign);
/* Removes the code_execution calls from an answer (foreign ones stay). */
void		 tools_strip(enum wire, struct json_object *answer);
/* The answer's turn, then results [{id, text}], appended to req. */
int		 tools_append_round(enum wire, struct json_object *req,
		    struct json_object *answer, struct json_object *results);
/* A broker result as the model reads it; error when the run failed. */
char		*tools_render(struct json_object *result, const char *error);

/* fe_model.c, fe_catalog.c */
void		 fe_model_route(struct api_req *, enum wire);
void		 fe_catalog_route(struct api_req *);
/* fe_catalog.c: 404 for a model not configured, in the dialect. */
void		 fe_catalog_not_found(struct api_req *, const char *name);

#endif
