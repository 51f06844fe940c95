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

# sbx.py: shared helpers of the depot-sandboxd suites: start a daemon,
# talk protocol v1 to it, print TAP-style lines.  Standard library only.

import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DAEMON = os.environ.get("SBX_DAEMON",
    os.path.join(TOP, "build", "depot-sandboxd"))
RUNNER = os.environ.get("SBX_RUNNER",
    os.path.join(TOP, "cmd", "depot-sandboxd", "runner.py"))

failures = 0
JAIL_USER = "_depotsbx"


def jail_user():
	"""The daemon refuses nobody: make its default user when missing."""
	if os.geteuid() != 0:
		return
	if subprocess.run(["id", JAIL_USER], capture_output=True).returncode:
		subprocess.run(["useradd", "-r", "-M", "-d", "/var/empty", "-s",
		    "/usr/sbin/nologin", JAIL_USER], check=True)


jail_user()


def check(cond, what):
	global failures
	if cond:
		print("ok - %s" % what)
	else:
		failures += 1
		print("not ok - %s" % what)
	sys.stdout.flush()
	return cond


def free_port():
	s = socket.socket()
	s.bind(("127.0.0.1", 0))
	port = s.getsockname()[1]
	s.close()
	return port


class UnixConnection(http.client.HTTPConnection):
	def __init__(self, path, timeout=60):
		super().__init__("localhost", timeout=timeout)
		self.path = path

	def connect(self):
		self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
		self.sock.settimeout(self.timeout)
		self.sock.connect(self.path)


class Daemon:
	def __init__(self, opts=(), token=True, unix=False, runner=RUNNER):
		self.dir = tempfile.mkdtemp(prefix="sbxtest.")
		os.chmod(self.dir, 0o755)
		self.workdir = os.path.join(self.dir, "work")
		self.token = None
		args = [DAEMON, "-d", "-v", "-r", runner, "-w", self.workdir]
		if token:
			self.token = "tok-" + uuid.uuid4().hex
			tf = os.path.join(self.dir, "token")
			with open(tf, "w") as f:
				f.write(self.token + "\n")
			os.chmod(tf, 0o600)
			args += ["-t", tf]
		if unix:
			self.sock = os.path.join(self.dir, "sbx.sock")
			self.port = None
			args += ["-s", self.sock]
		else:
			self.port = free_port()
			self.sock = None
			args += ["-l", "127.0.0.1:%d" % self.port]
		# The machine is shared: all jails of a test daemon together
		# stay under 2 GiB unless a test says otherwise (later -o
		# options win).
		for o in ("total-memory=2G",) + tuple(opts):
			args += ["-o", o]
		self.log = open(os.path.join(self.dir, "log"), "w")
		env = dict(os.environ, SBX_DAEMON_ONLY="secret-in-env")
		self.proc = subprocess.Popen(args, stdout=self.log,
		    stderr=self.log, env=env)
		deadline = time.time() + 10
		while time.time() < deadline:
			try:
				if self.request("GET", "/health")[0] == 200:
					return
			except OSError:
				pass
			if self.proc.poll() is not None:
				break
			time.sleep(0.05)
		raise RuntimeError("depot-sandboxd did not start; see %s" %
		    self.log.name)

	def jail_ids(self):
		"""uid and gid the jails run as outside."""
		import pwd
		if os.geteuid() != 0:
			return os.getuid(), os.getgid()
		pw = pwd.getpwnam(JAIL_USER)
		return pw.pw_uid, pw.pw_gid

	def conn(self, timeout=60):
		if self.sock:
			return UnixConnection(self.sock, timeout)
		return http.client.HTTPConnection("127.0.0.1", self.port,
		    timeout=timeout)

	def request(self, method, path, body=None, headers=None, auth=True,
	    timeout=60):
		h = dict(headers or {})
		if auth and self.token:
			h["Authorization"] = "Bearer " + self.token
		if isinstance(body, (dict, list)):
			body = json.dumps(body).encode()
			h.setdefault("Content-Type", "application/json")
		c = self.conn(timeout)
		try:
			c.request(method, path, body=body, headers=h)
			r = c.getresponse()
			data = r.read()
			return r.status, data, r
		finally:
			c.close()

	def json(self, method, path, body=None, **kw):
		status, data, _ = self.request(method, path, body, **kw)
		try:
			return status, json.loads(data) if data else None
		except ValueError:
			return status, data

	def create(self, **hints):
		return self.json("POST", "/sessions", hints)

	def session(self, **hints):
		status, body = self.create(**hints)
		if status != 201:
			raise RuntimeError("create: %d %r" % (status, body))
		return body["session_id"]

	def exec(self, sid, tool, inp, **extra):
		body = {"tool": tool, "input": inp}
		body.update(extra)
		return self.json("POST", "/sessions/%s/exec" % sid, body,
		    timeout=180)

	def code(self, sid, code, **extra):
		status, body = self.exec(sid, "code_execution",
		    {"code": code}, **extra)
		if status != 200:
			return status, None
		return status, body["result_block"]["content"]

	def bash(self, sid, command, **extra):
		status, body = self.exec(sid, "bash_code_execution",
		    {"command": command}, **extra)
		if status != 200:
			return status, None
		return status, body["result_block"]["content"]

	def put(self, sid, data, filename="upload.bin", path=None):
		boundary = "sbx" + uuid.uuid4().hex
		parts = []
		if path is not None:
			parts.append(("--%s\r\nContent-Disposition: form-data; "
			    "name=\"path\"\r\n\r\n%s\r\n" % (boundary, path))
			    .encode())
		parts.append(("--%s\r\nContent-Disposition: form-data; "
		    "name=\"file\"; filename=\"%s\"\r\nContent-Type: "
		    "application/octet-stream\r\n\r\n" % (boundary, filename))
		    .encode() + data + b"\r\n")
		parts.append(("--%s--\r\n" % boundary).encode())
		return self.json("POST", "/sessions/%s/files" % sid,
		    b"".join(parts), headers={"Content-Type":
		    "multipart/form-data; boundary=" + boundary})

	def get(self, sid, path):
		from urllib.parse import quote
		status, data, r = self.request("GET", "/sessions/%s/files?path=%s"
		    % (sid, quote(path, safe="")))
		return status, data

	def listing(self, sid, path="."):
		from urllib.parse import quote
		return self.json("GET", "/sessions/%s/files/list?path=%s" %
		    (sid, quote(path, safe="")))

	def delete(self, sid):
		status, _, _ = self.request("DELETE", "/sessions/%s" % sid)
		return status

	def healthy(self):
		try:
			return self.request("GET", "/health")[0] == 200 and \
			    self.proc.poll() is None
		except OSError:
			return False

	def stop(self, sig=signal.SIGTERM):
		if self.proc.poll() is None:
			self.proc.send_signal(sig)
			try:
				self.proc.wait(20)
			except subprocess.TimeoutExpired:
				self.proc.kill()
				self.proc.wait()
		if not self.log.closed:
			self.log.close()
			with open(self.log.name, errors="replace") as f:
				text = f.read()
			if "AddressSanitizer" in text or "runtime error:" in text:
				print("# " + text[-3000:].replace("\n", "\n# "))
			check("AddressSanitizer" not in text and
			    "runtime error:" not in text and
			    "fatal" not in text.lower(),
			    "daemon log free of crashes and sanitizer reports %r"
			    % [l for l in text.splitlines()
			    if "fatal" in l.lower() or "runtime error" in l or
			    "Sanitizer" in l][:3])
		return self.proc.returncode

	def cleanup(self):
		shutil.rmtree(self.dir, ignore_errors=True)


def jailed_processes(marker):
	"""Processes whose command line names marker (the runner's path in
	the jail or the daemon's work directory)."""
	found = []
	for pid in os.listdir("/proc"):
		if not pid.isdigit():
			continue
		try:
			with open("/proc/%s/cmdline" % pid, "rb") as f:
				cmd = f.read().replace(b"\0", b" ").decode(
				    "utf-8", "replace")
		except OSError:
			continue
		if marker in cmd:
			found.append((int(pid), cmd))
	return found


def session_processes(sids):
	"""Processes in the cgroups of the sessions named (the runner's
	command line does not name its workspace)."""
	found = []
	for pid in os.listdir("/proc"):
		if not pid.isdigit():
			continue
		try:
			with open("/proc/%s/cgroup" % pid) as f:
				groups = f.read()
		except OSError:
			continue
		if any(s in groups for s in sids):
			found.append((int(pid), groups.strip()[:80]))
	return found


def finish():
	print("# %d failed" % failures)
	sys.exit(1 if failures else 0)
