#!/bin/sh
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

# regress/bench/authmsg.sh: what authentication costs per request in
# figures that hold on any machine: messages between the frontend and
# the storage helper, and each side's system calls, counted with
# strace -c over N requests with one key on one keep-alive connection
# (prefork 1, so that one frontend serves them all), for
#  1. GET /v1/models (authentication and nothing else of the storage
#     helper's: a key in the frontend's cache sends no message), and
#  2. GET /v1/files/{id} (one file message besides).
# The reference is the reader's: before fe_authcache.c a request took
# an auth lookup, its answer and a release (3 messages) on top of its
# own.  BENCH_AUTH_N requests (1000); BENCH_AUTH_PORT (18971).

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"
w=$top/build/bench-authmsg
n=${BENCH_AUTH_N:-1000}
rm -rf "$w"; mkdir -p "$w"
cleanup() {
	depot_stop
	pg_stop "$w/pg"
}
trap cleanup EXIT INT TERM

command -v strace >/dev/null || { echo "authmsg: strace is missing"; exit 1; }
pg_start "$w/pg" >/dev/null || exit 1
depot_user
DEPOT_PREFORK=1 depot_conf "$w/d" "${BENCH_AUTH_PORT:-18971}"
depot_start "$w/d" || exit 1
key=$(depot_key alice default)
head -c 1000 /dev/urandom >"$w/blob"
fid=$(curl -s -H "Authorization: Bearer $key" -F purpose=user_data \
    -F "file=@$w/blob" "$DEPOT_URL/v1/files" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
fe=$(depot_child "frontend 0")
st=$(depot_child storage)

# n requests on one connection; every answer must be want.
client() {	# path want
	python3 - "$DEPOT_PORT" "$key" "$1" "$n" "$2" <<'PY'
import http.client, sys
port, key, path, n, want = sys.argv[1:6]
c = http.client.HTTPConnection("127.0.0.1", int(port))
bad = 0
for i in range(int(n)):
    c.request("GET", path, headers={"Authorization": "Bearer " + key})
    r = c.getresponse()
    r.read()
    bad += r.status != int(want)
sys.exit(1 if bad else 0)
PY
}

calls() {	# strace -c output, syscall name ("total": all)
	awk -v s="$2" '$NF == s { print $4 }' "$1"
}

per() {	# count
	printf '%.2f' "$(echo "scale=3; ${1:-0} / $n" | bc)"
}

measure() {	# label path want
	strace -c -f -o "$w/fe.out" -p "$fe" 2>/dev/null & s1=$!
	strace -c -f -o "$w/st.out" -p "$st" 2>/dev/null & s2=$!
	sleep 1
	client "$2" "$3" || echo "authmsg: $1: answers other than $3"
	sleep 0.5
	kill -INT "$s1" "$s2"
	wait "$s1" "$s2" 2>/dev/null
	echo "$1, $n requests, per request:"
	# The frontend's sendmsg and recvmsg are its storage channel's.
	echo "  frontend sendmsg to the storage helper: $(per \
	    "$(calls "$w/fe.out" sendmsg)")"
	echo "  frontend recvmsg from the storage helper: $(per \
	    "$(calls "$w/fe.out" recvmsg)")"
	echo "  frontend system calls: $(per "$(calls "$w/fe.out" total)")"
	echo "  storage helper system calls: $(per "$(calls "$w/st.out" total)")"
}

client /v1/models 200 >/dev/null	# warm
measure "GET /v1/models" /v1/models 200
measure "GET /v1/files/{id}" "/v1/files/$fid" 200
