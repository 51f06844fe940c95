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

# regress/pools/suite.sh: upstream pools (issue 21 item 1).  Three
# upstream doubles are the url lines of one upstream; pools.py drives
# them (503, slow, killed) through depotd.  POOLS_PORT (default 18470)
# is depotd's; the doubles take the three ports after it.

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
port=${POOLS_PORT:-18470}
D=$top/build/regress-pools
UPSTREAM_PYTHON=${UPSTREAM_PYTHON:-python3}

. "$top/regress/harness/tap.sh"
. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"

[ -f "$D/pg/pgdata/postmaster.pid" ] && pg_stop "$D/pg"
rm -rf "$D"
mkdir -p "$D"

pids=
cleanup() {
	depot_stop
	for p in $pids; do kill "$p" 2>/dev/null; done
	pg_stop "$D/pg"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE

make -s build/depotd build/depotctl >&2 || { notok "build"; exit 1; }

double() {	# port
	"$UPSTREAM_PYTHON" "$top/regress/upstream/double.py" --port "$1" \
	    >"$D/double-$1.out" 2>"$D/double-$1.err" &
	pids="$pids $!"
	eval "pid_$1=$!"
}
for i in 1 2 3; do double $((port + i)); done
for i in 1 2 3; do
	n=0
	until grep -q "^listening $((port + i))\$" "$D/double-$((port + i)).out" \
	    2>/dev/null; do
		n=$((n + 1))
		[ $n -lt 300 ] || { notok "double on $((port + i))"; exit 1; }
		sleep 0.1
	done
done
ok "three upstream doubles listen"

depot_user
pg_start "$D/pg" || { notok "postgres starts"; exit 1; }
r=http://127.0.0.1
depot_conf "$D" "$port" "$(cat <<CONF
upstream "gpus" {
	url "$r:$((port + 1))/v1"
	url "$r:$((port + 2))/v1"
	url "$r:$((port + 3))/v1"
	api openai
	api-key "test-upstream-key"
	connect-timeout 2s idle-timeout 5s
	failover 2
}
model "m-pool" upstream "gpus" { remote-name "gpt-test" }
CONF
)"
"$DEPOTD" -n -f "$D/depotd.conf" >"$D/check.out" 2>&1
check "depotd -n accepts three url lines" [ $? -eq 0 ]
"$DEPOTD" -nv -f "$D/depotd.conf" 2>&1 | grep -c '^	url ' >"$D/urls"
check "depotd -nv prints the three url lines" [ "$(cat "$D/urls")" = 3 ]
sed 's|^	url "\(.*\):'$((port + 3))'/v1"|	url "\1:'$((port + 1))'/v1"|' \
    "$D/depotd.conf" >"$D/dup.conf"
"$DEPOTD" -n -f "$D/dup.conf" >"$D/dup.out" 2>&1
check "the same url twice is an error, not silence" \
    grep -q 'twice' "$D/dup.out"

if depot_start "$D"; then
	ok "depotd starts with a pool of three"
else
	notok "depotd starts (log below)"
	sed 's/^/# /' "$D/depotd.log"
	exit 1
fi
key=$(depot_key pooluser poolws)
[ -n "$key" ] || { notok "a key"; exit 1; }

eval "a=\$pid_$((port + 1)) b=\$pid_$((port + 2)) c=\$pid_$((port + 3))"
"$UPSTREAM_PYTHON" "$top/regress/pools/pools.py" "$DEPOT_URL" "$key" \
    "$((port + 1)):$a" "$((port + 2)):$b" "$((port + 3)):$c"
status=$?
exit $status
