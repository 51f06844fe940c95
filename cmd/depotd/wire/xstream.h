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
 * xstream.h: the streamed-answer translators' private parts.
 *
 * A reader turns an upstream's events into the hub's deltas (chat
 * completions semantics: text, a tool call's start and its argument
 * fragments, a finish reason, usage); a writer turns the deltas into
 * the caller's events.  Same wire in and out skips the hub: each event
 * passes through with only its model name put back.
 *
 * The files call one way: xstream.c into the dialects
 * (xstream_chat.c, xstream_messages.c, xstream_responses.c), and
 * they into xstream_hub.c and xstream_emit.c.  A writer is reached
 * only through its table (struct xstream_writer), a reader through
 * the pointer xstream.c sets.
 */
#ifndef DEPOTD_XSTREAM_H
#define DEPOTD_XSTREAM_H

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

#define XSTREAM_BLOCKS_MAX	1024	/* Messages content blocks read */
#define XSTREAM_ID_LEN	64

struct json_object;
struct xstream;

/* A caller's wire, fed the hub's deltas. */
struct xstream_writer {
	void	(*start)(struct xstream *);
	void	(*text)(struct xstream *, const char *, size_t);
	/* index: the hub's tool number, below XSTREAM_TOOLS_MAX */
	void	(*tool_start)(struct xstream *, int index, const char *id,
		    const char *name);
	void	(*tool_args)(struct xstream *, int index, const char *,
		    size_t);
	/* reason: a chat finish_reason */
	void	(*finish)(struct xstream *, const char *reason);
	/*
	 * A whole pre-built block or item (xstream_prepend), before any
	 * of the above but start; NULL when the wire has none.
	 */
	void	(*whole)(struct xstream *, struct json_object *);
	/* The upstream's terminator: whatever closes the caller's stream. */
	void	(*end)(struct xstream *);
	void	(*free)(struct xstream *);
};

/* An upstream's wire read into the hub (data: parsed JSON). */
typedef int	(*xstream_reader)(struct xstream *, const char *event,
		    struct json_object *data);
/* Same wire: fix the event and read its usage; 1 at the terminator. */
typedef int	(*xstream_passer)(struct xstream *, const char *event,
		    struct json_object *data);

struct xstream {
	enum wire		 from;
	enum wire		 to;
	char			*model;		/* the caller's name */
	xstream_emit_cb		 emit;
	void			*arg;
	const struct xstream_writer	*w;		/* NULL: pass-through */
	xstream_reader		 reader;
	xstream_passer		 passer;
	struct wire_usage	 usage;		/* as far as told */
	int			 want_usage;	/* chat: the caller's include_usage */
	int			 usage_sent;	/* and its chunk went */
	char			 id[XSTREAM_ID_LEN]; /* pass-through: the answer's */
	char			*stop_seq;	/* the stop sequence matched */
	struct json_object	*container;	/* Messages: the run's */
	int64_t			 created;	/* seconds since the epoch */
	int			 started;	/* writer's opening sent */
	int			 finished;	/* hub finish seen */
	int			 ended;		/* upstream terminator seen */
	int			 failed;
	int			 over;		/* XSTREAM_OVER_*, on failure */
	int64_t			 max_bytes;	/* 0: no bound */
	int64_t			 bytes;		/* event data so far */
	int			 max_tools;	/* at most XSTREAM_TOOLS_MAX */
	int			 npassed;	/* pass-through: calls seen */
	/* readers: chat's tool calls seen; Messages' blocks */
	unsigned char		 seen[XSTREAM_TOOLS_MAX];
	short			*blocks;	/* tool, or XSTREAM_BLOCK_* */
	size_t			 nblocks;
	int			 ntools;
	void			*wr;		/* the writer's state */
};

#define XSTREAM_BLOCK_TEXT	-1	/* a Messages text block */
#define XSTREAM_BLOCK_OTHER	-2	/* thinking and such: not passed on */

/* xstream_emit.c */
void	 xstream_send(xstream_emit_cb, void *, const char *event,
	    struct json_object *);
/* Both take obj over. */
void	 xstream_emit_json(struct xstream *, const char *event,
	    struct json_object *);
void	 xstream_emit_raw(struct xstream *, const char *event, const char *);
struct json_object *xstream_object(const char *key, ...);
#define XSTREAM_STR(s)	json_object_new_string(s)
#define XSTREAM_INT(i)	json_object_new_int64(i)
struct json_object *xstream_get(struct json_object *, const char *path);
const char *xstream_str(struct json_object *, const char *path);
int64_t	 xstream_int(struct json_object *, const char *path);
const char *xstream_event_name(const char *event, const char *type);
void	 xstream_set_model(struct xstream *, struct json_object *);
void	 xstream_set_id(struct xstream *, struct json_object *);

/* xstream_hub.c */
void	 xstream_hub_text(struct xstream *, const char *, size_t);
int	 xstream_hub_tool_start(struct xstream *, int, const char *,
	    const char *);
int	 xstream_hub_tool_args(struct xstream *, int, const char *, size_t);
/* seq: the stop sequence that matched, if the upstream names it */
void	 xstream_hub_finish(struct xstream *, const char *reason,
	    const char *seq);
int	 xstream_hub_tools_over(struct xstream *, int64_t index);
/* usage: an upstream's usage object, in its wire */
void	 xstream_hub_usage(struct xstream *, enum wire,
	    struct json_object *usage);

/* xstream_chat.c */
extern const struct xstream_writer xstream_chat_writer;
int	 xstream_chat_read(struct xstream *, const char *,
    struct json_object *);
int	 xstream_chat_pass(struct xstream *, const char *,
    struct json_object *);
void	 xstream_chat_pass_end(struct xstream *);
void	 xstream_chat_error(int status, const char *message, xstream_emit_cb,
	    void *);

/* xstream_messages.c */
extern const struct xstream_writer xstream_messages_writer;
int	 xstream_messages_read(struct xstream *, const char *,
	    struct json_object *);
int	 xstream_messages_pass(struct xstream *, const char *,
	    struct json_object *);
void	 xstream_messages_error(int status, const char *message,
	    xstream_emit_cb, void *);

/* xstream_responses.c */
extern const struct xstream_writer xstream_responses_writer;
int	 xstream_responses_pass(struct xstream *, const char *,
	    struct json_object *);
void	 xstream_responses_error(int status, const char *message,
	    xstream_emit_cb, void *);

#endif
