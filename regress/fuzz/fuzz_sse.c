/* fuzz-sources: lib/sse.c lib/util.c lib/log.c lib/jsontext.c cmd/depotd/wire/xstream.c cmd/depotd/wire/xstream_emit.c cmd/depotd/wire/xstream_hub.c cmd/depotd/wire/xstream_chat.c cmd/depotd/wire/xstream_messages.c cmd/depotd/wire/xstream_responses.c cmd/depotd/wire/wire_words.c cmd/depotd/wire/wire_errors.c cmd/depotd/wire/wire_usage.c cmd/depotd/wire/wire_ids.c */
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
 * fuzz_sse.c: an upstream's streamed answer, any bytes at all, through
 * the SSE parser and a stream translator, as a model route runs them.
 * The first byte picks the upstream's wire and the caller's, the second
 * the size of the reads and the event bound.  Every event written must
 * be a JSON object (or chat's [DONE]) with an event line exactly where
 * the caller's wire has one; and reading the input whole must write the
 * same events, of the same lengths, as reading it in pieces.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "sse.h"
#include "wire/xstream.h"

#define OUT_MAX	4096

struct out {
	enum wire	 to;
	size_t		 n;
	size_t		 len[OUT_MAX];	/* each event's data length */
	uint32_t	 ev[OUT_MAX];	/* a hash of its name */
	int		 errors;	/* xstream_error events */
};

static uint32_t
hash(const char *s)
{
	uint32_t	 h = 2166136261u;

	if (s == NULL)
		return 0;
	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h | 1;
}

static void
emit(void *arg, const char *event, const char *data, size_t len)
{
	struct out		*o = arg;
	struct json_object	*obj;

	if (strlen(data) != len)
		abort();
	if ((event == NULL) != (o->to == WIRE_CHAT))
		abort();
	if (event != NULL && (*event == '\0' || strpbrk(event, "\r\n")))
		abort();
	if (!(o->to == WIRE_CHAT && strcmp(data, "[DONE]") == 0)) {
		obj = json_tokener_parse(data);
		if (!json_object_is_type(obj, json_type_object))
			abort();
		json_object_put(obj);
	}
	if (o->n < OUT_MAX) {
		o->len[o->n] = len;
		o->ev[o->n] = hash(event);
	}
	o->n++;
}

static int
to_xstream(void *arg, const char *event, const char *data, size_t len)
{
	return xstream_event(arg, event, data, len);
}

/* One run; the results in o. */
static void
run(enum wire from, enum wire to, const uint8_t *data, size_t size,
    size_t step, size_t max, struct out *o)
{
	struct xstream		*xs;
	struct sse_parser	*p;
	size_t			 at, n;
	int64_t			 in, out;
	int			 rc = 0;

	memset(o, 0, sizeof(*o));
	o->to = to;
	if ((xs = xstream_new(from, to, "caller-m", emit, o)) == NULL) {
		if (from != WIRE_RESPONSES || to == WIRE_RESPONSES)
			abort();
		return;
	}
	if ((p = sse_new(max, to_xstream, xs)) == NULL)
		abort();
	for (at = 0; at < size && rc == 0; at += n) {
		n = size - at < step ? size - at : step;
		rc = sse_feed(p, data + at, n);
	}
	if (rc == 0)
		rc = sse_finish(p);
	if (xstream_end(xs) == -1 || rc == -1)
		xstream_error(to, 502, "upstream failed", emit, o);
	xstream_usage(xs, &in, &out);
	if (in < -1 || out < -1)
		abort();
	sse_free(p);
	xstream_free(xs);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct out	 whole, split;
	enum wire		 from, to;
	size_t			 step, max, i;

	if (size < 2)
		return 0;
	from = data[0] % 3;
	to = (data[0] / 3) % 3;
	step = 1 + data[1] % 16;
	max = data[1] & 0x80 ? 64 : 1 << 16;
	data += 2;
	size -= 2;
	run(from, to, data, size, size ? size : 1, max, &whole);
	run(from, to, data, size, step, max, &split);
	if (whole.n != split.n)
		abort();
	for (i = 0; i < whole.n && i < OUT_MAX; i++)
		if (whole.len[i] != split.len[i] || whole.ev[i] != split.ev[i])
			abort();
	return 0;
}
