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

# regress/storefaults/suite.sh: the whole daemon on the S3 store (a
# private radosgw) and the SFTP store (a private sshd) while the store
# fails under it:
#  - the server dies mid-upload and mid-download: the caller gets a
#    clean error (an error status, or a cut connection once the headers
#    went out), never a hang; no process dies; once the server is back
#    the daemon serves again, and a sweep leaves no 'writing' row, no
#    stray object or file and no multipart upload in progress;
#  - wrong S3 secret, wrong SFTP key, changed SSH host key: depotd
#    starts, says why without the secret, /healthz answers 503 with the
#    store down, uploads fail with a 5xx in the caller's dialect;
#  - radosgw behind a proxy answering 503 SlowDown: uploads still work.
# Runs in about three minutes; ports 18341-18346.

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
D=$top/build/regress-storefaults
SSHD_HARNESS_FILE=$top/regress/harness/sshd.sh
. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"
. "$top/regress/harness/ceph.sh"
. "$SSHD_HARNESS_FILE"
. "$top/regress/storefaults/lib.sh"

[ -f "$D/pg/pgdata/postmaster.pid" ] && pg_stop "$D/pg"
rm -rf "$D"
mkdir -p "$D/sshd"
PROXY_PID=

cleanup() {
	depot_stop
	[ -n "$PROXY_PID" ] && kill "$PROXY_PID" 2>/dev/null
	sshd_stop "$D/sshd"
	ceph_stop "$D/ceph"
	pg_stop "$D/pg"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE

make -s build/depotd build/depotctl >&2 || { nok "build"; exit 1; }
depot_user
pg_start "$D/pg" || { nok "postgres starts"; exit 1; }
if ! ceph_start "$D/ceph"; then
	nok "radosgw starts"
	tail -n 20 "$D/ceph/log/stderr" 2>/dev/null | sed 's/^/# /'
	exit 1
fi
sshd_start "$D/sshd" || { nok "sshd starts"; exit 1; }
chown _depotstore "$DEPOT_SFTP_IDENTITY" "$D/sshd/other_ed25519"
for b in faults slow; do
	[ "$(s3_curl -o /dev/null -w '%{http_code}' -X PUT \
	    "$DEPOT_S3_ENDPOINT/$b")" = 200 ] || { nok "bucket $b"; exit 1; }
done
ok "postgres, radosgw and sshd start"

head -c 1048576 /dev/urandom >"$D/small"
head -c $((12 * 1048576)) /dev/urandom >"$D/big12"
head -c $((30 * 1048576)) /dev/urandom >"$D/big30"
head -c $((48 * 1048576)) /dev/urandom >"$D/big48"
export DEPOT_SWEEP=0 DEPOT_GRACE=60s DEPOT_MAX_SIZE=64M
ADMIN=dpt-admin-storefaults-0123456789
export DEPOT_ADMIN_KEY=$ADMIN

s3_opts() {	# endpoint secret
	echo " { endpoint \"$1\" region \"us-east-1\" \
access-key \"$DEPOT_S3_ACCESS_KEY\" secret-key \"$2\" path-style part-size 5M }"
}

sftp_opts() {	# identity known-hosts
	echo " { identity \"$1\" known-hosts \"$2\" }"
}

daemon_up() {	# name port storage opts
	use_db "depot_$1" || return 1
	DEPOT_STORAGE=$3 DEPOT_STORAGE_OPTS=$4 depot_conf "$D/$1" "$2"
	depot_start "$D/$1" || return 1
	AUTH="Authorization: Bearer $(depot_key alice default)"
}

# The server dies 5 s into a slow upload (30 MiB at 3 MB/s, so a
# multipart upload with parts of 5 MiB is in progress).
fault_upload() {	# label stop-command [in-progress-command]
	: >"$D/up.body"
	curl -s -o "$D/up.body" -w '%{http_code}' --max-time 90 \
	    --limit-rate 3M -H "$AUTH" -F purpose=user_data \
	    -F file=@"$D/big30" "$DEPOT_URL/v1/files" >"$D/up.code" &
	cpid=$!
	sleep 5
	if [ -n "${3:-}" ]; then
		n=$($3)
		check "$1: the fault hits a multipart upload in progress ($n)" \
		    test "$n" -ge 1 2>/dev/null
	fi
	$2
	wait $cpid
	rc=$?
	code=$(cat "$D/up.code")
	check "$1: an upload cut by the server's death fails cleanly ($code, curl exit $rc)" \
	    clean_failure "$code" "$rc"
}

# The server dies during a slow download of 48 MiB: the caller must see
# the transfer cut (curl: partial file), not a short file that looks
# whole.
fault_download() {	# label stop-command
	set -- "$1" "$2" $(upload "$D/big48")
	id=$(file_id "$D/up.body")
	[ -n "$id" ] || { nok "$1: 48 MiB upload before the download fault"; return; }
	curl -s -o "$D/down.out" -w '%{http_code}' --max-time 90 \
	    --limit-rate 4M -H "$AUTH" "$DEPOT_URL/v1/files/$id/content" \
	    >"$D/down.code" &
	cpid=$!
	sleep 1
	$2
	wait $cpid
	rc=$?
	got=$(stat -c %s "$D/down.out" 2>/dev/null || echo 0)
	if [ $rc -eq 0 ] && cmp -s "$D/big48" "$D/down.out"; then
		ok "$1: download during the server's death (the whole file" \
		    "was already in flight)"
	elif [ "$(cat "$D/down.code")" = 200 ] && [ "$got" -lt $((48 * 1048576)) ] &&
	    { [ $rc -eq 18 ] || [ $rc -eq 56 ]; }; then
		ok "$1: a download cut by the server's death is cut for the" \
		    "caller too ($got bytes, curl exit $rc)"
	else
		nok "$1: download during the server's death: status" \
		    "$(cat "$D/down.code"), $got bytes, curl exit $rc"
	fi
}

after_fault() {	# label pids-before start-command stray-command
	check "$1: no depotd process died" test "$(depot_pids)" = "$2"
	# Down for longer than the store's own retries last, so that what
	# the failed transfer left behind is the sweep's to clean.
	sleep 5
	$3 || { nok "$1: the server comes back"; return; }
	# A store may refuse at once while it backs off from the dead
	# server (the SFTP store waits up to 30 seconds between tries).
	t0=$(date +%s)
	until round_trip "$D/small" >/dev/null; do
		[ $(($(date +%s) - t0)) -ge 35 ] && break
		sleep 1
	done
	check "$1: serves again within 35 s of the server's return ($(($(date +%s) - t0)) s)" \
	    round_trip "$D/small"
	check "$1: a 12 MiB round trip works again" round_trip "$D/big12"
	check "$1: /healthz is 200 again within 35 seconds" healthz_up_within 35
	sweep_now
	check "$1: depotctl sweep succeeds" grep -q '^removed' "$D/sweep.out"
	check "$1: after the sweep no row is left in state 'writing'" \
	    test "$(rows "where state = 'writing'")" -eq 0
	# Temporaries the lost connection left are removed after the
	# reconnect, in the background: give that a few seconds.
	for i in $(seq 20); do
		n=$($4)
		[ "$n" = "$(rows)" ] && break
		sleep 0.5
	done
	check "$1: no stray blob: $n on the server for $(rows) rows" \
	    test "$n" = "$(rows)"
}

no_s3_uploads() {
	check "$1: no multipart upload left in progress" \
	    test "$(s3_uploads faults)" = 0
}

# --- S3 ---
if daemon_up s3 18341 s3://faults/blobs \
    "$(s3_opts "$DEPOT_S3_ENDPOINT" "$DEPOT_S3_SECRET_KEY")"; then
	check "s3: a first round trip" round_trip "$D/small"
	pids=$(depot_pids)
	fault_upload "s3" rgw_stop "s3_uploads faults"
	after_fault "s3 upload fault" "$pids" rgw_start "s3_keys faults"
	no_s3_uploads "s3 upload fault"
	fault_download "s3" rgw_stop
	after_fault "s3 download fault" "$pids" rgw_start "s3_keys faults"
	no_s3_uploads "s3 download fault"
	depot_stop
else
	nok "depotd starts on the S3 store"
fi

# --- SFTP ---
if daemon_up sftp 18343 "$DEPOT_SFTP_URL" \
    "$(sftp_opts "$DEPOT_SFTP_IDENTITY" "$DEPOT_SFTP_KNOWN_HOSTS")"; then
	check "sftp: a first round trip" round_trip "$D/small"
	pids=$(depot_pids)
	fault_upload "sftp" "sshd_stop $D/sshd"
	after_fault "sftp upload fault" "$pids" "sshd_start $D/sshd" sftp_files
	fault_download "sftp" "sshd_stop $D/sshd"
	after_fault "sftp download fault" "$pids" "sshd_start $D/sshd" \
	    sftp_files
	depot_stop
else
	nok "depotd starts on the SFTP store"
fi

# --- a store depotd cannot use ---
misconfigured() {	# label port storage opts [secret]
	use_db depot_bad
	DEPOT_STORAGE=$3 DEPOT_STORAGE_OPTS=$4 depot_conf "$D/bad" "$2"
	: >"$D/bad/depotd.log"
	if ! fault_start "$D/bad"; then
		nok "$1: depotd starts and answers HTTP"
		sed 's/^/# /' "$D/bad/depotd.log"
		depot_stop
		return
	fi
	ok "$1: depotd starts and answers HTTP"
	sleep 1
	pids=$(depot_pids)
	AUTH="Authorization: Bearer $(depot_key alice default)"
	check "$1: the log says the store is not usable" \
	    grep -q 'storage: .* is not usable' "$D/bad/depotd.log"
	grep 'not usable' "$D/bad/depotd.log" | head -2 | sed 's/^/# /'
	if [ -n "${5:-}" ]; then
		check "$1: the log does not hold the secret" \
		    not_in_file "$5" "$D/bad/depotd.log"
	fi
	code=$(curl -s -o "$D/hz" -w '%{http_code}' "$DEPOT_URL/healthz")
	check "$1: /healthz is 503 with the store down ($code)" \
	    sh -c "[ $code = 503 ] && grep -q '\"store\": *\"down\"' $D/hz"
	set -- "$1" $(upload "$D/small")
	check "$1: an upload fails with a 5xx, OpenAI dialect ($2)" \
	    sh -c "case $2 in 5??) grep -q '\"type\": *\"server_error\"' \
	    $D/up.body ;; *) false ;; esac"
	set -- "$1" $(upload "$D/small" -H 'anthropic-version: 2023-06-01')
	check "$1: an upload fails with a 5xx, Anthropic dialect ($2)" \
	    sh -c "case $2 in 5??) grep -q '\"type\": *\"error\"' $D/up.body \
	    && grep -Eq '\"type\": *\"(api_error|overloaded_error)\"' \
	    $D/up.body ;; *) false ;; esac"
	check "$1: no depotd process died" test "$(depot_pids)" = "$pids"
	depot_stop
}

not_in_file() {	# string file
	! grep -qF "$1" "$2"
}

badsecret=BADSECRET$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
misconfigured "wrong S3 secret" 18344 s3://faults/blobs \
    "$(s3_opts "$DEPOT_S3_ENDPOINT" "$badsecret")" "$badsecret"
check "wrong S3 secret: the real secret is in no log either" \
    not_in_file "$DEPOT_S3_SECRET_KEY" "$D/bad/depotd.log"
misconfigured "wrong SFTP key" 18344 "$DEPOT_SFTP_URL" \
    "$(sftp_opts "$D/sshd/other_ed25519" "$DEPOT_SFTP_KNOWN_HOSTS")"
misconfigured "changed SSH host key" 18344 "$DEPOT_SFTP_URL" \
    "$(sftp_opts "$DEPOT_SFTP_IDENTITY" "$DEPOT_SFTP_KNOWN_HOSTS_BAD")"

# --- 503 SlowDown from S3 is retried ---
pport=$(ceph_free_port)
: >"$D/proxy.log"
python3 "$top/regress/storefaults/slowdown.py" "$pport" "$(rgw_port)" 3 \
    "$D/proxy.log" >"$D/proxy.out" 2>&1 &
PROXY_PID=$!
for i in $(seq 50); do grep -q listening "$D/proxy.out" && break; sleep 0.1; done
slowdowns() { grep -c '^503 ' "$D/proxy.log"; }
if daemon_up slow 18345 s3://slow/blobs \
    "$(s3_opts "http://127.0.0.1:$pport" "$DEPOT_S3_SECRET_KEY")"; then
	kill -USR1 "$PROXY_PID"
	sleep 0.5
	check "503 SlowDown: a 1 MiB upload (one PUT) still succeeds" \
	    round_trip "$D/small"
	check "503 SlowDown: the proxy did answer 503 three times ($(slowdowns))" \
	    test "$(slowdowns)" -eq 3
	kill -USR1 "$PROXY_PID"
	sleep 0.5
	check "503 SlowDown: a 12 MiB upload (multipart) still succeeds" \
	    round_trip "$D/big12"
	check "503 SlowDown: six 503 answers in all ($(slowdowns))" \
	    test "$(slowdowns)" -eq 6
	sed 's/^/# /' "$D/proxy.log"
	depot_stop
else
	nok "depotd starts on S3 behind the proxy"
fi
exit $status
