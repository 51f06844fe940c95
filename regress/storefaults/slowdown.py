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

"""A TCP proxy in front of radosgw that can answer 503 SlowDown.

    slowdown.py LISTEN_PORT UPSTREAM_PORT FAILURES LOGFILE

Forwards connections byte for byte.  On SIGUSR1 it drops the open
connections (so the client's keep-alive pool must reconnect) and
answers the request head of each of the next FAILURES new connections
with 503 SlowDown, logging one line per 503 to LOGFILE.
"""
import signal
import socket
import sys
import threading

listen_port, upstream_port, failures = map(int, sys.argv[1:4])
logfile = sys.argv[4]
lock = threading.Lock()
state = {"left": 0}
pipes = set()

SLOWDOWN = (b"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error>"
            b"<Code>SlowDown</Code><Message>Please reduce your request rate."
            b"</Message></Error>")


def arm(signum, frame):
    with lock:
        state["left"] = failures
        for s in list(pipes):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def slowdown(client):
    head = b""
    while b"\r\n\r\n" not in head and len(head) < 65536:
        data = client.recv(4096)
        if not data:
            break
        head += data
    line = head.split(b"\r\n", 1)[0].decode("latin-1")
    with open(logfile, "a") as f:
        f.write("503 %s\n" % line)
    client.sendall(b"HTTP/1.1 503 Slow Down\r\nContent-Type: application/xml"
                   b"\r\nConnection: close\r\nContent-Length: %d\r\n\r\n"
                   % len(SLOWDOWN) + SLOWDOWN)
    client.close()


def serve(client):
    with lock:
        fail = state["left"] > 0
        if fail:
            state["left"] -= 1
    if fail:
        slowdown(client)
        return
    upstream = socket.create_connection(("127.0.0.1", upstream_port))
    with lock:
        pipes.add(client)
        pipes.add(upstream)
    t = threading.Thread(target=pump, args=(upstream, client), daemon=True)
    t.start()
    pump(client, upstream)
    t.join()
    with lock:
        pipes.discard(client)
        pipes.discard(upstream)
    client.close()
    upstream.close()


def main():
    signal.signal(signal.SIGUSR1, arm)
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", listen_port))
    srv.listen(64)
    print("listening", flush=True)
    while True:
        try:
            client, _ = srv.accept()
        except InterruptedError:
            continue
        threading.Thread(target=serve, args=(client,), daemon=True).start()


main()
