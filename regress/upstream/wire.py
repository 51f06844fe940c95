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

# wire.py: a raw HTTP/1.1 client for the upstream double's checks: it
# keeps what an SDK hides (each chunk as it came, when it came, a reset
# or a silence), so that the checks can hold the double to the exact
# framing its contract promises.  Standard library only.

import json
import os
import socket
import time

HOST = "127.0.0.1"
PORT = int(os.environ.get("UPSTREAM_PORT", "18400"))
KEY = "test-upstream-key"
AUTH = {
    "chat": {"Authorization": "Bearer " + KEY},
    "responses": {"Authorization": "Bearer " + KEY},
    "messages": {"x-api-key": KEY, "anthropic-version": "2023-06-01"},
}
PATHS = {"chat": "/v1/chat/completions", "responses": "/v1/responses",
    "messages": "/v1/messages"}


class Reply:
    """What came back: status, headers, chunks with arrival times."""

    def __init__(self):
        self.status = None
        self.headers = {}
        self.chunks = []	# (seconds since the request, bytes)
        self.body = b""
        self.error = None	# the exception that ended the read
        self.complete = False

    def json(self):
        return json.loads(self.body)

    def events(self):
        """The body split at blank lines, as (event, data) pairs."""
        out = []
        for block in self.body.decode().split("\n\n"):
            if not block:
                continue
            ev = None
            data = None
            for line in block.split("\n"):
                if line.startswith("event: "):
                    ev = line[7:]
                elif line.startswith("data: "):
                    data = line[6:]
                else:
                    raise ValueError("not an SSE line: %r" % line)
            out.append((ev, data))
        return out


class Conn:
    def __init__(self, timeout=10):
        self.sock = socket.create_connection((HOST, PORT), timeout=timeout)
        self.buf = b""

    def close(self):
        self.sock.close()

    def fill(self):
        d = self.sock.recv(65536)
        if not d:
            raise EOFError("connection closed")
        self.buf += d

    def line(self):
        while b"\r\n" not in self.buf:
            self.fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def take(self, n):
        while len(self.buf) < n:
            self.fill()
        d, self.buf = self.buf[:n], self.buf[n:]
        return d

    def send(self, method, path, body=None, headers=None, chunked=False):
        hdrs = {"Host": "%s:%d" % (HOST, PORT)}
        hdrs.update(headers or {})
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            hdrs.setdefault("Content-Type", "application/json")
        body = body or b""
        if chunked:
            hdrs["Transfer-Encoding"] = "chunked"
            half = len(body) // 2
            body = b"".join(b"%x\r\n%s\r\n" % (len(p), p)
                for p in (body[:half], body[half:]) if p) + b"0\r\n\r\n"
        elif method == "POST" or body:
            hdrs["Content-Length"] = str(len(body))
        head = "%s %s HTTP/1.1\r\n" % (method, path) + "".join(
            "%s: %s\r\n" % kv for kv in hdrs.items()) + "\r\n"
        self.sock.sendall(head.encode() + body)

    def read(self, r, t0, most=None):
        status = self.line().split(b" ", 2)
        r.status = int(status[1])
        while True:
            line = self.line()
            if not line:
                break
            k, v = line.decode().split(":", 1)
            r.headers[k.strip().lower()] = v.strip()
        if r.headers.get("transfer-encoding") == "chunked":
            while True:
                n = int(self.line(), 16)
                if n == 0:
                    self.line()
                    break
                d = self.take(n)
                self.take(2)
                r.chunks.append((time.monotonic() - t0, d))
                r.body += d
                if len(r.chunks) == most:
                    return
        else:
            r.body = self.take(int(r.headers.get("content-length", 0)))
        r.complete = True


def call(method, path, body=None, headers=None, timeout=10, chunked=False,
    conn=None, most=None):
    """One exchange; the read stops at the end, an error, a timeout or
    after the most chunks asked for."""
    c = conn or Conn(timeout)
    r = Reply()
    t0 = time.monotonic()
    try:
        c.send(method, path, body, headers, chunked)
        c.read(r, t0, most)
    except (OSError, EOFError, ValueError) as e:
        r.error = e
    if conn is None:
        c.close()
    return r


def model(dialect, body, headers=None, **kw):
    h = dict(AUTH[dialect])
    h.update(headers or {})
    return call("POST", PATHS[dialect], body, h, **kw)


def control(path, body=None):
    r = call("POST", path, body if body is not None else {})
    assert r.status == 204, (path, r.status, r.body)


def script(*turns):
    control("/__script", {"turns": list(turns)})


def log():
    return call("GET", "/__log").json()["requests"]


failures = 0


def ok(cond, what, detail=None):
    global failures
    if cond:
        print("ok - wire: %s" % what)
    else:
        failures += 1
        print("not ok - wire: %s" % what)
        if detail is not None:
            print("# " + str(detail).replace("\n", "\n# ")[:2000])
    return cond
