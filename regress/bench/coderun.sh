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

# regress/bench/coderun.sh: what code execution costs, in one run.
#  1. one tool round: a request whose model runs print(1) once, less
#     the same request answered at once, against a bare Execute of
#     print(1) on the same depot-sandboxd session socket (p50, p99)
#  2. seeding ten 10 MB files (Messages container_upload blocks, so
#     the model gets markers and the files go only to the sandbox):
#     the request less a plain one, against curl PutFile of the same
#     files straight to depot-sandboxd
#  3. time to first token through a streamed code-execution request
#     against the upstream's own (coderun_ttft.py)
#  4. the broker's and each frontend's peak resident set after all
# The upstream is regress/upstream/double.py, scripted.  N rounds
# (default 30) per figure.

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"
. "$top/regress/bench/lib.sh"
w=$top/build/bench-coderun
port=${BENCH_CODERUN_PORT:-18860}
dport=$((port + 1))
N=${N:-30}
rm -rf "$w"; mkdir -p "$w"
chmod 755 "$w"
dpid=
cleanup() {
	depot_stop
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null
	pg_stop "$w/pg"
}
trap cleanup EXIT INT TERM

make -s build/depotd build/depotctl build/depot-sandboxd >&2 || exit 1
depot_user
pg_start "$w/pg" || exit 1
python3 "$top/regress/upstream/double.py" --port "$dport" >"$w/double.log" \
    2>&1 &
dpid=$!
DEPOT_SANDBOX_LOCAL=1 DEPOT_MAX_SIZE=64M depot_conf "$w" "$port" \
    "upstream \"u\" { url \"http://127.0.0.1:$dport/v1\" api openai
	api-key \"test-upstream-key\" }
upstream \"a\" { url \"http://127.0.0.1:$dport/v1\" api anthropic
	api-key \"test-upstream-key\" }
model \"m\" upstream \"u\"
model \"ma\" upstream \"a\""
depot_start "$w" || exit 1
key=$(depot_key alice default)
for i in $(seq 10); do
	head -c 10485760 /dev/urandom >"$w/seed$i.bin"
done

DEPOT_URL=$DEPOT_URL KEY=$key DOUBLE="http://127.0.0.1:$dport" N=$N \
    W=$w SOCK="$w/run/sandbox/depot-sandboxd.sock" \
    TOKEN_FILE="$w/run/depot-sandboxd.token" \
    python3 "$top/regress/bench/coderun.py" || exit 1
echo "peak resident sets:"
depot_peaks | grep -E "broker|frontend" | sed 's/^/  /'
