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

# regress/sessions/suite.sh: requests that run code in a named
# container (issue 20, item 2).  A real depotd with `sandbox local' and
# PostgreSQL, the upstream double behind both upstream apis scripting
# the code_execution calls, and the official SDKs (openai 7 and 6 on
# responses, @anthropic-ai/sdk 1 and 0 on messages; sessions.mjs): two
# turns in one container, the second reading the file and the Python
# variable the first left; another tenant's container refused as a
# missing one; an expired one refused; a container used by two requests
# at once (the second refused with 409).  Prints one "ok - " or
# "not ok - " line per check.
#
# SESSIONS_PORT (21000) moves the ports: depotd at +0, the double at
# +10.

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
here=$top/regress/sessions
base=${SESSIONS_PORT:-21000}
uport=$((base + 10))
D=$top/build/regress-sessions
UPSTREAM_KEY=test-upstream-key

. "$top/regress/harness/tap.sh"
. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"
. "$top/regress/harness/sdk.sh"
. "$top/regress/harness/upstream.sh"

[ -f "$D/pg/pgdata/postmaster.pid" ] && pg_stop "$D/pg"
rm -rf "$D"
mkdir -p "$D/tmp"

cleanup() {
	depot_stop
	upstream_stop
	pg_stop "$D/pg"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE

node_ready "$D/node.log" ||
    { notok "a Node.js 20 or later (see $D/node.log)"; exit 1; }
sdk_install "$D/npm.log" || { notok "npm installs the SDKs"; exit 1; }
make -s build/depotd build/depotctl build/depot-sandboxd >&2 ||
    { notok "build"; exit 1; }
if ! upstream_start "$D" "$uport"; then
	notok "the upstream double starts (stderr below)"
	sed 's/^/# /' "$D/double.err"
	exit 1
fi

depot_user
pg_start "$D/pg" || { notok "postgres starts"; exit 1; }
u=http://127.0.0.1:$uport/v1
export DEPOT_SWEEP=0 DEPOT_MAX_SIZE=64M
export DEPOT_ADMIN_KEY=${DEPOT_ADMIN_KEY:-dpt-admin-test-key-0123456789abcdef}
MODELS_CONF=$(cat <<CONF
max-tool-iterations 3
containers { expires-after 20m max-per-key 8 }
upstream "chat" { url "$u" api openai api-key "$UPSTREAM_KEY"
	timeout 60s connect-timeout 5s idle-timeout 30s }
upstream "anth" { url "$u" api anthropic api-key "$UPSTREAM_KEY"
	anthropic-version "2023-06-01" idle-timeout 30s }
model "m-chat" upstream "chat" { remote-name "remote/chat-model" }
model "m-anth" upstream "anth" { remote-name "remote-anth-model"
	max-tokens 1024 }
CONF
)
A=$D/a
DEPOT_SANDBOX_LOCAL=1 depot_conf "$A" "$base" "$MODELS_CONF"
if depot_start "$A"; then
	ok "depotd starts with sandbox local and two upstreams"
else
	notok "depotd starts with sandbox local (log below)"
	sed 's/^/# /' "$A/depotd.log"
	exit 1
fi

status=0
n=0
for run in ${SESSIONS_ONLY:-openai openai6 @anthropic-ai/sdk anthropic0}; do
	n=$((n + 1))
	key=$(depot_key "sessions$n" default)
	okey=$(depot_key "intruder$n" default)
	[ -n "$key" ] && [ -n "$okey" ] ||
	    { notok "keys for sessions$n"; status=1; continue; }
	env -u OPENAI_API_KEY -u OPENAI_BASE_URL -u ANTHROPIC_API_KEY \
	    -u ANTHROPIC_AUTH_TOKEN -u ANTHROPIC_BASE_URL \
	    DEPOT_URL="$DEPOT_URL" DEPOT_KEY="$key" OTHER_KEY="$okey" \
	    PSQL="$PG_BIN/psql" \
	    UPSTREAM_URL="$UPSTREAM_URL" SDK_MODULES="$SDK_MODULES" \
	    node "$here/sessions.mjs" "$run" || status=1
done
# One line per container reused (issue 20, item 7).
check "the log names each container reused" \
    grep -q 'container cntr_[0-9a-f]* reused' "$A/depotd.log"
depot_stop
[ "$failed" = 0 ] && [ "$status" = 0 ]
