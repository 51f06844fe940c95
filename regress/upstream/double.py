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

# double.py [--port N]: the scripted upstream model the model-route
# tests talk to instead of a real provider (none can run here).  It
# speaks OpenAI chat completions, OpenAI Responses and Anthropic
# Messages in their own wire formats, validates requests as those APIs
# do, answers from a FIFO of scripted turns (or echoes), injects the
# faults a turn asks for, and records every model request.  Its
# contract, which the tests rely on, is regress/upstream/CONTRACT.md:
# /work/wt/DOUBLE-API.md as agreed, and what this double adds to it.
#
# Standard library only; prints "listening PORT" once it serves.

import argparse
import hashlib
import json
import os
import secrets
import socket
import sys
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# Its modules sit beside it; no __pycache__ left in the checkout.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True

import double_answer as ans	# noqa: E402
import double_check as chk	# noqa: E402
import double_hostile as hostile	# noqa: E402
import double_llama as llama	# noqa: E402
from double_wire import ClientGone, Writer	# noqa: E402

ROUTES = {"/v1/chat/completions": "chat", "/v1/responses": "responses",
    "/v1/messages": "messages"}
MODELS = ("gpt-test", "claude-test")


class State:
    """What every connection shares, under one lock."""

    def __init__(self):
        self.lock = threading.Lock()
        self.key = "test-upstream-key"
        self.reset()

    def reset(self):
        self.turns = []
        self.log = []
        self.calls = {}		# Responses id -> the call ids it made

    def take(self, path):
        with self.lock:
            for i, t in enumerate(self.turns):
                if t.get("path", path) == path:
                    return self.turns.pop(i)
        return None


STATE = State()


def subst(v, user, tool):
    """The templates in a turn's text or tool arguments, filled in."""
    if isinstance(v, str):
        return v.replace("{{last_tool_result}}", tool).replace(
            "{{last_user_text}}", user)
    if isinstance(v, list):
        return [subst(x, user, tool) for x in v]
    if isinstance(v, dict):
        return {k: subst(x, user, tool) for k, x in v.items()}
    return v


CALL_IDS = {"chat": ("call_", 24), "responses": ("call_", 24),
    "messages": ("toolu_01", 22)}
TEXTS = {"chat": chk.chat_texts, "responses": chk.responses_texts,
    "messages": chk.messages_texts}


def answer_for(dialect, body, turn):
    user, tool = TEXTS[dialect](body)
    calls = []
    for c in turn.get("tool_calls") or []:
        calls.append({"id": c.get("id") or ans.rid(*CALL_IDS[dialect]),
            "name": c["name"], "arguments": json.dumps(subst(
            c.get("arguments", {}), user, tool), ensure_ascii=False)})
    if "text" in turn:
        text = subst(turn["text"], user, tool)
    else:
        text = None if calls else "echo: " + user
    usage = turn.get("usage") or {}
    n_in = usage.get("in", max(1, chk.input_words(body)))
    n_out = usage.get("out", max(1, chk.words(text) +
        sum(chk.words(c["arguments"]) for c in calls)))
    a = ans.new_answer(body["model"], text, calls, n_in, n_out)
    # double_llama.py's modes read these.
    a.update(server=turn.get("server"), stop_seq=turn.get("stop"),
        cached=min(usage.get("cached", 0), n_in))
    return a


FAULTS = ("status", "stall", "reset", "garbage", "drip", "crlf",
    "sse_error") + hostile.KINDS


def bad_turns(turns):
    """What is wrong with a script, so that a test's typo is a 400 to
    the test rather than a crash in the middle of its request."""
    if not isinstance(turns, list):
        return "turns: a list of objects"
    for i, t in enumerate(turns):
        if not isinstance(t, dict):
            return "turns[%d]: an object" % i
        for c in t.get("tool_calls") or []:
            if not isinstance(c, dict) or not isinstance(c.get("name"),
                str) or not isinstance(c.get("arguments", {}), dict):
                return "turns[%d].tool_calls: {name, arguments: {}}" % i
        if "text" in t and not isinstance(t["text"], str):
            return "turns[%d].text: a string" % i
        if "think_ms" in t and not (isinstance(t["think_ms"], int) and
            0 <= t["think_ms"] <= 60000):
            return "turns[%d].think_ms: 0 to 60000" % i
        if t.get("server") not in (None, "llama"):
            return "turns[%d].server: \"llama\"" % i
        if "stop" in t and not isinstance(t["stop"], str):
            return "turns[%d].stop: a string" % i
        fault = t.get("fault")
        if fault is not None and (not isinstance(fault, dict) or
            fault.get("kind") not in FAULTS):
            return "turns[%d].fault.kind: one of %s" % (i, ", ".join(
                FAULTS))
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "upstream-double"
    sys_version = ""

    def setup(self):
        super().setup()
        # Streams go out event by event, a drip byte by byte.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY,
            1)

    def log_message(self, fmt, *args):
        if os.environ.get("DOUBLE_DEBUG"):
            super().log_message(fmt, *args)

    # --- plumbing ---------------------------------------------------

    def read_body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n",
                        b""):
                        pass
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def reply(self, status, obj=None, headers=(), fault=None,
        dialect=None):
        body = b"" if obj is None else json.dumps(obj).encode()
        hdrs = list(headers)
        if obj is not None:
            hdrs.append(("Content-Type", "application/json"))
        w = Writer(self, False, fault)
        w.send(status, hdrs, [body], dialect)
        return w

    def path_only(self):
        return self.path.split("?", 1)[0]

    # --- control routes ---------------------------------------------

    def control(self, path):
        try:
            raw = self.read_body()
            arg = json.loads(raw) if raw.strip() else {}
        except ValueError:
            return self.reply(400, {"error": "body is not JSON"})
        with STATE.lock:
            if path == "/__script":
                turns = arg.get("turns")
                bad = bad_turns(turns)
                if bad:
                    return self.reply(400, {"error": bad})
                STATE.turns.extend(turns)
            elif path == "/__reset":
                STATE.reset()
            elif path == "/__config":
                if isinstance(arg.get("key"), str):
                    STATE.key = arg["key"]
        return self.reply(204)

    def show_log(self):
        with STATE.lock:
            body = {"requests": [dict(e) for e in STATE.log]}
        return self.reply(200, body)

    # --- model routes -----------------------------------------------

    def record(self, raw):
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = None
        entry = {"path": self.path_only(),
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "body": parsed, "raw_sha256": hashlib.sha256(raw).hexdigest(),
            "started": time.time(), "ended": None, "client_closed": False,
            "status": None}
        with STATE.lock:
            STATE.log.append(entry)
        self.entry = entry
        return entry, parsed

    def error(self, dialect, status, message, param=None, code=None,
        headers=(), fault=None):
        if dialect == "messages":
            obj = ans.anthropic_error(status, message)
            rid = ("request-id", ans.rid("req_011C", 20))
        else:
            obj = ans.openai_error(status, message, param, code)
            rid = ("x-request-id", "req_" + secrets.token_hex(16))
        return self.reply(status, obj, [rid] + list(headers), fault,
            dialect)

    def auth(self, dialect):
        """None when the request may pass, else (status, message)."""
        got = self.headers.get("Authorization", "")
        if dialect == "messages":
            key = self.headers.get("x-api-key")
            if key is None and got.startswith("Bearer "):
                key = got[7:]
            if key is None:
                return 401, "x-api-key header is required"
            if not secrets.compare_digest(key, STATE.key):
                return 401, "invalid x-api-key"
            if not self.headers.get("anthropic-version"):
                return 400, "anthropic-version: header is required"
            return None
        if not got.startswith("Bearer "):
            return 401, ("You didn't provide an API key. You need to "
                "provide your API key in an Authorization header using "
                "Bearer auth (i.e. Authorization: Bearer YOUR_KEY).")
        key = got[7:]
        if not secrets.compare_digest(key, STATE.key):
            shown = key[:3] + "*" * 6 + key[-4:] if len(key) > 8 else "***"
            return 401, ("Incorrect API key provided: %s. You can find "
                "your API key at https://platform.openai.com/account/"
                "api-keys." % shown)
        return None

    def validate(self, dialect, body):
        if dialect == "chat":
            chk.check_chat(body)
        elif dialect == "messages":
            chk.check_messages(body)
        else:
            prev = body.get("previous_response_id")
            with STATE.lock:
                earlier = STATE.calls.get(prev)
            if prev is not None and earlier is None:
                raise chk.Invalid("Previous response with id '%s' not "
                    "found." % prev, "previous_response_id",
                    "previous_response_not_found")
            chk.check_responses(body, earlier or ())

    def model_route(self, dialect):
        entry, body = self.record(self.read_body())
        try:
            w = self.serve(dialect, body)
            gone = w.gone
        except ClientGone:
            gone = True
            self.close_connection = True
        except Exception:	# a bug here: said on stderr and to the client
            traceback.print_exc()
            gone = False
            if entry["status"] is None:
                self.error(dialect, 500, "upstream double: internal error")
            self.close_connection = True
        if gone or entry["ended"] is None:
            self.mark_ended()
        entry["client_closed"] = gone

    def mark_ended(self):
        if self.entry is not None:
            self.entry["ended"] = time.time()

    def send_response_only(self, code, message=None):
        # Logged before the client can have it, as mark_ended is.
        if self.entry is not None:
            self.entry["status"] = code
        super().send_response_only(code, message)

    def serve(self, dialect, body):
        refused = self.auth(dialect)
        if refused:
            return self.error(dialect, *refused)
        if not isinstance(body, dict):
            return self.error(dialect, 400, "We could not parse the JSON "
                "body of your request: it is not a JSON object.")
        try:
            self.validate(dialect, body)
        except chk.Invalid as e:
            return self.error(dialect, 400, e.message, e.param, e.code)
        turn = STATE.take(self.path_only()) or {}
        # A model that thinks before its first byte: the whole body
        # has arrived, nothing has been sent yet.
        if turn.get("think_ms"):
            time.sleep(turn["think_ms"] / 1000.0)
        fault = turn.get("fault") or {}
        kind = fault.get("kind")
        if kind == "many_tools":
            turn = hostile.many_tools(turn, fault)
        if kind == "status" or (kind == "sse_error" and
            not body.get("stream")):
            return self.fault_status(dialect, fault)
        return self.answer(dialect, body, answer_for(dialect, body, turn),
            fault)

    def fault_status(self, dialect, fault):
        status = int(fault.get("status", 500))
        hdrs = []
        if fault.get("retry_after") is not None:
            hdrs.append(("retry-after", str(fault["retry_after"])))
        message = fault.get("message") or "scripted status %d" % status
        return self.error(dialect, status, message, headers=hdrs)

    def answer(self, dialect, body, a, fault):
        stream = bool(body.get("stream"))
        if dialect == "chat":
            usage = bool((body.get("stream_options") or {}).get(
                "include_usage"))
            parts = ans.chat_events(a, usage) if stream else \
                ans.chat_plain(a)
            rid = ("x-request-id", "req_" + secrets.token_hex(16))
        elif dialect == "messages":
            parts = ans.msg_events(a) if stream else ans.msg_plain(a)
            rid = ("request-id", ans.rid("req_011C", 20))
        else:
            parts = ans.resp_events(a, body) if stream else \
                ans.resp_plain(a, body)
            rid = ("x-request-id", "req_" + secrets.token_hex(16))
            with STATE.lock:
                STATE.calls[a["resp_id"]] = {c["id"] for c in a["calls"]}
        if a.get("server") == "llama":
            parts = llama.parts(dialect, body, a, stream)
        if stream and fault.get("kind") == "sse_error":
            parts = parts[:1] + [ans.error_event(dialect,
                fault.get("message") or "scripted stream error", 1)]
        if stream:
            hdrs = [("Content-Type", "text/event-stream; charset=utf-8"),
                ("Cache-Control", "no-cache"), rid]
        else:
            hdrs = [("Content-Type", "application/json"), rid]
            # OpenAI indents its JSON; a crlf fault needs lines to end.
            indent = None if dialect == "messages" and \
                fault.get("kind") != "crlf" else 2
            parts = [json.dumps(parts, ensure_ascii=False,
                indent=indent).encode()]
        w = Writer(self, stream, fault)
        if fault.get("kind") in ("endless", "huge") or (stream and
            fault.get("kind") == "noise"):
            hostile.send(self, w, dialect, body, a, fault)
            return w
        w.send(200, hdrs, parts, dialect)
        return w

    def models(self):
        anthropic = self.headers.get("anthropic-version") is not None
        refused = self.auth("messages" if anthropic else "chat")
        if refused:
            return self.error("messages" if anthropic else "chat",
                *refused)
        now = int(time.time())
        if anthropic:
            data = [{"type": "model", "id": m, "display_name": m,
                "created_at": "2026-01-01T00:00:00Z"} for m in MODELS]
            obj = {"data": data, "has_more": False, "first_id": MODELS[0],
                "last_id": MODELS[-1]}
        else:
            obj = {"object": "list", "data": [{"id": m, "object": "model",
                "created": now, "owned_by": "depotd-tests"}
                for m in MODELS]}
        return self.reply(200, obj)

    # --- dispatch ---------------------------------------------------

    def do_POST(self):
        path = self.path_only()
        self.entry = None
        if path in ("/__script", "/__reset", "/__config"):
            self.control(path)
        elif path in ROUTES:
            self.model_route(ROUTES[path])
        else:
            self.unknown()

    def do_GET(self):
        path = self.path_only()
        self.entry = None
        if path == "/__log":
            self.show_log()
        elif path == "/v1/models":
            self.record(self.read_body())
            self.models()
        else:
            self.unknown()

    def unknown(self):
        self.record(self.read_body())
        self.error("chat", 404, "Invalid URL (%s %s)" % (self.command,
            self.path_only()))


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        # A client that resets an idle keep-alive connection is no
        # fault of ours; anything else is a bug worth a traceback.
        if not isinstance(sys.exc_info()[1], (ConnectionError,
            TimeoutError)):
            super().handle_error(request, client_address)


def main():
    ap = argparse.ArgumentParser(description="scripted upstream model")
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()
    srv = Server(("127.0.0.1", args.port), Handler)
    print("listening %d" % srv.server_address[1], flush=True)
    try:
        srv.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
