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

# regress/broker/suite.sh: the broker's leases, against the project's
# own backend (depot-sandboxd on a unix socket, reached the way
# `sandbox local' reaches it: from a root holding only the socket, with
# the sandbox group) and against regress/broker/minimal.py, a second
# backend written from SPEC section 7 alone, over TCP with a token.
# The minimal backend again over https, with a throw-away CA made by
# openssl(1) and named by ca-file, then with a ca-file of another CA.
# test_broker_peer plays the master and a frontend of a real broker.
# regress/broker/https.sh then runs a whole depotd on it.
# Ports 18701 to 18703, 18711 and 18712 (BROKER_PORT overrides the
# first; the others follow it).

[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/regress/harness/depotd.sh"
. "$top/regress/harness/tap.sh"

work=${BROKER_WORK:-$top/build/regress-broker}
port=${BROKER_PORT:-18701}
peer=$top/build/regress/test_broker_peer
sbx_pid=
min_pid=
tls_pid=

cleanup() {
	trap - EXIT INT TERM
	# Only the daemons this suite started.
	[ -n "$sbx_pid" ] && kill "$sbx_pid" 2>/dev/null
	[ -n "$min_pid" ] && kill "$min_pid" 2>/dev/null
	[ -n "$tls_pid" ] && kill "$tls_pid" 2>/dev/null
	command -v e2e_stop >/dev/null && e2e_stop
	command -v hostile_stop >/dev/null && hostile_stop
	wait 2>/dev/null
}
trap cleanup EXIT
trap 'exit 1' INT TERM

make -s build/depotd build/depot-sandboxd "$peer" >&2 ||
    { echo "not ok - build"; exit 1; }
depot_user
rm -rf "$work"
mkdir -p "$work/sock" "$work/ws"
chmod 755 "$work" "$work/sock"

# Lines of the driver, tagged with the backend they ran against.
run_peer() {	# tag conf [socket token-file]
	local tag=$1
	shift
	"$peer" "$top/build/depotd" "$@" >"$work/$tag.out" 2>"$work/$tag.err"
	local rc=$?
	sed -n "s/^\(not \)*ok - /&$tag: /p" "$work/$tag.out" |
	    sed 's/ regress\/unit\/test_broker_peer.c:[0-9]*://'
	grep -c '^ok - ' "$work/$tag.out" >"$work/$tag.n"
	return $rc
}

# depot-sandboxd, as `sandbox local' starts it.
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/token"
chmod 600 "$work/token"
"$top/build/depot-sandboxd" -d -r "$top/cmd/depot-sandboxd/runner.py" \
    -w "$work/ws" -t "$work/token" -s "$work/sock/sbx.sock" \
    -u _depotsbx >"$work/sandboxd.log" 2>&1 &
sbx_pid=$!
for i in $(seq 50); do [ -S "$work/sock/sbx.sock" ] && break; sleep 0.1; done
cat >"$work/local.conf" <<CONF
database "dbname=unused"
storage "file://$work/files"
sandbox local { directory "$work/ws" max-sessions 4 }
CONF
chmod 600 "$work/local.conf"
run_peer sandboxd "$work/local.conf" 4 "$work/sock/sbx.sock" "$work/token"
check "the broker against depot-sandboxd: every check passed" \
    test $? -eq 0
check "the broker against depot-sandboxd: every check ran" \
    test "$(cat "$work/sandboxd.n")" -ge 20

# The second backend, over TCP.
python3 "$top/regress/broker/minimal.py" "$port" tok-minimal-0123456789 \
    >"$work/minimal.log" 2>&1 &
min_pid=$!
for i in $(seq 50); do grep -q listening "$work/minimal.log" && break
	sleep 0.1; done
cat >"$work/minimal.conf" <<CONF
database "dbname=unused"
storage "file://$work/files"
sandbox "http://127.0.0.1:$port" {
	token "tok-minimal-0123456789"
	max-sessions 4
}
CONF
chmod 600 "$work/minimal.conf"
run_peer minimal "$work/minimal.conf" 4
check "the broker against the minimal protocol-v1 backend: every check \
passed" test $? -eq 0
check "the broker against the minimal backend: every check ran" \
    test "$(cat "$work/minimal.n")" -ge 20

# The same backend by name: the master resolves it for the broker.
sed "s|http://127.0.0.1:$port|http://localhost:$port|" "$work/minimal.conf" \
    >"$work/byname.conf"
chmod 600 "$work/byname.conf"
run_peer byname "$work/byname.conf" 4
check "the broker reaches a backend named by host name, resolved for it" \
    test $? -eq 0

# A backend that is not there: a lease is a 502, not a hang.
cat >"$work/gone.conf" <<CONF
database "dbname=unused"
storage "file://$work/files"
sandbox "http://127.0.0.1:$((port + 1))" { token "tok-minimal-0123456789" }
CONF
chmod 600 "$work/gone.conf"
"$peer" "$top/build/depotd" "$work/gone.conf" 1 >"$work/gone.out" 2>&1
check "an unreachable backend: the lease is refused with 502" \
    grep -q "^not ok - .*a lease opens (status 502" "$work/gone.out"

# https: a CA and a server certificate for localhost and 127.0.0.1, and
# a second CA that signed nothing here.
tls=$work/tls
tport=$((port + 2))
mkdir -p "$tls"
make_ca() {	# name
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
	    -nodes -days 2 -subj "/CN=depotd regress $1" \
	    -keyout "$tls/$1.key" -out "$tls/$1.pem"
}
make_certs() {
	make_ca ca && make_ca other &&
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
	    -nodes -subj /CN=localhost -keyout "$tls/server.key" \
	    -out "$tls/server.csr" &&
	printf '%s\n' 'subjectAltName=DNS:localhost,IP:127.0.0.1' \
	    'basicConstraints=CA:FALSE' 'extendedKeyUsage=serverAuth' \
	    >"$tls/server.ext" &&
	openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.pem" \
	    -CAkey "$tls/ca.key" -CAcreateserial -days 2 \
	    -extfile "$tls/server.ext" -out "$tls/server.pem"
}
make_certs >"$tls/openssl.log" 2>&1
check "openssl makes a CA and a certificate for localhost" test $? -eq 0
python3 "$top/regress/broker/minimal.py" "$tport" tok-minimal-0123456789 \
    "$tls/server.pem" "$tls/server.key" >"$work/tls.log" 2>&1 &
tls_pid=$!
for i in $(seq 50); do grep -q listening "$work/tls.log" && break
	sleep 0.1; done
# The backend's own count, asked with the right CA: "sessions requests".
tls_health() {
	curl -s --max-time 5 --cacert "$tls/ca.pem" \
	    "https://localhost:$tport/health" |
	    sed -n 's/.*"sessions": *\([0-9]*\), *"requests": *\([0-9]*\).*/\1 \2/p'
}
tls_conf() {	# file ca
	cat >"$1" <<CONF
database "dbname=unused"
storage "file://$work/files"
sandbox "https://localhost:$tport" {
	token "tok-minimal-0123456789"
	ca-file "$2"
	max-sessions 4
}
CONF
	chmod 600 "$1"
}
tls_conf "$work/https.conf" "$tls/ca.pem"
run_peer https "$work/https.conf" 4
check "the broker against the minimal backend over https, checked with \
its ca-file: every check passed" test $? -eq 0
check "over https: every check ran" test "$(cat "$work/https.n")" -ge 20
check "over https: code ran and its output file was named as produced" \
    grep -q '^ok - .*the written file is named as produced' \
    "$work/https.out"

# Another CA: refused at the handshake, before any request is sent.
tls_conf "$work/wrongca.conf" "$tls/other.pem"
before=$(tls_health)
"$peer" "$top/build/depotd" "$work/wrongca.conf" 1 >"$work/wrongca.out" \
    2>&1
after=$(tls_health)
check "a ca-file of another CA: the lease is refused with 502, the \
certificate named" grep -q \
    '^not ok - .*a lease opens (status 502: .*certificate' \
    "$work/wrongca.out"
check "no request reached the backend, no session is left ($before \
-> $after)" test -n "$before" -a "$after" = "$before" -a "${after% *}" = 0

# A reload that brings the right ca-file: the bundle reaches the broker.
BROKER_PEER_RELOAD=$work/https.conf "$peer" "$top/build/depotd" \
    "$work/wrongca.conf" 1 >"$work/reload.out" 2>"$work/reload.err"
rc=$?
sed -n 's/^\(not \)*ok - /&reload: /p' "$work/reload.out" |
    sed 's/ regress\/unit\/test_broker_peer.c:[0-9]*://'
check "a reload from another CA's ca-file to the right one: every check \
passed" test $rc -eq 0 -a "$(grep -c '^ok - ' "$work/reload.out")" -ge 7

# The whole daemon, with the same backend.
. "$top/regress/broker/https.sh"
https_e2e
# And with a hostile one.
. "$top/regress/broker/hostile.sh"
hostile_e2e
exit $((failed > 0))
