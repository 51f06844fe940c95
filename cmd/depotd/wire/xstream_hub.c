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
 * xstream_hub.c: where a reader hands the hub's deltas (text, a tool
 * call's start and its argument fragments, the finish, the usage) to
 * the caller's writer, through the writer's table, and where the
 * bound on tool calls is kept.
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "util.h"
#include "wire.h"
#include "xstream.h"

/*
 * A tool call numbered index (from 0) is one too many: the answer
 * fails, as the caller could not be given the calls past the bound
 * and answering some of them would lose the rest.
 */
int
xstream_hub_tools_over(struct xstream *xs, int64_t index)
{
	if (index >= 0 && index < xs->max_tools)
		return 0;
	xs->over = XSTREAM_OVER_TOOLS;
	xs->failed = 1;
	return 1;
}

void
xstream_hub_text(struct xstream *xs, const char *s, size_t len)
{
	if (len > 0 && !xs->finished)
		xs->w->text(xs, s, len);
}

int
xstream_hub_tool_start(struct xstream *xs, int index, const char *id,
    const char *name)
{
	char	 made[ID_BUFSIZE];

	if (xstream_hub_tools_over(xs, index))
		return -1;
	if (id == NULL) {	/* some servers leave it out */
		id_new(made, sizeof(made), "call_");
		id = made;
	}
	if (!xs->finished)
		xs->w->tool_start(xs, index, id, name != NULL ? name : "");
	return 0;
}

int
xstream_hub_tool_args(struct xstream *xs, int index, const char *s, size_t len)
{
	if (index < 0 || index >= XSTREAM_TOOLS_MAX)
		return -1;
	if (len > 0 && !xs->finished)
		xs->w->tool_args(xs, index, s, len);
	return 0;
}

void
xstream_hub_finish(struct xstream *xs, const char *reason, const char *seq)
{
	if (xs->finished)
		return;
	xs->finished = 1;
	if (seq != NULL && *seq != '\0' && xs->stop_seq == NULL)
		xs->stop_seq = strdup(seq);	/* none if out of memory */
	xs->w->finish(xs, reason);
}

/* Counts not in this event keep what earlier ones said. */
void
xstream_hub_usage(struct xstream *xs, enum wire w, struct json_object *usage)
{
	wire_usage_merge(w, usage, &xs->usage);
}
