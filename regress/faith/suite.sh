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

# regress/faith/suite.sh: issue 23's "faithful to the caller" checks
# (usage chunks only when asked, streamed usage equal to plain with its
# cached split, named stop sequences, ids in the caller's dialect)
# through the official SDKs, openai 7 and 6 on chat completions and
# Responses, @anthropic-ai/sdk 1 and 0 on Messages, against a real
# depotd whose three upstreams (api openai, the same with responses,
# api anthropic) are the double playing llama-server
# (regress/upstream/double_llama.py).  faith.mjs holds the checks.
#
# FAITH_PORT (20010) and FAITH_UPSTREAM_PORT (20011) move the ports.

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
here=$top/regress/faith
port=${FAITH_PORT:-20010}
uport=${FAITH_UPSTREAM_PORT:-20011}
D=$top/build/regress-faith
UPSTREAM_KEY=test-upstream-key

. "$top/regress/harness/tap.sh"
. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"
. "$top/regress/harness/sdk.sh"
. "$top/regress/harness/upstream.sh"

[ -f "$D/pg/pgdata/postmaster.pid" ] && pg_stop "$D/pg"
rm -rf "$D"
mkdir -p "$D"

cleanup() {
	depot_stop
	upstream_stop
	pg_stop "$D/pg"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE

node_ready "$D/node.log" ||
    { notok "a Node.js 20 or later (see $D/node.log)"; exit 1; }
if ! sdk_install "$D/npm.log"; then
	notok "npm installs the SDKs (log below)"
	sed 's/^/# /' "$D/npm.log"
	exit 1
fi
make -s build/depotd build/depotctl >&2 || { notok "build"; exit 1; }
if ! upstream_start "$D" "$uport"; then
	notok "the upstream double starts (stderr below)"
	sed 's/^/# /' "$D/double.err"
	exit 1
fi

depot_user
pg_start "$D/pg" || { notok "postgres starts"; exit 1; }
u=http://127.0.0.1:$uport/v1
export DEPOT_SWEEP=0
export DEPOT_ADMIN_KEY=${DEPOT_ADMIN_KEY:-dpt-admin-test-key-0123456789abcdef}
depot_conf "$D" "$port" "$(cat <<CONF
upstream "chat" { url "$u" api openai api-key "$UPSTREAM_KEY"
	idle-timeout 5s }
upstream "resp" { url "$u" api openai responses api-key "$UPSTREAM_KEY"
	idle-timeout 5s }
upstream "anth" { url "$u" api anthropic api-key "$UPSTREAM_KEY"
	anthropic-version "2023-06-01" idle-timeout 5s }
model "m-chat" upstream "chat" { remote-name "llama-chat" }
model "m-resp" upstream "resp" { remote-name "llama-resp" }
model "m-anth" upstream "anth" { remote-name "llama-anth"
	max-tokens 256 }
CONF
)"
if ! depot_start "$D"; then
	notok "depotd starts (log below)"
	sed 's/^/# /' "$D/depotd.log"
	exit 1
fi
key=$(depot_key faith default)
[ -n "$key" ] || { notok "a key for the checks"; exit 1; }

status=0
for alias in ${FAITH_ONLY:-openai openai6 @anthropic-ai/sdk anthropic0}; do
	env -u OPENAI_API_KEY -u OPENAI_BASE_URL -u ANTHROPIC_API_KEY \
	    -u ANTHROPIC_AUTH_TOKEN -u ANTHROPIC_BASE_URL \
	    DEPOT_URL="$DEPOT_URL" DEPOT_KEY="$key" \
	    UPSTREAM_URL="http://127.0.0.1:$uport" \
	    SDK_MODULES="$SDK_MODULES" \
	    node "$here/faith.mjs" "$alias" || status=1
done
if kill -0 "$DEPOT_PID" 2>/dev/null; then
	ok "depotd is still up"
else
	notok "depotd is still up"
fi
[ "$failed" = 0 ] && [ "$status" = 0 ]
