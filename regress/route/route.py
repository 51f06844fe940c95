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

# regress/route/route.py URL KEY DOUBLE_PORT "FRONTEND_PIDS": the checks
# of suite.sh, one "ok - ..." / "not ok - ..." line each.

import email.utils, http.client, json, os, socket, sys, time, urllib.parse

url, key, dport, fe_pids = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
    sys.argv[4].split()
host = urllib.parse.urlparse(url)
failed = 0


def report(ok, what):
    global failed
    print(("ok - " if ok else "not ok - ") + what, flush=True)
    failed += not ok


def call(method, path, body=None, headers=None, port=None, timeout=30):
    c = http.client.HTTPConnection("127.0.0.1", port or host.port,
        timeout=timeout)
    h = {"Authorization": "Bearer " + key}
    h.update(headers or {})
    if isinstance(body, (dict, list)):
        body = json.dumps(body)
        h.setdefault("Content-Type", "application/json")
    try:
        c.request(method, path, body, h,
            encode_chunked="Transfer-Encoding" in h)
    except (BrokenPipeError, ConnectionResetError):
        pass	# refused before the body was all sent
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, dict((k.lower(), v) for k, v in r.getheaders()), data


def js(data):
    try:
        return json.loads(data)
    except ValueError:
        return None


def double(path, obj=None):
    return call("POST" if obj is not None else "GET", path, obj,
        port=dport)


def script(*turns):
    double("/__script", {"turns": list(turns)})


def last_upstream():
    return js(double("/__log")[2])["requests"][-1]


def chat(extra=None, model="m1"):
    b = {"model": model, "messages": [{"role": "user",
        "content": "hello there"}]}
    b.update(extra or {})
    return call("POST", "/v1/chat/completions", b)


def msgs(extra=None, headers=None):
    b = {"model": "ma", "max_tokens": 50, "messages": [{"role": "user",
        "content": "hello there"}]}
    b.update(extra or {})
    return call("POST", "/v1/messages", b, headers)


def openai_error(st, data, want_status, want_type):
    e = (js(data) or {}).get("error") or {}
    return st == want_status and e.get("type") == want_type


def anthropic_error(st, data, want_status, want_type):
    o = js(data) or {}
    return st == want_status and o.get("type") == "error" and \
        (o.get("error") or {}).get("type") == want_type


# --- GET /v1/models ---
st, _, d = call("GET", "/v1/models")
o = js(d) or {}
report(st == 200 and o.get("object") == "list" and
    [m["id"] for m in o["data"]] == ["m1", "m2", "ma", "mk"] and
    all(m["object"] == "model" and m["owned_by"] == "depotd" and
    isinstance(m["created"], int) for m in o["data"]),
    "GET /v1/models: the OpenAI list of the configured models")
st, _, d = call("GET", "/v1/models", headers={"anthropic-version":
    "2023-06-01"})
o = js(d) or {}
report(st == 200 and o.get("has_more") is False and
    o.get("first_id") == "m1" and o.get("last_id") == "mk" and
    all(m["type"] == "model" and m["display_name"] == m["id"] and
    m["created_at"].endswith("Z") for m in o["data"]),
    "GET /v1/models with anthropic-version: Anthropic's page")
st, _, d = call("GET", "/v1/models/ma")
report(st == 200 and (js(d) or {}).get("id") == "ma",
    "GET /v1/models/{id}")
st, _, d = call("GET", "/v1/models/nope")
report(st == 404 and (js(d) or {}).get("error", {}).get("code") ==
    "model_not_found", "an unknown model id: 404 model_not_found")
st, _, d = call("GET", "/v1/models", headers={"Authorization": "Bearer x"})
report(st == 401, "the models listing needs a key")

# --- before anything goes upstream ---
double("/__reset", {})
st, _, d = call("GET", "/v1/chat/completions")
report(openai_error(st, d, 405, "invalid_request_error"), "GET on a model "
    "route: 405")
st, _, d = call("POST", "/v1/chat/completions", "x" * 10,
    {"Content-Length": "999999999"})
report(st == 413, "a declared length over max-request-size: 413")
st, _, d = call("POST", "/v1/messages", iter([b" " * 1048576] * 40),
    {"Transfer-Encoding": "chunked"})
report(anthropic_error(st, d, 413, "request_too_large"),
    "a chunked body growing over max-request-size: 413 (Anthropic)")
st, _, d = call("POST", "/v1/chat/completions", '{"model":')
report(openai_error(st, d, 400, "invalid_request_error"), "bad JSON: 400")
# json-c reads these; JSON has no such numbers, nor could they be sent on.
for bad in ("NaN", "-Infinity", "1e999"):
    st, _, d = call("POST", "/v1/chat/completions", '{"model":"m1",'
        '"messages":[{"role":"user","content":"hi"}],"temperature":%s}' % bad)
    report(openai_error(st, d, 400, "invalid_request_error"),
        "a number JSON cannot hold (%s): 400" % bad)
st, _, d = call("POST", "/v1/responses", '{"a":' * 70 + '1' + '}' * 70)
report(st == 400, "JSON nested 70 deep: 400")
st, _, d = call("POST", "/v1/chat/completions", [1])
report(st == 400, "a body that is no object: 400")
st, _, d = call("POST", "/v1/chat/completions", {"messages": []})
report(st == 400 and (js(d) or {}).get("error", {}).get("param") ==
    "model", "no model: 400 naming the model param")
st, _, d = chat(model="nope")
report(st == 404 and (js(d) or {}).get("error", {}).get("code") ==
    "model_not_found", "an unknown model on chat: 404 model_not_found")
st, _, d = msgs({"model": "nope"})
report(anthropic_error(st, d, 404, "not_found_error"),
    "an unknown model on /v1/messages without anthropic-version: 404 "
    "in Anthropic's envelope")
st, _, d = call("POST", "/v1/chat/completions", {"model": "m1"},
    {"Authorization": "Bearer dpt-wrong"})
report(st == 401, "a wrong key: 401")
report(js(double("/__log")[2])["requests"] == [],
    "none of these reached the upstream")

# --- what the upstream receives ---
st, _, d = chat()
o = js(d) or {}
up = last_upstream()
report(st == 200 and o.get("model") == "m1" and
    o["choices"][0]["message"]["content"] == "echo: hello there",
    "chat, plain: the answer, under the caller's model name")
report(up["body"]["model"] == "remote-m1" and
    up["headers"].get("authorization") == "Bearer test-upstream-key" and
    key not in json.dumps(up), "the upstream gets the remote name and "
    "the configured key, never the caller's")
st, h, d = chat({"stream": True})
up = last_upstream()
report(st == 200 and h.get("content-type", "").startswith(
    "text/event-stream") and d.rstrip().endswith(b"data: [DONE]") and
    up["body"].get("stream_options", {}).get("include_usage") is True,
    "chat, streamed: SSE to [DONE], include_usage asked of the upstream")
st, _, d = msgs()
up = last_upstream()
report(st == 200 and (js(d) or {}).get("type") == "message" and
    up["headers"].get("x-api-key") == "test-upstream-key" and
    up["headers"].get("anthropic-version") and
    "authorization" not in up["headers"],
    "messages to an anthropic upstream: x-api-key and anthropic-version")
st, h, d = msgs({"stream": True})
report(st == 200 and d.startswith(b"event: message_start") and
    b"event: message_stop" in d, "messages, streamed: Anthropic events")

# --- the upstream's failures, in the caller's envelope ---
def fault(f, want_status, want_type, what, stream=False, anthropic=False):
    script({"fault": f})
    st, h, d = (msgs if anthropic else chat)({"stream": True} if stream
        else None)
    ok = (anthropic_error if anthropic else openai_error)(st, d,
        want_status, want_type)
    report(ok, what)
    return st, h, d


st, h, d = fault({"kind": "status", "status": 400,
    "message": "bad\u0001 thing"}, 400, "invalid_request_error",
    "upstream 400: 400 with its message")
report(b"bad thing" in d, "the upstream's message, control characters "
    "dropped")
fault({"kind": "status", "status": 422, "message": "x"}, 400,
    "invalid_request_error", "upstream 422: 400", anthropic=True)
fault({"kind": "status", "status": 401}, 502, "server_error",
    "upstream 401: 502 (the gateway's credential)")
fault({"kind": "status", "status": 403}, 502, "api_error",
    "upstream 403: 502 (Anthropic)", anthropic=True)
st, h, d = fault({"kind": "status", "status": 429, "retry_after": "7"}, 429,
    "rate_limit_error", "upstream 429: 429")
report(h.get("retry-after") == "7", "upstream 429: retry-after passed on")
when = email.utils.formatdate(time.time() + 30, usegmt=True)
st, h, d = fault({"kind": "status", "status": 429, "retry_after": when}, 429,
    "rate_limit_error", "upstream 429 with an HTTP-date: 429")
ra = h.get("retry-after") or ""
report(ra.isdigit() and 25 <= int(ra) <= 31,
    "an HTTP-date retry-after becomes the seconds left (%r)" % ra)
st, h, d = fault({"kind": "status", "status": 429, "retry_after": "soon"},
    429, "rate_limit_error", "upstream 429, retry-after nonsense: 429")
report("retry-after" not in h, "a retry-after that is neither is dropped")
fault({"kind": "status", "status": 500}, 502, "server_error",
    "upstream 500: 502")
fault({"kind": "status", "status": 503}, 502, "server_error",
    "upstream 503, streamed: 502 before the status line", stream=True)
fault({"kind": "garbage"}, 502, "server_error", "upstream garbage: 502")
fault({"kind": "reset", "after": "headers"}, 502, "server_error",
    "upstream reset: 502")
t0 = time.time()
fault({"kind": "stall", "after": "headers"}, 504, "server_error",
    "upstream stall: 504")
report(time.time() - t0 < 5, "the stall cut after idle-timeout")
# A body curl reads in pieces (over 64 KiB), then a model that thinks
# longer than idle-timeout (2 s on m1) before its first byte: the wait
# after the last byte sent is the call's timeout's, not idle-timeout's.
script({"think_ms": 3000})
t0 = time.time()
st, _, d = chat({"messages": [{"role": "user", "content": "y" * 200000}]})
report(st == 200 and time.time() - t0 >= 2.9,
    "a long body, then 3 s of thought: answered, not cut by idle-timeout "
    "(%s)" % st)
script({"fault": {"kind": "stall", "after": "first"}})
st, h, d = msgs({"stream": True})
report(st == 200 and b"event: message_start" in d and
    b"event: error" in d, "a stall mid-stream: an error event ends it")

# --- a client that leaves ---
double("/__reset", {})
script({"fault": {"kind": "stall", "after": "first"}})
s = socket.create_connection(("127.0.0.1", host.port))
b = json.dumps({"model": "m1", "stream": True, "messages": [{"role": "user",
    "content": "hi"}]}).encode()
s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
    b"Authorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s" %
    (key.encode(), len(b), b))
s.recv(100)
t0 = time.time()
s.close()
time.sleep(1)
up = last_upstream()
report(up["client_closed"] and up["ended"] - t0 < 1,
    "a client that leaves: the upstream sees the close within 1 s")

# --- a slow reader of a long stream ---
def hwm():
    total = 0
    for p in fe_pids:
        with open("/proc/%s/status" % p) as f:
            for line in f:
                if line.startswith("VmHWM"):
                    total = max(total, int(line.split()[1]))
    return total


def rss(p):
    with open("/proc/%s/status" % p) as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1])


base = {}
for p in fe_pids:
    with open("/proc/%s/clear_refs" % p, "w") as f:
        f.write("5")
    base[p] = rss(p)
# m2: an upstream with the default idle-timeout, since the double may
# take more than 2 s to make so long an answer on a busy machine.
script({"text": ("x" * 1000 + " ") * 30000})
b = b.replace(b'"m1"', b'"m2"')
s = socket.create_connection(("127.0.0.1", host.port))
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
    b"Authorization: Bearer %s\r\nContent-Length: %d\r\n"
    b"Connection: close\r\n\r\n%s" % (key.encode(), len(b), b))
n, tail = 0, b""
while True:
    x = s.recv(65536)
    if not x:
        break
    n += len(x)
    tail = (tail + x)[-64:]
    time.sleep(0.005)
s.close()
grow = 0
for p in fe_pids:
    with open("/proc/%s/status" % p) as f:
        for line in f:
            if line.startswith("VmHWM"):
                grow = max(grow, int(line.split()[1]) - base[p])
report(n > 30000000 and b"[DONE]" in tail,
    "a 30 MB stream to a slow reader: whole (%d bytes)" % n)
if os.environ.get("ROUTE_ASAN"):
    # ASan's quarantine keeps what was freed: the peak means nothing.
    print("# frontend growth %d KiB not checked under AddressSanitizer" %
        grow)
else:
    report(grow < 8192, "the frontend grew by %d KiB for it (< 8 MiB): "
        "curl paused while the reader lags" % grow)

# --- /metrics ---
st, _, d = call("GET", "/metrics")
text = d.decode()
report('depotd_model_requests_total{frontend=' in text and
    'model="m1"}' in text and "depotd_model_tokens_out_total" in text,
    "/metrics: per-model counters")

# --- names that cannot take a suffix (issue 18, item 1) ---
def cpu(p):
    """The process's user and system time, in clock ticks."""
    try:
        with open("/proc/%s/stat" % p) as f:
            v = f.read().rsplit(")", 1)[1].split()
        return int(v[11]) + int(v[12])
    except OSError:
        return 0


def upload(name, data):
    bnd = "route-names-boundary"
    body = ("--%s\r\nContent-Disposition: form-data; name=\"file\"; "
        "filename=\"%s\"\r\nContent-Type: text/plain\r\n\r\n" % (bnd,
        name)).encode() + data + ("\r\n--%s--\r\n" % bnd).encode()
    st, _, d = call("POST", "/v1/files", body, {"Content-Type":
        "multipart/form-data; boundary=" + bnd})
    return st, (js(d) or {}).get("id")


def healthy(n, timeout=3):
    """n new connections to /healthz, each answered 200 in time."""
    good = 0
    for _ in range(n):
        try:
            st, _, _ = call("GET", "/healthz", timeout=timeout)
            good += st == 200
        except (socket.timeout, OSError):
            pass
    return good


# 255 bytes, the default max-filename: "-2" fits neither before nor
# after the 254-byte extension, which once made seed_names loop.
long_name = "x." + "a" * 253
ups = [upload(long_name, b"first file\n"), upload(long_name,
    b"second file\n")]
report(all(st == 200 and i for st, i in ups),
    "two uploads named x. and 253 a's (255 bytes)")
double("/__reset", {})
ticks = os.sysconf("SC_CLK_TCK")
t0 = time.time()
try:
    st, _, d = call("POST", "/v1/chat/completions", {"model": "m1",
        "messages": [{"role": "user", "content": [{"type": "text",
        "text": "compare these"}] + [{"type": "file", "file":
        {"file_id": i}} for _, i in ups]}]}, timeout=10)
except (socket.timeout, OSError):
    st, d = None, b""
took = time.time() - t0
ok = st == 200
if ok:
    sent = json.dumps(last_upstream()["body"])
    ok = "first file" in sent and "second file" in sent
report(ok, "a chat request naming both: answered in %.2f s, both files "
    "inlined (status %s)" % (took, st))
c0 = dict((p, cpu(p)) for p in fe_pids)
time.sleep(2)
busy = max([(cpu(p) - c0[p]) * 100.0 / ticks / 2 for p in fe_pids] + [0])
report(busy < 10, "no frontend spins afterwards (the busiest: %.0f %% "
    "CPU over 2 s)" % busy)
good = healthy(8)
report(good == 8, "/healthz answers on 8 new connections after it (%d "
    "did)" % good)
if busy >= 10:
    # A frontend that spins for good would keep the daemon from stopping.
    for p in fe_pids:
        if cpu(p) - c0[p] > ticks:
            os.kill(int(p), 9)
sys.exit(0)
