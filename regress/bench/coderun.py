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

# regress/bench/coderun.py: the measurements of regress/bench/coderun.sh
# (which starts what they need and passes it in the environment).

import http.client
import json
import os
import socket
import statistics
import subprocess
import time
import urllib.request

URL = os.environ["DEPOT_URL"]
KEY = os.environ["KEY"]
DOUBLE = os.environ["DOUBLE"]
N = int(os.environ.get("N", "30"))
W = os.environ["W"]
SOCK = os.environ["SOCK"]
TOKEN = open(os.environ["TOKEN_FILE"]).read().strip()


def post(url, body, headers=None):
	req = urllib.request.Request(url, data=json.dumps(body).encode(),
	    headers=dict({"content-type": "application/json"}, **(headers or
	    {})), method="POST")
	with urllib.request.urlopen(req, timeout=300) as r:
		return r.status, r.read()


def script(turns):
	post(DOUBLE + "/__script", {"turns": turns})


def chat(tools, content="go"):
	body = {"model": "m", "messages": [{"role": "user",
	    "content": content}]}
	if tools:
		body["tools"] = [{"type": "otari_code_execution"}]
	t0 = time.monotonic()
	status, out = post(URL + "/v1/chat/completions", body,
	    {"authorization": "Bearer " + KEY})
	t = time.monotonic() - t0
	if status != 200:
		raise SystemExit("chat: %d %s" % (status, out[:200]))
	return t, out


class Unix(http.client.HTTPConnection):
	def __init__(self):
		super().__init__("sandbox", timeout=120)

	def connect(self):
		self.sock = socket.socket(socket.AF_UNIX)
		self.sock.connect(SOCK)


def sbx(method, path, body=None, ctype="application/json"):
	c = Unix()
	h = {"authorization": "Bearer " + TOKEN}
	if body is not None:
		h["content-type"] = ctype
	c.request(method, path, body=body, headers=h)
	r = c.getresponse()
	data = r.read()
	c.close()
	return r.status, data


def pct(xs, p):
	xs = sorted(xs)
	return xs[max(0, min(len(xs) - 1, int(len(xs) * p / 100.0 + 0.5) - 1))]


def ms(x):
	return "%.1f ms" % (x * 1000)


def tool_round():
	"""A request with one print(1) round, less one answered at once."""
	plain, round1 = [], []
	chat(True)		# warm: a first session, imports
	for _ in range(N):
		script([{"text": "ok"}])
		plain.append(chat(True)[0])
		script([{"tool_calls": [{"name": "code_execution",
		    "arguments": {"code": "print(1)"}}]}, {"text": "ok"}])
		t, out = chat(True)
		if b"return_code: 0" not in out and b"ok" not in out:
			raise SystemExit("the round did not run: %s" % out[:300])
		round1.append(t)
	st, out = sbx("POST", "/sessions", b"{}")
	sid = json.loads(out)["session_id"]
	exe = json.dumps({"tool": "code_execution",
	    "input": {"code": "print(1)"}}).encode()
	sbx("POST", "/sessions/%s/exec" % sid, exe)
	bare = []
	for _ in range(N):
		t0 = time.monotonic()
		st, _ = sbx("POST", "/sessions/%s/exec" % sid, exe)
		bare.append(time.monotonic() - t0)
	sbx("DELETE", "/sessions/" + sid)
	# Each request has a session of its own: its first Execute starts
	# the interpreter.  That is the bare cost a round stands against.
	cold = []
	for _ in range(N):
		st, out = sbx("POST", "/sessions", b"{}")
		sid = json.loads(out)["session_id"]
		t0 = time.monotonic()
		sbx("POST", "/sessions/%s/exec" % sid, exe)
		cold.append(time.monotonic() - t0)
		sbx("DELETE", "/sessions/" + sid)
	for p in (50, 99):
		added = pct(round1, p) - pct(plain, p)
		print("tool round p%d: added %s; bare first Execute in a new "
		    "session %s (ratio %.2f); bare warm Execute %s" % (p,
		    ms(added), ms(pct(cold, p)), added / pct(cold, p),
		    ms(pct(bare, p))))


def upload(path):
	out = subprocess.run(["curl", "-s", "-H", "Authorization: Bearer " +
	    KEY, "-F", "purpose=user_data", "-F", "file=@" + path,
	    URL + "/v1/files"], capture_output=True, check=True).stdout
	return json.loads(out)["id"]


def seeding():
	"""Ten 10 MB container uploads, less none; vs curl PutFile."""
	ids = [upload("%s/seed%d.bin" % (W, i)) for i in range(1, 11)]
	blocks = [{"type": "text", "text": "go"}] + [{"type":
	    "container_upload", "file_id": f} for f in ids]
	hdr = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
	body = {"model": "ma", "max_tokens": 10, "tools":
	    [{"type": "otari_code_execution"}]}
	rounds = max(3, N // 10)
	seeded, plain, direct = [], [], []
	for _ in range(rounds):
		t0 = time.monotonic()
		post(URL + "/v1/messages", dict(body, messages=[{"role":
		    "user", "content": blocks}]), hdr)
		seeded.append(time.monotonic() - t0)
		t0 = time.monotonic()
		post(URL + "/v1/messages", dict(body, messages=[{"role":
		    "user", "content": "go"}]), hdr)
		plain.append(time.monotonic() - t0)
		st, out = sbx("POST", "/sessions", b"{}")
		sid = json.loads(out)["session_id"]
		t0 = time.monotonic()
		for i in range(1, 11):
			subprocess.run(["curl", "-s", "-o", "/dev/null",
			    "--unix-socket", SOCK, "-H", "Authorization: Bearer " +
			    TOKEN, "-F", "path=seed%d.bin" % i, "-F",
			    "file=@%s/seed%d.bin" % (W, i),
			    "http://sandbox/sessions/%s/files" % sid], check=True)
		direct.append(time.monotonic() - t0)
		sbx("DELETE", "/sessions/" + sid)
	s = statistics.median(seeded) - statistics.median(plain)
	d = statistics.median(direct)
	print("seeding 10 x 10 MB: through depotd %s, curl PutFile %s, "
	    "ratio %.2f (%d rounds, medians)" % (ms(s), ms(d), s / d, rounds))


tool_round()
seeding()
# Time to first token through a code-execution request (issue 20).
__import__("coderun_ttft").ttft(URL, KEY, DOUBLE, script, N, pct, ms)
