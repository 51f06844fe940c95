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
# and the transport faults a turn can ask for.  A plain answer is one
# body with Content-Length; a stream is a list of events, each sent as
# one HTTP/1.1 chunk, so that a drip, a stall or a reset lands exactly
# where it is asked to.

import select
import socket
import struct
import time

STALL_MAX = 300		# seconds a stall waits for the client to go


class ClientGone(Exception):
    """The client closed the connection before the answer was out."""


def crlf(parts, stream):
    """CRLF line ends, and in a stream `:` comment lines between events."""
    out = []
    for i, p in enumerate(parts):
        p = p.replace(b"\n", b"\r\n")
        if stream and i > 0:
            p = b": keep-alive\r\n" + (b": \r\n\r\n" if i % 2 else b"") + p
        out.append(p)
    return out


def garbage(dialect, stream):
    """A 200 whose body is not what it claims to be."""
    if not stream:
        return [b'<html><body>{"id": not json at all</body></html>\n']
    head = b"" if dialect == "chat" else b"event: message_start\n"
    return [b"<!doctype html>\n", head + b'data: {"id": not json\n\n']


def rst(h):
    """A TCP reset: linger 0 makes close() send RST, not FIN."""
    h.close_connection = True
    sock = h.connection
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
            struct.pack("ii", 1, 0))
    except OSError:
        pass
    # The buffered reader holds the descriptor open until it goes too.
    h.rfile.close()
    sock.close()


def wait_gone(h, limit=STALL_MAX):
    """Sends nothing until the client closes (True) or limit passes."""
    h.close_connection = True
    sock = h.connection
    end = time.monotonic() + limit
    while time.monotonic() < end:
        try:
            r, _, _ = select.select([sock], [], [], 0.2)
            if r and not sock.recv(65536):
                return True
        except OSError:
            return True
    return False


class Writer:
    """Writes one answer on a handler's connection."""

    def __init__(self, h, stream, fault):
        self.h = h
        self.stream = stream
        self.fault = fault or {}
        self.kind = self.fault.get("kind")
        self.drip = self.kind == "drip"
        self.pause = float(self.fault.get("ms", 10)) / 1000
        self.gone = False	# a stall saw the client close

    def raw(self, data):
        try:
            self.h.wfile.write(data)
        except OSError as e:
            raise ClientGone() from e

    def body(self, data):
        if not self.drip:
            self.raw(self.frame(data))
            return
        for i in range(len(data)):
            self.raw(self.frame(data[i:i + 1]))
            time.sleep(self.pause)

    def frame(self, data):
        if not self.stream or not data:
            return data
        return b"%x\r\n%s\r\n" % (len(data), data)

    def head(self, status, headers, length):
        h = self.h
        h.send_response_only(status)
        h.send_header("Date", h.date_time_string())
        for k, v in headers:
            h.send_header(k, v)
        if self.stream:
            h.send_header("Transfer-Encoding", "chunked")
        else:
            h.send_header("Content-Length", str(length))
        if h.close_connection:
            h.send_header("Connection", "close")
        try:
            h.end_headers()
        except OSError as e:
            raise ClientGone() from e

    def cut(self, after):
        """Whether the fault stops the answer here; True: it did."""
        if self.fault.get("after", "headers") != after:
            return False
        if self.kind == "reset":
            rst(self.h)
            return True
        if self.kind == "stall":
            self.gone = wait_gone(self.h)
            return True
        return False

    def send(self, status, headers, parts, dialect):
        """Puts parts out as the fault says; ClientGone if it left."""
        if self.cut("none"):
            return
        if self.kind == "garbage":
            parts = garbage(dialect, self.stream)
        elif self.kind == "crlf":
            parts = crlf(parts, self.stream)
        self.head(status, headers, sum(len(p) for p in parts))
        # Not announced: undici reads a reset after "Connection: close"
        # as the end of the body, which would hide the fault.
        if self.kind in ("reset", "stall", "garbage"):
            self.h.close_connection = True
        if self.cut("headers"):
            return
        if self.kind in ("reset", "stall"):
            first = parts[0] if self.stream else parts[0][:1]
            self.body(first)
            self.h.wfile.flush()
            self.cut("first")
            return
        # The log says the answer ended before its last byte goes, so
        # that a client that has it all finds the log complete.
        if self.stream:
            for p in parts:
                self.body(p)
            self.h.mark_ended()
            self.raw(b"0\r\n\r\n")
        else:
            self.body(parts[0][:-1])
            self.h.mark_ended()
            self.body(parts[0][-1:])
