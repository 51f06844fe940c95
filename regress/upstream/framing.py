#!/usr/bin/env python3
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

# framing.py: the upstream double on the raw wire, what no SDK shows:
# the exact SSE framing of each dialect, one event a chunk, a drip's
# byte-sized chunks and their pace, CRLF and comments, a stall's
# silence, a reset, the control routes, turn matching by path, auth and
# the error envelopes.  Prints "ok - wire: ..." lines; exits 1 if any
# check failed.

import json
import socket
import sys
import time

sys.dont_write_bytecode = True	# no __pycache__ left in the checkout

import wire	# noqa: E402
from wire import ok, model, script, control, log, call	# noqa: E402

HI = [{"role": "user", "content": "hi there"}]
BODY = {
    "chat": {"model": "m", "messages": HI},
    "responses": {"model": "m", "input": "hi there"},
    "messages": {"model": "m", "max_tokens": 16, "messages": HI},
}


def stream(dialect, **extra):
    return dict(BODY[dialect], stream=True, **extra)


def chat_framing():
    script({"text": "a b", "tool_calls": [{"name": "f",
        "arguments": {"x": 1}}]})
    r = model("chat", stream("chat", stream_options={
        "include_usage": True}))
    ev = r.events()
    ok(r.headers.get("transfer-encoding") == "chunked" and
        r.headers.get("content-type", "").startswith("text/event-stream")
        and "content-length" not in r.headers,
        "chat stream: chunked text/event-stream", r.headers)
    ok(all(e is None for e, _ in ev) and ev[-1][1] == "[DONE]" and
        len(r.chunks) == len(ev) and all(c.endswith(b"\n\n") and
        c.startswith(b"data: ") for _, c in r.chunks),
        "chat stream: data-only events, one a chunk, then [DONE]", r.body)
    chunks = [json.loads(d) for _, d in ev[:-1]]
    calls = [c["choices"][0]["delta"]["tool_calls"][0] for c in chunks
        if c["choices"] and "tool_calls" in c["choices"][0]["delta"]]
    ok(chunks[0]["choices"][0]["delta"].get("role") == "assistant" and
        "id" in calls[0] and calls[0]["function"]["name"] == "f" and
        all(set(c) == {"index", "function"} and
        set(c["function"]) == {"arguments"} for c in calls[1:]) and
        json.loads("".join(c["function"]["arguments"] for c in calls)) ==
        {"x": 1}, "chat stream: tool call fragments", calls)
    ok(chunks[-2]["choices"][0]["finish_reason"] == "tool_calls" and
        chunks[-1]["choices"] == [] and
        chunks[-1]["usage"]["total_tokens"] > 0,
        "chat stream: finish_reason chunk, then usage chunk", chunks[-2:])
    r = model("chat", stream("chat"))
    ok(all(json.loads(d)["choices"] for _, d in r.events()[:-1]),
        "chat stream: no usage chunk without include_usage")
    r = model("chat", BODY["chat"])
    ok(r.headers.get("content-length") == str(len(r.body)) and
        "transfer-encoding" not in r.headers and r.json()["object"] ==
        "chat.completion", "chat plain: Content-Length, no chunks")


def messages_framing():
    script({"text": "a b", "tool_calls": [{"name": "f",
        "arguments": {"x": "y"}}]})
    r = model("messages", stream("messages"))
    ev = r.events()
    types = [e for e, _ in ev]
    ok(all(e == json.loads(d)["type"] for e, d in ev) and
        len(r.chunks) == len(ev), "messages stream: event: T matches "
        "data.type, one event a chunk", r.body)
    want = ["message_start", "ping", "content_block_start",
        "content_block_delta", "content_block_delta", "content_block_stop",
        "content_block_start"]
    ok(types[:7] == want and types[-3:] == ["content_block_stop",
        "message_delta", "message_stop"],
        "messages stream: event order", types)
    deltas = [json.loads(d)["delta"] for e, d in ev
        if e == "content_block_delta"]
    args = "".join(d["partial_json"] for d in deltas
        if d["type"] == "input_json_delta")
    md = json.loads(ev[-2][1])
    ok(json.loads(args) == {"x": "y"} and
        md["delta"]["stop_reason"] == "tool_use" and
        md["usage"]["output_tokens"] > 0,
        "messages stream: input_json_delta and message_delta", md)


def responses_framing():
    script({"text": "a b", "tool_calls": [{"name": "f",
        "arguments": {}}]})
    r = model("responses", stream("responses"))
    ev = [(e, json.loads(d)) for e, d in r.events()]
    ok(all(e == d["type"] and d["sequence_number"] == i
        for i, (e, d) in enumerate(ev)) and len(r.chunks) == len(ev),
        "responses stream: event: T, sequence_number 0..n, one a chunk")
    done = [d["item"] for e, d in ev if e == "response.output_item.done"]
    final = ev[-1][1]["response"]
    ok(ev[0][0] == "response.created" and
        ev[1][0] == "response.in_progress" and
        ev[-1][0] == "response.completed" and final["output"] == done and
        [i["type"] for i in done] == ["message", "function_call"],
        "responses stream: completed output equals the items done",
        final)
    names = [e for e, _ in ev]
    ok("response.function_call_arguments.delta" in names and
        "response.function_call_arguments.done" in names,
        "responses stream: function call argument events", names)


def drip_crlf():
    text = "é😀 ok"
    script({"text": text, "fault": {"kind": "drip"}})
    r = model("chat", stream("chat"))
    sizes = {len(c) for _, c in r.chunks}
    gaps = [b[0] - a[0] for a, b in zip(r.chunks, r.chunks[1:])]
    got = "".join(json.loads(d)["choices"][0]["delta"].get("content") or
        "" for _, d in r.events()[:-1])
    # Arrival times, not send times: a read may bring two chunks at
    # once, so the median gap, not the least, shows the pace.
    median = sorted(gaps)[len(gaps) // 2]
    ok(sizes == {1} and got == text and 0.008 <= median < 0.05 and
        r.chunks[-1][0] - r.chunks[0][0] >= 0.009 * len(gaps),
        "drip: one byte a chunk, 10 ms apart, same text",
        (sizes, median, len(gaps), got))
    script({"text": text, "fault": {"kind": "drip", "ms": 1}})
    r = model("messages", BODY["messages"])
    ok(r.json()["content"][0]["text"] == text and
        r.headers.get("content-length") == str(len(r.body)),
        "drip: a plain answer with Content-Length")
    script({"text": text, "fault": {"kind": "crlf"}})
    r = model("responses", stream("responses"))
    raw = r.body
    ok(b"\r\n" in raw and b"\n" not in raw.replace(b"\r\n", b"") and
        b"\r\n: " in raw, "crlf: CRLF line ends and : comments", raw[:300])
    script({"text": text, "fault": {"kind": "crlf"}})
    r = model("messages", BODY["messages"])
    ok(b"\r\n" in r.body and b"\n" not in r.body.replace(b"\r\n", b"")
        and r.json()["content"][0]["text"] == text,
        "crlf: a plain answer in CRLF lines", r.body[:200])
    blocks = [b for b in raw.replace(b"\r\n", b"\n").split(b"\n\n") if b]
    datas = [json.loads(line[6:]) for b in blocks for line in b.split(b"\n")
        if line.startswith(b"data: ")]
    ok(datas[-1]["response"]["output"][0]["content"][0]["text"] == text,
        "crlf: the same answer underneath")


def sse_error():
    for d, first, last in (("chat", None, None),
        ("messages", "message_start", "error"),
        ("responses", "response.created", "error")):
        script({"fault": {"kind": "sse_error", "message": "mid"}})
        ev = model(d, stream(d)).events()
        data = json.loads(ev[-1][1])
        err = data if d == "responses" else data["error"]
        ok(len(ev) == 2 and ev[0][0] == first and ev[1][0] == last and
            err["message"] == "mid", "%s: sse_error is the first event, "
            "then the error" % d, ev)


def stall_reset_garbage():
    script({"fault": {"kind": "stall", "after": "headers"}})
    c = wire.Conn(timeout=1.5)
    r = wire.call("POST", wire.PATHS["chat"], stream("chat"),
        wire.AUTH["chat"], conn=c)
    ok(r.status == 200 and not r.chunks and
        isinstance(r.error, socket.timeout),
        "stall after headers: headers, then silence", (r.status, r.error))
    c.close()
    for _ in range(50):
        time.sleep(0.1)
        e = log()[-1]
        if e["client_closed"]:
            break
    ok(e["client_closed"] is True and e["ended"] is not None,
        "stall: the log sees the client close", e)
    script({"fault": {"kind": "stall", "after": "first"}})
    c = wire.Conn(timeout=1.5)
    r = wire.call("POST", wire.PATHS["messages"], stream("messages"),
        wire.AUTH["messages"], conn=c)
    ok(len(r.chunks) == 1 and r.chunks[0][1].startswith(
        b"event: message_start\n") and isinstance(r.error, socket.timeout),
        "stall after first: one event, then silence", r.chunks)
    c.close()
    script({"text": "a long answer " * 20, "fault": {"kind": "drip"}})
    c = wire.Conn()
    r = wire.call("POST", wire.PATHS["chat"], stream("chat"),
        wire.AUTH["chat"], conn=c, most=20)
    gone = time.time()
    c.close()
    for _ in range(50):
        time.sleep(0.1)
        e = log()[-1]
        if e["client_closed"]:
            break
    ok(len(r.chunks) == 20 and e["client_closed"] is True and
        e["ended"] - gone < 1, "drip: the log sees a client leave "
        "mid-answer within a second", e)
    for after, n in (("none", None), ("headers", 0), ("first", 1)):
        script({"fault": {"kind": "reset", "after": after}})
        r = model("responses", stream("responses"))
        ok(isinstance(r.error, ConnectionResetError) and
            (r.status is None if n is None else len(r.chunks) == n),
            "reset after %s: RST after %s" % (after, n), (r.error,
            r.status, len(r.chunks)))
    script({"fault": {"kind": "garbage"}})
    r = model("chat", BODY["chat"])
    try:
        r.json()
        parsed = True
    except ValueError:
        parsed = False
    ok(r.status == 200 and not parsed, "garbage plain: 200, not JSON")
    script({"fault": {"kind": "garbage"}})
    r = model("messages", stream("messages"))
    try:
        bad = not all(json.loads(d) for _, d in r.events())
    except ValueError:
        bad = True
    ok(r.status == 200 and bad, "garbage stream: 200, not SSE events")


def envelopes():
    for status in (400, 401, 403, 404, 413, 422, 429, 500, 503):
        script({"fault": {"kind": "status", "status": status,
            "message": "m%d" % status}},
            {"fault": {"kind": "status", "status": status,
            "message": "m%d" % status}})
        o = model("chat", BODY["chat"])
        a = model("messages", BODY["messages"])
        oe = o.json()["error"]
        ae = a.json()
        ok(o.status == status and a.status == status and
            set(oe) == {"message", "type", "param", "code"} and
            oe["message"] == "m%d" % status and ae["type"] == "error" and
            set(ae["error"]) == {"type", "message"} and
            ae["error"]["message"] == "m%d" % status,
            "status %d in both envelopes" % status, (o.body, a.body))
    r = model("messages", BODY["messages"],
        headers={"anthropic-version": ""})
    ok(r.status == 400 and r.json()["type"] == "error",
        "messages: no anthropic-version is a 400", r.body)
    for d in ("chat", "responses", "messages"):
        h = {"Authorization": "Bearer nope", "x-api-key": "nope"}
        r = model(d, BODY[d], headers=h)
        ok(r.status == 401, "%s: a wrong key is a 401" % d, r.body)
    r = model("chat", b"{not json", headers={"Content-Type":
        "application/json"})
    ok(r.status == 400 and r.json()["error"]["type"] ==
        "invalid_request_error", "chat: a body not JSON is a 400")


def control_routes():
    control("/__reset")
    script({"path": "/v1/messages", "text": "for messages"},
        {"text": "for anyone"})
    c = model("chat", BODY["chat"]).json()
    m = model("messages", BODY["messages"]).json()
    ok(c["choices"][0]["message"]["content"] == "for anyone" and
        m["content"][0]["text"] == "for messages",
        "a turn with a path waits for that path")
    script({"text": "{{last_user_text}}!", "usage": {"in": 9}})
    r = model("chat", BODY["chat"], chunked=True).json()
    ok(r["choices"][0]["message"]["content"] == "hi there!" and
        r["usage"]["prompt_tokens"] == 9 and
        r["usage"]["completion_tokens"] == 2,
        "chunked request body, {{last_user_text}}, usage", r)
    entries = log()
    ok(len(entries) == 3 and all(e["path"].startswith("/v1/")
        for e in entries), "the log holds model requests only",
        [e["path"] for e in entries])
    control("/__config", {"key": "another-key"})
    r1 = model("chat", BODY["chat"])
    r2 = model("chat", BODY["chat"],
        headers={"Authorization": "Bearer another-key"})
    control("/__config", {"key": wire.KEY})
    ok(r1.status == 401 and r2.status == 200, "__config sets the key")
    done = []
    for i in range(10):
        model("messages", stream("messages") if i % 2 else BODY["messages"])
        e = log()[-1]
        done.append(e["status"] == 200 and e["ended"] is not None)
    ok(all(done), "the log is complete as soon as the answer is", done)
    control("/__reset")
    ok(log() == [], "__reset clears the log")
    bad = [call("POST", "/__script", {"turns": t}).status for t in
        ([{"fault": {"kind": "melt"}}], [{"tool_calls": [{}]}], {})]
    ok(bad == [400, 400, 400], "a bad script is a 400", bad)
    r = call("GET", "/v1/models", headers=wire.AUTH["chat"])
    ok(r.status == 200 and r.json()["object"] == "list",
        "GET /v1/models")


def main():
    control("/__reset")
    for f in (chat_framing, messages_framing, responses_framing,
        drip_crlf, sse_error, stall_reset_garbage, envelopes, control_routes):
        try:
            f()
        except Exception as e:	# a crash is one failed check
            ok(False, "%s ran" % f.__name__, repr(e))
    sys.exit(1 if wire.failures else 0)


if __name__ == "__main__":
    main()
