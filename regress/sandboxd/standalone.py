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

# standalone.py: depot-sandboxd started by hand: what it refuses to do
# (TCP without a token, jails as nobody, a work directory in use) and
# a relative runner path.

import os
import subprocess
import tempfile

from sbx import DAEMON, RUNNER, TOP, Daemon, check, finish, free_port


def refused(args, what, needle):
	"""Starts the daemon expecting it to exit at once with an error."""
	try:
		p = subprocess.run([DAEMON, "-d"] + args, capture_output=True,
		    text=True, timeout=10)
	except subprocess.TimeoutExpired:
		check(False, "%s: refused (it started and ran)" % what)
		return
	check(p.returncode != 0 and needle in p.stderr,
	    "%s: refused (%d, %r)" % (what, p.returncode, p.stderr.strip()))


tmp = tempfile.mkdtemp(prefix="sbxstand.")
os.chmod(tmp, 0o755)
refused(["-r", RUNNER, "-w", tmp + "/w1", "-l",
    "127.0.0.1:%d" % free_port()], "TCP without -t", "needs -t")
if os.geteuid() == 0:
	refused(["-r", RUNNER, "-w", tmp + "/w2", "-s", tmp + "/s2",
	    "-u", "nobody"], "jails as nobody", "nobody")
refused(["-r", "no/such/runner.py", "-w", tmp + "/w3", "-s",
    tmp + "/s3"], "a runner path that does not resolve", "runner")

# A second daemon on the same work directory.
d = Daemon()
try:
	sid = d.session()
	tf = os.path.join(d.dir, "token")
	refused(["-r", RUNNER, "-w", d.workdir, "-t", tf, "-l",
	    "127.0.0.1:%d" % free_port()], "a second daemon on a work "
	    "directory in use", "in use")
	st, c = d.code(sid, "print('still here')")
	check(st == 200 and c["stdout"] == "still here\n" and
	    os.path.isdir(os.path.join(d.workdir, "sessions", sid)),
	    "the first daemon and its session are untouched")
finally:
	d.stop()
	d.cleanup()

# A relative runner path, resolved at start.
os.chdir(TOP)
rel = os.path.relpath(RUNNER, TOP)
d = Daemon(runner=rel)
try:
	sid = d.session()
	st, c = d.code(sid, "print(2 + 2)")
	check(st == 200 and c["stdout"] == "4\n",
	    "-r %s (relative) runs code (%r)" % (rel, c and c["stderr"][-120:]))
finally:
	d.stop()
	d.cleanup()
os.rmdir(tmp) if not os.listdir(tmp) else None
finish()
