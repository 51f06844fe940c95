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
 * sse.h: an incremental parser of server-sent events (the WHATWG
 * "text/event-stream" rules), for answers streamed by a model upstream.
 * Bytes may be fed split anywhere; each complete event goes to a
 * callback.  Nothing is kept beyond the event being read, and that is
 * bounded.
 */
#ifndef DEPOT_SSE_H
#define DEPOT_SSE_H

#include <stddef.h>

/*
 * Called once per dispatched event.  event is the "event:" field, ""
 * when the event had none; data is the "data:" lines joined with "\n",
 * NUL-terminated, len bytes long (it may hold NULs of its own).  Both
 * are valid only during the call.  Return 0 to go on, -1 to stop: the
 * sse_feed that called it then returns -1.
 */
typedef int	(*sse_event_cb)(void *arg, const char *event,
		    const char *data, size_t len);

struct sse_parser;

/*
 * max_event bounds the bytes of one event held at once (its event
 * name, its data and the line being read); past it sse_feed fails.
 * NULL when out of memory.
 */
struct sse_parser *sse_new(size_t max_event, sse_event_cb, void *arg);
/*
 * 0, or -1 when an event is over max_event or the callback returned
 * -1.  After -1 the parser stays failed and every call returns -1.
 */
int		 sse_feed(struct sse_parser *, const void *, size_t);
/*
 * The stream ended.  An event not closed by its blank line is dropped,
 * as the standard says.  0 after a clean end; -1 when something was
 * dropped (the upstream was cut mid-event) or the parser had failed.
 */
int		 sse_finish(struct sse_parser *);
void		 sse_free(struct sse_parser *);

#endif
