#!/bin/sh
# regress/bench/stores.sh: transfers through depotd on the remote stores
# against the same transfers made directly, in one run on this machine:
#  1. S3: upload and download of a BENCH_SIZE_MB file (default 1024)
#     through depotd on a private radosgw vs curl --aws-sigv4 PUT and
#     GET of the same bytes to the same radosgw
#  2. SFTP: the same through depotd on a private sshd vs OpenSSH sftp
#     put and get to the same sshd
# Each as a ratio direct/depotd (target >= 0.8), with the peak RSS of
# every depotd process (target <= 32 MiB).  radosgw keeps objects in a
# 2 GiB memstore: the direct object is deleted before depotd uploads.

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
SSHD_HARNESS_FILE=$top/regress/harness/sshd.sh
. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"
. "$top/regress/harness/ceph.sh"
. "$SSHD_HARNESS_FILE"
. "$top/regress/bench/lib.sh"
command -v bc >/dev/null || apt-get install -y -qq bc >/dev/null
w=$top/build/bench-stores
SIZE_MB=${BENCH_SIZE_MB:-1024}
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
# memstore holds 2 GiB in RAM; a 1 GiB object twice over needs bluestore.
[ "${BENCH_SIZE_MB:-1024}" -gt 512 ] && export CEPH_STORE=bluestore
ceph_start "$w/ceph" || { echo "radosgw did not start"; exit 1; }
sshd_start "$w/sshd" || { echo "sshd did not start"; exit 1; }
chown _depotd "$DEPOT_SFTP_IDENTITY"
depot_user
export DEPOT_MAX_SIZE=2G DEPOT_SWEEP=0
head -c $((SIZE_MB * 1048576)) /dev/urandom >"$w/blob"

s3_curl() {
	curl -s --aws-sigv4 "aws:amz:us-east-1:s3" \
	    --user "$DEPOT_S3_ACCESS_KEY:$DEPOT_S3_SECRET_KEY" \
	    -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$@"
}
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
	echo "$up $down"
}

report() {	# what direct-up direct-down depot-up depot-down
	echo "upload:   direct ${2}s depotd ${4}s ratio $(ratio "$2" "$4") (target >= 0.8)"
	echo "download: direct ${3}s depotd ${5}s ratio $(ratio "$3" "$5") (target >= 0.8)"
	echo "peak RSS of each depotd process (target <= 32 MiB):"
	depot_peaks
}

echo "-- 1. S3 (radosgw), ${SIZE_MB} MiB"
obj=$DEPOT_S3_ENDPOINT/bench/direct
ref_up=$(elapsed s3_curl -T "$w/blob" "$obj")
ref_down=$(elapsed s3_curl -o "$w/down" "$obj")
cmp -s "$w/blob" "$w/down" || echo "direct S3 download differs"
rm -f "$w/down"
s3_curl -X DELETE "$obj"
DEPOT_STORAGE=s3://bench/blobs DEPOT_STORAGE_OPTS=" { endpoint \
\"$DEPOT_S3_ENDPOINT\" access-key \"$DEPOT_S3_ACCESS_KEY\" secret-key \
\"$DEPOT_S3_SECRET_KEY\" path-style }" depot_conf "$w/s3" 27441
depot_start "$w/s3" || exit 1
if got=$(depot_transfer); then
	report s3 "$ref_up" "$ref_down" $got
fi
depot_stop

echo "-- 2. SFTP (OpenSSH sshd), ${SIZE_MB} MiB"
sftp_() {	# batch commands on stdin
	sftp -q -b - -i "$DEPOT_SFTP_IDENTITY" -P "$(cat "$w/sshd/port")" \
	    -o UserKnownHostsFile="$DEPOT_SFTP_KNOWN_HOSTS" \
	    -o BatchMode=yes "$SSHD_USER@127.0.0.1"
}
echo "put $w/blob $DEPOT_SFTP_ROOT/direct" >"$w/put.batch"
echo "get $DEPOT_SFTP_ROOT/direct $w/down" >"$w/get.batch"
ref_up=$(elapsed eval 'sftp_ <"$w/put.batch"')
ref_down=$(elapsed eval 'sftp_ <"$w/get.batch"')
cmp -s "$w/blob" "$w/down" || echo "direct SFTP download differs"
rm -f "$w/down" "$DEPOT_SFTP_ROOT/direct"
DEPOT_STORAGE=$DEPOT_SFTP_URL DEPOT_STORAGE_OPTS=" { identity \
\"$DEPOT_SFTP_IDENTITY\" known-hosts \"$DEPOT_SFTP_KNOWN_HOSTS\" }" \
    depot_conf "$w/sftp" 27442
depot_start "$w/sftp" || exit 1
if got=$(depot_transfer); then
	report sftp "$ref_up" "$ref_down" $got
fi
depot_stop
