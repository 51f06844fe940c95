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

# abuse.py: escape and abuse attempts against depot-sandboxd.  Each must
# fail inside the jail and leave the daemon healthy.

import os
import socket
import threading

from sbx import Daemon, check, finish

# A server on the host's loopback that the jail must not reach.
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(8)
host_port = listener.getsockname()[1]
reached = []


def accept_loop():
	while True:
		try:
			conn, _ = listener.accept()
		except OSError:
			return
		reached.append(1)
		conn.close()


threading.Thread(target=accept_loop, daemon=True).start()

d = Daemon(opts=["processes=128"])
outside = os.path.join(d.dir, "outside")
os.mkdir(outside)
os.chmod(outside, 0o777)
try:
	sid = d.session()

	st, c = d.code(sid, "import socket\ntry:\n"
	    "    socket.create_connection(('127.0.0.1', %d), 2)\n"
	    "    print('connected')\nexcept OSError as e:\n"
	    "    print('refused', e.errno)" % host_port)
	check(st == 200 and "connected" not in c["stdout"] and not reached,
	    "no TCP connection to the host's 127.0.0.1:%d" % host_port)
	st, c = d.bash(sid, "cat /sys/class/net/*/address 2>/dev/null; "
	    "ls /sys/class/net 2>/dev/null || python3 -c "
	    "'import socket; print([n for _, n in socket.if_nameindex()])'")
	check("eth" not in c["stdout"] and "ens" not in c["stdout"],
	    "no network interface but loopback (%r)" % c["stdout"].strip())

	st, c = d.bash(sid, "cat /etc/shadow")
	check(c["return_code"] != 0 and "root:" not in c["stdout"],
	    "/etc/shadow unreadable")
	secret = [d.dir + "/token", d.workdir, d.log.name,
	    "/proc/1/environ", "/proc/%d/environ" % d.proc.pid]
	st, c = d.code(sid, "import os\nfor p in %r:\n"
	    "    try:\n        print('READ', p, open(p).read())\n"
	    "    except OSError as e: print('no', p, e.strerror)" % secret)
	check("SBX_DAEMON_ONLY" not in c["stdout"] and
	    d.token not in c["stdout"] and
	    "READ /proc/1/environ" in c["stdout"] and
	    c["stdout"].count("READ") == 1,
	    "the daemon's token, log, work directory and environment unreadable")
	st, c = d.bash(sid, "ls /proc | grep -c '^[0-9]'")
	check(int(c["stdout"].strip() or 99) < 10,
	    "only the jail's own processes visible (%s)" % c["stdout"].strip())

	target = os.path.join(outside, "pwned")
	attempts = {
	    "absolute host path": "open(%r, 'w').write('x')" % target,
	    "dot-dot": "open('../../../../../../..%s', 'w').write('x')" % target,
	    "planted symlink": "import os\nos.symlink(%r, 'link')\n"
		"open('link/pwned', 'w').write('x')" % outside,
	    "/proc/self/root": "open('/proc/self/root%s', 'w').write('x')" %
		target,
	    "/proc/1/root": "open('/proc/1/root%s', 'w').write('x')" % target,
	    "read-only /usr": "open('/usr/pwned', 'w').write('x')",
	}
	for name, code in attempts.items():
		st, c = d.code(sid, code)
		check(st == 200 and c["return_code"] != 0 and
		    not os.path.exists(target) and
		    not os.path.exists("/usr/pwned"),
		    "write outside the workspace fails: %s" % name)

	# The daemon itself must not follow what the code planted.
	st, c = d.code(sid, "import os\nos.symlink('/etc/passwd', 'pw')\n"
	    "os.symlink('/', 'rootlink')\nos.symlink('..', 'up')\n"
	    "os.mkfifo('fifo')")
	for path in ("pw", "rootlink/etc/passwd", "up/x", "/proc/self/root/etc/passwd",
	    "../x", "/etc/passwd", "%s/token" % d.dir):
		st, data = d.get(sid, path)
		check(st == 403 and b"root:" not in data,
		    "GetFile %s refused with 403 (%d)" % (path, st))
	st, _ = d.get(sid, "fifo")
	check(st == 400, "GetFile on a fifo refused without hanging")
	for path in ("../escape.txt", "/etc/escape.txt", "a/../../escape.txt",
	    "rootlink/tmp/escape.txt", "up/escape.txt"):
		st, _ = d.put(sid, b"x", filename="x.txt", path=path)
		check(st == 403 and not os.path.exists("/etc/escape.txt") and
		    not os.path.exists("/tmp/escape.txt"),
		    "PutFile to %s refused with 403 (%d)" % (path, st))
	st, _ = d.put(sid, b"x", filename="../../evil.txt")
	check(st == 403, "PutFile with a ../ filename refused with 403")
	st, lst = d.listing(sid)
	check(st == 200 and all(not f["path"].startswith("rootlink/")
	    for f in lst["files"]), "ListFiles does not follow symlinks")

	st, c = d.bash(sid, ":(){ :|:& };:; sleep 2", timeout_seconds=8)
	check(st == 200, "fork bomb: the call returns (return_code %s)" %
	    c["return_code"])
	st, c = d.bash(sid, ":(){ :|:& };:")
	st, c = d.bash(sid, "ls /proc | grep -c '^[0-9]'")
	check(st == 200 and int(c["stdout"].strip() or 99) < 10,
	    "no process of the bomb outlives its call (%r)" % c["stdout"])
	st, c = d.code(sid, "print('after bomb')")
	check(c is not None and c["stdout"] == "after bomb\n",
	    "session usable after the fork bomb")

	st, c = d.code(sid, "b = bytearray(8 << 30)")
	check(st == 200 and c["return_code"] != 0 and
	    "MemoryError" in c["stderr"], "allocating 8 GiB fails")
	st, c = d.code(sid, "while True: pass", timeout_seconds=2)
	check(st == 200 and c["return_code"] == -1, "infinite loop killed")
	st, c = d.bash(sid, "head -c 100000000 /dev/zero | tr '\\0' x")
	check(st == 200 and len(c["stdout"]) < (1 << 20) + 200 and
	    "100000000 bytes" in c["stdout"], "100 MB of output truncated")
	st, c = d.code(sid, "import sys; sys.stdout.write('y' * 100000000)")
	check(st == 200 and "output truncated" in c["stdout"],
	    "100 MB of Python output truncated")
	st, c = d.bash(sid, "kill -9 -1; sleep 1; echo survived")
	check(st == 200 and c["return_code"] == -1, "kill -9 -1 inside: "
	    "the call fails")
	st, c = d.code(sid, "print('respawned')")
	check(c["stdout"] == "respawned\n", "a new interpreter after kill -9 -1")
	st, c = d.bash(sid, "python3 -c 'import os; os.setuid(0)' 2>&1; "
	    "unshare -U true 2>&1 || echo nouserns")
	check("nouserns" in c["stdout"], "no nested user namespaces")
	check(d.healthy(), "daemon healthy after the abuse")
	other = d.session()
	st, c = d.code(other, "print(6 * 7)")
	check(c["stdout"] == "42\n", "a new session works after the abuse")
finally:
	d.stop()
	d.cleanup()
	listener.close()
finish()
