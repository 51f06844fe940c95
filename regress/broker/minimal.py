#!/usr/bin/env python3
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

# regress/broker/minimal.py: a second code-execution backend, written
# from SPEC.md section 7 alone, so that the broker's client is held to
# the protocol rather than to depot-sandboxd's reading of it.  No jail:
# "code" runs as `python3 -c` in the session's directory (tests only,
# on 127.0.0.1, with a token).  Times are numbers, content.type is
# code_execution_result for every tool kind, content is one object.
# Two routes outside the protocol, for tests: GET /health tells the
# session count and how many protocol requests came; POST /__fault {"put": S, "get": S, "exec": S,
# "exec_delay": SECONDS} makes PutFile, GetFile or Execute answer
# status S (0: normally) or Execute take that long.  A hostile
# backend, for the same route: "put_delay" and "get_delay" (SECONDS)
# make PutFile and GetFile that slow, "mime" is every listed file's
# mime_type, "session_id" the id CreateSession answers.  GET /__paths
# tells every path asked for since the last fault.
#
# With a certificate and its key (PEM), it serves https instead.
#
#	minimal.py PORT TOKEN [CERT KEY]

import email
import email.policy
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

ROOT = tempfile.mkdtemp(prefix="minimal-sbx-")
sessions = {}
faults = {}
calls = [0]
paths = []
lock = threading.Lock()


def listing(sid):
	base = sessions[sid]["dir"]
	out = []
	for d, _, names in os.walk(base):
		for n in names:
			p = os.path.join(d, n)
			st = os.stat(p)
			out.append({"path": os.path.relpath(p, base),
			    "size_bytes": st.st_size,
			    "mime_type": faults.get("mime",
			    "application/octet-stream"),
			    "modified_at": st.st_mtime})
	return out


def inside(sid, rel):
	base = os.path.realpath(sessions[sid]["dir"])
	p = os.path.realpath(os.path.join(base, rel))
	return p if p.startswith(base + os.sep) else None


class Handler(BaseHTTPRequestHandler):
	protocol_version = "HTTP/1.1"

	def log_message(self, *args):
		pass

	def setup(self):
		# A refused certificate ends here, before any request is read.
		if isinstance(self.request, ssl.SSLSocket):
			self.request.do_handshake()
		super().setup()

	def reply(self, status, obj=None, raw=None):
		body = raw if raw is not None else \
		    (json.dumps(obj).encode() if obj is not None else b"")
		self.send_response(status)
		if obj is not None:
			self.send_header("Content-Type", "application/json")
		self.send_header("Content-Length", str(len(body)))
		self.end_headers()
		self.wfile.write(body)

	def authorised(self):
		with lock:
			calls[0] += 1
			paths.append(self.path)
		if self.headers.get("Authorization") == "Bearer " + TOKEN:
			return True
		self.reply(401, {"error": "bad credential"})
		return False

	def body(self):
		n = int(self.headers.get("Content-Length") or 0)
		return self.rfile.read(n)

	def route(self):
		u = urlsplit(self.path)
		parts = u.path.strip("/").split("/")
		return u, parts

	def do_GET(self):
		u, parts = self.route()
		if parts == ["health"]:
			return self.reply(200, {"sessions": len(sessions),
			    "requests": calls[0]})
		if parts == ["__paths"]:
			return self.reply(200, {"paths": paths})
		if not self.authorised():
			return
		if len(parts) < 3 or parts[0] != "sessions" or \
		    parts[1] not in sessions:
			return self.reply(404, {"error": "no such session"})
		sid = parts[1]
		q = parse_qs(u.query)
		if parts[2:] == ["files", "list"]:
			return self.reply(200, {"files": listing(sid)})
		if parts[2:] == ["files"]:
			time.sleep(faults.get("get_delay", 0))
			if faults.get("get"):
				return self.reply(faults["get"], {"error": "fault"})
			p = inside(sid, q.get("path", [""])[0])
			if p is None:
				return self.reply(403, {"error": "outside"})
			if not os.path.isfile(p):
				return self.reply(404, {"error": "no file"})
			with open(p, "rb") as f:
				return self.reply(200, raw=f.read())
		self.reply(404, {"error": "no route"})

	def do_DELETE(self):
		_, parts = self.route()
		if not self.authorised():
			return
		with lock:
			s = sessions.pop(parts[1], None) if len(parts) == 2 \
			    else None
		if s is None:
			return self.reply(404, {"error": "no such session"})
		shutil.rmtree(s["dir"], ignore_errors=True)
		self.reply(204)

	def do_POST(self):
		_, parts = self.route()
		if parts == ["__fault"]:
			faults.clear()
			faults.update(json.loads(self.body() or b"{}"))
			del paths[:]
			return self.reply(204)
		if not self.authorised():
			return
		if parts == ["sessions"]:
			self.body()
			sid = uuid.uuid4().hex
			d = os.path.join(ROOT, sid)
			os.mkdir(d)
			now = time.time()
			with lock:
				sessions[sid] = {"dir": d}
			return self.reply(201, {"session_id":
			    faults.get("session_id", sid),
			    "idle_timeout_seconds": 600,
			    "max_lifetime_seconds": 3600,
			    "created_at": now, "last_activity_at": now})
		if len(parts) < 3 or parts[1] not in sessions:
			self.body()
			return self.reply(404, {"error": "no such session"})
		sid = parts[1]
		if parts[2:] == ["exec"]:
			req = json.loads(self.body())
			time.sleep(faults.get("exec_delay", 0))
			if faults.get("exec"):
				return self.reply(faults["exec"], {"error": "fault"})
			return self.execute(sid, req)
		if parts[2:] == ["files"]:
			time.sleep(faults.get("put_delay", 0))
			if faults.get("put"):
				self.body()
				return self.reply(faults["put"], {"error": "fault"})
			return self.put(sid)
		self.reply(404, {"error": "no route"})

	def execute(self, sid, req):
		if req.get("tool") != "code_execution":
			return self.reply(400, {"error": "unknown tool kind"})
		t0 = time.time()
		r = subprocess.run([sys.executable, "-c",
		    req["input"]["code"]], cwd=sessions[sid]["dir"],
		    capture_output=True, text=True,
		    timeout=req.get("timeout_seconds", 30))
		self.reply(200, {"tool_use_id": req.get("tool_use_id", ""),
		    "execution_time_ms": int((time.time() - t0) * 1000),
		    "result_block": {"type": "code_execution_tool_result",
		    "tool_use_id": req.get("tool_use_id", ""),
		    "content": {"type": "code_execution_result",
		    "stdout": r.stdout, "stderr": r.stderr,
		    "return_code": r.returncode, "content": []}}})

	def put(self, sid):
		head = b"Content-Type: " + \
		    self.headers["Content-Type"].encode() + b"\r\n\r\n"
		msg = email.message_from_bytes(head + self.body(),
		    policy=email.policy.HTTP)
		fields = {}
		for part in msg.iter_parts():
			name = part.get_param("name", header="content-disposition")
			fields[name] = (part.get_filename(),
			    part.get_payload(decode=True))
		if "file" not in fields:
			return self.reply(400, {"error": "no file part"})
		rel = fields["path"][1].decode() if "path" in fields \
		    else fields["file"][0]
		p = inside(sid, rel)
		if p is None:
			return self.reply(403, {"error": "outside"})
		data = fields["file"][1]
		with open(p, "wb") as f:
			f.write(data)
		self.reply(201, {"path": rel, "size_bytes": len(data)})


class Server(ThreadingHTTPServer):
	tls = None

	def get_request(self):
		sock, addr = super().get_request()
		# The handshake is the handler thread's, not the accept loop's.
		if self.tls is not None:
			sock = self.tls.wrap_socket(sock, server_side=True,
			    do_handshake_on_connect=False)
		return sock, addr

	def handle_error(self, request, client_address):
		print("connection from", client_address[0], "failed:",
		    sys.exc_info()[1], file=sys.stderr, flush=True)


if __name__ == "__main__":
	TOKEN = sys.argv[2]
	srv = Server(("127.0.0.1", int(sys.argv[1])), Handler)
	if len(sys.argv) == 5:
		srv.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
		srv.tls.load_cert_chain(sys.argv[3], sys.argv[4])
	print("listening", srv.server_address[1], flush=True)
	try:
		srv.serve_forever()
	finally:
		shutil.rmtree(ROOT, ignore_errors=True)
