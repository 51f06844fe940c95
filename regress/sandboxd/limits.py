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

# limits.py: per-session resource limits.  A session that allocates
# 8 GiB in eight processes, or forks without bound, is stopped by its own
# cgroup while another session's print(1) still answers within 2 s, and
# the host's available memory never falls under FLOOR (8 GiB: the
# machine is shared) nor more than FLOOR_DROP below where it started.
# The abuse runs only with per-session cgroups in force, with every
# jail together capped by total-memory, and only when the host has
# FLOOR plus MARGIN available.  The workspace quota counts every entry
# (symlinks too) and bytes, at the end of a call and while it runs.

import os
import threading
import time

from sbx import Daemon, check, finish

FLOOR = 8 << 30			# the stated floor: 8 GiB available
FLOOR_DROP = 2 << 30		# and never 2 GiB under the start
MARGIN = 2 << 30		# what the jails may take (total-memory 1G)


def mem_available():
	with open("/proc/meminfo") as f:
		for line in f:
			if line.startswith("MemAvailable:"):
				return int(line.split()[1]) * 1024
	return 0


class Sampler(threading.Thread):
	def __init__(self):
		super().__init__(daemon=True)
		self.low = mem_available()
		self.running = True

	def run(self):
		while self.running:
			self.low = min(self.low, mem_available())
			time.sleep(0.02)


def responsive_while(d, other, work):
	"""Runs work() in a thread; meanwhile times print(1) on other."""
	worst = 0.0
	answers = 0
	t = threading.Thread(target=work)
	t.start()
	time.sleep(0.5)
	while t.is_alive():
		start = time.time()
		st, c = d.code(other, "print(1)")
		worst = max(worst, time.time() - start)
		answers += st == 200 and c["stdout"] == "1\n"
		time.sleep(0.1)
	t.join()
	return worst, answers


def abuse(d, hog, other):
	start = mem_available()
	if not check(start > FLOOR + MARGIN, "the host has %d MiB available, "
	    "over the floor of %d MiB plus %d MiB (else no abuse is run)" %
	    (start >> 20, FLOOR >> 20, MARGIN >> 20)):
		return
	sampler = Sampler()
	sampler.start()
	result = {}

	def allocate():
		result["hog"] = d.bash(hog, "for i in 1 2 3 4 5 6 7 8; do "
		    "python3 -c 'import mmap; m = mmap.mmap(-1, 1 << 30)\n"
		    "for i in range(0, 1 << 30, 4096): m[i] = 1\n"
		    "print(\"done\")' & done; wait", timeout_seconds=60)
	worst, answers = responsive_while(d, other, allocate)
	sampler.running = False
	st, c = result["hog"]
	check(st == 200 and c["stdout"].count("done") < 8,
	    "8 GiB in eight processes is stopped (%d of 8 finished)" %
	    c["stdout"].count("done") if c else "no reply")
	check(sampler.low > FLOOR and start - sampler.low < FLOOR_DROP,
	    "host memory stayed above the floor: at least %d MiB available "
	    "(floor %d MiB), fell by at most %d MiB (allowed %d MiB)" %
	    (sampler.low >> 20, FLOOR >> 20, (start - sampler.low) >> 20,
	    FLOOR_DROP >> 20))
	check(answers > 0 and worst < 2.0, "meanwhile another session's "
	    "print(1) answered %d times, the slowest in %.2f s" %
	    (answers, worst))

	def bomb():
		result["bomb"] = d.bash(hog, ":(){ :|:& };:; sleep 5",
		    timeout_seconds=8)
	worst, answers = responsive_while(d, other, bomb)
	st, c = result["bomb"]
	check(st == 200, "fork bomb: the call returns")
	check(answers > 0 and worst < 2.0, "during a fork bomb another "
	    "session's print(1) answered %d times, the slowest in %.2f s" %
	    (answers, worst))
	st, c = d.code(hog, "print('after')")
	check(st == 200 and c["stdout"] == "after\n",
	    "the bombed session works afterwards")


d = Daemon(opts=["session-memory=512M", "total-memory=1G", "processes=64",
    "session-cpu=100", "workspace-size=20M", "workspace-entries=500",
    "max-lifetime=600"])
try:
	with open(d.log.name) as f:
		log = f.read()
	hog, other = d.session(), d.session()
	d.code(other, "pass")
	if check("cgroup v1:" in log or "cgroup v2:" in log,
	    "per-session cgroups in force (%r; else no abuse is run)" %
	    [l for l in log.splitlines() if "cgroup" in l][:1]):
		abuse(d, hog, other)

	# Workspace quota: entries of any type.
	st, c = d.code(hog, "import os\nfor i in range(600):\n"
	    "    os.symlink('nowhere', 'l%d' % i)")
	check(st == 200 and "over its quota" in c["stderr"],
	    "600 symlinks exceed a 500-entry quota (%r)" % c["stderr"][-160:])
	st, _ = d.put(hog, b"x", filename="more.txt")
	check(st == 413, "PutFile into a workspace over its quota: 413 (%d)" %
	    st)
	st, c = d.code(hog, "import os\nfor i in range(600):\n"
	    "    os.unlink('l%d' % i)\nprint('cleaned')")
	check(st == 200 and c["stdout"] == "cleaned\n" and
	    "quota" not in c["stderr"], "a call may clean up an over-quota "
	    "workspace")
	st, _ = d.put(hog, b"x", filename="more.txt")
	check(st == 201, "PutFile after the clean-up: 201")

	# Bytes, while the call runs.
	st, c = d.code(hog, "import time\nf = open('big.bin', 'wb')\n"
	    "for i in range(100):\n    f.write(b'x' * (1 << 20)); f.flush()\n"
	    "    time.sleep(0.05)\nprint('wrote all')", timeout_seconds=30)
	size = os.path.getsize(os.path.join(d.workdir, "sessions", hog,
	    "big.bin"))
	check(st == 200 and c["return_code"] == -1 and "quota" in c["stderr"]
	    and "wrote all" not in c["stdout"] and size < 100 << 20,
	    "a call writing 100 MiB into a 20 MiB quota is stopped (%d MiB "
	    "written)" % (size >> 20))
	check(d.healthy(), "daemon healthy")
finally:
	d.stop()
	d.cleanup()
finish()
