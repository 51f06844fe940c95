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

"""regress/daemon/http_layer.py: depotd's HTTP layer over raw sockets.

usage: http_layer.py PORT API-KEY MAX-SIZE-BYTES HEADER-TIMEOUT
           BODY-TIMEOUT PREFORK PER-ADDRESS

Sends what curl cannot: broken request lines, oversized and too many
headers, long URIs, bad chunk framing, trickled headers, pipelined
requests, Expect: 100-continue, a huge declared body that the client
keeps sending, lengths past INT64_MAX, a body dripped a byte at a time,
and more connections from one address than max-connections-per-address
allows.  Prints one "ok - ..." / "not ok - ..." line per check, and
after every check asks /healthz on a fresh connection to show that the
daemon still serves others.
"""

import json
import socket
import sys
import threading
import time

HOST = "127.0.0.1"
failed = 0


def result(good, what, detail=""):
    global failed
    if good:
        print("ok - " + what, flush=True)
    else:
        failed += 1
        print("not ok - %s%s" % (what, (": " + detail) if detail else ""),
              flush=True)


class Conn:
    """A client connection with a read buffer, for pipelined replies."""

    def __init__(self, port, timeout=5.0):
        self.sock = socket.create_connection((HOST, port), timeout=timeout)
        self.buf = b""

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise EOFError("connection closed")
        self.buf += chunk

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line.decode("latin-1")

    def response(self):
        """Returns (status, headers, body); raises EOFError if closed."""
        status_line = self._line()
        parts = status_line.split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1."):
            raise ValueError("bad status line %r" % status_line)
        status = int(parts[1])
        headers = {}
        while True:
            line = self._line()
            if line == "":
                break
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if status == 100 or status == 204 or status == 304:
            return status, headers, b""
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int(self._line().split(";")[0], 16)
                while len(self.buf) < size + 2:
                    self._fill()
                body += self.buf[:size]
                self.buf = self.buf[size + 2:]
                if size == 0:
                    return status, headers, body
        length = int(headers.get("content-length", "0"))
        while len(self.buf) < length:
            self._fill()
        body, self.buf = self.buf[:length], self.buf[length:]
        return status, headers, body

    def closed_within(self, seconds):
        """True if the peer closes (EOF or reset) within seconds."""
        self.sock.settimeout(seconds)
        end = time.monotonic() + seconds
        try:
            while time.monotonic() < end:
                if not self.sock.recv(65536):
                    return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False
        return False

    def close(self):
        self.sock.close()


def healthz_still_serves(port, after):
    try:
        c = Conn(port)
        c.send(b"GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close"
               b"\r\n\r\n")
        status, _, body = c.response()
        c.close()
        good = status == 200 and json.loads(body)["database"] == "up"
        result(good, "after %s: /healthz still 200" % after,
               "got %d %r" % (status, body[:80]))
    except Exception as e:
        result(False, "after %s: /healthz still 200" % after, repr(e))


def expect_status(port, what, request, want, envelope=True, within=None):
    """Sends request in one write; the reply must be want, with an
    OpenAI error envelope when envelope is set, and within seconds
    when that is given."""
    try:
        c = Conn(port)
        start = time.monotonic()
        c.send(request)
        status, headers, body = c.response()
        took = time.monotonic() - start
        good = status == want and (within is None or took < within)
        detail = "got %d %r after %.1fs" % (status, body[:120], took)
        if good and envelope:
            err = json.loads(body).get("error", {})
            good = err.get("type") == "invalid_request_error" and \
                bool(err.get("message"))
        if good:
            good = bool(headers.get("request-id"))
            detail = "no request-id header"
        c.close()
        result(good, "%s -> %d" % (what, want), detail)
    except Exception as e:
        result(False, "%s -> %d" % (what, want), repr(e))
    healthz_still_serves(port, what)


def multipart(content, boundary="depot-regress-boundary"):
    head = ("--%s\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\n"
            "user_data\r\n--%s\r\nContent-Disposition: form-data; "
            "name=\"file\"; filename=\"expect.txt\"\r\nContent-Type: "
            "text/plain\r\n\r\n" % (boundary, boundary)).encode()
    tail = ("\r\n--%s--\r\n" % boundary).encode()
    return head + content + tail, \
        "multipart/form-data; boundary=" + boundary


def upload_head(key, length, extra=""):
    _, ctype = multipart(b"")
    return ("POST /v1/files HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s"
            "\r\nContent-Type: %s\r\nContent-Length: %d\r\n%s\r\n" %
            (key, ctype, length, extra)).encode()


def check_request_line(port):
    for what, req in [
            ("garbage request line", b"THIS IS NOT HTTP AT ALL\r\n\r\n"),
            ("request line without a version", b"GET /healthz\r\n\r\n"),
            ("binary junk request line", b"\x00\x01\x02\xff\xfe\r\n\r\n"),
            ("space inside the request target",
             b"GET /heal thz HTTP/1.1\r\nHost: t\r\n\r\n")]:
        expect_status(port, what, req, 400)


def check_limits(port):
    big = b"GET /healthz HTTP/1.1\r\nHost: t\r\nX-Big: " + b"a" * 20000 + \
        b"\r\n\r\n"
    expect_status(port, "a 20 KB header", big, 431)
    many = b"GET /healthz HTTP/1.1\r\nHost: t\r\n" + \
        b"".join(b"X-H%d: v\r\n" % i for i in range(150)) + b"\r\n"
    expect_status(port, "150 headers", many, 431)
    uri = b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: t\r\n\r\n"
    expect_status(port, "a 9000-byte URI", uri, 414)


def check_bad_chunks(port, key):
    _, ctype = multipart(b"")
    req = ("POST /v1/files HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s"
           "\r\nContent-Type: %s\r\nTransfer-Encoding: chunked\r\n\r\n"
           "zz\r\nhello\r\n0\r\n\r\n" % (key, ctype)).encode()
    expect_status(port, "chunk size that is not hex", req, 400,
                  envelope=False)


def check_slowloris(port, timeout):
    what = "headers trickled past header-timeout %ds" % timeout
    try:
        c = Conn(port)
        start = time.monotonic()
        c.send(b"GET /healthz HTTP/1.1\r\n")
        closed_at = None
        for i in range(4 * (timeout + 3)):
            try:
                c.send(b"X-Slow-%d: x\r\n" % i)
            except (BrokenPipeError, ConnectionResetError):
                closed_at = time.monotonic()
                break
            if c.closed_within(0.25):
                closed_at = time.monotonic()
                break
        c.close()
        if closed_at is None:
            result(False, what + ": connection closed",
                   "still open after %.1fs" % (time.monotonic() - start))
        else:
            took = closed_at - start
            result(timeout - 0.5 <= took <= timeout + 2.5,
                   what + ": connection closed near the timeout",
                   "closed after %.1fs" % took)
    except Exception as e:
        result(False, what, repr(e))
    healthz_still_serves(port, "slowloris")


def check_pipelined(port):
    what = "two pipelined GET /healthz in one write"
    try:
        c = Conn(port)
        c.send(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n"
               b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        s1, h1, b1 = c.response()
        s2, h2, b2 = c.response()
        c.close()
        result(s1 == 200 and s2 == 200 and
               h1["request-id"] != h2["request-id"],
               what + " -> two 200s with their own request ids",
               "got %d, %d" % (s1, s2))
    except Exception as e:
        result(False, what, repr(e))
    what = "pipelined /healthz, /no-such-route, /metrics"
    try:
        c = Conn(port)
        c.send(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n"
               b"GET /no-such-route HTTP/1.1\r\nHost: t\r\n\r\n"
               b"GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n")
        got = [c.response() for _ in range(3)]
        c.close()
        statuses = [g[0] for g in got]
        good = statuses == [200, 404, 200] and \
            b"depotd_requests_total" in got[2][2] and \
            b"\"database\"" in got[0][2]
        result(good, what + " -> answered in order", "got %r" % statuses)
    except Exception as e:
        result(False, what, repr(e))
    healthz_still_serves(port, "pipelining")


def check_expect_continue(port, key):
    what = "Expect: 100-continue upload with a good key"
    content = b"expect continue body\n"
    body, _ = multipart(content)
    try:
        c = Conn(port)
        c.send(upload_head(key, len(body), "Expect: 100-continue\r\n"))
        s1, _, _ = c.response()
        result(s1 == 100, what + ": 100 Continue before the body",
               "got %d" % s1)
        c.send(body)
        s2, _, b2 = c.response()
        c.close()
        obj = json.loads(b2) if s2 == 200 else {}
        result(s2 == 200 and obj.get("bytes") == len(content) and
               obj.get("id", "").startswith("file-"),
               what + ": then 200 with the file object",
               "got %d %r" % (s2, b2[:120]))
    except Exception as e:
        result(False, what, repr(e))
    healthz_still_serves(port, "100-continue")

    what = "Expect: 100-continue upload with a bad key"
    try:
        c = Conn(port)
        c.send(upload_head("dpt-not-a-real-key-00000000000000000",
                           len(body), "Expect: 100-continue\r\n"))
        s, _, b = c.response()
        c.close()
        result(s == 401, what + ": 401 without 100 Continue",
               "got %d %r" % (s, b[:120]))
    except Exception as e:
        result(False, what, repr(e))
    healthz_still_serves(port, "100-continue with a bad key")


def keep_sending(conn, stop, limit):
    chunk = b"x" * 65536
    sent = 0
    try:
        while not stop.is_set() and sent + len(chunk) <= limit:
            conn.sock.sendall(chunk)
            sent += len(chunk)
    except OSError:
        pass


def check_big_body(port, key, length, what, want):
    """Declares a big body and keeps sending it while reading: the
    status must arrive, not a reset."""
    try:
        c = Conn(port, timeout=15)
        c.send(upload_head(key, length))
        stop = threading.Event()
        t = threading.Thread(target=keep_sending, args=(c, stop, length))
        t.start()
        try:
            s, h, b = c.response()
        finally:
            stop.set()
            t.join()
            c.close()
        good = s == want and h.get("connection", "").lower() == "close"
        result(good, "%s -> %d with Connection: close, no reset" %
               (what, want), "got %d %r" % (s, h))
    except Exception as e:
        result(False, "%s -> %d" % (what, want), repr(e))
    healthz_still_serves(port, what)


def check_huge_length(port, key):
    """Lengths past INT64_MAX once turned negative: no body, no 413, no
    timer, while the body still streamed.  Headers only: the answer
    must not wait for a body."""
    for length in (9223372036854775808, 18446744073709551000):
        expect_status(port, "upload with Content-Length %d" % length,
                      upload_head(key, length), 400, within=2)
    expect_status(port, "upload with Content-Length INT64_MAX",
                  upload_head(key, 9223372036854775807), 413, within=2)


def upload_small(port, key):
    """A whole small upload; returns the status."""
    body, _ = multipart(b"after the drip\n")
    c = Conn(port)
    c.send(upload_head(key, len(body)) + body)
    status, _, _ = c.response()
    c.close()
    return status


def check_slow_drip(port, key, body_timeout):
    """A byte every half second keeps well inside body-timeout between
    bytes, far below min-body-rate: the upload must be cut near the end
    of its first window, not kept for ever."""
    what = "upload dripped a byte every 0.5s"
    body, _ = multipart(b"x" * 100000)
    try:
        c = Conn(port)
        c.send(upload_head(key, len(body)))
        start = time.monotonic()
        cut = None
        for i in range(len(body)):
            if time.monotonic() - start > 3 * body_timeout + 5:
                break
            try:
                c.send(body[i:i + 1])
            except OSError:
                cut = time.monotonic() - start
                break
            if c.closed_within(0.5):
                cut = time.monotonic() - start
                break
        c.close()
        result(cut is not None and body_timeout - 0.5 <= cut <=
               body_timeout + 4, what + ": cut near body-timeout %ds" %
               body_timeout, "cut after %s" %
               ("%.1fs" % cut if cut is not None else "never"))
        status = upload_small(port, key)
        result(status == 200, what + ": then the same key uploads",
               "got %d" % status)
    except Exception as e:
        result(False, what, repr(e))
    healthz_still_serves(port, "a dripped upload")


def keepalive_healthz(port):
    """A connection that asked /healthz and stays open; (conn, status)."""
    c = Conn(port)
    c.send(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
    try:
        status, headers, _ = c.response()
    except (EOFError, OSError):
        return c, 0
    if status != 200 and headers.get("connection", "") != "close":
        status = -status
    return c, status


def check_per_address(port, prefork, cap):
    """Each frontend counts on its own and the kernel spreads
    connections over them: cap connections always fit, and of
    prefork * cap + 1 at least one must be refused."""
    what = "%d connections from one address (cap %d, %d frontends)" % \
        (prefork * cap + 1, cap, prefork)
    conns = []
    try:
        got = []
        for _ in range(prefork * cap + 1):
            c, status = keepalive_healthz(port)
            conns.append(c)
            got.append(status)
        result(got[:cap] == [200] * cap,
               what + ": the first %d are served" % cap, "got %r" % got)
        result(got.count(429) >= 1 and got.count(200) + got.count(429) ==
               len(got), what + ": the rest 200 or 429 with Connection: "
               "close, at least one 429", "got %r" % got)
    except Exception as e:
        result(False, what, repr(e))
    for c in conns:
        c.close()
    time.sleep(0.5)
    healthz_still_serves(port, "the per-address cap")


def main():
    port, key = int(sys.argv[1]), sys.argv[2]
    max_size, header_timeout = int(sys.argv[3]), int(sys.argv[4])
    body_timeout, prefork = int(sys.argv[5]), int(sys.argv[6])
    per_address = int(sys.argv[7])
    check_request_line(port)
    check_limits(port)
    check_bad_chunks(port, key)
    check_slowloris(port, header_timeout)
    check_pipelined(port)
    check_expect_continue(port, key)
    check_big_body(port, key, max_size * 1000,
                   "Content-Length 1000x max-size while sending", 413)
    check_big_body(port, "dpt-not-a-real-key-00000000000000000",
                   max_size - 4096, "a big upload with a bad key", 401)
    check_huge_length(port, key)
    check_slow_drip(port, key, body_timeout)
    check_per_address(port, prefork, per_address)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
