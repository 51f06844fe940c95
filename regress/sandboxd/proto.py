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

# proto.py: protocol v1 of depot-sandboxd: every operation, every status
# code, the envelope shapes, state across calls, produced files, the text
# editor, the limits on a call, and ten sessions at once.

import json
import threading

from sbx import Daemon, check, finish

d = Daemon(opts=["max-sessions=12", "max-upload=1M", "max-idle-timeout=600",
    "max-lifetime=900"])
try:
	# Authentication.
	st, _, _ = d.request("POST", "/sessions", {}, auth=False)
	check(st == 401, "no token: 401")
	st, body = d.json("POST", "/sessions", {}, auth=False,
	    headers={"Authorization": "Bearer wrong-token-value"})
	check(st == 401 and body["error"]["type"] == "authentication_error",
	    "wrong token: 401 with an error envelope")

	# CreateSession.
	st, s = d.create()
	check(st == 201, "CreateSession: 201")
	check(set(s) >= {"session_id", "idle_timeout_seconds",
	    "max_lifetime_seconds", "created_at", "last_activity_at"},
	    "CreateSession: every field of the envelope")
	check(s["idle_timeout_seconds"] == 300 and
	    s["max_lifetime_seconds"] == 900,
	    "CreateSession: defaults reported")
	sid = s["session_id"]
	st, s2 = d.create(idle_timeout_seconds=100000,
	    max_lifetime_seconds=5, unknown_field=1)
	check(st == 201 and s2["idle_timeout_seconds"] == 600 and
	    s2["max_lifetime_seconds"] == 5,
	    "CreateSession: hints clamped and reported, unknown fields ignored")
	d.delete(s2["session_id"])
	st, _ = d.json("POST", "/sessions", b"{not json")
	check(st == 400, "CreateSession: malformed JSON: 400")
	st, _ = d.create(idle_timeout_seconds="soon")
	check(st in (400, 422), "CreateSession: non-integer hint refused")

	# Execute: envelope and state.
	st, r = d.exec(sid, "code_execution", {"code": "import math\nx = 41"},
	    tool_use_id="toolu_abc")
	check(st == 200, "Execute: 200")
	check(r["tool_use_id"] == "toolu_abc" and
	    isinstance(r["execution_time_ms"], int), "Execute: envelope")
	rb = r["result_block"]
	check(rb["type"] == "code_execution_tool_result" and
	    rb["tool_use_id"] == "toolu_abc", "Execute: result block type")
	c = rb["content"]
	check(isinstance(c, dict) and c["type"] == "code_execution_result" and
	    c["return_code"] == 0 and c["content"] == [],
	    "Execute: content is one object with an empty file list")
	st, c = d.code(sid, "print(x + 1, math.floor(2.5))")
	check(c["stdout"] == "42 2\n", "variables and imports survive calls")
	st, c = d.code(sid, "raise ValueError('boom')")
	check(st == 200 and c["return_code"] == 1 and
	    "ValueError: boom" in c["stderr"],
	    "an exception is return_code 1 and a traceback, not an error status")
	st, c = d.code(sid, "import sys; sys.exit(7)")
	check(c["return_code"] == 7, "sys.exit code is the return code")
	st, c = d.code(sid, "import numpy, pandas, matplotlib.pyplot as plt\n"
	    "print(int(numpy.arange(4).sum()), len(pandas.DataFrame({'a':[1,2]})))")
	check(c is not None and c["stdout"] == "6 2\n",
	    "host Python packages importable (%r)" % (c and c["stderr"][-200:]))

	st, r = d.exec(sid, "bash_code_execution",
	    {"command": "echo out; echo err >&2; pwd; exit 3"})
	c = r["result_block"]["content"]
	check(r["result_block"]["type"] == "bash_code_execution_tool_result" and
	    c["type"] == "code_execution_result",
	    "bash: result types (content.type is the same for every kind)")
	check(c["stdout"] == "out\n/workspace\n" and c["stderr"] == "err\n" and
	    c["return_code"] == 3, "bash: stdout, stderr, return code, cwd")

	# Produced files.
	st, c = d.code(sid, "open('out.csv','w').write('a,b\\n1,2\\n')\n"
	    "import os; os.makedirs('plots', exist_ok=True)\n"
	    "open('plots/p.txt','w').write('p')")
	names = sorted(f["filename"] for f in c["content"])
	check(names == ["out.csv", "plots/p.txt"] and
	    all(f["type"] == "code_execution_output" and f["file_id"]
	    for f in c["content"]), "new files reported")
	st, c = d.code(sid, "print('nothing written')")
	check(c["content"] == [], "unchanged files not reported again")
	st, c = d.bash(sid, "echo more >> out.csv")
	check([f["filename"] for f in c["content"]] == ["out.csv"],
	    "a changed file is reported (bash too)")
	st, data = d.get(sid, c["content"][0]["filename"])
	check(st == 200 and data == b"a,b\n1,2\nmore\n",
	    "GetFile accepts the reported filename")

	# Text editor.
	def ed(**inp):
		st, r = d.exec(sid, "text_editor_code_execution", inp)
		return r["result_block"]["content"] if st == 200 else None
	c = ed(command="create", path="notes/a.txt", file_text="one\ntwo\nthree\n")
	check(c["type"] == "code_execution_result" and
	    c["return_code"] == 0 and
	    [f["filename"] for f in c["content"]] == ["notes/a.txt"],
	    "editor create: result type, file reported")
	c = ed(command="view", path="notes/a.txt")
	check("1\tone" in c["stdout"] and "3\tthree" in c["stdout"],
	    "editor view numbers lines")
	c = ed(command="view", path="/workspace/notes/a.txt", view_range=[2, 2])
	check(c["stdout"].strip() == "2\ttwo", "editor view_range")
	c = ed(command="str_replace", path="notes/a.txt", old_str="t",
	    new_str="T")
	check(c["return_code"] != 0 and "exactly once" in c["stderr"],
	    "str_replace with several matches refused clearly")
	c = ed(command="str_replace", path="notes/a.txt", old_str="zzz",
	    new_str="T")
	check(c["return_code"] != 0 and "not found" in c["stderr"],
	    "str_replace with no match refused clearly")
	c = ed(command="str_replace", path="notes/a.txt", old_str="two",
	    new_str="2")
	check(c["return_code"] == 0, "str_replace with one match")
	c = ed(command="insert", path="notes/a.txt", insert_line=1,
	    new_str="one and a half")
	st, data = d.get(sid, "notes/a.txt")
	check(data == b"one\none and a half\n2\nthree\n", "insert after line 1")
	c = ed(command="undo_edit", path="notes/a.txt")
	st, data = d.get(sid, "notes/a.txt")
	check(c["return_code"] == 0 and data == b"one\n2\nthree\n",
	    "undo_edit reverts the last edit")
	c = ed(command="frobnicate", path="notes/a.txt")
	check(c["return_code"] != 0, "unknown editor command is an error result")

	# Malformed calls.
	st, _ = d.exec(sid, "fortran_execution", {"code": "x"})
	check(st in (400, 422), "unknown tool: %d" % st)
	st, _ = d.json("POST", "/sessions/%s/exec" % sid, {"tool":
	    "code_execution"})
	check(st in (400, 422), "missing input: %d" % st)
	st, _ = d.exec(sid, "code_execution", {"code": "1"}, timeout_seconds=121)
	check(st == 422, "timeout_seconds 121 refused with 422")
	st, _ = d.exec(sid, "code_execution", {"code": "1"}, timeout_seconds=0)
	check(st == 422, "timeout_seconds 0 refused with 422")
	st, c = d.code(sid, "print('ok')", timeout_seconds=120)
	check(st == 200, "timeout_seconds 120 accepted")
	st, _ = d.exec(sid, "code_execution", {"code": "#" * 200001})
	check(st in (400, 413, 422), "code over 200000 characters refused")
	st, c = d.code(sid, "#" * 199980 + "\nprint('long')")
	check(st == 200 and c["stdout"] == "long\n",
	    "code of 200000 characters accepted")
	st, _ = d.json("POST", "/sessions/%s/exec" % sid, b"[1,2]")
	check(st == 400, "non-object body: 400")

	# Timeout and output limits.
	st, c = d.code(sid, "y = 1\nwhile True: pass", timeout_seconds=2)
	check(st == 200 and c["return_code"] == -1 and
	    "timed out" in c["stderr"], "timeout: return_code -1, clear stderr")
	st, c = d.code(sid, "print('alive')")
	check(c["stdout"] == "alive\n", "interpreter respawned after a timeout")
	st, c = d.code(sid, "import sys; sys.stdout.write('x' * (3 << 20))\n"
	    "sys.stderr.write('e' * (2 << 20))")
	check(c["stdout"].startswith("x" * 1000) and
	    len(c["stdout"]) < (1 << 20) + 200 and
	    "output truncated" in c["stdout"] and
	    "output truncated" in c["stderr"],
	    "stdout and stderr truncated at 1 MiB with a marker")

	# Files.
	st, r = d.put(sid, b"hello", filename="h.txt", path="in/deep/h.txt")
	check(st == 201 and r == {"path": "in/deep/h.txt", "size_bytes": 5},
	    "PutFile: 201, parents created")
	st, r = d.put(sid, b"named", filename="named.txt")
	check(st == 201 and r["path"] == "named.txt",
	    "PutFile without path uses the filename")
	st, c = d.code(sid, "print(open('in/deep/h.txt').read())")
	check(c["stdout"] == "hello\n", "uploaded file visible to the code")
	st, data = d.get(sid, "in/deep/h.txt")
	check(st == 200 and data == b"hello", "GetFile: 200 raw bytes")
	big = bytes(range(256)) * 3000
	st, r = d.put(sid, big, filename="bin.dat")
	st2, data = d.get(sid, "bin.dat")
	check(st == 201 and data == big, "binary round trip of 768000 bytes")
	st, r = d.put(sid, b"z" * (1024 * 1024 + 10), filename="huge.bin")
	st2, lst = d.listing(sid)
	check(st == 413 and "huge.bin" not in
	    [f["path"] for f in lst["files"]],
	    "PutFile over the cap: 413, nothing written")
	st, _ = d.get(sid, "in")
	check(st == 400, "GetFile on a directory: 400")
	st, _ = d.get(sid, "missing.txt")
	check(st == 404, "GetFile on a missing file: 404")
	st, lst = d.listing(sid)
	paths = {f["path"]: f for f in lst["files"]}
	check(st == 200 and "in/deep/h.txt" in paths and
	    paths["in/deep/h.txt"]["size_bytes"] == 5 and
	    paths["in/deep/h.txt"]["mime_type"] == "text/plain" and
	    "modified_at" in paths["in/deep/h.txt"], "ListFiles: entries")
	st, lst = d.listing(sid, "in")
	check(st == 200 and [f["path"] for f in lst["files"]] ==
	    ["in/deep/h.txt"], "ListFiles of a subdirectory")
	st, _ = d.listing(sid, "../")
	check(st == 403, "ListFiles outside: 403")
	st, _ = d.listing(sid, "nothere")
	check(st == 404, "ListFiles of a missing directory: 404")

	# Unknown sessions.
	bad = "sess_00000000000000000000000000000000"
	st, _ = d.exec(bad, "code_execution", {"code": "1"})
	check(st == 404, "Execute on an unknown session: 404")
	st, _ = d.listing(bad)
	check(st == 404, "ListFiles on an unknown session: 404")
	st, _ = d.get(bad, "x")
	check(st == 404, "GetFile on an unknown session: 404")
	st, _ = d.put(bad, b"x", filename="x")
	check(st == 404, "PutFile on an unknown session: 404")

	# DestroySession.
	check(d.delete(sid) == 204, "DestroySession: 204")
	check(d.delete(sid) == 204, "DestroySession twice: still 204")
	st, _ = d.exec(sid, "code_execution", {"code": "1"})
	check(st == 404, "a destroyed session is gone")

	# Ten sessions at once, each with its own state.
	results = {}

	def worker(i):
		try:
			s = d.session()
			d.code(s, "v = %d" % i)
			d.bash(s, "echo %d > mine.txt" % i)
			st, c = d.code(s, "print(v, open('mine.txt').read().strip())")
			results[i] = c["stdout"] == "%d %d\n" % (i, i)
			d.delete(s)
		except Exception as e:
			results[i] = False
			print("# worker %d: %r" % (i, e))
	threads = [threading.Thread(target=worker, args=(i,)) for i in range(10)]
	for t in threads:
		t.start()
	for t in threads:
		t.join()
	check(len(results) == 10 and all(results.values()),
	    "10 concurrent sessions keep separate state and workspaces")

	# Capacity.
	held = [d.create() for _ in range(13)]
	codes = [st for st, _ in held]
	check(codes.count(201) == 12 and codes[-1] == 503,
	    "capacity: 503 beyond max-sessions (%r)" % codes)
	for st, s in held:
		if st == 201:
			d.delete(s["session_id"])
	check(d.healthy(), "daemon healthy at the end")
finally:
	d.stop()
	d.cleanup()
finish()
