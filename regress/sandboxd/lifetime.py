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

# lifetime.py: sessions end: idle reaping, maximum lifetime, DELETE,
# SIGTERM with work in flight, and a unix-socket daemon without a token.

import os
import signal
import threading
import time

from sbx import Daemon, check, finish, jailed_processes, session_processes

d = Daemon(opts=["idle-timeout=2", "max-lifetime=4"])
try:
	idle = d.session()
	busy = d.session(idle_timeout_seconds=600)
	born = time.time()
	check(os.path.isdir(os.path.join(d.workdir, "sessions", idle)),
	    "a workspace exists while the session lives")
	d.code(idle, "open('f.txt', 'w').write('x')")
	# Keep busy active while idle goes idle.
	for _ in range(6):
		d.code(busy, "pass")
		time.sleep(0.5)
	st, _ = d.listing(idle)
	check(st == 404, "an idle session is reaped")
	check(not os.path.exists(os.path.join(d.workdir, "sessions", idle)),
	    "the reaped session's workspace is removed")
	st, _ = d.listing(busy)
	check(st == 200, "an active session is kept")
	while time.time() - born < 7:
		st, _ = d.listing(busy)
		if st == 404:
			break
		time.sleep(0.2)
	age = time.time() - born
	check(st == 404 and age >= 4, "a session is reaped at its maximum "
	    "lifetime (4 s; gone after %.1f s)" % age)
	check(d.delete(busy) == 204, "DELETE of a reaped session: 204")
	check(d.delete(busy) == 204, "DELETE twice: 204")
	check(d.healthy(), "daemon healthy after reaping")
finally:
	d.stop()
	d.cleanup()

# SIGTERM with sessions, background work and a call in flight.
d = Daemon(opts=["max-lifetime=600"])
marker = d.workdir
try:
	sids = [d.session() for _ in range(3)]
	for s in sids:
		d.code(s, "x = 1")
	answers = []

	def long_call():
		try:
			answers.append(d.code(sids[0], "import time; time.sleep(60)",
			    timeout_seconds=90)[0])
		except Exception as e:
			answers.append(repr(e))
	t = threading.Thread(target=long_call)
	t.start()
	time.sleep(1)
	check(len(jailed_processes(marker)) >= 3,
	    "jails running before SIGTERM (%d)" % len(jailed_processes(marker)))
	start = time.time()
	rc = d.stop(signal.SIGTERM)
	t.join(10)
	check(rc == 0 and time.time() - start < 10,
	    "SIGTERM: exits 0 promptly with a call in flight")
	check(answers == [404], "the call in flight is answered 404 (%r)" %
	    answers)
	time.sleep(0.5)
	left = jailed_processes(marker) + session_processes(sids)
	check(left == [], "SIGTERM leaves no jailed process (%r)" % left[:3])
	check(os.listdir(os.path.join(d.workdir, "sessions")) == [],
	    "SIGTERM leaves no workspace")
	check(os.listdir(os.path.join(d.workdir, "uploads")) == [],
	    "SIGTERM leaves no upload")
finally:
	d.stop()
	d.cleanup()

# A unix socket and no token.
d = Daemon(token=False, unix=True)
try:
	st, s = d.create()
	check(st == 201, "unix socket without a token: CreateSession")
	st, c = d.code(s["session_id"], "print('unix')")
	check(c["stdout"] == "unix\n", "unix socket: Execute")
	check(d.delete(s["session_id"]) == 204, "unix socket: DestroySession")
	mode = os.stat(d.sock).st_mode & 0o777
	check(mode == 0o600, "without a token the socket is mode 0600 (%o)" %
	    mode)
finally:
	d.stop()
	d.cleanup()
finish()
