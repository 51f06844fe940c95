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

# regress/bench/limits.sh: what per-key limits cost per model request,
# in figures that hold on any machine: system calls of the frontend and
# of the storage helper (strace -c -f), and the frontend's messages to
# the storage helper, over N chat completions against the upstream
# double on one keep-alive connection (prefork 1), for
#  1. main (the commit this branch started from, built in a scratch
#     directory with BENCH_LIMITS_MAIN pointing at its depotd),
#  2. this depotd, a key without limits,
#  3. this depotd, a key with limits it never reaches;
# then the cost of the frontend's decision per request
# (test_limits with LIMITS_BENCH).  BENCH_LIMITS_N requests (500);
# BENCH_LIMITS_PORT (21250, and the next two).

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"
w=$top/build/bench-limits
n=${BENCH_LIMITS_N:-500}
port=${BENCH_LIMITS_PORT:-21250}
main=${BENCH_LIMITS_MAIN:-}
rm -rf "$w"; mkdir -p "$w"
dpid=
cleanup() {
	depot_stop
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null
	pg_stop "$w/pg"
}
trap cleanup EXIT INT TERM

command -v strace >/dev/null || { echo "limits: strace is missing"; exit 1; }
make -s build/depotd build/depotctl build/regress/test_limits >&2 || exit 1
python3 regress/upstream/double.py --port $((port + 1)) >"$w/double.out" \
    2>"$w/double.err" &
dpid=$!
i=0
until grep -q "^listening" "$w/double.out" 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 300 ] || { echo "no double"; exit 1; }
	sleep 0.1
done
pg_start "$w/pg" >/dev/null || exit 1
depot_user
conf="upstream \"u\" { url \"http://127.0.0.1:$((port + 1))/v1\" api openai
    api-key \"test-upstream-key\" }
model \"m\" upstream \"u\""

client() {	# key: n chat completions on one connection, each a 200
	python3 - "$DEPOT_PORT" "$1" "$n" <<'PY'
import http.client, json, sys
port, key, n = sys.argv[1:4]
c = http.client.HTTPConnection("127.0.0.1", int(port))
body = json.dumps({"model": "m", "messages": [{"role": "user",
    "content": "hello"}]})
bad = 0
for i in range(int(n)):
    c.request("POST", "/v1/chat/completions", body=body, headers={
        "Authorization": "Bearer " + key,
        "Content-Type": "application/json"})
    r = c.getresponse()
    r.read()
    bad += r.status != 200
sys.exit(1 if bad else 0)
PY
}

calls() {	# strace -c output, syscall name ("total": all)
	awk -v s="$2" '$NF == s { print $4 }' "$1"
}

per() {	# count
	printf '%.2f' "$(echo "scale=3; ${1:-0} / $n" | bc)"
}

measure() {	# label key
	fe=$(depot_child "frontend 0")
	st=$(depot_child storage)
	client "$2" || echo "limits: $1: a warm-up answer was not a 200"
	strace -c -f -o "$w/fe.out" -p "$fe" 2>/dev/null & s1=$!
	strace -c -f -o "$w/st.out" -p "$st" 2>/dev/null & s2=$!
	sleep 1
	t0=$(date +%s.%N)
	client "$2" || echo "limits: $1: answers other than 200"
	t1=$(date +%s.%N)
	sleep 0.5
	kill -INT "$s1" "$s2"
	wait "$s1" "$s2" 2>/dev/null
	echo "$1, $n requests, per request:"
	echo "  frontend sendmsg to the storage helper: $(per \
	    "$(calls "$w/fe.out" sendmsg)")"
	echo "  frontend system calls: $(per "$(calls "$w/fe.out" total)")"
	echo "  storage helper system calls: $(per "$(calls "$w/st.out" total)")"
	echo "  wall time under strace: $(printf '%.2f' "$(echo \
	    "($t1 - $t0) * 1000 / $n" | bc -l)") ms"
}

if [ -n "$main" ]; then
	DEPOT_PREFORK=1 depot_conf "$w/m" "$port" "$conf"
	DEPOTD=$main depot_start "$w/m" || exit 1
	measure "main" "$(depot_key alice default)"
	depot_stop
fi
DEPOT_PREFORK=1 depot_conf "$w/d" $((port + 2)) "$conf"
depot_start "$w/d" || exit 1
k_none=$(depot_key bob default)
k_lim=$(depot_key carol default)
depotctl_ limits set "$(echo "$k_lim" | cut -c1-12)" -r 1000000 \
    -t 1000000000 -d 1000000000 >/dev/null || exit 1
measure "this branch, a key without limits" "$k_none"
measure "this branch, a key with limits" "$k_lim"
LIMITS_BENCH=1 build/regress/test_limits 2>/dev/null |
    grep '^# limits decision' | sed 's/^# /decision: /'
