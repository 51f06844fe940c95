# Copyright (c) 2026 The depotd authors
#
# Permission to use, copy, modify, and distribute this software for any
# purpose with or without fee is hereby granted, provided that the above
# copyright notice and this permission notice appear in all copies.
#
# THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
# WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
# MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR
# ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
# WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN
# ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF
# OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE.

# double_wire.py: how the upstream double puts an answer on the wire,
# double_hostile.py: the upstream double as a hostile provider (issue
# 18).  Each is a fault kind a turn asks for, in the wire format of the
# route asked:
#   endless     a stream of text deltas that never ends (a plain answer:
#               a chunked JSON body whose text never closes); "noise":
#               true sends only lines an SSE reader must skip, no event
#   huge        a whole answer whose text is "size" bytes (60 MiB when
#               not said), plain or streamed in 16 KiB deltas
#   many_tools  "count" tool calls (2000 when not said) in one turn
#   noise       the normal stream with lines an SSE reader must skip
#               between its events: comments (one not UTF-8), id: and
#               retry: fields, unknown fields, bare words
# An endless answer stops when the client goes or after ENDLESS_MAX.

import json
import time

import double_answer as ans

ENDLESS_MAX = 300	# seconds
CHUNK = "lorem-ipsum-dolor-sit-amet-" * 607	# 16 KiB, one "word"
KINDS = ("endless", "huge", "many_tools", "noise")
NOISE = (b": \xff\xfe a comment that is not UTF-8\n"
    b"id: 42\nretry: 10000\nx-unknown-field: {\"not\": \"an event\"}\n"
    b"justaword\n: data: {\"type\":\"error\"}\n\n")


def many_tools(turn, fault):
    """The turn with count calls of one client tool."""
    n = int(fault.get("count", 2000))
    return dict(turn, tool_calls=[{"name": "lookup", "arguments": {"n": i}}
        for i in range(n)])


def events(dialect, a, body):
    """The stream of a with text CHUNK, cut around its one text delta:
    (opening events, the delta event, closing events)."""
    if dialect == "chat":
        ev = ans.chat_events(a, bool((body.get("stream_options") or
            {}).get("include_usage")))
        d = 1
    elif dialect == "messages":
        ev = ans.msg_events(a)
        d = 3
    else:
        ev = ans.resp_events(a, body)
        d = 4
    return ev[:d], ev[d], ev[d + 1:]


def renumber(event, seq):
    """A Responses event with its sequence number set."""
    head, _, data = event.partition(b"data: ")
    obj = json.loads(data)
    obj["sequence_number"] = seq
    return head + b"data: " + ans.dumps(obj).encode() + b"\n\n"


def plain_halves(dialect, a, body):
    """A plain answer's JSON around its text, as the double indents it."""
    mark = "\u0001MARK\u0001"
    a = dict(a, text=mark)
    obj = ans.chat_plain(a) if dialect == "chat" else ans.msg_plain(a) \
        if dialect == "messages" else ans.resp_plain(a, body)
    text = json.dumps(obj, ensure_ascii=False,
        indent=None if dialect == "messages" else 2)
    i = text.index(json.dumps(mark)[1:-1])
    return text[:i].encode(), text[i + len(json.dumps(mark)) - 2:].encode()


def send(h, w, dialect, body, a, fault):
    """Writes the hostile answer; ClientGone when the client left."""
    stream = bool(body.get("stream"))
    kind = fault.get("kind")
    size = int(fault.get("size", 60 * 1024 * 1024))
    ctype = "text/event-stream; charset=utf-8" if stream else \
        "application/json"
    if kind == "huge" and not stream:	# sent as it is made: no wait
        head, tail = plain_halves(dialect, dict(a, text=CHUNK), body)
        whole, rest = divmod(size, len(CHUNK))
        w.stream = False
        w.head(200, [("Content-Type", ctype)], len(head) + size + len(tail))
        w.body(head)
        for _ in range(whole):
            w.body(CHUNK.encode())
        w.body(CHUNK[:rest].encode() + tail[:-1])
        h.mark_ended()
        w.body(tail[-1:])
        return
    w.stream = True		# chunked, plain or not
    h.close_connection = True
    w.head(200, [("Content-Type", ctype), ("Cache-Control", "no-cache")],
        0)
    a = dict(a, text=CHUNK)
    if not stream:		# endless: a JSON text that never closes
        head, _ = plain_halves(dialect, a, body)
        w.body(head)
        end = time.monotonic() + ENDLESS_MAX
        while time.monotonic() < end:
            w.body(CHUNK.encode())
        return
    opening, delta, closing = events(dialect, a, body)
    if kind == "noise":
        for p in opening + [delta] + closing:
            w.body(NOISE + p)
        h.mark_ended()
        w.raw(b"0\r\n\r\n")
        return
    if kind == "endless" and fault.get("noise"):
        end = time.monotonic() + ENDLESS_MAX
        while time.monotonic() < end:
            w.body(NOISE * 64)
        return
    for p in opening:
        w.body(p)
    seq = len(opening)
    sent = 0
    end = time.monotonic() + ENDLESS_MAX
    while time.monotonic() < end and (kind == "endless" or sent < size):
        w.body(renumber(delta, seq) if dialect == "responses" else delta)
        seq += 1
        sent += len(CHUNK)
    if kind == "endless":
        return
    for p in closing:
        w.body(renumber(p, seq) if dialect == "responses" else p)
        seq += 1
    h.mark_ended()
    w.raw(b"0\r\n\r\n")
