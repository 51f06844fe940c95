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

# regress/route/suite.sh: the model routes' core (fe_model.c,
# fe_catalog.c, fe_upcall.c) against the upstream double: the models
# listing in both dialects, the checks made before anything goes
# upstream, what the upstream receives, the mapping of its failures
# into the caller's envelope, a stall, a client that leaves, and a
# slow reader of a long stream; and (keepalive.py) the reuse of
# kept-alive upstream connections, one the upstream closed while idle,
# and one it closed under a request.  The translation matrix is the
# models suite's (regress/models).
# Ports ROUTE_PORT (18570) and the two after.

[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"
. "$top/regress/harness/tap.sh"
. "$top/regress/harness/upstream.sh"
w=${ROUTE_WORK:-$top/build/regress-route}
port=${ROUTE_PORT:-18570}
dport=$((port + 1))
cleanup() {
	trap - EXIT INT TERM
	depot_stop
	upstream_stop
	pg_stop "$w/pg"
}
if [ "$(id -u)" -ne 0 ]; then
	notok "the route suite needs root (depotd drops privileges)"
	exit 1
fi
rm -rf "$w"; mkdir -p "$w"; chmod 755 "$w"
trap cleanup EXIT INT TERM
pg_start "$w/pg" || { notok "PostgreSQL did not start"; exit 1; }
depot_user
upstream_start "$w" "$dport" ||
    { notok "the upstream double did not start"; exit 1; }
u=$UPSTREAM_URL/v1
depot_conf "$w" "$port" "
upstream \"oa\" { url \"$u\" api openai api-key \"test-upstream-key\"
	idle-timeout 2s }
upstream \"an\" { url \"$u\" api anthropic api-key \"test-upstream-key\"
	idle-timeout 2s }
upstream \"ob\" { url \"$u\" api openai api-key \"test-upstream-key\" }
model \"m1\" upstream \"oa\" { remote-name \"remote-m1\" }
model \"m2\" upstream \"ob\"
model \"ma\" upstream \"an\" { remote-name \"remote-ma\" }
upstream \"ka\" { url \"http://127.0.0.1:$((port + 2))/v1\" api openai
	api-key \"k\" }
model \"mk\" upstream \"ka\"
"
depot_start "$w" || { notok "depotd did not start"; exit 1; }
key=$(depot_key alice default)
# A sanitizer build's memory figures are not the daemon's.
grep -q __asan_init "$DEPOTD" && export ROUTE_ASAN=1
python3 "$top/regress/route/route.py" "$DEPOT_URL" "$key" "$dport" \
    "$(for t in 0 1 2 3; do depot_child "frontend $t"; done | tr '\n' ' ')" ||
    notok "route.py stopped early"
python3 "$top/regress/route/keepalive.py" "$DEPOT_URL" "$key" \
    "$((port + 2))" \
    "$(for t in 0 1 2 3; do depot_child "frontend $t"; done | tr '\n' ' ')" \
    "$w/depotd.log" || notok "keepalive.py stopped early"
exit 0
