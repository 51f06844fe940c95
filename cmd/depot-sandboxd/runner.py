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

# runner.py: the interpreter host that depot-sandboxd starts inside each
# session's bubblewrap jail.  It reads one JSON request per line on its
# protocol channel (fd DEPOT_CHANNEL_FD, 3) and answers one JSON line per
# request there, echoing the request's "seq".  The channel is never fd 1:
# outside a call fds 0-2 are /dev/null, so a thread the code left behind
# cannot print into the channel.  Python code runs in one persistent
# globals dict, so variables and imports survive between calls.  Nothing
# here is a security boundary: the jail is.  The daemon enforces the
# wall-clock timeout by killing the whole jail.  It refuses to run outside
# that jail: see in_own_jail().

import json
import os
import select
import signal
import sys
import threading
import time
import traceback

OUTPUT_CAP = int(os.environ.get("DEPOT_OUTPUT_CAP", str(1 << 20)))
WORKSPACE = os.environ.get("DEPOT_WORKSPACE", "/workspace")
TRUNC_MARKER = "\n[output truncated: %d bytes in total, first %d shown]\n"


class Capture:
	"""Collects what is written to fds 1 and 2 during a call, keeping at
	most OUTPUT_CAP bytes of each; the rest is read and counted, never
	stored.  One thread drains the pipes of every call: starting a
	thread per call cost half a millisecond of each Execute."""

	def __init__(self):
		self.ctl_r, self.ctl_w = os.pipe()
		self.done = threading.Semaphore(0)
		self.thread = threading.Thread(target=self._serve, daemon=True)
		self.thread.start()

	def _serve(self):
		while os.read(self.ctl_r, 1):
			self._drain()
			self.done.release()

	def _drain(self):
		poller = select.poll()
		for rfd in self.streams:
			poller.register(rfd, select.POLLIN)
		left = len(self.streams)
		while left:
			for rfd, _ in poller.poll():
				try:
					data = os.read(rfd, 65536)
				except OSError:
					data = b""
				if not data:
					poller.unregister(rfd)
					left -= 1
					continue
				st = self.streams[rfd]
				st["total"] += len(data)
				room = OUTPUT_CAP - st["kept"]
				if room > 0:
					st["chunks"].append(data[:room])
					st["kept"] += min(room, len(data))

	def start(self):
		"""Points fds 1 and 2 at fresh pipes and starts draining."""
		self.saved = {}
		self.streams = {}
		self.order = []
		for fd in (1, 2):
			self.saved[fd] = os.dup(fd)
			rfd, wfd = os.pipe()
			os.dup2(wfd, fd)
			os.close(wfd)
			self.streams[rfd] = {"chunks": [], "kept": 0, "total": 0}
			self.order.append(rfd)
		os.write(self.ctl_w, b"c")

	def finish(self):
		"""Restores fds 1 and 2 and returns (stdout, stderr).  A copy of
		a pipe the code kept (os.dup(1)) could hold it open: after a
		short wait the drain is left to run on, and a new drainer
		serves the calls that follow."""
		for fd, saved in self.saved.items():
			os.dup2(saved, fd)
			os.close(saved)
		finished = self.done.acquire(timeout=0.5)
		texts = []
		for rfd in self.order:
			st = self.streams[rfd]
			text = b"".join(st["chunks"]).decode("utf-8", "replace")
			if st["total"] > st["kept"]:
				text += TRUNC_MARKER % (st["total"], st["kept"])
			texts.append(text)
			if finished:
				os.close(rfd)
		return texts, finished


def run_python(code, env):
	try:
		compiled = compile(code, "<code>", "exec")
	except SyntaxError:
		traceback.print_exc(limit=0)
		return 1
	try:
		exec(compiled, env)
	except SystemExit as e:
		if e.code is None:
			return 0
		if isinstance(e.code, int):
			return e.code
		print(e.code, file=sys.stderr)
		return 1
	except BaseException:
		etype, value, tb = sys.exc_info()
		# Drop the runner's own frame from the traceback.
		traceback.print_exception(etype, value, tb.tb_next)
		return 1
	return 0


def run_bash(command):
	import subprocess

	try:
		proc = subprocess.Popen(["/bin/bash", "-c", command],
		    stdin=subprocess.DEVNULL, cwd=WORKSPACE)
		return proc.wait()
	except OSError as e:
		print("bash: %s" % e.strerror, file=sys.stderr)
		return 126


class Editor:
	"""The text editor tool: view, create, str_replace, insert, undo_edit.
	Errors raise EditorError; their message goes to stderr."""

	def __init__(self):
		self.history = {}

	def resolve(self, path):
		if not isinstance(path, str) or path == "":
			raise EditorError("path is required")
		if not path.startswith("/"):
			path = os.path.join(WORKSPACE, path)
		return os.path.normpath(path)

	def remember(self, path):
		try:
			with open(path, "r", encoding="utf-8") as f:
				old = f.read()
		except FileNotFoundError:
			old = None
		self.history.setdefault(path, []).append(old)

	def read(self, path):
		try:
			with open(path, "r", encoding="utf-8") as f:
				return f.read()
		except FileNotFoundError:
			raise EditorError("%s: no such file" % path)
		except IsADirectoryError:
			raise EditorError("%s: is a directory" % path)
		except UnicodeDecodeError:
			raise EditorError("%s: not a UTF-8 text file" % path)

	def write(self, path, text):
		with open(path, "w", encoding="utf-8") as f:
			f.write(text)

	def view(self, path, args):
		if os.path.isdir(path):
			for root, dirs, files in os.walk(path):
				dirs[:] = sorted(d for d in dirs
				    if not d.startswith("."))
				depth = root[len(path):].count(os.sep)
				if depth >= 2:
					dirs[:] = []
				for name in sorted(files):
					print(os.path.join(root, name))
			return
		lines = self.read(path).split("\n")
		start, end = 1, len(lines)
		rng = args.get("view_range")
		if rng is not None:
			if (not isinstance(rng, list) or len(rng) != 2 or
			    not all(isinstance(x, int) for x in rng)):
				raise EditorError("view_range must be [start, end]")
			start, end = rng
			if end == -1:
				end = len(lines)
			if start < 1 or start > len(lines) or end < start or \
			    end > len(lines):
				raise EditorError("view_range %r is outside the "
				    "file's %d lines" % (rng, len(lines)))
		for n in range(start, end + 1):
			print("%6d\t%s" % (n, lines[n - 1]))

	def create(self, path, args):
		text = args.get("file_text")
		if not isinstance(text, str):
			raise EditorError("file_text is required for create")
		parent = os.path.dirname(path)
		os.makedirs(parent, exist_ok=True)
		self.remember(path)
		self.write(path, text)
		print("File created: %s" % path)

	def str_replace(self, path, args):
		old = args.get("old_str")
		new = args.get("new_str", "")
		if not isinstance(old, str) or old == "":
			raise EditorError("old_str is required for str_replace")
		if not isinstance(new, str):
			raise EditorError("new_str must be a string")
		text = self.read(path)
		count = text.count(old)
		if count == 0:
			raise EditorError("old_str was not found in %s; "
			    "nothing replaced" % path)
		if count > 1:
			raise EditorError("old_str occurs %d times in %s; it "
			    "must occur exactly once, nothing replaced" %
			    (count, path))
		self.remember(path)
		self.write(path, text.replace(old, new, 1))
		print("The file %s has been edited." % path)

	def insert(self, path, args):
		line = args.get("insert_line")
		new = args.get("new_str", args.get("insert_text"))
		if not isinstance(line, int) or isinstance(line, bool):
			raise EditorError("insert_line is required for insert")
		if not isinstance(new, str):
			raise EditorError("new_str is required for insert")
		text = self.read(path)
		lines = text.split("\n")
		if line < 0 or line > len(lines):
			raise EditorError("insert_line %d is outside 0..%d" %
			    (line, len(lines)))
		self.remember(path)
		lines[line:line] = new.split("\n")
		self.write(path, "\n".join(lines))
		print("The file %s has been edited." % path)

	def undo_edit(self, path, args):
		stack = self.history.get(path)
		if not stack:
			raise EditorError("no edit to undo for %s" % path)
		old = stack.pop()
		if old is None:
			os.unlink(path)
		else:
			self.write(path, old)
		print("Last edit to %s undone." % path)

	def run(self, args):
		commands = {
			"view": self.view,
			"create": self.create,
			"str_replace": self.str_replace,
			"insert": self.insert,
			"undo_edit": self.undo_edit,
		}
		command = args.get("command")
		if command not in commands:
			print("unknown text editor command %r; expected one of "
			    "%s" % (command, ", ".join(commands)),
			    file=sys.stderr)
			return 1
		try:
			commands[command](self.resolve(args.get("path")), args)
		except EditorError as e:
			print(str(e), file=sys.stderr)
			return 1
		except OSError as e:
			print("%s: %s" % (e.filename or args.get("path"),
			    e.strerror), file=sys.stderr)
			return 1
		return 0


class EditorError(Exception):
	pass


def in_own_jail():
	"""True only where kill(-1) cannot reach past this session: not
	root (root's kill(-1) outside a pid namespace kills the whole
	machine), in a pid namespace of our own whose init is bubblewrap's
	and whose only other member is us or what we started."""
	if os.getuid() == 0 or os.geteuid() == 0:
		return False
	try:
		with open("/proc/1/comm") as f:
			init = f.read().strip()
	except OSError:
		return False
	return init == "bwrap" and os.getppid() == 1 and os.getpid() < 64


def reap_leftovers():
	"""Processes a call started do not outlive it: a background job
	or a fork bomb would otherwise hold the jail's process and memory
	limits for the calls that follow.  kill(-1) reaches every process
	in the jail's pid namespace except its init and us; a bomb may fork
	during one sweep, so sweep until nothing is left.  Outside a jail
	of its own it does nothing: see in_own_jail()."""
	if not in_own_jail():
		return
	me = os.getpid()
	for _ in range(50):
		others = [p for p in os.listdir("/proc") if p.isdigit() and
		    int(p) not in (1, me)]
		if not others:
			return
		try:
			os.kill(-1, signal.SIGKILL)
		except OSError:
			pass
		while True:
			try:
				if os.waitpid(-1, os.WNOHANG)[0] == 0:
					break
			except ChildProcessError:
				break
		time.sleep(0.01)


def handle(request, env, editor, capture):
	"""Runs one call; returns its reply and the Capture for the next."""
	tool = request.get("tool")
	args = request.get("input") or {}
	capture.start()
	try:
		if tool == "code_execution":
			rc = run_python(args.get("code", ""), env)
		elif tool == "bash_code_execution":
			rc = run_bash(args.get("command", ""))
		elif tool == "text_editor_code_execution":
			rc = editor.run(args)
		else:
			print("unknown tool %r" % tool, file=sys.stderr)
			rc = 1
	finally:
		try:
			sys.stdout.flush()
			sys.stderr.flush()
		except Exception:
			pass
		reap_leftovers()
		(stdout, stderr), finished = capture.finish()
		if not finished:
			capture = Capture()
	return {"stdout": stdout, "stderr": stderr, "return_code": rc,
	    "seq": request.get("seq")}, capture


def main():
	# Run by hand, as root or outside bubblewrap's pid namespace, the
	# clean-up after each call would kill every process it may signal.
	if not in_own_jail():
		print("runner.py: refusing to run outside a depot-sandboxd "
		    "jail (as root, or not in a pid namespace of its own)",
		    file=sys.stderr)
		sys.exit(2)
	# The channel is not inherited by what the code runs; fds 0-2 are
	# /dev/null already (the daemon set them up).
	channel = int(os.environ.get("DEPOT_CHANNEL_FD", "3"))
	os.set_inheritable(channel, False)
	proto_in = os.fdopen(channel, "rb")
	proto_out = os.fdopen(os.dup(channel), "wb")
	sys.stdout = open(1, "w", encoding="utf-8", errors="replace",
	    closefd=False, buffering=1)
	sys.stderr = open(2, "w", encoding="utf-8", errors="replace",
	    closefd=False, buffering=1)
	try:
		os.chdir(WORKSPACE)
	except OSError:
		pass
	env = {"__name__": "__main__", "__builtins__": __builtins__}
	editor = Editor()
	capture = Capture()
	for line in proto_in:
		try:
			request = json.loads(line)
			if not isinstance(request, dict):
				raise ValueError("request is not an object")
		except ValueError as e:
			reply = {"stdout": "", "stderr": "runner: bad "
			    "request: %s\n" % e, "return_code": 1}
		else:
			reply, capture = handle(request, env, editor, capture)
		proto_out.write(json.dumps(reply).encode() + b"\n")
		proto_out.flush()


if __name__ == "__main__":
	main()
