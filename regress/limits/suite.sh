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

# regress/limits/suite.sh: per-key limits and usage rows (issue 21),
# through the official SDKs, against the upstream double, on one host
# and on two sharing one PostgreSQL.  LIMITS_PORT is the first of three
# ports (host A, the double, host B).

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
here=$top/regress/limits
port=${LIMITS_PORT:-21200}
D=$top/build/regress-limits
UPSTREAM_PYTHON=${UPSTREAM_PYTHON:-python3}
N=5		# requests per minute, every key's default
BUDGET=60	# tokens per day of the budget keys
TPM=40		# tokens per minute of the tpm key

. "$top/regress/harness/tap.sh"
. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"
. "$top/regress/harness/sdk.sh"

[ -f "$D/pg/pgdata/postmaster.pid" ] && pg_stop "$D/pg"
rm -rf "$D"
mkdir -p "$D/a" "$D/b"

PIDB= DPID=
cleanup() {
	depot_stop
	[ -n "$PIDB" ] && kill "$PIDB" 2>/dev/null && wait "$PIDB"
	[ -n "$DPID" ] && kill "$DPID" 2>/dev/null
	pg_stop "$D/pg"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE

node_ready "$D/node.log" || { notok "a Node.js 20 or later"; exit 1; }
sdk_install "$D/npm.log" || { notok "npm installs the SDKs"; exit 1; }
make -s build/depotd build/depotctl >&2 || { notok "build"; exit 1; }

"$UPSTREAM_PYTHON" "$top/regress/upstream/double.py" --port $((port + 1)) \
    >"$D/double.out" 2>"$D/double.err" &
DPID=$!
n=0
until grep -q "^listening $((port + 1))\$" "$D/double.out" 2>/dev/null; do
	n=$((n + 1))
	[ $n -lt 300 ] || { notok "the double listens"; exit 1; }
	sleep 0.1
done

depot_user
pg_start "$D/pg" || { notok "postgres starts"; exit 1; }
models="upstream \"u\" { url \"http://127.0.0.1:$((port + 1))/v1\" api openai api-key "test-upstream-key" }
model \"m\" upstream \"u\"
limits { requests-per-minute $N }"
mkdir -p "$D/files"
chown "$DEPOT_STORE_USER" "$D/files"
export DEPOT_STORAGE="file://$D/files" DEPOT_SWEEP=0
# Host A has one frontend, so that a key's concurrency of 1 is one slot.
DEPOT_PREFORK=1 depot_conf "$D/a" "$port" "$models"
DEPOT_PREFORK=2 depot_conf "$D/b" $((port + 2)) "$models"
depot_start "$D/b" || { notok "host B starts"; exit 1; }
PIDB=$DEPOT_PID URLB=$DEPOT_URL
depot_start "$D/a" || { notok "host A starts"; exit 1; }
ok "two depotd with limits { requests-per-minute $N } share one database"

k_openai=$(depot_key alice ws1)
k_anthropic=$(depot_key bob ws1)
k_slot=$(depot_key carol ws2)
k_budget=$(depot_key dave ws2)
k_budget2=$(depot_key erin ws2)
k_tpm=$(depot_key frank ws2)
k_none=$(depot_key gina ws2)
prefix() { echo "$1" | cut -c1-12; }
check "seven keys" test -n "$k_openai" -a -n "$k_tpm" -a -n "$k_none"

lset() {	# key, options
	k=$1
	shift
	depotctl_ limits set "$(prefix "$k")" "$@" >"$D/lset.out" 2>&1
}
lset "$k_slot" -r 0 -c 1
check "depotctl limits set: concurrency 1, no rate" \
    grep -q '^limits of key-.* set$' "$D/lset.out"
lset "$k_budget" -r 0 -d $BUDGET && lset "$k_budget2" -r 0 -d $BUDGET &&
    lset "$k_tpm" -r 0 -t $TPM && lset "$k_none" -r 0
check "depotctl limits set: budgets, tokens per minute, none" test $? -eq 0
depotctl_ limits show "$(prefix "$k_budget")" >"$D/lshow.out" 2>&1
check "depotctl limits show: the key's own, the rest default" \
    grep -q "	0	default	default	$BUDGET	default\$" "$D/lshow.out"
depotctl_ limits set nosuchkey -r 1 >/dev/null 2>&1
check "depotctl limits set: an unknown key fails" test $? -ne 0
depotctl_ limits set "$(prefix "$k_none")" -r x >/dev/null 2>&1
check "depotctl limits set: a limit not a number fails" test $? -ne 0

sdk() {	# part, environment
	part=$1
	shift
	env SDK_MODULES="$SDK_MODULES" DEPOT_URL="$DEPOT_URL" \
	    DEPOT_URL_B="$URLB" DOUBLE_URL="http://127.0.0.1:$((port + 1))" \
	    LIMIT_N=$N BUDGET=$BUDGET TPM=$TPM "$@" \
	    node "$here/limits.mjs" "$part" >"$D/$part.out" 2>&1
	grep -E '^(not )?ok ' "$D/$part.out"
	sed -n 's/^not ok/&/p;s/^# /# &/p' "$D/$part.out" >/dev/null
	failed=$((failed + $(grep -c '^not ok' "$D/$part.out")))
	grep -q '^\(not \)\?ok' "$D/$part.out" ||
	    { notok "$part ran (see $D/$part.out)"; sed 's/^/# /' \
	    "$D/$part.out" | head -20; }
}

sdk openaiRate KEY_OPENAI="$k_openai"
sdk anthropicRate KEY_ANTHROPIC="$k_anthropic"
sdk retries KEY_SLOT="$k_slot"
sdk tpm KEY_TPM="$k_tpm"
sdk budgetOne KEY_BUDGET="$k_budget"
# Host A lends at most half of what is left (SHARE_PARTS 2, prefork 1):
# the most host B can not yet see.
sdk budgetTwo KEY_BUDGET2="$k_budget2" SHARE_BOUND=$((BUDGET / 2))
grep '^# used=' "$D/budgetOne.out" "$D/budgetTwo.out" | sed 's/^/# /'

# A key without limits: answered, and no rate headers.
curl -s -D "$D/none.h" -o "$D/none.b" -H "authorization: Bearer $k_none" \
    -H 'content-type: application/json' -d '{"model":"m","messages":[
    {"role":"user","content":"hi"}]}' "$DEPOT_URL/v1/chat/completions"
check "a key with no limits is answered" grep -q '^HTTP/1.1 200' "$D/none.h"
check "a key with no limits gets no x-ratelimit headers" \
    sh -c "! grep -qi '^x-ratelimit' '$D/none.h'"

# The usage rows: written in batches, owned by each request's key.
sleep 0.5
q() { "$PG_BIN/psql" -X -q -d "$DEPOT_PG_CONNINFO" -Atc "$1"; }
rows=$(q "select count(*) from usage u join api_keys k on k.id = u.key_id
    where k.prefix = '$(prefix "$k_openai")'")
check "usage: one row for each of the openai key's $((N + 1)) requests" \
    test "$rows" = $((N + 1))
st=$(q "select string_agg(status::text, ',' order by at) from usage u
    join api_keys k on k.id = u.key_id where k.prefix =
    '$(prefix "$k_openai")'")
check "usage: statuses are $N times 200, then 429" \
    test "$st" = "$(printf '200,%.0s' $(seq $N))429"
ok_row=$(q "select count(*) from usage u join api_keys k on k.id = u.key_id
    join users us on us.id = u.user_id join workspaces w on
    w.id = u.workspace_id where k.prefix = '$(prefix "$k_openai")' and
    us.name = 'alice' and w.name = 'ws1' and u.model = 'm' and
    u.replica like 'http://127.0.0.1:$((port + 1))/v1%' and
    u.status = 200 and u.tokens_in > 0 and u.tokens_out > 0 and
    u.ttfb_us > 0 and u.duration_us >= u.ttfb_us")
check "usage: user, workspace, model, replica, tokens, ttfb, duration" \
    test "$ok_row" = $N
depotctl_ usage -b user >"$D/usage.out" 2>&1
check "depotctl usage -b user: alice made $((N + 1)) requests" \
    grep -q "^alice	$((N + 1))	" "$D/usage.out"
depotctl_ usage -b model >"$D/usage-m.out" 2>&1
check "depotctl usage -b model: one line for model m" \
    grep -q '^m	[0-9]*	[0-9]*	[0-9]*$' "$D/usage-m.out"
depotctl_ usage -b day >"$D/usage-d.out" 2>&1
check "depotctl usage -b day: today" \
    grep -q "^$(date -u +%Y-%m-%d)	" "$D/usage-d.out"
depotctl_ usage -b nonsense >/dev/null 2>&1
check "depotctl usage -b nonsense fails" test $? -ne 0
w=$(q "select count(distinct host) > 0 and sum(tokens) > 0 from (select
    'x' host, tokens from limit_windows where period = 'day') s")
check "limit_windows holds the day's tokens" test "$w" = t

echo "# limits: $failed failed"
exit $((failed > 0))
