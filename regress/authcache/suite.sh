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

# regress/authcache/suite.sh: the frontends' cache of the storage
# helper's auth answers (fe_authcache.c).  The real depotd, prefork 2,
# against a private PostgreSQL.  A revoked key is refused by the very
# next request on each frontend, not after a TTL; a key that expires is
# refused at once though its answer is cached; a reload that changes
# the admin key refuses the old one at once; a storage helper that dies
# takes every frontend (and its cache) with it, and the daemon started
# again answers the key afresh.  Which frontend served a request is read
# from the log (each request has a path of its own: /v1/models/NAME is
# authenticated, then 404).  The cache's bound is tested in
# regress/unit/test_fe_authcache.c.  One "ok - ..." line per check.

[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"
. "$top/regress/harness/tap.sh"

work=${AUTHCACHE_WORK:-$top/build/regress-authcache}
port=${AUTHCACHE_PORT:-18495}
d=$work/depotd
log=$d/depotd.log
admin_old=dpt-admin-test-key-0123456789abcdef
admin_new=dpt-admin-test-key-fedcba9876543210

cleanup() {
	trap - EXIT INT TERM
	depot_stop
	pg_stop "$work/pg"
}

if [ "$(id -u)" -ne 0 ]; then
	notok "the authcache suite needs root"
	exit 1
fi
[ -d "$work/pg" ] && pg_stop "$work/pg"
rm -rf "$work"
mkdir -p "$work/bin"
trap cleanup EXIT
trap 'exit 1' INT TERM
cp "$DEPOTD" "$DEPOTCTL" "$work/bin/" || { notok "copy the binaries"; exit 1; }
DEPOTD=$work/bin/${DEPOTD##*/}
DEPOTCTL=$work/bin/${DEPOTCTL##*/}
pg_start "$work/pg" || { notok "PostgreSQL starts"; exit 1; }
depot_user
export DEPOT_PREFORK=2 DEPOT_ADMIN_KEY=$admin_old
depot_conf "$d" "$port"
depot_start "$d" || { notok "depotd starts"; exit 1; }

# --- helpers ----------------------------------------------------------

# Each part of the suite calls from an address of its own: the refused
# requests of one must not reach the failure throttle (20 a minute per
# address) of the next.
src=127.0.0.1
code() {	# key path; prints the status code, body in $work/body
	curl -s --interface "$src" -o "$work/body" -w '%{http_code}' \
	    -H "Authorization: Bearer $1" "$DEPOT_URL$2"
}

# Requests with key on fresh connections, so that both frontends serve
# some; each path is tag-N.  Prints the status codes, one per line.
burst() {	# key tag count
	local i
	for i in $(seq "$3"); do
		code "$1" "/v1/models/$2-$i"
		echo
	done
}

# The frontends that logged a request of tag, as "0 1".
served_by() {	# tag
	local re="^frontend \([0-9]*\)\[[0-9]*\]: GET /v1/models/$1-[0-9]* .*"

	sed -n "s|$re|\1|p" "$log" | sort -u | tr '\n' ' ' | sed 's/ $//'
}

# Every line of a burst is want.
all_are() {	# file want
	[ -s "$1" ] && ! grep -qv "^$2\$" "$1"
}

# --- revocation through the cache --------------------------------------

key=$(depot_key alice default)
check "a key for alice" test -n "$key"
burst "$key" warm 24 >"$work/warm"
check "24 requests with it: 404 each (authenticated, no such model)" \
    all_are "$work/warm" 404
check "both frontends served (and cached) it: $(served_by warm)" \
    test "$(served_by warm)" = "0 1"
depotctl_ key revoke "${key:0:12}" >"$work/out" 2>&1
check "depotctl key revoke" test $? -eq 0
# No pause: the next request on either frontend must know.
burst "$key" revoked 24 >"$work/revoked"
check "every request right after the revocation: 401" \
    all_are "$work/revoked" 401
check "on both frontends: $(served_by revoked)" \
    test "$(served_by revoked)" = "0 1"
check "401 says 'API key revoked'" grep -q '"API key revoked"' "$work/body"
other=$(depot_key bob default)
burst "$other" other 4 >"$work/other"
check "another key still works after the revocation" \
    all_are "$work/other" 404

# --- expiry through the cache -------------------------------------------

src=127.0.0.2
depotctl_ key create -u alice -w default -e '3 seconds' >"$work/key" 2>&1
short=$(sed -n 's/^token	//p' "$work/key")
check "a key that expires in 3 s" test -n "$short"
start=$(date +%s.%N)
burst "$short" fresh 8 >"$work/fresh"
check "it works at first" all_are "$work/fresh" 404
check "on both frontends: $(served_by fresh)" \
    test "$(served_by fresh)" = "0 1"
# Answers cached now would be kept 5 s; the key ends before that.
while [ "$(echo "$(date +%s.%N) - $start < 4.6" | bc)" = 1 ]; do
	code "$short" /v1/models/keep-0 >/dev/null
	sleep 0.2
done
burst "$short" expired 16 >"$work/expired"
check "1.6 s past its expiry, and inside the cache's 5 s: 401 everywhere" \
    all_are "$work/expired" 401
check "401 says 'API key expired'" grep -q '"API key expired"' "$work/body"
check "on both frontends: $(served_by expired)" \
    test "$(served_by expired)" = "0 1"

# --- a reload that changes the admin key -------------------------------

src=127.0.0.3
burst "$admin_old" admin 8 >/dev/null
code "$admin_old" "/v1/files?user=alice" >/dev/null
check "the admin key acts for alice" test "$(code "$admin_old" \
    "/v1/files?user=alice")" = 200
sed -i "s/$admin_old/$admin_new/" "$d/depotd.conf"
kill -HUP "$DEPOT_PID"
reloaded=
for i in $(seq 50); do
	grep -q "reloaded $d/depotd.conf" "$log" && { reloaded=1; break; }
	sleep 0.1
done
check "SIGHUP with a new admin key: reloaded" test -n "$reloaded"
for i in $(seq 12); do
	code "$admin_old" "/v1/files?user=alice"
	echo
done >"$work/oldadmin"
check "the old admin key is refused at once on every request" \
    sh -c "! grep -q '^200\$' '$work/oldadmin'"
check "the new admin key acts for alice" test "$(code "$admin_new" \
    "/v1/files?user=alice")" = 200

# --- the storage helper's death -----------------------------------------

src=127.0.0.4
burst "$other" before 8 >/dev/null
spid=$(depot_child storage)
check "the storage helper is running" test -n "$spid"
kill -KILL "$spid"
# Nothing answers the cached key after that.
for i in $(seq 8); do
	code "$other" /v1/models/dead-$i
	echo
done >"$work/dead"
check "no frontend answers from its cache once the storage helper died" \
    sh -c "! grep -q '^404\$' '$work/dead'"
gone=
for i in $(seq 50); do
	kill -0 "$DEPOT_PID" 2>/dev/null || { gone=1; break; }
	sleep 0.1
done
check "the daemon ended with it" test -n "$gone"
wait "$DEPOT_PID" 2>/dev/null
DEPOT_PID=
mv "$log" "$log.first"	# served_by reads the new one only
depot_start "$d" || { notok "depotd starts again"; exit 1; }
burst "$other" again 8 >"$work/again"
check "started again, the key is answered afresh" \
    all_are "$work/again" 404
check "by both frontends: $(served_by again)" \
    test "$(served_by again)" = "0 1"

exit $((failed > 0))
