#!/bin/sh
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
#
# regress/bench/sandbox.sh: depot-sandboxd latency, every limit in force
# (the seccomp filter, the session's cgroup where one is writable, the
# workspace quota walks, the rlimits).
#
#	health	GET /health: the HTTP round trip alone
#	warm	Execute print(1) on an existing session
#	cold	CreateSession + Execute print(1) + DestroySession
#	bare	bwrap ... python3 -c 'print(1)', a jail spawned directly
#
# Every request opens a new connection.  Prints p50 and p99 of each.
# Targets: warm p50 <= 2 ms and p99 <= 4 ms; cold p50 within 1.5x bare.
# N (default 30) sets the rounds of bare and cold; health and warm do
# 10N.  The load average is printed: on a busy machine p99 measures the
# scheduler more than the daemon.
#
# runner.py is only ever run by the daemon, in its jail: run by hand it
# refuses (its clean-up sends kill(-1)).
top=$(cd "$(dirname "$0")/../.." && pwd)
N=${N:-30} exec /usr/bin/python3 - "$top" <<'PYEOF'
import os, subprocess, sys, tempfile, time
top = sys.argv[1]
sys.path.insert(0, os.path.join(top, "regress", "sandboxd"))
from sbx import Daemon

n = int(os.environ.get("N", "30"))

def pct(xs, p):
	xs = sorted(xs)
	return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]

def report(name, xs):
	print("%-6s n=%-4d p50 %8.2f ms  p99 %8.2f ms" %
	    (name, len(xs), pct(xs, 50) * 1e3, pct(xs, 99) * 1e3))

ws = tempfile.mkdtemp(prefix="sbxbench.")
os.chmod(ws, 0o777)
bare_cmd = ["/usr/bin/bwrap", "--unshare-all", "--unshare-user",
    "--disable-userns", "--uid", "65534", "--gid", "65534",
    "--cap-drop", "ALL", "--die-with-parent", "--new-session",
    "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin",
    "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
    "--proc", "/proc", "--dev", "/dev", "--size", str(256 << 20),
    "--tmpfs", "/tmp", "--bind", ws, "/workspace", "--remount-ro", "/",
    "--chdir", "/workspace", "--clearenv", "--setenv", "PATH", "/usr/bin",
    "/usr/bin/python3", "-I", "-c", "print(1)"]
if os.geteuid() == 0:
	# The daemon runs its jails unprivileged: measure the same.
	bare_cmd = ["setpriv", "--reuid=65534", "--regid=65534",
	    "--clear-groups"] + bare_cmd
bare = []
for _ in range(n):
	t = time.perf_counter()
	out = subprocess.run(bare_cmd, capture_output=True)
	bare.append(time.perf_counter() - t)
	assert out.stdout == b"1\n", out
os.rmdir(ws)

# The default limits, with a session lifetime long enough for the run.
d = Daemon(opts=["max-lifetime=3600"])
try:
	with open(d.log.name) as f:
		limits = [l.split(": ", 1)[1] for l in f.read().splitlines()
		    if "cgroup" in l]
	sid = d.session()
	for _ in range(20):
		d.code(sid, "print(1)")
	health, warm = [], []
	for _ in range(10 * n):
		t = time.perf_counter()
		assert d.request("GET", "/health")[0] == 200
		health.append(time.perf_counter() - t)
		t = time.perf_counter()
		st, c = d.code(sid, "print(1)")
		warm.append(time.perf_counter() - t)
		assert c["stdout"] == "1\n"
	d.delete(sid)
	cold = []
	for _ in range(n):
		t = time.perf_counter()
		s = d.session()
		st, c = d.code(s, "print(1)")
		d.delete(s)
		cold.append(time.perf_counter() - t)
		assert c["stdout"] == "1\n"
finally:
	d.stop()
	d.cleanup()

print("limits: %s" % (limits[0] if limits else "NO cgroup (rlimits only)"))
print("load average: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))
report("health", health)
report("warm", warm)
report("cold", cold)
report("bare", bare)
# What Execute adds to an HTTP round trip, less sensitive to the load.
print("warm - health p50 %.2f ms" % ((pct(warm, 50) - pct(health, 50)) * 1e3))
b50 = pct(bare, 50)
print("ratio cold/bare p50 %.3f  p99 %.3f" % (pct(cold, 50) / b50,
    pct(cold, 99) / pct(bare, 99)))
print("targets: warm p50 <= 2 ms: %s; warm p99 <= 4 ms: %s; "
    "cold p50 <= 1.5x bare: %s" %
    ("met" if pct(warm, 50) <= 0.002 else "MISSED",
    "met" if pct(warm, 99) <= 0.004 else "MISSED",
    "met" if pct(cold, 50) <= 1.5 * b50 else "MISSED"))
PYEOF
