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

# harden.py: the jail's system-call filter, the runner's protocol channel
# out of the code's reach, and a destroy that waits for every jail
# process before it removes the workspace.

import os
import threading
import time

from sbx import Daemon, check, finish, jailed_processes

# x86_64 numbers: the calls the filter must refuse with EPERM.
CALLS = {
	"io_uring_setup": 425, "io_uring_enter": 426,
	"io_uring_register": 427, "keyctl": 250, "add_key": 248,
	"request_key": 249, "userfaultfd": 323, "bpf": 321, "unshare": 272,
	"setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155,
	"ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311,
	"kexec_load": 246, "kexec_file_load": 320, "init_module": 175,
	"finit_module": 313, "perf_event_open": 298, "open_by_handle_at": 304,
}

PROBE = '''
import ctypes, errno, socket
libc = ctypes.CDLL(None, use_errno=True)
for line in open("/proc/self/status"):
    if line.startswith("Seccomp:"):
        print("Seccomp", line.split()[1])
for name, nr in %r.items():
    ctypes.set_errno(0)
    rv = libc.syscall(nr, 0, 0, 0, 0, 0, 0)
    print(name, rv, errno.errorcode.get(ctypes.get_errno(), "0"))
try:
    socket.socket(40, socket.SOCK_STREAM)
    print("vsock", 0, "0")
except OSError as e:
    print("vsock", -1, errno.errorcode.get(e.errno))
''' % CALLS

d = Daemon()
try:
	sid = d.session()
	st, c = d.code(sid, PROBE)
	lines = dict((l.split(" ", 1) for l in c["stdout"].splitlines()))
	check(lines.get("Seccomp") == "2",
	    "jail: /proc/self/status shows Seccomp: 2 (%r)" %
	    lines.get("Seccomp"))
	refused = [n for n in list(CALLS) + ["vsock"]
	    if lines.get(n) == "-1 EPERM"]
	check(len(refused) == len(CALLS) + 1, "jail: %d calls refused with "
	    "EPERM; not: %r" % (len(refused), [(n, lines.get(n)) for n in
	    list(CALLS) + ["vsock"] if n not in refused]))
	st, c = d.bash(sid, "python3 -c 'import numpy, pandas; print(3)'; "
	    "ls / | wc -l; sleep 0.1 & wait; echo ok")
	check(st == 200 and c["stdout"].startswith("3\n") and
	    c["stdout"].endswith("ok\n") and c["return_code"] == 0,
	    "jail: an ordinary Python and bash workload runs under the filter "
	    "(%r)" % c["stderr"][-200:])

	# A thread left behind writes forged replies as fast as it can.
	st, c = d.code(sid, "import os, threading, time\n"
	    "def forge():\n"
	    "    line = b'{\"stdout\": \"FORGED\\\\n\", \"stderr\": \"\", "
	    "\"return_code\": 0, \"seq\": 0}\\n'\n"
	    "    while True:\n"
	    "        for fd in (1, 3):\n"
	    "            try: os.write(fd, line)\n"
	    "            except OSError: pass\n"
	    "        time.sleep(0.0005)\n"
	    "threading.Thread(target=forge, daemon=True).start()")
	real = 0
	for i in range(20):
		st, c = d.code(sid, "print('real %d')" % i)
		if st == 200 and "real %d\n" % i in c["stdout"]:
			real += 1
	check(real == 20, "a thread writing forged replies after its call "
	    "never answers a later call (%d of 20 real)" % real)

	# Destroy while a call's processes keep writing to the workspace.
	target = os.path.join(d.dir, "target")
	with open(target, "w") as f:
		f.write("x")
	os.chmod(target, 0o600)
	os.chown(target, *d.jail_ids())
	victim = d.session()
	# Each process fills its tree a little, then swaps a mode-0
	# directory for a symlink to target, over and over.
	busy = ("import os, time\n"
	    "for n in range(16):\n"
	    "    if os.fork() == 0:\n"
	    "        d = 'd%%d' %% n\n"
	    "        for i in range(100):\n"
	    "            os.makedirs('%%s/t%%d/y' %% (d, i))\n"
	    "            open('%%s/t%%d/y/f' %% (d, i), 'w').close()\n"
	    "            os.chmod('%%s/t%%d' %% (d, i), 0)\n"
	    "        while True:\n"
	    "            i += 1\n"
	    "            open('%%s/c%%d' %% (d, i), 'w').close()\n"
	    "            try:\n"
	    "                os.mkdir(d + '/x')\n"
	    "                os.chmod(d + '/x', 0)\n"
	    "                os.rmdir(d + '/x')\n"
	    "                os.symlink(%r, d + '/x')\n"
	    "                os.unlink(d + '/x')\n"
	    "            except OSError:\n"
	    "                pass\n"
	    "time.sleep(60)\n" % target)
	answers = []
	t = threading.Thread(target=lambda: answers.append(
	    d.code(victim, busy, timeout_seconds=90)[0]))
	t.start()
	# Before the first quota walk of the call, a second in.
	time.sleep(0.8)
	ws = os.path.join(d.workdir, "sessions", victim)
	check(os.path.isdir(ws), "the busy session's workspace exists")
	check(d.delete(victim) == 204, "DestroySession of a busy session: 204")
	t.join(10)
	deadline = time.time() + 10
	while os.path.exists(ws) and time.time() < deadline:
		time.sleep(0.05)
	if not check(not os.path.exists(ws), "its workspace is removed once "
	    "its processes are gone"):
		with open(d.log.name) as f:
			print("# " + "\n# ".join(l for l in f.read().splitlines()
			    if victim in l and "exec" not in l))
	check(jailed_processes(ws) == [], "no process of the jail is left")
	check(os.stat(target).st_mode & 0o777 == 0o600, "destroy never "
	    "changed the mode of what a planted symlink points to (%o)" %
	    (os.stat(target).st_mode & 0o777))
	check(answers == [404], "the call in flight is answered 404 (%r)" %
	    answers)
	check(d.healthy(), "daemon healthy")
finally:
	d.stop()
	d.cleanup()
finish()
