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
 * wire.h: the wire translators, all the rest of depotd sees of them.
 *
 *   xlate.c		whole requests and answers between the three wire
 *			formats (xlate_chat.c, xlate_messages_*.c,
 *			xlate_responses.c: one dialect each)
 *   xstream.c		the same for streamed answers, event by event
 *			(xstream_chat.c, xstream_messages.c,
 *			xstream_responses.c)
 *   xstream_replay.c	a whole chat answer told again as a stream
 *   tools.c		the gateway's code-execution tool in each wire
 *   wire_words.c	the providers' words for stop reasons, token counts
 *   wire_errors.c	the providers' error types for an HTTP status
 *
 * The hub format is chat completions: a Responses request to an
 * Anthropic upstream goes Responses -> chat -> Messages, and its
 * answer comes back the other way.  Everything here is a function of
 * its arguments: no request, no configuration, no event loop.
 */
#ifndef DEPOTD_WIRE_H
#define DEPOTD_WIRE_H

#include <sys/types.h>
#include <stdint.h>

#include "jsontext.h"

struct json_object;

/* The wire formats a caller or an upstream speaks. */
enum wire {
	WIRE_CHAT,		/* OpenAI chat completions */
	WIRE_RESPONSES,		/* OpenAI Responses */
	WIRE_MESSAGES,		/* Anthropic Messages */
};

#define JSON_DEPTH_MAX		JSON_TEXT_DEPTH_MAX /* jsontext.h: nesting accepted */

/* xlate.c: whole requests and whole answers. */

/*
 * A new request in wire "to" made from req in wire "from" (from == to:
 * a copy, every unknown field kept).  The model field is left as the
 * caller wrote it; the route sets the remote name.  max_tokens is the
 * model's, for a Messages target when req gives none.  NULL with a
 * message in err when the request cannot be expressed (the caller's
 * 400).
 */
struct json_object *xlate_request(enum wire from, enum wire to,
	    struct json_object *req, int max_tokens, char *err,
	    size_t errlen);
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

/* wire_words.c: the providers' words for stop reasons and tokens. */
#define WIRE_TOKENS_MAX	((int64_t)1 << 48)	/* past any model's count */
/*
 * A token count as an upstream sent it: -1 when it is none (absent, not
 * an integer, negative), else at most WIRE_TOKENS_MAX, so that the few
 * a usage holds add up without overflow.
 */
int64_t		 wire_tokens(struct json_object *);
const char	*wire_stop_to_chat(const char *);
const char	*wire_stop_to_messages(const char *);
/* A Messages stop_sequence named beside "end_turn": "stop_sequence". */
void		 wire_stop_named(struct json_object *);

/*
 * wire_errors.c: the error type (and code) each provider gives an HTTP
 * status, for every envelope depotd writes: whole replies (fe_reply.c)
 * and errors in a stream (xstream_*.c).
 */
const char	*wire_error_type_openai(int status);
const char	*wire_error_type_anthropic(int status);
/* The code of a Responses stream's error event. */
const char	*wire_error_code_responses(int status);

/* wire_usage.c: token counts, the same in every dialect's words. */
struct wire_usage {
	int64_t	 input;		/* not read from the cache; -1 unknown */
	int64_t	 cache_read;	/* input read from the cache; -1 unsaid */
	int64_t	 cache_write;	/* input written to it (Anthropic) */
	int64_t	 output;
	int64_t	 reasoning;	/* of output; -1 unsaid */
};
void		 wire_usage_init(struct wire_usage *);
/* The counts a dialect's usage object has, over those in u. */
void		 wire_usage_merge(enum wire, struct json_object *,
		    struct wire_usage *);
int		 wire_usage_known(const struct wire_usage *);
int64_t		 wire_usage_in(const struct wire_usage *);
/* A dialect's usage object, as its plain answers carry it. */
struct json_object *wire_usage_json(enum wire, const struct wire_usage *);

/* wire_ids.c: answer ids in the caller's dialect. */
const char	*wire_id_prefix(enum wire);
void		 wire_id_choose(enum wire, const char *upstream, char *buf,
		    size_t len);
void		 wire_id_fix(enum wire, struct json_object *);

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
/*
 * A chat caller asked for usage (stream_options.include_usage): its
 * stream ends with one usage chunk, which it gets only then; depotd
 * asks its upstream for usage in any case, for its own log.
 */
void		 xstream_caller_usage(struct xstream *, int asked);
/*
 * The container the request ran in ({id, expires_at, skills}), told
 * to a Messages caller on message_delta.delta.container; a reference
 * is taken.
 */
void		 xstream_container(struct xstream *, struct json_object *);
void		 xstream_free(struct xstream *);
/* An error event in the caller's wire (after the status went out). */
void		 xstream_error(enum wire to, int status, const char *message,
		    xstream_emit_cb, void *arg);

/*
 * xstream_replay.c: a whole chat.completion fed to a translator made
 * from WIRE_CHAT as the chunks a stream would have carried.
 */
int		 xstream_replay(struct xstream *, struct json_object *);

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
/*
 * The container a request names to run its code in: Messages'
 * container ("<id>" or {id, ...}), Responses' code_interpreter tool's
 * ("<id>"; {type: "auto", ...} names none).  0 with id "" for none, or
 * "-" for one no id can be (too long: refused as missing); -1 when the
 * parameter is neither string nor object.
 */
int		 tools_container(enum wire, struct json_object *req, char *id,
		    size_t len);
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

#endif
