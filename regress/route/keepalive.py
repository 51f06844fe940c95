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

# regress/route/keepalive.py URL KEY UPSTREAM_PORT "FRONTEND_PIDS" LOG:
# the frontends' kept-alive upstream connections, against an upstream
# of its own that counts the connections it accepts and can close the
# idle ones: 64 callers at once reuse connections (no more than one
# per caller in flight), a connection the upstream closed while it
# sat idle neither fails the next call nor makes a frontend spin, and
# one that dies under a request (read, then closed unanswered) has the
# request sent again whole on a fresh connection, the bytes sent in
# depotd's log LOG those of one body.
# One "ok - ..." / "not ok - ..." line each.

import http.client, json, os, socket, sys, threading, time

url, key, uport, fe_pids = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
    sys.argv[4].split()
logpath = sys.argv[5]
dport = int(url.rsplit(":", 1)[1])
ANSWER = json.dumps({"id": "chatcmpl-ka", "object": "chat.completion",
    "created": 0, "model": "ka", "choices": [{"index": 0, "message":
    {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1,
    "total_tokens": 2}}).encode()
accepted = 0
idle = []		# the connections between two requests
lock = threading.Lock()
failed = 0
drop = [0]		# requests on a reused connection to read and not answer
bodies = []		# what the upstream read, while recording
recording = [False]


def report(ok, what):
    global failed
    print(("ok - " if ok else "not ok - ") + what, flush=True)
    failed += not ok


def serve(conn):
    f = conn.makefile("rb")
    served = 0
    try:
        while True:
            with lock:
                idle.append(conn)
            line = f.readline()
            with lock:
                if conn in idle:
                    idle.remove(conn)
            if not line:
                return
            n = 0
            while line not in (b"\r\n", b"\n", b""):
                k, _, v = line.partition(b":")
                if k.strip().lower() == b"content-length":
                    n = int(v)
                line = f.readline()
            b = f.read(n)
            with lock:
                if recording[0]:
                    bodies.append(b)
                if drop[0] > 0 and served > 0:
                    drop[0] -= 1
                    return
            served += 1
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: "
                b"application/json\r\nContent-Length: %d\r\n\r\n"
                % len(ANSWER) + ANSWER)
    except OSError:
        pass
    finally:
        conn.close()


def listen():
    global accepted
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", uport))
    s.listen(256)
    while True:
        c, _ = s.accept()
        with lock:
            accepted += 1
        threading.Thread(target=serve, args=(c,), daemon=True).start()


def close_idle():
    """The upstream ends its idle connections, as a server's timeout."""
    with lock:
        n, conns = len(idle), list(idle)
    for c in conns:
        try:
            c.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
    return n


def chat(c=None):
    own = c is None
    if own:
        c = http.client.HTTPConnection("127.0.0.1", dport, timeout=10)
    c.request("POST", "/v1/chat/completions", json.dumps({"model": "mk",
        "messages": [{"role": "user", "content": "hi"}]}),
        {"Authorization": "Bearer " + key,
        "Content-Type": "application/json"})
    r = c.getresponse()
    r.read()
    if own:
        c.close()
    return r.status


def caller(n, out):
    c = http.client.HTTPConnection("127.0.0.1", dport, timeout=10)
    try:
        for _ in range(n):
            out.append(chat(c))
    except (OSError, http.client.HTTPException):
        out.append(None)
    c.close()


def settled_log_end():
    """The log's end once the lines of calls already answered are in.

    depotd writes a request's line after the answer has gone out, so
    the last one can land a moment after the caller has its answer
    (later still under ASan).  Wait until the file stops growing."""
    size, still = -1, 0
    for _ in range(100):
        now = os.path.getsize(logpath)
        still = still + 1 if now == size else 0
        if still >= 3:
            break
        size = now
        time.sleep(0.1)
    return size


def cpu(p):
    with open("/proc/%s/stat" % p) as f:
        v = f.read().rsplit(")", 1)[1].split()
    return int(v[11]) + int(v[12])


threading.Thread(target=listen, daemon=True).start()
time.sleep(0.2)
st = [chat() for _ in range(4)]
report(st == [200] * 4, "four calls to an upstream that keeps connections "
    "alive: %s" % st)

# Reuse under load: 64 callers, 20 calls each.  curl's default cache
# (four per handle in the multi, counted as a transfer ends) closed a
# kept-alive connection for about every seventh call at this load.
a0, out = accepted, []
ts = [threading.Thread(target=caller, args=(20, out)) for _ in range(64)]
for t in ts:
    t.start()
for t in ts:
    t.join()
opened = accepted - a0
report(out.count(200) == 64 * 20, "64 callers, 20 calls each: %d of %d "
    "answered 200" % (out.count(200), 64 * 20))
report(opened <= 64 + 16, "and the frontends opened %d upstream "
    "connections for them (at most 64 in flight, bound 80)" % opened)

# Dead while idle: every pooled connection closed by the upstream, then
# calls again.  curl checks a connection before reuse; curlev parks
# the idle socket's read event, which the close makes fire.
time.sleep(0.3)
closed = close_idle()
ticks = os.sysconf("SC_CLK_TCK")
c0 = dict((p, cpu(p)) for p in fe_pids)
time.sleep(1)
busy = max([(cpu(p) - c0[p]) * 100.0 / ticks for p in fe_pids] + [0])
report(busy < 10, "the upstream closed %d idle connections: no frontend "
    "spins on them (the busiest: %.0f %% CPU over 1 s)" % (closed, busy))
st = [chat() for _ in range(8)]
report(st == [200] * 8, "the next 8 calls are answered, on new "
    "connections: %s" % st)

# Dead under a request: the upstream reads the next request that comes
# on a kept-alive connection and closes it unanswered, as a server
# whose keep-alive timeout ran out as the request came.  Nothing was
# answered, so curl sends it again on a fresh connection: a body in
# memory can be.  Calls go until one lands on a reused connection.
logoff = settled_log_end()
with lock:
    drop[0], recording[0] = 1, True
st = []
for _ in range(40):
    st.append(chat())
    with lock:
        if drop[0] == 0:
            break
with lock:
    recording[0], dropped, got = False, drop[0] == 0, list(bodies)
    drop[0] = 0
report(dropped and st == [200] * len(st), "a kept-alive connection closed "
    "under a request: the call is answered: %s (a reused connection "
    "dropped: %s)" % (st, dropped))
report(len(got) == len(st) + 1 and len(set(got)) == 1,
    "and the upstream read the request again whole: %d bodies for %d "
    "calls, %d different" % (len(got), len(st), len(set(got))))
settled_log_end()
with open(logpath, errors="replace") as f:
    f.seek(logoff)
    sent = [int(l.split(" sent ", 1)[1].split()[0]) for l in f
        if " model mk " in l and " sent " in l]
want = len(got[0]) if got else -1
report(len(sent) == len(st) and set(sent) == {want}, "and depotd logged "
    "the bytes of one body sent for each call: %s (body %d bytes)" %
    (sent, want))
sys.exit(0)
