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

# regress/bench/stores.sh: transfers through depotd on the remote stores
# against the same transfers made directly, in one run on this machine:
#  1. S3: upload and download of a BENCH_SIZE_MB file (default 1024)
#     through depotd on a private radosgw (one memstore OSD, as in the
#     tests) vs curl --aws-sigv4 PUT and GET of the same bytes to the
#     same radosgw
#  2. SFTP: the same through depotd on a private sshd vs OpenSSH sftp
#     put and get to the same sshd
# Each pair runs BENCH_ROUNDS times (default 3), direct and depotd
# taking turns, because one transfer on this 2-core machine varies by
# up to 2x with what else runs; the ratio is of the medians,
# direct/depotd (target >= 0.8), with the peak RSS of every depotd
# process (target <= 32 MiB).  Only the servers of the store being
# measured run.  depotd uploads S3 parts of BENCH_S3_PART (default 5M),
# three at a time within its 16 MiB per upload; BENCH_S3_PART=16M
# measures the default of one part in flight.  BENCH_STORES="s3" or
# "sftp" runs one of the two.
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
SSHD_HARNESS_FILE=$top/regress/harness/sshd.sh
. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"
. "$top/regress/harness/ceph.sh"
. "$SSHD_HARNESS_FILE"
. "$top/regress/bench/lib.sh"
w=$top/build/bench-stores
SIZE_MB=${BENCH_SIZE_MB:-1024}
ROUNDS=${BENCH_ROUNDS:-3}
[ -f "$w/pg/pgdata/postmaster.pid" ] && pg_stop "$w/pg"
rm -rf "$w"
mkdir -p "$w/sshd"
cleanup() {
	depot_stop
	sshd_stop "$w/sshd"
	ceph_stop "$w/ceph"
	pg_stop "$w/pg"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

pg_start "$w/pg" || exit 1
# The one-memstore-OSD radosgw of the tests, big enough for the object
# and its parts; each transfer's objects are deleted and collected
# before the next.  BENCH_CEPH_STORE=bluestore measures a disk-backed OSD.
export CEPH_STORE=${BENCH_CEPH_STORE:-memstore}
CEPH_MEMSTORE_BYTES=$((SIZE_MB * 4 * 1048576))
[ "$CEPH_MEMSTORE_BYTES" -lt 2147483648 ] && CEPH_MEMSTORE_BYTES=2147483648
export CEPH_MEMSTORE_BYTES
ceph_start "$w/ceph" || { echo "radosgw did not start"; exit 1; }
depot_user
export DEPOT_MAX_SIZE=2G DEPOT_SWEEP=0
head -c $((SIZE_MB * 1048576)) /dev/urandom >"$w/blob"

s3_curl -o /dev/null -X PUT "$DEPOT_S3_ENDPOINT/bench"

# Upload and download through depotd; prints "up-seconds down-seconds".
depot_transfer() {
	local key id up down
	key=$(depot_key bench default)
	up=$(elapsed curl -s -o "$w/up.json" -H "Authorization: Bearer $key" \
	    -F purpose=bench -F file=@"$w/blob" "$DEPOT_URL/v1/files")
	id=$(sed -n 's/.*"id": *"\(file-[0-9a-zA-Z]*\)".*/\1/p' "$w/up.json")
	[ -n "$id" ] || { echo "upload through depotd failed" >&2; return 1; }
	down=$(elapsed curl -s -o "$w/down" -H "Authorization: Bearer $key" \
	    "$DEPOT_URL/v1/files/$id/content")
	cmp -s "$w/blob" "$w/down" ||
	    { echo "download through depotd differs" >&2; return 1; }
	rm -f "$w/down"
	curl -s -o /dev/null -X DELETE -H "Authorization: Bearer $key" \
	    "$DEPOT_URL/v1/files/$id"
	echo "$up $down"
}

median() {	# numbers as arguments
	printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 }
	    END { print v[int((NR + 1) / 2)] }'
}

# Runs "direct" (a function printing "up down") and depotd in turns;
# prints each round, then the medians' ratios.
rounds() {	# direct-function between-function
	local i r d du= dd= pu= pd=
	for i in $(seq "$ROUNDS"); do
		# Alternate who goes first, should the server's state
		# drift over a run; each starts on an empty store.
		if [ $((i % 2)) -eq 1 ]; then
			r=$($1) || return 1
			$2
			d=$(depot_transfer) || return 1
			$2
		else
			d=$(depot_transfer) || return 1
			$2
			r=$($1) || return 1
			$2
		fi
		echo "round $i: direct up ${r% *}s down ${r#* }s;" \
		    "depotd up ${d% *}s down ${d#* }s"
		du="$du ${r% *}"; dd="$dd ${r#* }"
		pu="$pu ${d% *}"; pd="$pd ${d#* }"
	done
	report "$(median $du)" "$(median $dd)" "$(median $pu)" \
	    "$(median $pd)"
}

report() {	# direct-up direct-down depot-up depot-down (medians)
	echo "upload:   median direct ${1}s depotd ${3}s ratio $(ratio "$1" "$3") (target >= 0.8)"
	echo "download: median direct ${2}s depotd ${4}s ratio $(ratio "$2" "$4") (target >= 0.8)"
	echo "peak RSS of each depotd process (target <= 32 MiB):"
	depot_peaks
}

s3_direct() {
	local obj=$DEPOT_S3_ENDPOINT/bench/direct up down
	up=$(elapsed s3_curl -T "$w/blob" "$obj")
	down=$(elapsed s3_curl -o "$w/down" "$obj")
	cmp -s "$w/blob" "$w/down" ||
	    { echo "direct S3 download differs" >&2; return 1; }
	rm -f "$w/down"
	s3_curl -X DELETE "$obj"
	echo "$up $down"
}

# depotd runs without its sweep, so its deleted blobs stay: remove them.
s3_empty() {
	ceph_empty "$w/ceph" bench
}

sftp_empty() {
	find "$DEPOT_SFTP_ROOT" -type f -delete
}

sftp_() {	# batch commands on stdin
	sftp -q -b - -i "$DEPOT_SFTP_IDENTITY" -P "$(cat "$w/sshd/port")" \
	    -o UserKnownHostsFile="$DEPOT_SFTP_KNOWN_HOSTS" \
	    -o BatchMode=yes "$SSHD_USER@127.0.0.1"
}

sftp_direct() {
	local up down
	echo "put $w/blob $DEPOT_SFTP_ROOT/direct" >"$w/put.batch"
	echo "get $DEPOT_SFTP_ROOT/direct $w/down" >"$w/get.batch"
	up=$(elapsed eval 'sftp_ <"$w/put.batch"')
	down=$(elapsed eval 'sftp_ <"$w/get.batch"')
	cmp -s "$w/blob" "$w/down" ||
	    { echo "direct SFTP download differs" >&2; return 1; }
	rm -f "$w/down" "$DEPOT_SFTP_ROOT/direct"
	echo "$up $down"
}

STORES=${BENCH_STORES:-s3 sftp}
case " $STORES " in *" s3 "*)
echo "-- 1. S3 (radosgw), ${SIZE_MB} MiB, part-size ${BENCH_S3_PART:-5M}"
DEPOT_STORAGE=s3://bench/blobs DEPOT_STORAGE_OPTS=" { endpoint \
\"$DEPOT_S3_ENDPOINT\" access-key \"$DEPOT_S3_ACCESS_KEY\" secret-key \
\"$DEPOT_S3_SECRET_KEY\" path-style part-size ${BENCH_S3_PART:-5M} }" \
    depot_conf "$w/s3" 27441
depot_start "$w/s3" || exit 1
rounds s3_direct s3_empty
depot_stop
;;
esac
ceph_stop "$w/ceph"

case " $STORES " in *" sftp "*)
echo "-- 2. SFTP (OpenSSH sshd), ${SIZE_MB} MiB"
sshd_start "$w/sshd" || { echo "sshd did not start"; exit 1; }
chown _depotstore "$DEPOT_SFTP_IDENTITY"
DEPOT_STORAGE=$DEPOT_SFTP_URL DEPOT_STORAGE_OPTS=" { identity \
\"$DEPOT_SFTP_IDENTITY\" known-hosts \"$DEPOT_SFTP_KNOWN_HOSTS\" }" \
    depot_conf "$w/sftp" 27442
depot_start "$w/sftp" || exit 1
rounds sftp_direct sftp_empty
depot_stop
;;
esac
