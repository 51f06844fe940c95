#
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

# freeze.py: between calls nothing of a session runs.  A thread and a
# forked child that code leaves behind, each appending to a workspace
# file every 10 ms, write nothing while no call runs (two GetFile and
# ListFiles 1 s apart see one size), resume in the next call with the
# interpreter's state intact, and cannot take the workspace past its
# quota between calls.  Needs a cgroup freezer (v2, or v1's freezer
# hierarchy); without one the daemon says so and the checks are skipped.

import json
import os
import time

from sbx import Daemon, check, finish

# One thread appends from the start; another forks a child that appends,
# 0.3 s in, after the call has returned (the runner's own sweep at the
# end of a call kills the children it finds, but not the threads, nor
# what they fork later).
WRITERS = r"""
import os, threading, time
def append(tag, n=200000):
	with open('bg.log', 'ab', buffering=0) as f:
		for i in range(n):
			f.write(tag * 64)
			time.sleep(0.01)
def forker():
	time.sleep(0.3)
	if os.fork() == 0:
		try:
			append(b'c')
		finally:
			os._exit(0)
writer = threading.Thread(target=append, args=(b't',), daemon=True)
writer.start()
threading.Thread(target=forker, daemon=True).start()
time.sleep(0.1)
"""

RESUMED = r"""
import json, os, time
s0 = os.path.getsize('bg.log')
time.sleep(0.5)
new = open('bg.log', 'rb').read()[s0:]
print(json.dumps({"t": new.count(b't'), "c": new.count(b'c'),
    "alive": writer.is_alive(), "x": x}))
"""

FLOOD = r"""
import threading, time
def flood():
	with open('flood.bin', 'ab', buffering=0) as f:
		for i in range(60):
			f.write(b'x' * (1 << 20))
			time.sleep(0.01)
threading.Thread(target=flood, daemon=True).start()
"""


def size_of(d, sid, name):
	"""The file's size by GetFile and by ListFiles."""
	st, data = d.get(sid, name)
	got = len(data) if st == 200 else -1
	st, body = d.listing(sid)
	listed = -1
	if st == 200:
		for e in body["files"]:
			if e["path"] == name:
				listed = e["size_bytes"]
	return got, listed


def disk_bytes(root):
	total = 0
	for dirpath, dirs, files in os.walk(root):
		for f in files:
			try:
				total += os.lstat(os.path.join(dirpath,
				    f)).st_blocks * 512
			except OSError:
				pass
	return total


d = Daemon(opts=["workspace-size=20M", "max-lifetime=600"])
try:
	with open(d.log.name) as f:
		log = f.read()
	frozen = "between calls" in log and "not frozen" not in log
	check(frozen, "the daemon freezes sessions between calls (%r)" %
	    [l for l in log.splitlines() if "cgroup" in l][:2])
	sid = d.session()
	st, c = d.code(sid, "x = 42\n" + WRITERS)
	check(st == 200 and c["return_code"] == 0,
	    "code leaves a thread and a forked child appending to bg.log "
	    "(%r)" % (c["stderr"][-200:] if c else st))
	time.sleep(1)
	g1, l1 = size_of(d, sid, "bg.log")
	time.sleep(1)
	g2, l2 = size_of(d, sid, "bg.log")
	st, data = d.get(sid, "bg.log")
	print("# between calls: %d bytes from the thread, %d from the child" %
	    (data.count(b"t"), data.count(b"c")))
	check(g1 > 0 and g1 == g2, "GetFile 1 s apart with no call "
	    "running: one size (%d, then %d bytes)" % (g1, g2))
	check(l1 > 0 and l1 == l2 and l1 == g1, "ListFiles 1 s apart: one "
	    "size (%d, then %d bytes)" % (l1, l2))
	st, c = d.code(sid, RESUMED)
	r = json.loads(c["stdout"]) if st == 200 and c["stdout"] else {}
	check(r.get("t", 0) > 0 and r.get("c", 0) > 0 and r.get("alive") and
	    r.get("x") == 42, "the next call sees the thread and the child "
	    "resume, the interpreter's state kept (%r %r)" %
	    (r, c["stderr"][-300:] if c else st))
	check(d.code(sid, "print(x)")[1]["stdout"] == "42\n",
	    "a third call still has the variables")

	# A writer that would fill the workspace past its quota between
	# calls: 60 MiB at 100 MiB/s against a 20 MiB quota.
	q = d.session()
	st, c = d.code(q, FLOOD)
	check(st == 200, "a call leaves a thread writing 60 MiB")
	time.sleep(2)
	used = disk_bytes(os.path.join(d.workdir, "sessions", q))
	check(used < 20 << 20, "between calls the workspace stays under its "
	    "20 MiB quota (%.1f MiB after 2 s)" % (used / 1048576))
	g1, _ = size_of(d, q, "flood.bin")
	time.sleep(0.5)
	g2, _ = size_of(d, q, "flood.bin")
	check(g1 == g2, "and does not grow (%d, then %d bytes)" % (g1, g2))
	check(d.healthy(), "daemon healthy")
	check(d.delete(sid) == 204 and d.delete(q) == 204,
	    "frozen sessions are destroyed: 204")
	time.sleep(0.5)
	check(not os.path.exists(os.path.join(d.workdir, "sessions", sid)),
	    "a frozen session's workspace is removed")
finally:
	d.stop()
	d.cleanup()
finish()
