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

# regress/bench/models.sh: the model routes' cost, in one run.
#  1. added latency of a plain chat round trip: p50/p99 through depotd
#     minus p50/p99 straight to the upstream double (target: < 1 ms)
#  2. the same for the time to the first streamed byte
#  3. a 100 MB file inlined natively (a chat "file" part): the upstream
#     request's throughput against `base64` of the same file, and how
#     far each frontend's resident set grows (target: < 8 MiB)
#  4. the hostile bodies of regress/hostile/bodies.sh (16 to 30 MiB of
#     the smallest values): the status and each frontend's peak RSS
#  5. what one file reference adds to a round trip: a chat naming a
#     1 KB text file by id, less the same chat without it (both to the
#     sink), and the storage helper's selects per request
#  6. against nginx: a fixed chat completion (nginx `return 200`) fetched
#     straight, through nginx `proxy_pass` (2 workers, upstream
#     keep-alive) and through depotd (prefork 2), driven by wrk with a
#     Lua POST body: added p50 at 1 connection (target depotd <= 1.5x
#     nginx's), req/s and p99 at 64 (targets >= 0.8x, <= 2x), system
#     calls per round trip of the frontends and storage helper beside
#     nginx's workers' (target <= 14), the time to the first streamed
#     byte added (an SSE answer; target <= 50 us p50), the upstream
#     connections opened, and the frontends' resident set after
#     BENCH_TRIPS (default 1000000) round trips (target <= 16 MiB).
#     BENCH_MODELS_ONLY=nginx runs this section alone; BENCH_PROFILE=DIR
#     records the frontends' profile at 64 connections (perf) in DIR.
# The upstream of 1 and 2 is regress/upstream/double.py; that of 3 a
# sink that reads the body and answers a fixed completion, so that the
# figure is depotd's and not the double's JSON parser.
# N (default 300) round trips per figure; BENCH_FILE_MB (default 100).

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"
. "$top/regress/bench/lib.sh"
w=$top/build/bench-models
port=${BENCH_MODELS_PORT:-18560}
dport=$((port + 1))
sport=$((port + 2))
nfixed=$((port + 3))	# nginx: the fixed completion
nproxy=$((port + 4))	# nginx: proxy_pass to it
nsse=$((port + 5))	# nginx: a fixed SSE answer
TRIPS=${BENCH_TRIPS:-1000000}
WRK_SECS=${BENCH_WRK_SECS:-4}
N=${N:-300}
FILE_MB=${BENCH_FILE_MB:-100}
rm -rf "$w"; mkdir -p "$w"
chmod 755 "$w"
pids=
cleanup() {
	depot_stop
	for p in $pids; do kill "$p" 2>/dev/null; done
	for n in upstream proxy; do
		[ -s "$w/$n/nginx.pid" ] && kill "$(cat "$w/$n/nginx.pid")"
	done
	pg_stop "$w/pg"
}
trap cleanup EXIT INT TERM

# The sink: HTTP/1.1 keep-alive, any body read and dropped.
cat >"$w/sink.py" <<'PY'
import json, socketserver, sys
ANSWER = json.dumps({"id": "chatcmpl-sink", "object": "chat.completion",
    "created": 0, "model": "sink", "choices": [{"index": 0, "message":
    {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1,
    "total_tokens": 2}}).encode()
class H(socketserver.StreamRequestHandler):
    def handle(self):
        while True:
            n, line = 0, self.rfile.readline()
            if not line:
                return
            while line not in (b"\r\n", b"\n", b""):
                k, _, v = line.partition(b":")
                if k.strip().lower() == b"content-length":
                    n = int(v)
                line = self.rfile.readline()
            buf = bytearray(1 << 20)
            while n > 0:
                got = self.rfile.readinto(memoryview(buf)[:min(n, len(buf))])
                if not got:
                    return
                n -= got
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: "
                b"application/json\r\nContent-Length: %d\r\n\r\n"
                % len(ANSWER) + ANSWER)
class S(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True
S(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY

# Round trips on one keep-alive connection: seconds to the whole answer
# (plain) or to the first byte of the body (stream), one a line.
cat >"$w/rt.py" <<'PY'
import http.client, json, sys, time
port, key, model, stream, n = sys.argv[1], sys.argv[2], sys.argv[3], \
    sys.argv[4] == "1", int(sys.argv[5])
body = json.dumps({"model": model, "stream": stream, "messages":
    [{"role": "user", "content": "say something short"}]})
if len(sys.argv) > 6:	# a body of its own
    body = open(sys.argv[6]).read()
hdr = {"Content-Type": "application/json", "Authorization": "Bearer " + key}
c = http.client.HTTPConnection("127.0.0.1", int(port))
for i in range(n + 10):
    t0 = time.perf_counter()
    c.request("POST", "/v1/chat/completions", body, hdr)
    r = c.getresponse()
    if r.status != 200:
        sys.exit("status %d: %s" % (r.status, r.read()[:200]))
    if stream:
        r.read1(1)
    else:
        r.read()
    t = time.perf_counter() - t0
    if stream:
        r.read()
    if i >= 10:	# warm-up rounds not counted
        print("%.6f" % t)
PY

pg_start "$w/pg" || exit 1
depot_user
python3 "${DOUBLE:-$top/regress/upstream/double.py}" --port "$dport" \
    >"$w/double.out" &
pids="$pids $!"
python3 "$w/sink.py" "$sport" &
pids="$pids $!"
for i in $(seq 50); do
	grep -q listening "$w/double.out" 2>/dev/null && break
	sleep 0.1
done
grep -q listening "$w/double.out" ||
    { echo "the double did not start"; exit 1; }
DEPOT_MAX_SIZE=$((FILE_MB + 16))M depot_conf "$w" "$port" "
upstream \"double\" { url \"http://127.0.0.1:$dport/v1\" api openai
	api-key \"test-upstream-key\" }
upstream \"sink\" { url \"http://127.0.0.1:$sport/v1\" api openai
	api-key \"k\" }
model \"bench\" upstream \"double\" { remote-name \"gpt-bench\" }
model \"bench-sink\" upstream \"sink\"
upstream \"fixed\" { url \"http://127.0.0.1:$nfixed/v1\" api openai
	api-key \"k\" }
upstream \"sse\" { url \"http://127.0.0.1:$nsse/v1\" api openai
	api-key \"k\" }
model \"bench-fixed\" upstream \"fixed\" { remote-name \"gpt-bench\" }
model \"bench-sse\" upstream \"sse\" { remote-name \"gpt-bench\" }
"
depot_start "$w" || exit 1
key=$(depot_key bench default)

rt() {	# port key model stream name [body-file]
	python3 "$w/rt.py" "$1" "$2" "$3" "$4" "$N" ${6:+"$6"} >"$w/$5" ||
	    { echo "round trips to port $1 failed"; exit 1; }
}
# p50 and p99 in ms of a file of seconds
pcts() {
	sort -n "$1" | awk '{ v[NR] = $1 } END {
	    i50 = int(NR * 0.50); if (i50 < 1) i50 = 1
	    i99 = int(NR * 0.99); if (i99 < 1) i99 = 1
	    printf "%.3f %.3f", v[i50] * 1000, v[i99] * 1000 }'
}
added() {	# title direct-file depotd-file
	set -- "$1" $(pcts "$w/$2") $(pcts "$w/$3")
	echo "$1: direct p50 $2 ms p99 $3 ms; depotd p50 $4 ms p99 $5 ms;" \
	    "added p50 $(echo "$4 - $2" | bc -l) ms p99" \
	    "$(echo "$5 - $3" | bc -l) ms (target p50 < 1 ms)"
}

# Section 6: nginx as the reference.  Two nginx, so that the proxy's
# workers count their own system calls only: the upstream (a fixed
# chat.completion and a fixed SSE answer) and the proxy.
COMPLETION='{"id":"chatcmpl-fixed","object":"chat.completion","created":1700000000,"model":"gpt-bench","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}'
CHUNK='{"id":"chatcmpl-fixed","object":"chat.completion.chunk","created":1700000000,"model":"gpt-bench","choices":[{"index":0,"delta":{"role":"assistant","content":"ok"},"finish_reason":null}]}'
nginx_start() {	# name server-blocks
	mkdir -p "$w/$1"
	cat >"$w/$1/nginx.conf" <<NG
worker_processes 2;
pid $w/$1/nginx.pid;
error_log $w/$1/error.log;
events { worker_connections 4096; }
http {
	access_log off;
	keepalive_requests 10000000;
	$2
}
NG
	nginx -e "$w/$1/error.log" -p "$w/$1" -c "$w/$1/nginx.conf" ||
	    { echo "nginx $1 did not start"; exit 1; }
}
nginx_workers() {	# name: the workers' pids, comma separated
	pgrep -P "$(cat "$w/$1/nginx.pid")" | paste -sd, -
}
wrk_lua() {	# file key model [stream]
	cat >"$1" <<LUA
wrk.method = "POST"
wrk.body = '{"model":"$3","stream":${4:-false},"messages":[{"role":"user","content":"say something short"}]}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $2"
LUA
}
wrk_run() {	# connections seconds lua port out
	wrk -t"$(($1 < 2 ? 1 : 2))" -c"$1" -d"$2"s --latency -s "$3" \
	    "http://127.0.0.1:$4/v1/chat/completions" >"$5" ||
	    { echo "wrk to port $4 failed"; exit 1; }
	grep -q "Non-2xx" "$5" && { echo "wrk to port $4: errors"; cat "$5"
	    exit 1; }
	return 0
}
upstream_conns() {	# nginx's accepted connections so far, on nfixed
	curl -s "http://127.0.0.1:$nfixed/status" |
	    awk 'NR == 3 { print $1 }'
}
nginx_reference() {
	local fes st n0 n1 s0 s1 c0 c1 d0 d1 u0 u1 a b c r
	nginx_start upstream "
	server { listen 127.0.0.1:$nfixed;
		location = /status { stub_status; }
		location / { default_type application/json;
			return 200 '$COMPLETION'; } }
	server { listen 127.0.0.1:$nsse;
		location / { default_type text/event-stream;
			return 200 'data: $CHUNK\n\ndata: [DONE]\n\n'; } }"
	nginx_start proxy "
	upstream fixed { server 127.0.0.1:$nfixed; keepalive 64; }
	server { listen 127.0.0.1:$nproxy;
		location / { proxy_pass http://fixed; proxy_http_version 1.1;
			proxy_set_header Connection \"\"; } }"
	sleep 0.3
	wrk_lua "$w/direct.lua" k gpt-bench
	wrk_lua "$w/depotd.lua" "$key" bench-fixed
	wrk_lua "$w/sse.lua" "$key" bench-sse true
	fes=$(for t in 0 1 2 3 4 5 6 7; do depot_child "frontend $t"; done)
	st=$(depot_child storage)

	echo "-- 6a. against nginx proxy_pass: 1 connection, ${WRK_SECS} s each"
	wrk_run 1 1 "$w/depotd.lua" "$port" "$w/warm"	# curl's pool
	wrk_run 1 "$WRK_SECS" "$w/direct.lua" "$nfixed" "$w/w1.direct"
	wrk_run 1 "$WRK_SECS" "$w/direct.lua" "$nproxy" "$w/w1.nginx"
	wrk_run 1 "$WRK_SECS" "$w/depotd.lua" "$port" "$w/w1.depotd"
	a=$(wrk_pct_us "$w/w1.direct" 50%)
	b=$(wrk_pct_us "$w/w1.nginx" 50%)
	c=$(wrk_pct_us "$w/w1.depotd" 50%)
	echo "p50: straight ${a} us, through nginx ${b} us, through depotd" \
	    "${c} us; added: nginx $((b - a)) us, depotd $((c - a)) us;" \
	    "ratio $(echo "scale=2; ($c - $a) / ($b - $a)" | bc -l)" \
	    "(target <= 1.5)"

	echo "-- 6b. 64 connections, ${WRK_SECS} s each"
	wrk_run 64 "$WRK_SECS" "$w/direct.lua" "$nproxy" "$w/w64.nginx"
	wrk_run 64 "$WRK_SECS" "$w/depotd.lua" "$port" "$w/w64.depotd"
	a=$(wrk_rate "$w/w64.nginx"); b=$(wrk_rate "$w/w64.depotd")
	echo "req/s: nginx $a, depotd $b; ratio $(ratio "$b" "$a")" \
	    "(target >= 0.8)"
	a=$(wrk_pct_us "$w/w64.nginx" 99%); b=$(wrk_pct_us "$w/w64.depotd" 99%)
	echo "p99: nginx ${a} us, depotd ${b} us; ratio $(ratio "$b" "$a")" \
	    "(target <= 2)"

	echo "-- 6c. system calls per round trip (perf, 64 connections)"
	s0=$(syscalls_during "$(nginx_workers proxy)" \
	    wrk_run 64 "$WRK_SECS" "$w/direct.lua" "$nproxy" "$w/w64s.nginx")
	u0=$(upstream_conns)
	s1=$(syscalls_during "$(echo $fes $st | tr ' ' ,)" \
	    wrk_run 64 "$WRK_SECS" "$w/depotd.lua" "$port" "$w/w64s.depotd")
	u1=$(upstream_conns)
	a=$(wrk_requests "$w/w64s.nginx"); b=$(wrk_requests "$w/w64s.depotd")
	echo "nginx's workers $(echo "scale=1; ${s0% *} / $a" | bc -l)," \
	    "depotd's frontends and storage helper" \
	    "$(echo "scale=1; ${s1% *} / $b" | bc -l) (target <= 14)"
	# CPU time, not wall time: what each round trip costs the server's
	# processes, whatever else the machine is doing.
	c0=$(echo "scale=1; ${s0#* } * 1000 / $a" | bc -l)
	c1=$(echo "scale=1; ${s1#* } * 1000 / $b" | bc -l)
	echo "CPU per round trip: nginx's workers ${c0} us, depotd's" \
	    "${c1} us; ratio $(ratio "$c1" "$c0")"
	echo "upstream connections opened by depotd: $((u1 - u0 - 1)) over" \
	    "$b requests (prefork x connections: $((2 * 64)) at most)"

	if [ -n "${BENCH_PROFILE:-}" ]; then
		profile_during "$BENCH_PROFILE" "$(echo $fes | tr ' ' ,)" \
		    wrk_run 64 "$WRK_SECS" "$w/depotd.lua" "$port" \
		    "$w/w64p.depotd"
		echo "frontends' profile at 64 connections:" \
		    "$BENCH_PROFILE/profile.txt"
		head -30 "$BENCH_PROFILE/profile.txt"
	fi

	echo "-- 6d. time to the first streamed byte, $N requests"
	for i in $(seq "$N"); do
		echo "url = \"http://127.0.0.1:$nsse/v1/chat/completions\""
		echo 'output = "/dev/null"'
	done >"$w/sse.direct.curl"
	sed "s/:$nsse/:$port/" "$w/sse.direct.curl" >"$w/sse.depotd.curl"
	for t in direct depotd; do
		curl -s -K "$w/sse.$t.curl" -w \
		    '%{http_code} %{time_starttransfer}\n' \
		    -H "Authorization: Bearer $key" \
		    -H "Content-Type: application/json" -d \
		    '{"model":"bench-sse","stream":true,"messages":[{"role":"user","content":"hi"}]}' \
		    >"$w/sse.$t" || { echo "curl $t failed"; exit 1; }
		grep -qv '^200 ' "$w/sse.$t" &&
		    { echo "streaming $t: not 200"; exit 1; }
		awk '{ print $2 }' "$w/sse.$t" >"$w/sse.$t.s"
	done
	a=$(pcts "$w/sse.direct.s" | awk '{ printf "%.0f", $1 * 1000 }')
	b=$(pcts "$w/sse.depotd.s" | awk '{ printf "%.0f", $1 * 1000 }')
	echo "first byte p50: straight ${a} us, through depotd ${b} us;" \
	    "added $((b - a)) us (target <= 50 us)"

	a=$(wrk_rate "$w/w64.depotd")
	r=$((TRIPS / (a > 0 ? a : 1) + 1))
	echo "-- 6e. frontends' resident set over $TRIPS round trips" \
	    "(64 connections, ${r} s)"
	n0=$(rss_max $fes)
	d0=0	# runs until TRIPS are done: the rate may fall under load
	while [ "$d0" -lt "$TRIPS" ]; do
		wrk_run 64 "$r" "$w/depotd.lua" "$port" "$w/w64.rss"
		d1=$(wrk_requests "$w/w64.rss")
		[ "$d1" -gt 0 ] || { echo "no round trips"; exit 1; }
		d0=$((d0 + d1))
		r=$(((TRIPS - d0) / (d1 / r + 1) + 1))
	done
	n1=$(rss_max $fes)
	echo "$d0 round trips: largest frontend" \
	    "VmRSS before $((n0 / 1024)) MiB, after $((n1 / 1024)) MiB" \
	    "(growth $((n1 - n0)) KiB; target <= 16 MiB, no growth)"
}
if [ "${BENCH_MODELS_ONLY:-}" = nginx ]; then
	nginx_reference
	exit 0
fi

echo "-- 1. plain round trip, $N requests"
rt "$dport" test-upstream-key gpt-bench 0 direct.plain
rt "$port" "$key" bench 0 depotd.plain
added "round trip" direct.plain depotd.plain

echo "-- 2. time to first token, $N requests"
rt "$dport" test-upstream-key gpt-bench 1 direct.ttft
rt "$port" "$key" bench 1 depotd.ttft
added "first token" direct.ttft depotd.ttft

echo "-- 3. a ${FILE_MB} MB file inlined natively"
head -c $((FILE_MB * 1000000)) /dev/urandom >"$w/blob.pdf"
id=$(curl -s -H "Authorization: Bearer $key" -F purpose=user_data \
    -F "file=@$w/blob.pdf;type=application/pdf" "$DEPOT_URL/v1/files" |
    sed -n 's/.*"id":"\(file-[0-9a-f]*\)".*/\1/p')
[ -n "$id" ] || { echo "the upload failed"; exit 1; }
printf '{"model":"bench-sink","messages":[{"role":"user","content":[%s,%s]}]}' \
    '{"type":"text","text":"summarise"}' \
    "{\"type\":\"file\",\"file\":{\"file_id\":\"$id\"}}" >"$w/req.json"
fes=$(for t in 0 1 2 3 4 5 6 7; do depot_child "frontend $t"; done)
for p in $fes; do
	echo 5 >/proc/$p/clear_refs	# VmHWM from here
	echo "$p $(awk '/VmRSS/ {print $2}' /proc/$p/status)"
done >"$w/rss.before"
ref=$(elapsed sh -c "base64 -w0 '$w/blob.pdf' >/dev/null")
t0=$(date +%s.%N)
code=$(curl -s -o "$w/inline.out" -w '%{http_code}' \
    -H "Authorization: Bearer $key" -H "Content-Type: application/json" \
    --data-binary @"$w/req.json" "$DEPOT_URL/v1/chat/completions")
got=$(echo "$(date +%s.%N) - $t0" | bc -l)
[ "$code" = 200 ] || { echo "inlining answered $code: $(head -c 300 \
    "$w/inline.out")"; exit 1; }
echo "base64 ${ref}s ($(echo "$FILE_MB / $ref" | bc) MB/s) depotd ${got}s" \
    "($(echo "$FILE_MB / $got" | bc) MB/s) ratio $(ratio "$ref" "$got")"
growth=0
while read -r p before; do
	peak=$(awk '/VmHWM/ {print $2}' /proc/$p/status)
	[ $((peak - before)) -gt "$growth" ] && growth=$((peak - before))
done <"$w/rss.before"
echo "frontend peak RSS growth ${growth} KiB" \
    "($(echo "scale=2; $growth / 1024" | bc) MiB; target < 8 MiB)"

echo "-- 4. hostile bodies (regress/hostile): each frontend's peak RSS"
. "$top/regress/hostile/lib.sh"
for c in "chat-arrays arrays 5592405" "chat-strings strings 7864320" \
    "chat-objects objects 5592405" "chat-keys keys 2621440"; do
	set -- $c
	hostile_body "$w/$1" "$2" "$3"
	for p in $fes; do echo 5 >/proc/$p/clear_refs; done
	code=$(curl -s -o /dev/null -w '%{http_code}' \
	    -H "Authorization: Bearer $key" \
	    -H "Content-Type: application/json" \
	    --data-binary @"$w/$1" "$DEPOT_URL/v1/chat/completions")
	peak=0
	for p in $fes; do
		v=$(awk '/VmHWM/ {print $2}' /proc/$p/status)
		[ "$v" -gt "$peak" ] && peak=$v
	done
	echo "$2 ($(($(stat -c %s "$w/$1") / 1048576)) MiB body): $code," \
	    "peak RSS $((peak / 1024)) MiB (bound 256 MiB)"
	rm -f "$w/$1"
done

echo "-- 5. one file reference, $N requests (to the sink)"
head -c 1000 /dev/urandom | base64 -w 76 | head -c 1024 >"$w/small.txt"
sid=$(curl -s -H "Authorization: Bearer $key" -F purpose=user_data \
    -F "file=@$w/small.txt;type=text/plain" "$DEPOT_URL/v1/files" |
    sed -n 's/.*"id":"\(file-[0-9a-f]*\)".*/\1/p')
[ -n "$sid" ] || { echo "the small upload failed"; exit 1; }
printf '{"model":"bench-sink","messages":[{"role":"user","content":[%s]}]}' \
    '{"type":"text","text":"say something short"}' >"$w/plain.json"
printf '{"model":"bench-sink","messages":[{"role":"user","content":[%s,%s]}]}' \
    '{"type":"text","text":"say something short"}' \
    "{\"type\":\"file\",\"file\":{\"file_id\":\"$sid\"}}" >"$w/ref.json"
# Reads of the files table: each select of a file by id is one scan.
file_scans() {
	sleep 11	# an idle backend flushes its statistics within 10 s
	"$PG_BIN/psql" -X -q -d depot -Atc "select coalesce(idx_scan, 0) +
	    coalesce(seq_scan, 0) from pg_stat_user_tables
	    where relname = 'files'"
}
rt "$port" "$key" bench-sink 0 depotd.plain5 "$w/plain.json"
s0=$(file_scans)
rt "$port" "$key" bench-sink 0 depotd.ref5 "$w/ref.json"
s1=$(file_scans)
set -- $(pcts "$w/depotd.plain5") $(pcts "$w/depotd.ref5")
echo "file reference: without p50 $1 ms p99 $2 ms; with p50 $3 ms" \
    "p99 $4 ms; added p50 $(echo "$3 - $1" | bc -l) ms;" \
    "files-table scans per request" \
    "$(echo "scale=2; ($s1 - $s0) / ($N + 10)" | bc -l)"

nginx_reference
