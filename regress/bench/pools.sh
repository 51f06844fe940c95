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

# regress/bench/pools.sh: upstream pools (issue 21 item 1).
#  1. The cost of choosing a replica, per request (target under 5 us):
#     test_pool's loop of choose, begin and end over 8 weighted
#     replicas, a million times (CPU time, so it holds on a shared
#     machine only roughly; the loop makes no system call).
#  2. The failover delay beyond the failed connect (target under 1 ms):
#     ROUNDS upstreams of 15 refused ports and one double each; the
#     first request to each fails over k times (k: its "taken out" log
#     lines) before the double answers.  Its times less those of as many
#     requests to the double alone, over the sum of k, is what one failover adds
#     (a refused connect on loopback costs microseconds itself).
# BENCH_POOLS_PORT (20250; the 16 ports above it are used too).

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"
w=$top/build/bench-pools
port=${BENCH_POOLS_PORT:-20250}
rounds=20
rm -rf "$w"; mkdir -p "$w"
dpid=
cleanup() {
	depot_stop
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null
	pg_stop "$w/pg"
}
trap cleanup EXIT INT TERM

make -s build/depotd build/depotctl build/regress/test_pool >&2 || exit 1
POOL_BENCH=1 build/regress/test_pool 2>/dev/null | grep '^# pool choice' |
    sed 's/^# /choice: /'

python3 regress/upstream/double.py --port $((port + 1)) >"$w/double.out" \
    2>"$w/double.err" &
dpid=$!
i=0
until grep -q "^listening" "$w/double.out" 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 300 ] || { echo "no double"; exit 1; }
	sleep 0.1
done
up=http://127.0.0.1:$((port + 1))/v1
conf="upstream \"direct\" { url \"$up\" api openai api-key \"k\" }
model \"m-direct\" upstream \"direct\" { remote-name \"gpt-test\" }"
for r in $(seq $rounds); do
	conf="$conf
upstream \"p$r\" {"
	for d in $(seq 2 16); do
		conf="$conf
	url \"http://127.0.0.1:$((port + d))/v1\""
	done
	conf="$conf
	url \"$up\"
	api openai api-key \"k\" failover 15
}
model \"m-p$r\" upstream \"p$r\" { remote-name \"gpt-test\" }"
done
depot_user
pg_start "$w/pg" >/dev/null || { echo "postgres"; exit 1; }
DEPOT_PREFORK=1 depot_conf "$w" "$port" "$conf"
depot_start "$w" || exit 1
key=$(depot_key benchuser benchws)
req() {	# model
	curl -s -o /dev/null -w '%{time_total}\n' \
	    -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
	    -d "{\"model\":\"$1\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}" \
	    "$DEPOT_URL/v1/chat/completions"
}
req m-direct >/dev/null
for r in $(seq $rounds); do
	d=$(req m-direct)
	f=$(req m-p$r)
	k=$(grep -c "upstream \"p$r\": .* taken out" "$w/depotd.log")
	echo "$d $f $k"
done | awk '{ d += $1; f += $2; k += $3; n++ }
    END { if (k) printf("failover: %.3f ms added per failover (%d failovers '\
'in %d requests against %d direct ones; target under 1 ms)\n", (f - d) / k * \
    1000, k, n, n) }'
