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

# regress/pools/pools.py DEPOT_URL KEY PORT:PID PORT:PID PORT:PID: three
# upstream doubles as the replicas of model "m-pool" (issue 21 item 1).
# One answers 503 (taken out, then back once it recovers), one thinks
# 300 ms before each answer (it gets less of a concurrent load), one is
# killed mid-run (no request that had not begun its answer fails); a
# stream that had begun on a replica then killed gets the dialect's
# error event.  Prints "ok - " / "not ok - " lines; exits 1 on a failure.

import json
import os
import signal
import sys
import threading
import time
import urllib.error
import urllib.request

DEPOT, KEY = sys.argv[1], sys.argv[2]
REPLICAS = [tuple(int(x) for x in a.split(":")) for a in sys.argv[3:6]]
failed = 0


def check(cond, what):
    global failed
    print("%s - %s" % ("ok" if cond else "not ok", what), flush=True)
    if not cond:
        failed = 1


def ctl(port, path, body=None):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path),
        data=None if body is None else json.dumps(body).encode(),
        method="GET" if body is None and path == "/__log" else "POST")
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read() or b"{}")


def calls(port):
    try:
        log = ctl(port, "/__log")["requests"]
    except OSError:
        return -1
    return sum(1 for e in log if e.get("path") == "/v1/chat/completions")


def reset_all():
    for port, _ in REPLICAS:
        try:
            ctl(port, "/__reset", {})
        except OSError:
            pass


def chat(stream=False):
    body = {"model": "m-pool", "stream": stream,
        "messages": [{"role": "user", "content": "hello"}]}
    req = urllib.request.Request(DEPOT + "/v1/chat/completions",
        data=json.dumps(body).encode(), headers={
            "Authorization": "Bearer " + KEY,
            "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def load(threads, each):
    statuses = []
    lock = threading.Lock()

    def run():
        for _ in range(each):
            st, _ = chat()
            with lock:
                statuses.append(st)
    ts = [threading.Thread(target=run) for _ in range(threads)]
    for t in ts:
        t.start()
    return ts, statuses


def join(ts):
    for t in ts:
        t.join()


(pa, pid_a), (pb, pid_b), (pc, pid_c) = REPLICAS

# --- 503: taken out, then back -----------------------------------------
reset_all()
ctl(pc, "/__script", {"turns": [{"fault": {"kind": "status",
    "status": 503}}] * 200})
sts = [chat()[0] for _ in range(30)]
check(all(s == 200 for s in sts), "503 replica: all 30 requests answered "
    "200 (%d not)" % sum(1 for s in sts if s != 200))
n503 = calls(pc)
check(1 <= n503 <= 3, "503 replica: taken out after its first 503 (it saw "
    "%d of 30)" % n503)
ctl(pc, "/__reset", {})
time.sleep(2.5)
sts = [chat()[0] for _ in range(30)]
back = calls(pc)
check(all(s == 200 for s in sts) and back >= 3, "503 replica: back once "
    "it answers again (%d of the next 30)" % back)

# --- slow: gets less work ----------------------------------------------
reset_all()
ctl(pb, "/__script", {"turns": [{"think_ms": 300}] * 400})
ts, sts = load(6, 12)
join(ts)
na, nb, nc = calls(pa), calls(pb), calls(pc)
check(all(s == 200 for s in sts), "slow replica: all %d answered 200" %
    len(sts))
check(nb * 2 < min(na, nc), "slow replica: gets less work (fast %d, %d; "
    "slow %d)" % (na, nc, nb))
print("# least-busy split of 72 concurrent requests: %d %d %d" %
    (na, nb, nc))

# --- killed mid-run: nothing that had not begun fails -----------------
reset_all()
for p in (pa, pb, pc):
    ctl(p, "/__script", {"turns": [{"think_ms": 100}] * 400})
ts, sts = load(6, 15)
time.sleep(0.7)
os.kill(pid_a, signal.SIGKILL)
join(ts)
bad = [s for s in sts if s != 200]
check(not bad, "killed replica: all %d requests answered 200 (%d not: %s)"
    % (len(sts), len(bad), sorted(set(bad))))

# --- a stream begun on a replica killed: the dialect's error --------
reset_all()
for p in (pb, pc):
    ctl(p, "/__script", {"turns": [{"text": "x" * 400, "fault": {
        "kind": "drip", "ms": 20}}]})
got = {}


def streamer():
    body = {"model": "m-pool", "stream": True,
        "messages": [{"role": "user", "content": "hello"}]}
    req = urllib.request.Request(DEPOT + "/v1/chat/completions",
        data=json.dumps(body).encode(), headers={
            "Authorization": "Bearer " + KEY,
            "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            got["status"] = r.status
            got["body"] = r.read()
    except Exception as e:	# noqa: BLE001
        got["error"] = repr(e)


t = threading.Thread(target=streamer)
t.start()
time.sleep(1.0)
victim = [(p, pid) for p, pid in ((pb, pid_b), (pc, pid_c)) if calls(p) > 0]
if victim:
    os.kill(victim[0][1], signal.SIGKILL)
t.join()
text = got.get("body", b"").decode("utf-8", "replace")
check(bool(victim) and got.get("status") == 200 and '"error"' in text and
    "[DONE]" not in text, "killed mid-stream: the caller gets the chat "
    "dialect's error event, not a clean end (%s)" % (
        got.get("error") or text[-160:].replace("\n", " ")))
sys.exit(failed)
