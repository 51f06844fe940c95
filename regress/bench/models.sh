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
N=${N:-300}
FILE_MB=${BENCH_FILE_MB:-100}
rm -rf "$w"; mkdir -p "$w"
chmod 755 "$w"
pids=
cleanup() {
	depot_stop
	for p in $pids; do kill "$p" 2>/dev/null; done
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
