#!/bin/sh
#
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
#
# regress/sandboxd/local.sh: depotd's `sandbox local' starts
# depot-sandboxd as its child, on a unix socket with a token, jails as
# _depotsbx; code runs through it; it goes when depotd goes.

[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"

work=${SBX_LOCAL_WORK:-$top/build/regress-sandboxd-local}
port=${SBX_LOCAL_PORT:-18497}
d=$work/depotd
failed=0

# One TAP line for a status (0 passes), counting the failures.
tap() {
	[ "$1" -eq 0 ] && echo "ok - $2" && return
	echo "not ok - $2"
	failed=$((failed + 1))
}
ok() { tap 0 "$*"; }
notok() { tap 1 "$*"; }
check() {	# description, then a command that must succeed
	local what=$1
	shift
	"$@"
	tap $? "$what"
}

[ -d "$work/pg" ] && pg_stop "$work/pg"
rm -rf "$work"
mkdir -p "$work"
chmod 755 "$work"
trap 'trap - EXIT INT TERM; depot_stop; pg_stop "$work/pg"' EXIT
trap 'exit 1' INT TERM
pg_start "$work/pg" || { notok "PostgreSQL starts"; exit 1; }
depot_user
DEPOT_SANDBOX_LOCAL=1 depot_conf "$d" "$port"
chmod 755 "$d"

if ! depot_start "$d"; then
	notok "depotd with sandbox local starts ($(tail -3 "$d/depotd.log"))"
	exit 1
fi
ok "depotd with sandbox local starts"

sbx=
for i in $(seq 50); do
	sbx=$(pgrep -P "$DEPOT_PID" -x depot-sandboxd | head -1)
	[ -n "$sbx" ] && [ -S "$d/run/sandbox/depot-sandboxd.sock" ] && break
	sleep 0.1
done
check "depotd started depot-sandboxd as its child (pid ${sbx:-none})" \
    test -n "$sbx"
check "depot-sandboxd runs as _depotsbx ($(ps -o user= -p "${sbx:-1}"))" \
    test "$(ps -o user= -p "${sbx:-1}")" = _depotsbx
tokf=$d/run/depot-sandboxd.token
check "its token file is mode 600 ($(stat -c %a "$tokf" 2>/dev/null))" \
    test "$(stat -c %a "$tokf" 2>/dev/null)" = 600

sock=$d/run/sandbox/depot-sandboxd.sock
# The broker's root: a directory of root's that holds the socket alone.
check "the socket has a directory of its own, root's, with nothing else" \
    test "$(stat -c %U "$d/run/sandbox")" = root -a \
    "$(ls -A "$d/run/sandbox")" = depot-sandboxd.sock
sbx_curl() {	# method path [body]: prints the status, then the body
	curl -s -o "$work/body" -w '%{http_code}' --unix-socket "$sock" \
	    -H "Authorization: Bearer $(cat "$tokf")" \
	    -H 'Content-Type: application/json' -X "$1" \
	    ${3:+--data "$3"} "http://localhost$2"
}
st=$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$sock" \
    http://localhost/sessions -X POST --data '{}')
check "without the token: 401 ($st)" test "$st" = 401
st=$(sbx_curl POST /sessions '{}')
sid=$(sed -n 's/.*"session_id": *"\([^"]*\)".*/\1/p' "$work/body")
check "CreateSession through the socket: 201 ($st, ${sid:-no id})" \
    test "$st" = 201 -a -n "$sid"
st=$(sbx_curl POST "/sessions/$sid/exec" \
    '{"tool": "code_execution", "input": {"code": "print(6 * 7)"}}')
check "Execute print(6 * 7): 200 and 42 ($st, $(head -c 200 "$work/body"))" \
    grep -q '"stdout": *"42\\n"' "$work/body"
check "DestroySession: 204" test "$(sbx_curl DELETE "/sessions/$sid")" = 204

depot_stop
sleep 0.5
check "depot-sandboxd is gone with depotd" \
    test -z "$(ps -o pid= -p "${sbx:-1}" | grep -v '^ *1$')"
echo "# $failed failed"
[ "$failed" -eq 0 ]
