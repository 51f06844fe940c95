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

# schema.py: depot-sandboxd's responses against a JSON schema written
# from SPEC.md section 7 (protocol v1, corrected): every operation, every
# tool kind, every error status.  The validator is a small subset of JSON
# Schema (type, required, properties, items, const, enum, minimum) in the
# standard library, so that the test needs no extra package.

import json

from sbx import Daemon, check, finish

TYPES = {
	"object": lambda v: isinstance(v, dict),
	"array": lambda v: isinstance(v, list),
	"string": lambda v: isinstance(v, str),
	"boolean": lambda v: isinstance(v, bool),
	"integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
	"number": lambda v: isinstance(v, (int, float)) and
	    not isinstance(v, bool),
}


def validate(value, schema, where="$"):
	"""Returns the list of violations of schema by value."""
	errors = []
	t = schema.get("type")
	if t is not None and not TYPES[t](value):
		return ["%s: %r is not of type %s" % (where, value, t)]
	if "const" in schema and value != schema["const"]:
		errors.append("%s: %r is not %r" % (where, value, schema["const"]))
	if "enum" in schema and value not in schema["enum"]:
		errors.append("%s: %r not in %r" % (where, value, schema["enum"]))
	if "minimum" in schema and value < schema["minimum"]:
		errors.append("%s: %r < %r" % (where, value, schema["minimum"]))
	if isinstance(value, dict):
		for name in schema.get("required", []):
			if name not in value:
				errors.append("%s: %s is required" % (where, name))
		for name, sub in schema.get("properties", {}).items():
			if name in value:
				errors += validate(value[name], sub,
				    "%s.%s" % (where, name))
	if isinstance(value, list) and "items" in schema:
		for i, item in enumerate(value):
			errors += validate(item, schema["items"],
			    "%s[%d]" % (where, i))
	return errors


def obj(required, **props):
	return {"type": "object", "required": required, "properties": props}


STR = {"type": "string"}
INT = {"type": "integer"}
NAT = {"type": "integer", "minimum": 0}
TIME = {"type": "number", "minimum": 1e9}	# POSIX seconds, not RFC 3339

CREATE = obj(["session_id", "idle_timeout_seconds", "max_lifetime_seconds",
    "created_at", "last_activity_at"], session_id=STR,
    idle_timeout_seconds=NAT, max_lifetime_seconds=NAT, created_at=TIME,
    last_activity_at=TIME)


def execute(kind):
	output = obj(["type", "file_id", "filename"],
	    type={"type": "string", "const": "code_execution_output"},
	    file_id=STR, filename=STR)
	content = obj(["type", "stdout", "stderr", "return_code", "content"],
	    type={"type": "string", "const": "code_execution_result"},
	    stdout=STR, stderr=STR, return_code=INT,
	    content={"type": "array", "items": output})
	block = obj(["type", "tool_use_id", "content"],
	    type={"type": "string", "const": kind + "_tool_result"},
	    tool_use_id=STR, content=content)
	return obj(["tool_use_id", "execution_time_ms", "result_block"],
	    tool_use_id=STR, execution_time_ms=NAT, result_block=block)


LIST = obj(["files"], files={"type": "array", "items":
    obj(["path", "size_bytes", "mime_type", "modified_at"], path=STR,
    size_bytes=NAT, mime_type=STR, modified_at=TIME)})
PUT = obj(["path", "size_bytes"], path=STR, size_bytes=NAT)
ERROR = {"type": "object"}


def conforms(what, status, body, want_status, schema, raw=None):
	if isinstance(want_status, int):
		want_status = (want_status,)
	errors = [] if status in want_status else \
	    ["status %d, want %r" % (status, want_status)]
	if schema is not None:
		errors += validate(body, schema)
	check(not errors, "schema: %s %s" % (what, errors[:3] or
	    "conforms (%d)" % status))


d = Daemon(opts=["max-sessions=2", "max-upload=64k"])
try:
	st, s = d.create(idle_timeout_seconds=60)
	conforms("CreateSession", st, s, 201, CREATE)
	sid = s["session_id"]
	check(abs(s["created_at"] - __import__("time").time()) < 60,
	    "schema: created_at is now in POSIX seconds")

	st, r = d.exec(sid, "code_execution", {"code":
	    "open('p.txt', 'w').write('x'); print(1)"}, tool_use_id="toolu_1")
	conforms("Execute code_execution", st, r, 200,
	    execute("code_execution"))
	check(st == 200 and len(r["result_block"]["content"]["content"]) == 1,
	    "schema: the produced file is in content.content")
	st, r = d.exec(sid, "bash_code_execution", {"command": "echo hi; "
	    "echo b > b.txt; exit 2"})
	conforms("Execute bash_code_execution", st, r, 200,
	    execute("bash_code_execution"))
	for inp in ({"command": "create", "path": "e.txt", "file_text": "a\n"},
	    {"command": "view", "path": "e.txt"},
	    {"command": "str_replace", "path": "e.txt", "old_str": "a",
	    "new_str": "b"},
	    {"command": "insert", "path": "e.txt", "insert_line": 0,
	    "new_str": "z"},
	    {"command": "undo_edit", "path": "e.txt"},
	    {"command": "view", "path": "missing.txt"}):
		st, r = d.exec(sid, "text_editor_code_execution", inp)
		conforms("Execute text_editor_code_execution %s" %
		    inp["command"], st, r, 200,
		    execute("text_editor_code_execution"))
	st, r = d.exec(sid, "code_execution", {"code": "while 1: pass"},
	    timeout_seconds=1)
	conforms("Execute that times out", st, r, 200,
	    execute("code_execution"))

	st, r = d.listing(sid)
	conforms("ListFiles", st, r, 200, LIST)
	check(st == 200 and len(r["files"]) >= 3, "schema: ListFiles lists "
	    "the files (%d)" % len(r.get("files", [])))
	st, r = d.put(sid, b"data", filename="up.bin", path="dir/up.bin")
	conforms("PutFile", st, r, 201, PUT)
	st, data = d.get(sid, "dir/up.bin")
	check(st == 200 and data == b"data", "schema: GetFile raw bytes")
	st, _, resp = d.request("DELETE", "/sessions/" + sid)
	check(st == 204, "schema: DestroySession 204")

	# Error statuses.
	other = d.session()
	st, r = d.json("POST", "/sessions", {}, auth=False)
	conforms("no credential", st, r, 401, ERROR)
	st, r = d.exec("sess_nothere", "code_execution", {"code": "1"})
	conforms("Execute unknown session", st, r, 404, ERROR)
	st, r = d.json("GET", "/sessions/%s/files?path=nothere" % other)
	conforms("GetFile unknown file", st, r, 404, ERROR)
	st, r = d.exec(other, "cobol_execution", {"code": "1"})
	conforms("unknown tool kind", st, r, (400, 422), ERROR)
	st, r = d.json("POST", "/sessions/%s/exec" % other, b"{")
	conforms("malformed body", st, r, (400, 422), ERROR)
	st, r = d.json("GET", "/sessions/%s/files?path=../x" % other)
	conforms("path outside the workspace", st, r, 403, ERROR)
	st, r = d.put(other, b"x" * (65 << 10), filename="big.bin")
	conforms("file over the cap", st, r, 413, ERROR)
	st, r = d.create()
	conforms("CreateSession at capacity is fine below it", st, r, 201,
	    CREATE)
	st, r = d.create()
	conforms("CreateSession at capacity", st, r, 503, ERROR)
	st, _, _ = d.request("DELETE", "/sessions/sess_nothere")
	check(st == 204, "schema: DestroySession of an unknown id is 204")
finally:
	d.stop()
	d.cleanup()
finish()
