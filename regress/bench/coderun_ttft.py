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

# regress/bench/coderun_ttft.py: time to first token through a
# streamed code-execution request (Messages, the native tool, an
# api anthropic upstream) against the upstream's own, for
# regress/bench/coderun.sh (coderun.py calls ttft()).  The model
# writes a sentence, then calls code_execution; the first token is the
# first event that carries a word of it (a text_delta, or a text block
# that starts with it).

import http.client
import json
import re
import time
import urllib.parse
import urllib.request

SENTENCE = "Let me compute that first."


def first_token(url, path, headers, body):
	"""Seconds until the sentence arrives, and until the stream ends."""
	u = urllib.parse.urlsplit(url)
	c = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
	t0 = time.monotonic()
	w0 = time.time()
	c.request("POST", path, body=json.dumps(body).encode(),
	    headers=dict({"content-type": "application/json"}, **headers))
	r = c.getresponse()
	first = None
	buf = b""
	while True:
		chunk = r.read1(65536)
		if not chunk:
			break
		buf += chunk
		if first is None and (b'"text_delta"' in buf or
		    re.search(rb'"text": ?"Let', buf)):
			first = time.monotonic() - t0
			wfirst = w0 + first
	c.close()
	if first is None:
		raise SystemExit("ttft: no sentence in %s" % buf[:300])
	return first, time.monotonic() - t0, wfirst


def rounds_before(double, when):
	"""Upstream requests of the last one begun before the wall time."""
	with urllib.request.urlopen(double + "/__log", timeout=30) as r:
		log = json.load(r)["requests"]
	return sum(1 for q in log if q["path"].startswith("/v1/") and
	    q["started"] < when)


def ttft(url, key, double, script, n, pct, ms):
	turns = [{"text": SENTENCE, "tool_calls": [{"name": "code_execution",
	    "arguments": {"code": "print(1)"}}]}, {"text": "ok"}]
	msgs = [{"role": "user", "content": "go"}]
	ours, theirs, whole, asked = [], [], [], []
	for _ in range(n):
		urllib.request.urlopen(urllib.request.Request(double +
		    "/__reset", data=b"", method="POST"), timeout=30).read()
		script(turns)
		f, t, w = first_token(url, "/v1/messages", {"x-api-key": key,
		    "anthropic-version": "2023-06-01"}, {"model": "ma",
		    "max_tokens": 64, "stream": True, "messages": msgs,
		    "tools": [{"type": "code_execution_20250825",
		    "name": "code_execution"}]})
		ours.append(f)
		whole.append(t)
		asked.append(rounds_before(double, w))
		script(turns[:1])
		f, _, _ = first_token(double, "/v1/messages", {"x-api-key":
		    "test-upstream-key", "anthropic-version": "2023-06-01"},
		    {"model": "x", "max_tokens": 64, "stream": True,
		    "messages": msgs, "tools": [{"name": "code_execution",
		    "input_schema": {"type": "object"}}]})
		theirs.append(f)
	for p in (50, 99):
		print("time to first token through a code-execution request "
		    "p%d: %s, the upstream's own %s (added %s); the whole "
		    "answer %s, the rest took %s after the first token" % (p,
		    ms(pct(ours, p)), ms(pct(theirs, p)),
		    ms(pct(ours, p) - pct(theirs, p)), ms(pct(whole, p)),
		    ms(pct(whole, p) - pct(ours, p))))
	# Machine-independent: how many of the request's upstream rounds
	# had begun when its first token reached the caller (1: during
	# the first; 2: only after the tool round, the answer's round).
	print("upstream rounds begun before the first token: %s of 2 "
	    "(median of %d)" % (sorted(asked)[len(asked) // 2], n))
