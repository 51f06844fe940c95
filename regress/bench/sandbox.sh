#!/bin/sh
# regress/bench/sandbox.sh: depot-sandboxd latency.
#
#	bare	bwrap ... python3 -c 'print(1)', the jail spawned directly
#	warm	Execute print(1) on an existing session (HTTP round trip)
#	cold	CreateSession + Execute print(1) + DestroySession
#
# Prints p50 and p99 of each and the ratios to the bare spawn measured
# in the same run.  Targets: warm p50 under 5 ms, cold within 1.5x bare.
# N (default 30) sets the number of bare and cold rounds, warm does 10N.
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
	print("%-5s n=%-4d p50 %8.2f ms  p99 %8.2f ms" %
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
	# The daemon runs its jails as nobody: measure the same.
	bare_cmd = ["setpriv", "--reuid=65534", "--regid=65534",
	    "--clear-groups"] + bare_cmd
bare = []
for _ in range(n):
	t = time.perf_counter()
	out = subprocess.run(bare_cmd, capture_output=True)
	bare.append(time.perf_counter() - t)
	assert out.stdout == b"1\n", out
os.rmdir(ws)

d = Daemon(opts=["max-lifetime=3600"])
try:
	sid = d.session()
	d.code(sid, "print(1)")
	warm = []
	for _ in range(10 * n):
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

report("bare", bare)
report("warm", warm)
report("cold", cold)
b50 = pct(bare, 50)
print("ratio warm/bare p50 %.3f  p99 %.3f" % (pct(warm, 50) / b50,
    pct(warm, 99) / pct(bare, 99)))
print("ratio cold/bare p50 %.3f  p99 %.3f" % (pct(cold, 50) / b50,
    pct(cold, 99) / pct(bare, 99)))
print("targets: warm p50 < 5 ms: %s; cold p50 <= 1.5x bare: %s" %
    ("met" if pct(warm, 50) < 0.005 else "MISSED",
    "met" if pct(cold, 50) <= 1.5 * b50 else "MISSED"))
PYEOF
