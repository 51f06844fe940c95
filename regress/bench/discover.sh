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

# regress/bench/discover.sh: what capability discovery adds to start
# and reload (issue 23).  Four upstream doubles, one llama.cpp, one
# Ollama, one vLLM and one that is none of them (each with one model);
# depotd (prefork 2) started with and without `discover' on them.
# Machine-independent: the upstream requests discovery makes per start
# and per reload (from the doubles' logs), all frontends together.
# Wall clock beside them: the time from exec to /healthz with and
# without, and from exec (or `depotctl reload') until every frontend
# has logged the end of discovery for every upstream.
# BENCH_DISCOVER_PORT (20180) and the next four ports.

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"
w=$top/build/bench-discover
port=${BENCH_DISCOVER_PORT:-20180}
rm -rf "$w"; mkdir -p "$w"
pids=
cleanup() {
	local p
	depot_stop
	for p in $pids; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	pg_stop "$w/pg"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE

make -s -C "$top" build/depotd build/depotctl >&2 || exit 1
i=1
for mode in '{"kind": "llama.cpp"}' '{"kind": "ollama"}' \
    '{"kind": "vllm"}' '{}'; do
	python3 "$top/regress/upstream/double.py" --port $((port + i)) \
	    >"$w/d$i.out" 2>&1 &
	pids="$pids $!"
	while ! grep -q '^listening' "$w/d$i.out" 2>/dev/null; do
		sleep 0.1
	done
	curl -fsS -X POST --data-binary "{\"server\": $mode}" \
	    "http://127.0.0.1:$((port + i))/__config"
	i=$((i + 1))
done
depot_user
pg_start "$w/pg" >/dev/null || { echo "postgres did not start"; exit 1; }

ms() { echo "($(date +%s%N) - $1) / 1000000" | bc; }
upreqs() {	# the doubles' logged requests, all four
	local i n=0
	for i in 1 2 3 4; do
		n=$((n + $(curl -fsS "http://127.0.0.1:$((port + i))/__log" |
		    python3 -c 'import json,sys; print(len(json.load(sys.stdin)["requests"]))')))
	done
	echo $n
}
reset_all() {
	local i
	for i in 1 2 3 4; do
		curl -fsS -X POST "http://127.0.0.1:$((port + i))/__reset"
	done
}
ended() {	# count of discovery lines >= $1
	[ "$(grep -c 'discovery: upstream' "$w/depotd.log")" -ge "$1" ]
}
wait_ended() {
	local i=0
	while ! ended "$1" && [ $i -lt 500 ]; do
		sleep 0.01
		i=$((i + 1))
	done
}

run() {	# "discover" or ""
	local conf="" i t0
	for i in 1 2 3 4; do
		conf="$conf
upstream \"u$i\" { url \"http://127.0.0.1:$((port + i))/v1\" api openai
	api-key \"test-upstream-key\" $1 }
model \"m$i\" upstream \"u$i\" { remote-name \"gpt-test\" }"
	done
	rm -f "$w/depotd.log"
	depot_conf "$w" "$port" "$conf"
	reset_all
	t0=$(date +%s%N)
	depot_start "$w" || { echo "depotd did not start"; exit 1; }
	up=$(ms "$t0")
	[ -n "$1" ] && wait_ended 8
	done_start=$(ms "$t0")
	start_reqs=$(upreqs)
	reset_all
	before=$(grep -c 'discovery: upstream' "$w/depotd.log")
	t0=$(date +%s%N)
	depotctl_ reload >/dev/null
	[ -n "$1" ] && wait_ended $((before + 8))
	done_reload=$(ms "$t0")
	reload_reqs=$(upreqs)
	depot_stop
}

run ""
echo "without discover: $start_reqs upstream requests at start," \
    "$reload_reqs at reload; /healthz after $up ms, reload acked after" \
    "$done_reload ms"
run discover
echo "with discover (4 upstreams: llama.cpp, ollama, vllm, none;" \
    "prefork 2): $start_reqs upstream requests at start, $reload_reqs" \
    "at reload; /healthz after $up ms, discovery done after" \
    "$done_start ms from exec, $done_reload ms from reload"
