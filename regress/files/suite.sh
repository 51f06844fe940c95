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

# regress/files/suite.sh: the Files API at curl level (SPEC.md sections
# 2 to 4) against a real depotd, a private PostgreSQL and the store
# named by DEPOT_STORE: file (default), s3 (a private radosgw) or sftp
# (a private sshd).  Prints one "ok - " or "not ok - " line per check
# and exits non-zero if any failed.
#
# The configuration refuses a writing-grace under 60 seconds, so before
# each sweep the rows still in state 'writing' are aged by two minutes
# in SQL, once every client of the case has gone; that stands for
# sleeping past the grace.

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
here=$top/regress/files
store=${DEPOT_STORE:-file}
case $store in
file)	DPORT=${DEPOT_FILES_PORT:-18311} ;;
s3)	DPORT=18312 ;;
sftp)	DPORT=18313 ;;
*)	echo "not ok - unknown DEPOT_STORE $store"; exit 1 ;;
esac
DPORT=${FILES_PORT:-$DPORT}	# another port where checkouts share a host
D=$top/build/regress-files-$store
T=$D/tmp

. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"
. "$top/regress/harness/store.sh"
. "$here/lib.sh"

[ -f "$D/pg/pgdata/postmaster.pid" ] && pg_stop "$D/pg"
rm -rf "$D"
mkdir -p "$T"

cleanup() {
	depot_stop
	pg_stop "$D/pg"
	jstop
	case $store in
	s3)	ceph_stop "$D/ceph" ;;
	sftp)	sshd_stop "$D/sshd" ;;
	esac
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
jstart || { echo "not ok - the JSON checker starts"; exit 1; }

make -s build/depotd build/depotctl >&2 || { echo "not ok - build"; exit 1; }
store_setup "$store" depot || exit 1
pg_start "$D/pg" || { echo "not ok - postgres starts"; exit 1; }
export DEPOT_GRACE=60s DEPOT_MAX_SIZE=1M DEPOT_SWEEP=0
depot_user
depot_conf "$D" "$DPORT"
# Long enough for a UTF-8 name whose encoded form exceeds any header
# budget (download.sh).
sed -i 's/^files {$/&\n\tmax-filename 1000/' "$D/depotd.conf"
depot_start "$D" 3>&- 4<&- || { echo "not ok - depotd starts"; exit 1; }
echo "ok - depotd starts with the $store store"

KA=$(depot_key alice default)	# alice's key in workspace default
KB=$(depot_key bob default)
KW=$(depot_key alice other)	# alice again, in another workspace
KC=$(depot_key carol default)	# carol's files are the paging fixture
ADMIN=${DEPOT_ADMIN_KEY:-dpt-admin-test-key-0123456789abcdef}
check "keys are created" test -n "$KA" -a -n "$KB" -a -n "$KW" -a -n "$KC"

head -c 3000 /dev/urandom >"$T/rand.bin"
printf 'hello, depot\n' >"$T/hello.txt"
printf '{"a": 1}\n' >"$T/data.json"

SECONDS0=$(date +%s)
section() {
	echo "# $1 ($(($(date +%s) - SECONDS0))s)"
	. "$here/$1.sh"
}
section auth
section upload
section download
section list
section lifecycle
section transport
section trust
section batch

summary
