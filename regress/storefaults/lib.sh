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

# regress/storefaults/lib.sh: helpers of the store fault suite.  Sourced
# after pg.sh, depotd.sh, ceph.sh and sshd.sh.  Needs D (work directory).

status=0
ok() { echo "ok - $*"; }
nok() { echo "not ok - $*"; status=1; }
check() {	# label command...
	_l=$1
	shift
	if "$@"; then ok "$_l"; else nok "$_l"; fi
}

psql_() {	# database sql
	"$PG_BIN/psql" -X -Atq -d "$1" -c "$2"
}

# A database of its own per daemon, so that one daemon's sweep never
# touches another store's rows.
use_db() {	# name
	psql_ postgres "select 1 from pg_database where datname = '$1'" |
	    grep -q 1 || "$PG_BIN/createdb" "$1" || return 1
	DEPOT_DB=$1
	DEPOT_PG_CONNINFO="host=$PGHOST port=$PGPORT user=postgres dbname=$1"
	export DEPOT_PG_CONNINFO
}

# depot_start waits for a healthy daemon; a daemon with a broken store
# answers 503, so wait for any HTTP answer instead.
fault_start() {	# dir
	_d=$1
	DEPOT_SOCK=$_d/run/depotd.sock
	DEPOT_PORT=$(sed -n 's/^listen on .* port \([0-9]*\)$/\1/p' \
	    "$_d/depotd.conf" | head -1)
	DEPOT_URL=http://127.0.0.1:$DEPOT_PORT
	"$DEPOTD" -d -f "$_d/depotd.conf" >>"$_d/depotd.log" 2>&1 &
	DEPOT_PID=$!
	for _i in $(seq 100); do
		[ "$(curl -s -o /dev/null -w '%{http_code}' \
		    "$DEPOT_URL/healthz")" != 000 ] && return 0
		kill -0 "$DEPOT_PID" 2>/dev/null || break
		sleep 0.1
	done
	return 1
}

# The master and its children, sorted: compared before and after a fault.
depot_pids() {
	{ echo "$DEPOT_PID"; pgrep -P "$DEPOT_PID"; } | sort -n | tr '\n' ' '
}

# ceph.sh's s3_curl: a stopped radosgw must not hang the suite.
S3_CURL_MAX_TIME=30

# Listings that fail print "unlisted", which no count check accepts.
s3_keys() {	# bucket: number of objects
	_r=$(s3_curl "$DEPOT_S3_ENDPOINT/$1?list-type=2")
	case $_r in
	*ListBucketResult*) echo "$_r" | grep -o '<Key>' | wc -l ;;
	*)	echo unlisted ;;
	esac
}

# "?uploads" alone is signed differently by curl and by radosgw.
s3_uploads() {	# bucket: multipart uploads in progress
	_r=$(s3_curl "$DEPOT_S3_ENDPOINT/$1?uploads=")
	case $_r in
	*ListMultipartUploadsResult*)
		echo "$_r" | grep -o '<UploadId>' | wc -l ;;
	*)	echo unlisted ;;
	esac
}

rgw_port() {
	echo "${DEPOT_S3_ENDPOINT##*:}"
}

# Kill radosgw outright (a crash, or a pulled cable: no goodbye).
rgw_stop() {
	_p=$(cat "$D/ceph/rgw.pid")
	kill -9 "$_p" 2>/dev/null
	wait "$_p" 2>/dev/null
	rm -f "$D/ceph/rgw.pid"
}

rgw_start() {
	radosgw -n client.rgw.a -f >>"$D/ceph/log/stderr" 2>&1 &
	echo $! >"$D/ceph/rgw.pid"
	for _i in $(seq 300); do
		curl -s -o /dev/null "$DEPOT_S3_ENDPOINT/" && return 0
		sleep 0.2
	done
	return 1
}

sftp_files() {	# every file under the store root, temporaries included
	find "$DEPOT_SFTP_ROOT" -type f | wc -l
}

rows() {	# [where]
	psql_ "$DEPOT_DB" "select count(*) from files ${1:-}"
}

# Let the sweep see the abandoned uploads at once rather than after the
# writing-grace (60 seconds at least): age their rows, then sweep.
sweep_now() {
	psql_ "$DEPOT_DB" "update files set updated_at = now() - \
	    interval '1 hour' where state = 'writing'" >/dev/null
	depotctl_ sweep >"$D/sweep.out" 2>&1
}

file_id() {	# body file
	sed -n 's/.*"id": *"\(file-[0-9a-zA-Z]*\)".*/\1/p' "$1" | head -1
}

# Upload; prints "http-code curl-exit".  The body is left in $D/up.body.
upload() {	# file [curl args]
	_f=$1
	shift
	_c=$(curl -s -o "$D/up.body" -w '%{http_code}' --max-time 120 \
	    -H "$AUTH" -F purpose=user_data -F file=@"$_f" "$@" \
	    "$DEPOT_URL/v1/files")
	echo "$_c $?"
}

# Upload and download FILE; 0 if both work and the bytes come back.
round_trip() {	# file
	set -- "$1" $(upload "$1")
	case $2 in 200|201) ;; *) echo "# upload: $2 $3" \
	    "$(head -c 300 "$D/up.body")"; return 1 ;; esac
	_id=$(file_id "$D/up.body")
	[ -n "$_id" ] || return 1
	curl -sf --max-time 120 -o "$D/rt.out" -H "$AUTH" \
	    "$DEPOT_URL/v1/files/$_id/content" || {
		echo "# download of $_id failed"
		return 1
	}
	cmp -s "$1" "$D/rt.out"
}

# A clean failure for a caller: an error status with a JSON error body
# in the OpenAI dialect, or a connection cut; never a timeout (a hang)
# and never a success.
clean_failure() {	# http-code curl-exit
	[ "$2" -eq 28 ] && { echo "# timed out: a hang"; return 1; }
	case $1 in
	5??)	grep -q '"type": *"server_error"' "$D/up.body" || {
			echo "# error body: $(head -c 300 "$D/up.body")"
			return 1
		} ;;
	000)	case $2 in 18|52|55|56) ;; *) echo "# curl exit $2"
			return 1 ;; esac ;;
	*)	echo "# got $1 (curl exit $2): $(head -c 300 "$D/up.body")"
		return 1 ;;
	esac
}

healthz_up_within() {	# seconds
	for _i in $(seq $(($1 * 5))); do
		[ "$(curl -s -o /dev/null -w '%{http_code}' \
		    "$DEPOT_URL/healthz")" = 200 ] && return 0
		sleep 0.2
	done
	return 1
}
