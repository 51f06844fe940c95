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

# regress/containers/suite.sh: /v1/containers (issue 20) with the
# official openai SDKs (7 and 6, containers.mjs), then expiry: a
# container idle past its minutes (its last_active_at moved back in
# PostgreSQL) reads as expired at once, before any sweep, and the
# sweep (depotctl sweep) marks its row and logs it.  Prints one
# "ok - " or "not ok - " line per check.
#
# CONTAINERS_PORT (20400) moves the port.

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
here=$top/regress/containers
port=${CONTAINERS_PORT:-20400}
D=$top/build/regress-containers

. "$top/regress/harness/tap.sh"
. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"
. "$top/regress/harness/sdk.sh"

[ -f "$D/pg/pgdata/postmaster.pid" ] && pg_stop "$D/pg"
rm -rf "$D"
mkdir -p "$D/tmp"

cleanup() {
	depot_stop
	pg_stop "$D/pg"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE

node_ready "$D/node.log" ||
    { echo "not ok - a Node.js 20 or later (see $D/node.log)"; exit 1; }
sdk_install "$D/npm.log" ||
    { echo "not ok - npm installs the SDKs"; exit 1; }
make -s build/depotd build/depotctl >&2 || { echo "not ok - build"; exit 1; }
depot_user
pg_start "$D/pg" || { echo "not ok - postgres starts"; exit 1; }
export DEPOT_SWEEP=0
export DEPOT_ADMIN_KEY=${DEPOT_ADMIN_KEY:-dpt-admin-test-key-0123456789abcdef}
depot_conf "$D" "$port" "containers {
	expires-after 20m
	max-per-key 3
	max-per-workspace 5
}"
depot_start "$D" || { echo "not ok - depotd starts"; exit 1; }
ok "depotd starts with a containers block"

psql_() {
	"$PG_BIN/psql" -X -Atq -d depot -c "$1"
}

status=0
n=0
for alias in openai openai6; do
	n=$((n + 1))
	key=$(depot_key "cntr$n" "ws$n")
	okey=$(depot_key "other$n" "ows$n")
	[ $n -eq 1 ] && key1=$key
	env -u OPENAI_API_KEY -u OPENAI_BASE_URL DEPOT_URL="$DEPOT_URL" \
	    DEPOT_KEY="$key" OTHER_KEY="$okey" SDK_MODULES="$SDK_MODULES" \
	    node "$here/containers.mjs" "$alias" || status=1
done

# The workspace cap: 5 in one workspace, whatever the key (3 each).
ka=$(depot_key capa capws)
kb=$(depot_key capb capws)
mk() {	# key: the status of a create
	curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $1" \
	    -H 'Content-Type: application/json' -d '{"name":"c"}' \
	    "$DEPOT_URL/v1/containers"
}
codes="$(mk "$ka") $(mk "$ka") $(mk "$ka") $(mk "$kb") $(mk "$kb")"
check "five creates under the caps are 200 ($codes)" \
    test "$codes" = "200 200 200 200 200"
check "a sixth in the workspace is a 429, under its key's own cap" \
    test "$(mk "$kb")" = 429

# Expiry: "keep" of cntr1, idle for 6 of its 5 minutes.
id=$(psql_ "select c.id from containers c join users u on u.id =
    c.user_id where u.name = 'cntr1' and c.name = 'keep'")
check "the kept container has a row" test -n "$id"
psql_ "update containers set last_active_at = now() - interval
    '6 minutes' where id = '$id'" >/dev/null
got=$(curl -s -H "Authorization: Bearer $key1" \
    "$DEPOT_URL/v1/containers/$id")
check "idle past its minutes, it reads as expired before any sweep" \
    sh -c "echo '$got' | grep -q '\"status\": *\"expired\"'"
check "its row is still running until the sweep" \
    test "$(psql_ "select state from containers where id = '$id'")" = running
depotctl_ sweep >/dev/null 2>&1
i=0
while [ $i -lt 50 ] && [ "$(psql_ "select state from containers where
    id = '$id'")" != expired ]; do
	sleep 0.1
	i=$((i + 1))
done
check "the sweep marks it expired" \
    test "$(psql_ "select state from containers where id = '$id'")" = expired
check "one log line says so" grep -q "container $id expired" "$D/depotd.log"
# Operators: depotctl container list, show, destroy.
check "depotctl container list -u cntr1 names the expired one" \
    sh -c "'$DEPOTCTL' -s '$DEPOT_SOCK' container list -u cntr1 |
    grep -q '^$id	cntr1	ws1	expired'"
check "depotctl container list -w capws lists the five" \
    test "$(depotctl_ container list -w capws | grep -c running)" = 5
cid=$(depotctl_ container list -u capa | head -1 | cut -f1)
check "depotctl container show" \
    sh -c "'$DEPOTCTL' -s '$DEPOT_SOCK' container show '$cid' | grep -q capws"
check "depotctl container destroy" \
    sh -c "'$DEPOTCTL' -s '$DEPOT_SOCK' container destroy '$cid' |
    grep -q 'destroyed $cid'"
check "the destroyed container is a 404 to its owner" \
    test "$(curl -s -o /dev/null -w '%{http_code}' -H \
    "Authorization: Bearer $ka" "$DEPOT_URL/v1/containers/$cid")" = 404
check "and its slot is free again" test "$(mk "$kb")" = 200
check "a second destroy fails" sh -c "! '$DEPOTCTL' -s '$DEPOT_SOCK' \
    container destroy '$cid' >/dev/null"
check "one log line for the destroy" \
    grep -q "container $cid destroyed (depotctl)" "$D/depotd.log"
kill -0 "$DEPOT_PID" 2>/dev/null || status=1
check "depotd is still up" kill -0 "$DEPOT_PID"
[ "$failed" -eq 0 ] || status=1
exit $status
