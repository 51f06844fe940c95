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

# safety.py: the clean-up kills can never reach past a session.
#
# runner.py's reap_leftovers() sends kill(-1); run as root outside a pid
# namespace of its own that kills every process on the host.  runner.py
# itself is NEVER run here: only its in_own_jail() and reap_leftovers()
# are taken from its source and run against a stand-in os module whose
# kill() records instead of signalling.
#
# The daemon's kill of what is left in a session's cgroup must not reach
# a process of the jails' user outside any session: one is planted in
# the parent group while sessions come and go.

import ast
import os
import signal
import subprocess
import time

from sbx import JAIL_USER, RUNNER, Daemon, check, finish


class FakeOS:
	"""The real os module, but for the identity calls and kill()."""

	def __init__(self, uid, pid, ppid):
		self.uid, self.pid, self.ppid = uid, pid, ppid
		self.kills = []

	def __getattr__(self, name):
		return getattr(os, name)

	def getuid(self):
		return self.uid

	geteuid = getuid

	def getpid(self):
		return self.pid

	def getppid(self):
		return self.ppid

	def kill(self, pid, sig):
		self.kills.append((pid, sig))

	def listdir(self, path):
		# A jail with one process left over, whatever is asked.
		return ["1", str(self.pid), "7"]

	def waitpid(self, pid, flags):
		raise ChildProcessError()


def runner_functions(fake, init_comm):
	"""in_own_jail and reap_leftovers from runner.py's source, bound to
	fake and to a /proc/1/comm reading init_comm."""
	with open(RUNNER) as f:
		tree = ast.parse(f.read())
	keep = [n for n in tree.body if isinstance(n, ast.FunctionDef) and
	    n.name in ("in_own_jail", "reap_leftovers")]
	if len(keep) != 2:
		raise RuntimeError("runner.py lacks in_own_jail or "
		    "reap_leftovers")

	real_open = open

	def fake_open(path, *a, **kw):
		if path == "/proc/1/comm":
			if init_comm is None:
				raise OSError("no /proc")
			import io
			return io.StringIO(init_comm + "\n")
		return real_open(path, *a, **kw)
	ns = {"os": fake, "signal": signal, "time": time, "open": fake_open}
	exec(compile(ast.Module(body=keep, type_ignores=[]), RUNNER, "exec"),
	    ns)
	return ns["in_own_jail"], ns["reap_leftovers"]


cases = [
	# uid, pid, ppid, /proc/1/comm, may kill
	(0, 2, 1, "bwrap", False, "root, even in a jail"),
	(0, 12345, 100, "systemd", False, "root on the host"),
	(65534, 12345, 100, "systemd", False, "unprivileged on the host"),
	(65534, 12345, 1, "process_api", False, "a child of the host's init"),
	(65534, 2, 1, "sh", False, "pid 2 under an init that is not bwrap"),
	(65534, 2, 1, None, False, "no /proc to tell"),
	(65534, 2, 1, "bwrap", True, "in its own jail as nobody"),
]
for uid, pid, ppid, comm, allowed, what in cases:
	fake = FakeOS(uid, pid, ppid)
	in_jail, reap = runner_functions(fake, comm)
	reap()
	if allowed:
		check(in_jail() and fake.kills and all(k == (-1,
		    signal.SIGKILL) for k in fake.kills),
		    "runner: %s: reap_leftovers sends kill(-1) (%r)" %
		    (what, fake.kills[:2]))
	else:
		check(not in_jail() and fake.kills == [],
		    "runner: %s: reap_leftovers sends nothing (%r)" %
		    (what, fake.kills[:2]))
check(os.getuid() != 0 or not runner_functions(os, "bwrap")[0](),
    "runner: here (uid %d, pid %d) in_own_jail() is false" %
    (os.getuid(), os.getpid()))


def parent_groups():
	"""The session groups' parents of a v1 or v2 hierarchy."""
	for d in ("/sys/fs/cgroup/pids/depot-sandboxd",
	    "/sys/fs/cgroup/depot-sandboxd"):
		if os.path.exists(os.path.join(d, "cgroup.procs")):
			return d
	return None


d = Daemon(opts=["max-lifetime=600"])
bystander = None
try:
	parent = parent_groups()
	if os.geteuid() != 0 or parent is None or \
	    parent.endswith("/sys/fs/cgroup/depot-sandboxd"):
		# v2 keeps no process in an inner group: nothing to plant.
		check(False, "cgroup v1 and root needed to plant a bystander "
		    "(parent %r)" % parent)
	else:
		bystander = subprocess.Popen(["setpriv", "--reuid=" +
		    JAIL_USER, "--regid=" + JAIL_USER, "--clear-groups",
		    "sleep", "120"])
		with open(os.path.join(parent, "cgroup.procs"), "w") as f:
			f.write(str(bystander.pid))
		for i in range(4):
			sid = d.session()
			d.bash(sid, "sleep 30 & sleep 30 & echo started")
			check(d.delete(sid) == 204, "session %d destroyed" % i)
		time.sleep(0.5)
		check(bystander.poll() is None, "a process of %s in the parent "
		    "group outlives the sessions' clean-up kills" % JAIL_USER)
	check(d.healthy(), "daemon healthy")
finally:
	d.stop()
	d.cleanup()
	if bystander is not None and bystander.pid > 1:
		bystander.kill()
		bystander.wait()
finish()
