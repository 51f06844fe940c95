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

# regress/coderun/suite.sh: code execution end to end (issue 14, SPEC
# 6.2 and 7).  A real depotd with `sandbox local' (depot-sandboxd) and
# PostgreSQL, the scripted upstream double (regress/upstream/double.py)
# behind two upstreams (one per api), and the official SDKs (openai 7
# and 6 on chat.completions and responses, @anthropic-ai/sdk 1 and 0 on
# messages; installed as regress/sdk/suite.sh does): a CSV uploaded,
# a chart drawn by the model's code, its file downloaded; with the
# provider-native tool declared (Messages, Responses), the run as the
# provider's own blocks, streamed and not.  Then the faults
# (faults.sh): depot-sandboxd killed mid-run; against
# regress/broker/minimal.py, a refused seed, a GetFile that fails and a
# client that goes away mid-round; an unreachable backend; no sandbox.
# Prints one "ok - " or "not ok - " line per check.
#
# CODERUN_PORT (18800) moves the ports: depotd at +0..+3, the double
# at +10, minimal.py at +11, nothing at +12.  CODERUN_ONLY="openai.mjs:
# openai ..." runs only the named SDK scripts; CODERUN_PARTS="chat m-chat
# plain,..." only the parts whose names contain one of these.

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
here=$top/regress/coderun
base=${CODERUN_PORT:-18800}
uport=$((base + 10))
mport=$((base + 11))
dead=$((base + 12))
D=$top/build/regress-coderun
UPSTREAM_KEY=test-upstream-key
MIN_TOKEN=tok-coderun-minimal-0123456789
ITER=3

. "$top/regress/harness/tap.sh"
for f in regress/harness/upstream.sh regress/harness/sdk.sh \
    regress/broker/minimal.py cmd/depotd/fe_coderun.c; do
	[ -f "$top/$f" ] || { notok "$f exists"; exit 1; }
done
. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"
. "$top/regress/harness/sdk.sh"
. "$top/regress/harness/upstream.sh"

[ -f "$D/pg/pgdata/postmaster.pid" ] && pg_stop "$D/pg"
rm -rf "$D"
mkdir -p "$D/tmp"

MIN_PID=
cleanup() {
	depot_stop
	upstream_stop
	[ -n "$MIN_PID" ] && kill "$MIN_PID" 2>/dev/null &&
	    wait "$MIN_PID" 2>/dev/null
	pg_stop "$D/pg"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE

# minimal.py prints "listening PORT" once ready; 30 s, as for the
# double (the pyenv shim can be slow on a busy machine).
listening() {	# pid outfile
	local i
	for i in $(seq 300); do
		grep -q '^listening ' "$2" && return 0
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	return 1
}

node_ready "$D/node.log" ||
    { notok "a Node.js 20 or later (see $D/node.log)"; exit 1; }
if sdk_install "$D/npm.log"; then
	ok "npm installs the SDKs into $SDK_MODULES"
else
	notok "npm installs the SDKs (log below)"
	sed 's/^/# /' "$D/npm.log"
	exit 1
fi
make -s build/depotd build/depotctl build/depot-sandboxd >&2 ||
    { notok "build"; exit 1; }
if upstream_start "$D" "$uport"; then
	ok "the upstream double listens on $uport"
else
	notok "the upstream double starts (stderr below)"
	sed 's/^/# /' "$D/double.err"
	exit 1
fi
# Its "code" runs as python3 -c, unjailed: tests only, on 127.0.0.1.
/usr/bin/python3 "$top/regress/broker/minimal.py" "$mport" "$MIN_TOKEN" \
    >"$D/minimal.out" 2>"$D/minimal.err" &
MIN_PID=$!
if listening "$MIN_PID" "$D/minimal.out"; then
	ok "minimal.py listens on $mport"
else
	notok "minimal.py starts (stderr below)"
	sed 's/^/# /' "$D/minimal.err"
	exit 1
fi

depot_user
pg_start "$D/pg" || { notok "postgres starts"; exit 1; }
u=http://127.0.0.1:$uport/v1
export DEPOT_SWEEP=0 DEPOT_MAX_SIZE=64M
export DEPOT_ADMIN_KEY=${DEPOT_ADMIN_KEY:-dpt-admin-test-key-0123456789abcdef}
# The upstreams and models every depotd of the suite has.
MODELS_CONF=$(cat <<CONF
max-tool-iterations $ITER
upstream "chat" { url "$u" api openai api-key "$UPSTREAM_KEY"
	timeout 60s connect-timeout 5s idle-timeout 30s }
upstream "anth" { url "$u" api anthropic api-key "$UPSTREAM_KEY"
	anthropic-version "2023-06-01" idle-timeout 30s }
model "m-chat" upstream "chat" { remote-name "remote/chat-model" }
model "m-anth" upstream "anth" { remote-name "remote-anth-model"
	max-tokens 1024 }
CONF
)

# depotd A: sandbox local.
A=$D/a
DEPOT_SANDBOX_LOCAL=1 depot_conf "$A" "$base" "$MODELS_CONF"
if depot_start "$A"; then
	ok "depotd starts with sandbox local and two upstreams"
else
	notok "depotd starts with sandbox local (log below)"
	sed 's/^/# /' "$A/depotd.log"
	exit 1
fi

# The "sessions" of a backend's GET /health, read on stdin; no Python,
# which may take a second to start: a count is read within one.
count_sessions() {
	local n
	n=$(sed -n 's/.*"sessions": *\([0-9][0-9]*\).*/\1/p')
	echo "${n:-none}"
}

# depot-sandboxd's own view: GET /health on its socket, with the token
# the master wrote into the run directory.
sbx_sessions() {	# dir: prints the session count
	local sock tok
	sock=$(find "$1/run" -name depot-sandboxd.sock 2>/dev/null | head -1)
	tok=$1/run/depot-sandboxd.token
	[ -S "$sock" ] && [ -f "$tok" ] || { echo none; return; }
	curl -s --max-time 5 --unix-socket "$sock" \
	    -H "Authorization: Bearer $(cat "$tok")" http://localhost/health |
	    count_sessions
}
for i in $(seq 50); do
	[ "$(sbx_sessions "$A")" = 0 ] && break
	sleep 0.1
done
check "depot-sandboxd answers /health with 0 sessions" \
    [ "$(sbx_sessions "$A")" = 0 ]

other=$(depot_key tenant2 ws2)
[ -n "$other" ] || { notok "a key for the other tenant"; exit 1; }

status=0
n=0
keys=
for run in ${CODERUN_ONLY:-openai.mjs:openai openai.mjs:openai6 \
    anthropic.mjs:@anthropic-ai/sdk anthropic.mjs:anthropic0}; do
	n=$((n + 1))
	key=$(depot_key "coderun$n" default)
	if [ -z "$key" ]; then
		notok "a key for coderun$n"
		status=1
		continue
	fi
	keys="$keys $key"
	env -u OPENAI_API_KEY -u OPENAI_BASE_URL -u ANTHROPIC_API_KEY \
	    -u ANTHROPIC_AUTH_TOKEN -u ANTHROPIC_BASE_URL \
	    DEPOT_URL="$DEPOT_URL" DEPOT_KEY="$key" OTHER_KEY="$other" \
	    UPSTREAM_URL="$UPSTREAM_URL" CODERUN_ITERATIONS=$ITER \
	    SDK_MODULES="$SDK_MODULES" \
	    node "$here/${run%%:*}" "${run#*:}" || status=1
done

# Every SDK run over: no session left behind.
for i in $(seq 50); do
	[ "$(sbx_sessions "$A")" = 0 ] && break
	sleep 0.1
done
check "after the SDK runs depot-sandboxd holds 0 sessions\
 ($(sbx_sessions "$A"))" [ "$(sbx_sessions "$A")" = 0 ]

. "$here/faults.sh"
faults_local "$A"

leak=0
for k in "$UPSTREAM_KEY" $keys "$other"; do
	grep -qF -- "$k" "$A/depotd.log" && leak=1
done
check "depotd's log names neither the upstream key nor a caller's key" \
    [ "$leak" = 0 ]
depot_stop

faults_minimal "$D/b" $((base + 1))
faults_unreachable "$D/c" $((base + 2))
faults_nosandbox "$D/d" $((base + 3))
faults_no_outputs "$D/e" $((base + 4))

[ "$failed" = 0 ] && [ "$status" = 0 ]
