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

# regress/files/jcheck.py: JSON checks for the Files API suite.
#
#	jcheck.py FILE EXPR	exit 0 when EXPR is true of the JSON in FILE
#				(bound to j); print why on stderr otherwise
#	jcheck.py -p FILE EXPR	print EXPR (strings bare, lists one a line)
#	jcheck.py --serve	answer "c|p<TAB>FILE<TAB>EXPR" lines from
#				stdin, each answer ending "@@ STATUS"; this
#				saves the suites a slow interpreter start a check
#
# EXPR may use the shape predicates below, which say what SPEC.md
# sections 3 and 4 promise of each body.
import json
import re
import sys

FILE_ID = re.compile(r"^file-[0-9a-f]{32}$")
RFC3339_USEC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")

OPENAI_TYPES = {400: "invalid_request_error", 401: "authentication_error",
                403: "permission_error", 404: "not_found_error",
                405: "invalid_request_error", 413: "invalid_request_error",
                416: "invalid_request_error", 422: "invalid_request_error",
                429: "rate_limit_error", 500: "server_error",
                502: "server_error", 503: "server_error"}
ANTHROPIC_TYPES = {400: "invalid_request_error",
                   401: "authentication_error", 403: "permission_error",
                   404: "not_found_error", 405: "invalid_request_error",
                   413: "request_too_large", 416: "invalid_request_error",
                   422: "invalid_request_error", 429: "rate_limit_error",
                   500: "api_error", 502: "api_error",
                   503: ("overloaded_error", "api_error")}


def openai_err(j, status):
    e = j.get("error")
    if set(j) != {"error"} or not isinstance(e, dict):
        return False
    if set(e) != {"message", "type", "param", "code"}:
        return False
    if not isinstance(e["message"], str) or not e["message"]:
        return False
    if e["type"] != OPENAI_TYPES[status]:
        return False
    if status == 413:
        return e["code"] == "file_too_large"
    return e["code"] is None or isinstance(e["code"], str)


def anthropic_err(j, status):
    e = j.get("error")
    if set(j) != {"type", "error"} or j["type"] != "error":
        return False
    if not isinstance(e, dict) or set(e) != {"type", "message"}:
        return False
    want = ANTHROPIC_TYPES[status]
    if isinstance(want, tuple):
        ok = e["type"] in want
    else:
        ok = e["type"] == want
    return ok and isinstance(e["message"], str) and e["message"] != ""


def err(j, status, dialect):
    if dialect == "anthropic":
        return anthropic_err(j, status)
    return openai_err(j, status)


def openai_file(j):
    keys = {"id", "object", "bytes", "created_at", "expires_at",
            "filename", "purpose", "status", "status_details"}
    return (set(j) == keys and FILE_ID.match(j["id"]) is not None and
            j["object"] == "file" and isinstance(j["bytes"], int) and
            isinstance(j["created_at"], int) and
            j["created_at"] > 1500000000 and
            (j["expires_at"] is None or isinstance(j["expires_at"], int))
            and isinstance(j["filename"], str) and
            isinstance(j["purpose"], str) and j["status"] == "processed"
            and j["status_details"] is None)


def anthropic_file(j):
    keys = {"id", "type", "filename", "mime_type", "size_bytes",
            "created_at", "expires_at", "downloadable"}
    return (set(j) == keys and FILE_ID.match(j["id"]) is not None and
            j["type"] == "file" and isinstance(j["size_bytes"], int) and
            isinstance(j["mime_type"], str) and
            RFC3339_USEC.match(j["created_at"]) is not None and
            (j["expires_at"] is None or
             RFC3339_USEC.match(j["expires_at"]) is not None) and
            j["downloadable"] is True)


def openai_page(j):
    if set(j) != {"object", "data", "first_id", "last_id", "has_more"}:
        return False
    return j["object"] == "list" and page_ids_ok(j) and \
        all(openai_file(f) for f in j["data"])


def anthropic_page(j):
    if set(j) != {"data", "first_id", "last_id", "has_more", "next_page"}:
        return False
    if (j["next_page"] is not None) != (j["has_more"] is True):
        return False
    return page_ids_ok(j) and all(anthropic_file(f) for f in j["data"])


def page_ids_ok(j):
    d = j["data"]
    if not isinstance(j["has_more"], bool):
        return False
    if not d:
        return j["first_id"] is None and j["last_id"] is None
    return j["first_id"] == d[0]["id"] and j["last_id"] == d[-1]["id"]


def ids(j):
    return [f["id"] for f in j["data"]]


def run(show, path, expr):
    try:
        with open(path, "rb") as f:
            j = json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError) as e:
        print("jcheck: %s: %s" % (path, e), file=sys.stderr)
        return 1
    try:
        v = eval(expr, globals(), {"j": j})
    except Exception as e:	# a missing key is a failed check
        print("jcheck: %s: %r" % (expr, e), file=sys.stderr)
        return 1
    if show:
        if isinstance(v, list):
            for x in v:
                print(x)
        elif v is not None:
            print(v)
        return 0
    if not v:
        print("jcheck: false: %s on %s" % (expr, json.dumps(j)[:400]),
              file=sys.stderr)
        return 1
    return 0


def serve():
    for line in sys.stdin:
        mode, path, expr = line.rstrip("\n").split("\t", 2)
        status = run(mode == "p", path, expr)
        print("@@ %d" % status, flush=True)
        sys.stderr.flush()
    return 0


def main():
    args = sys.argv[1:]
    if args == ["--serve"]:
        return serve()
    show = args and args[0] == "-p"
    if show:
        args = args[1:]
    return run(show, args[0], args[1])


if __name__ == "__main__":
    sys.exit(main())
