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

# regress/multihost/suite.sh: two depotd on one database and one local
# store directory, as two hosts would run them.  A file uploaded
# through one is read and deleted through the other, and both sweeping
# at once remove every blob exactly once.  Prints "ok - " / "not ok - "
# lines; exits non-zero if any failed.

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
D=$top/build/regress-multihost
T=$D/tmp
NFILES=${NFILES:-300}
here=$top/regress/files

. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"
store=file
. "$here/lib.sh"

[ -f "$D/pg/pgdata/postmaster.pid" ] && pg_stop "$D/pg"
rm -rf "$D"
mkdir -p "$T" "$D/h1" "$D/h2"

PID1= PID2=
cleanup() {
	[ -n "$PID1" ] && kill "$PID1" 2>/dev/null && wait "$PID1"
	[ -n "$PID2" ] && kill "$PID2" 2>/dev/null && wait "$PID2"
	pg_stop "$D/pg"
	jstop
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
jstart || { echo "not ok - the JSON checker starts"; exit 1; }

make -s build/depotd build/depotctl >&2 || { echo "not ok - build"; exit 1; }
pg_start "$D/pg" || { echo "not ok - postgres starts"; exit 1; }
depot_user
mkdir -p "$D/files"
chown _depotstore "$D/files"
chmod 750 "$D/files"
export DEPOT_STORAGE="file://$D/files" DEPOT_SWEEP=0 DEPOT_GRACE=60s
depot_conf "$D/h1" 18321
depot_conf "$D/h2" 18322
depot_start "$D/h1" 3>&- 4<&- || { echo "not ok - host 1 starts"; exit 1; }
PID1=$DEPOT_PID URL1=$DEPOT_URL SOCK1=$DEPOT_SOCK
depot_start "$D/h2" 3>&- 4<&- || { echo "not ok - host 2 starts"; exit 1; }
PID2=$DEPOT_PID URL2=$DEPOT_URL SOCK2=$DEPOT_SOCK
DEPOT_PID=
echo "ok - two depotd share one database and one store"
check "the two hosts have their own control sockets" test "$SOCK1" != "$SOCK2"

DEPOT_URL=$URL1 DEPOT_SOCK=$SOCK1
K=$(depot_key alice default)
check "a key made through host 1" test -n "$K"

head -c 5000 /dev/urandom >"$T/blob"
DEPOT_URL=$URL1
upload "$K" -F file=@"$T/blob"
check "upload through host 1" test -n "$fid"
DEPOT_URL=$URL2
call a "$K" GET "/v1/files/$fid"
check "host 2 knows the file (and the key)" \
    jc "$T/b" "anthropic_file(j) and j['size_bytes'] == 5000"
call o "$K" GET "/v1/files/$fid/content"
check "download through host 2 gives the same bytes" cmp -s "$T/b" "$T/blob"
call o "$K" DELETE "/v1/files/$fid"
check "delete through host 2" jc "$T/b" "j['deleted'] is True"
DEPOT_URL=$URL1
call o "$K" GET "/v1/files/$fid"
check "host 1 no longer sees the file" is_err 404 o

# Many deleted files, both hosts sweeping at the same moment.
i=0
while [ $i -lt "$NFILES" ]; do
	i=$((i + 1))
	[ $((i % 2)) -eq 0 ] && DEPOT_URL=$URL1 || DEPOT_URL=$URL2
	printf 'file %d\n' $i >"$T/small"
	upload "$K" -F file=@"$T/small" || break
done
check "$NFILES files uploaded through both hosts" \
    test "$(sql "select count(*) from files where state = 'ready' and
    deleted_at is null")" = "$NFILES"
check "$NFILES blobs in the store" \
    test "$(find "$D/files" -type f | wc -l)" = "$NFILES"
sql "update files set deleted_at = now()" >/dev/null
total=$(sql "select count(*) from files")

removed=0 failed=0 pass=0
while [ $pass -lt 10 ]; do
	pass=$((pass + 1))
	DEPOT_SOCK=$SOCK1 depotctl_ sweep >"$T/s1" 2>&1 &
	w1=$!
	DEPOT_SOCK=$SOCK2 depotctl_ sweep >"$T/s2" 2>&1 &
	w2=$!
	wait $w1 $w2
	echo "# pass $pass: host 1: $(cat "$T/s1"); host 2: $(cat "$T/s2")"
	for s in "$T/s1" "$T/s2"; do
		n=$(sed -n 's/^removed \([0-9]*\) files, \([0-9]*\) failed.*/\1 \2/p' "$s")
		[ -n "$n" ] || { failed=$((failed + 1)); continue; }
		set -- $n
		removed=$((removed + $1))
		failed=$((failed + $2))
	done
	[ "$(sql "select count(*) from files")" = 0 ] && break
done
check "every deleted row is gone" test "$(sql "select count(*) from files")" = 0
check "every blob is gone" test "$(find "$D/files" -type f | wc -l)" = 0
check "the sweeps removed $total files between them, each once" \
    test "$removed" = "$total"
check "no sweep reported a failure" test "$failed" = 0
check "both hosts recorded their sweeps" \
    test "$(sql "select count(*) from sweep_runs")" -ge 2
summary
