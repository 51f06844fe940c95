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

# regress/bench/files.sh: the Files API on the local store against nginx
# and PostgreSQL on this machine, in one run.
#  1. download of a 1 GiB file vs nginx sendfile of the same file
#  2. upload of a 1 GiB file vs nginx WebDAV PUT of the same bytes
#     (each with the page faults, brk+mmap calls and system calls per
#     MiB of depotd's frontends and of nginx's workers)
#  3. GET /v1/files/{id} per second at 64 connections (wrk) vs
#     pgbench -S at 64 clients on the same PostgreSQL
#  4. list latency, page 1 vs page 500 of one user's 100,000 files

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"
. "$top/regress/bench/lib.sh"
w=$top/build/bench-files
SIZE_MB=${BENCH_SIZE_MB:-1024}
rm -rf "$w"; mkdir -p "$w/nginx/dav" "$w/nginx/tmp"
chmod 755 "$w"
cleanup() {
	depot_stop
	[ -f "$w/nginx/nginx.pid" ] && kill "$(cat "$w/nginx/nginx.pid")"
	pg_stop "$w/pg"
}
trap cleanup EXIT INT TERM

pg_start "$w/pg" || exit 1
depot_user
DEPOT_MAX_SIZE=2G depot_conf "$w" 27431 'http { max-connections 4096 }'
depot_start "$w" || exit 1
key=$(depot_key bench default)
AUTH="Authorization: Bearer $key"

head -c $((SIZE_MB * 1048576)) /dev/urandom >"$w/nginx/blob"
cat >"$w/nginx/nginx.conf" <<CONF
daemon on; worker_processes 2; pid $w/nginx/nginx.pid;
error_log $w/nginx/error.log;
events { worker_connections 1024; }
http {
	access_log off; sendfile on; client_max_body_size 4g;
	client_body_temp_path $w/nginx/tmp;
	server {
		listen 127.0.0.1:27432;
		location / { root $w/nginx; }
		location /dav/ { root $w/nginx; dav_methods PUT; }
	}
}
CONF
chown -R www-data "$w/nginx"
nginx -c "$w/nginx/nginx.conf" || exit 1

# The frontends' pids, comma-separated, as perf -p takes them.
frontends() {
	ps -o pid=,args= --ppid "$DEPOT_PID" |
	    awk '/: frontend [0-9]/ { printf "%s%s", s, $1; s = "," }'
}

nginx_workers() {
	ps -o pid=,args= --ppid "$(cat "$w/nginx/nginx.pid")" |
	    awk '/nginx: worker/ { printf "%s%s", s, $1; s = "," }'
}

# Runs a command while perf counts, in the processes PIDS, the page
# faults, brk and mmap calls and all system calls; prints the seconds
# the command took, the figures are left in OUT.  These hold on any
# machine where the seconds do not.
counted() {	# pids out command...
	local pids=$1 out=$2 perfpid
	shift 2
	perf stat -x, -o "$out" -e page-faults,syscalls:sys_enter_brk \
	    -e syscalls:sys_enter_mmap,raw_syscalls:sys_enter -p "$pids" &
	perfpid=$!
	sleep 0.5
	elapsed "$@"
	kill -INT "$perfpid"
	wait "$perfpid"
}

# "faults/MiB F brk+mmap/MiB B syscalls/MiB S" from a counted() file.
per_mib() {	# out
	awk -F, -v mb="$SIZE_MB" '
	    $3 == "page-faults" { f = $1 }
	    $3 ~ /sys_enter_(brk|mmap)$/ { b += $1 }
	    $3 == "raw_syscalls:sys_enter" { s = $1 }
	    END { printf "faults/MiB %.2f brk+mmap/MiB %.3f syscalls/MiB %.1f",
		f / mb, b / mb, s / mb }' "$1"
}

# Within one: nginx's faults per MiB plus one.
faults_ok() {	# depotd-out nginx-out
	local a b
	a=$(per_mib "$1" | awk '{ print $2 }')
	b=$(per_mib "$2" | awk '{ print $2 }')
	echo "$a <= $b + 1" | bc -l | sed 's/1/met/; s/0/MISSED/'
}

echo "-- 1. download ${SIZE_MB} MiB"
id=$(curl -s -H "$AUTH" -F purpose=bench -F file=@"$w/nginx/blob" \
    "$DEPOT_URL/v1/files" | sed -n 's/.*"id":"\(file-[0-9a-f]*\)".*/\1/p')
[ -n "$id" ] || { echo "upload for the download bench failed"; exit 1; }
ref=$(counted "$(nginx_workers)" "$w/dl.nginx" \
    curl -s -o /dev/null http://127.0.0.1:27432/blob)
got=$(counted "$(frontends)" "$w/dl.depotd" \
    curl -s -o /dev/null -H "$AUTH" "$DEPOT_URL/v1/files/$id/content")
echo "nginx ${ref}s depotd ${got}s ratio $(ratio "$ref" "$got") (target >= 1.0)"
echo "  nginx worker: $(per_mib "$w/dl.nginx")"
echo "  frontend:     $(per_mib "$w/dl.depotd")"

echo "-- 2. upload ${SIZE_MB} MiB"
ref=$(counted "$(nginx_workers)" "$w/up.nginx" \
    curl -s -T "$w/nginx/blob" http://127.0.0.1:27432/dav/up)
got=$(counted "$(frontends)" "$w/up.depotd" \
    curl -s -H "$AUTH" -F purpose=bench -F file=@"$w/nginx/blob" \
    "$DEPOT_URL/v1/files")
echo "nginx ${ref}s depotd ${got}s ratio $(ratio "$ref" "$got") (target >= 1.0)"
echo "  nginx worker: $(per_mib "$w/up.nginx")"
echo "  frontend:     $(per_mib "$w/up.depotd")"
echo "  faults/MiB <= nginx's + 1: $(faults_ok "$w/up.depotd" "$w/up.nginx");" \
    "brk+mmap/MiB target 0 in steady state"
echo "peak RSS of each depotd process during 1 and 2 (target <= 32 MiB):"
depot_peaks

echo "-- 3. GET /v1/files/{id} at 64 connections"
dbrps=$(runuser -u postgres -- sh -c "$PG_BIN/pgbench -h '$PGHOST' -p $PGPORT \
    -i -q -s 10 depot >/dev/null 2>&1 && $PG_BIN/pgbench -h '$PGHOST' \
    -p $PGPORT -S -c 64 -j 2 -T 10 depot 2>/dev/null" |
    sed -n 's/^tps = \([0-9.]*\).*/\1/p')
# Per request, beside the ratio: the database's transactions (pgbench
# -S does one) and the storage helper's system calls.  The server
# flushes its counters lazily: read them once they stop moving.
xacts() {
	local a b n=0
	a=$(psql -X -At -d depot -c "select xact_commit + xact_rollback \
	    from pg_stat_database where datname = 'depot'")
	while [ $n -lt 12 ]; do
		sleep 1
		b=$(psql -X -At -d depot -c "select xact_commit + \
		    xact_rollback from pg_stat_database where datname = 'depot'")
		[ "$a" = "$b" ] && break
		a=$b
		n=$((n + 1))
	done
	echo "$b"
}
curl -s -o /dev/null -H "$AUTH" "$DEPOT_URL/v1/files/$id"
x0=$(xacts)
perf stat -e raw_syscalls:sys_enter -p "$(depot_child storage)" \
    -o "$w/perf3" -- sleep 10 2>/dev/null &
perf3=$!
wrk -t 2 -c 64 -d 10s -H "$AUTH" "$DEPOT_URL/v1/files/$id" >"$w/wrk3"
wait $perf3
x1=$(xacts)
rps=$(sed -n 's/^Requests\/sec: *\([0-9.]*\)/\1/p' "$w/wrk3")
n=$(sed -n 's/^ *\([0-9]*\) requests in.*/\1/p' "$w/wrk3")
sc=$(awk '/raw_syscalls/ { gsub(",", "", $1); print $1 }' "$w/perf3")
echo "pgbench -S ${dbrps} tps depotd ${rps} req/s ratio $(ratio "$rps" "$dbrps") (target >= 1.5)"
echo "per request: $(echo "scale=3; ($x1 - $x0) / $n" | bc -l) database" \
    "transactions (pgbench -S: 1), $(echo "scale=2; ${sc:-0} / $n" |
    bc -l) storage helper system calls, over $n requests"

echo "-- 4. list latency, 100,000 files"
uid=$(psql -X -At -d depot -c "select user_id || ' ' || workspace_id from \
    files where id = '$id'")
set -- $uid
psql -X -q -d depot -c "insert into files (id, user_id, workspace_id, \
    filename, mime_type, purpose, source, storage_ref, state, bytes, \
    created_at) select 'file-' || md5(g::text), '$1', '$2', 'f' || g, \
    'text/plain', 'bench', 'upload', 'xx/none', 'ready', 1, \
    now() - g * interval '1 ms' from generate_series(1, 100000) g; analyze files"
cursor=$(psql -X -At -d depot -c "select id from files where user_id = '$1' \
    order by created_at desc, id desc offset 9979 limit 1")
for page in 1 500; do
	q="limit=20"
	[ "$page" -eq 500 ] && q="limit=20&after=$cursor"
	for i in $(seq 200); do
		curl -s -o /dev/null -w '%{time_total}\n' -H "$AUTH" \
		    "$DEPOT_URL/v1/files?$q"
	done | percentiles >"$w/page$page"
	echo "page $page: $(cat "$w/page$page")"
done
p1=$(awk '{print $2}' "$w/page1")
p500=$(awk '{print $2}' "$w/page500")
echo "page 500 / page 1 p50 ratio $(ratio "$p500" "$p1") (target <= 1.5)"
