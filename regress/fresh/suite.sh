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
# regress/fresh/suite.sh: the README's first command on a fresh machine.
# A clean clone of HEAD in a directory only root may enter (as /root),
# a build-only package absent, and `make run' as the very first command
# must print DEPOT_BASE_URL and answer /healthz.
#
# Under CI=true (a throw-away machine) libbsd-dev is really purged, and
# `make run' installs it again (the trap makes sure of it).  Elsewhere,
# where other builds share the machine, its absence is simulated: a
# pkg-config, dpkg-query and apt-get in front of PATH say that libbsd-dev
# is missing and fail every lookup until `make run' "installs" it through
# apt-get, which then only leaves a marker.  Either way a Makefile that
# looks its flags up before installing its packages fails here.

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
# Outside build/: the Makefile reads every *.d under build/.  Made
# below by mktemp, so that cleanup never removes what it did not make.
D=
port=${FRESH_PORT:-18341}
limit=${FRESH_TIMEOUT:-900}

. "$top/regress/harness/pg.sh"

failures=0
ok() { echo "ok - $1"; }
notok() { echo "not ok - $1"; failures=$((failures + 1)); }

runpid=
made=

# The process group that `make run' leads, or nothing.  A group is
# signalled only when its id is a number above 1, is neither this
# script's group nor its session, and names a live session whose
# leader is the make started here: the background job itself, or its
# child when setsid(1) had to fork.  Anything else (an empty or torn
# run.sid, a make that exited and whose pid another session has since
# taken) is left alone.
run_group() {
	local sid own_pgid own_sid pid ppid pgid lsid comm

	[ -n "$runpid" ] && [ -s "$D/run.sid" ] || return 1
	sid=$(cat "$D/run.sid")
	case $sid in
	''|0*|*[!0-9]*)	return 1 ;;
	esac
	[ "$sid" -gt 1 ] || return 1
	own_pgid=$(ps -o pgid= -p $$ | tr -d ' ')
	own_sid=$(ps -o sid= -p $$ | tr -d ' ')
	[ -n "$own_pgid" ] && [ -n "$own_sid" ] || return 1
	[ "$sid" != "$own_pgid" ] && [ "$sid" != "$own_sid" ] || return 1
	# shellcheck disable=SC2046
	set -- $(ps -o pid=,ppid=,pgid=,sid=,comm= -p "$sid")
	[ $# -eq 5 ] || return 1
	pid=$1 ppid=$2 pgid=$3 lsid=$4 comm=$5
	[ "$pid" = "$sid" ] && [ "$pgid" = "$sid" ] && [ "$lsid" = "$sid" ] ||
	    return 1
	[ "$pid" = "$runpid" ] || [ "$ppid" = "$runpid" ] || return 1
	# sh only until it has exec'd make.
	[ "$comm" = make ] || [ "$comm" = sh ] || return 1
	echo "$sid"
}

# Stops `make run': run-local.sh stops depotd and PostgreSQL on
# SIGTERM.  (dash's kill takes no "--": the group goes as -PID.)
stop_run() {
	local group i

	group=$(run_group) || return 0
	kill -TERM "-$group" 2>/dev/null
	for i in $(seq 60); do
		kill -0 "$runpid" 2>/dev/null || break
		sleep 0.5
	done
	if kill -0 "$runpid" 2>/dev/null && group=$(run_group); then
		echo "# make run ignored SIGTERM for 30 s: SIGKILL"
		kill -KILL "-$group" 2>/dev/null
	fi
}

cleanup() {
	[ -n "$made" ] || return
	if [ -n "$runpid" ]; then
		stop_run
		wait "$runpid" 2>/dev/null
	fi
	pg_stop "$D/depotd/var/pg" 2>/dev/null
	cp "$D/run.log" "$top/build/regress-fresh-run.log" 2>/dev/null
	# make run's state, kept outside the checkout (run-local.sh).
	case $(readlink "$D/depotd/var" 2>/dev/null) in
	/var/lib/depotd-run/[0-9]*)	rm -rf "$(readlink "$D/depotd/var")" ;;
	esac
	rm -rf "$D"
	if [ "${CI:-}" = true ] && ! dpkg -s libbsd-dev >/dev/null 2>&1; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		    --no-install-recommends libbsd-dev >/dev/null
	fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# 0700, as mktemp makes it: like a clone under /root, a directory that
# neither postgres nor depotd's unprivileged children may enter.
D=$(mktemp -d "${TMPDIR:-/tmp}/depotd-fresh.XXXXXX") || exit 1
made=1
mkdir -m 755 "$D/fake" || exit 1

# The fakes: libbsd-dev is "absent" until apt-get "installs" it.
fake_tools() {
	marker=$D/fake/libbsd-dev.installed
	cat >"$D/fake/pkg-config" <<EOF
#!/bin/sh
[ -e "$marker" ] && exec /usr/bin/pkg-config "\$@"
echo "Package libbsd-overlay was not found (simulated)" >&2
exit 1
EOF
	cat >"$D/fake/dpkg-query" <<EOF
#!/bin/sh
for a; do
	if [ "\$a" = libbsd-dev ] && [ ! -e "$marker" ]; then
		echo "dpkg-query: no packages found matching libbsd-dev" >&2
		exit 1
	fi
done
exec /usr/bin/dpkg-query "\$@"
EOF
	cat >"$D/fake/apt-get" <<EOF
#!/bin/sh
case " \$* " in
*" install "*)
	for a; do
		case \$a in
		-*|install) ;;
		libbsd-dev) : >"$marker" ;;
		*) dpkg -s "\$a" >/dev/null 2>&1 ||
		    { echo "simulated apt-get: \$a is really missing" >&2; exit 1; } ;;
		esac
	done ;;
esac
exit 0
EOF
	chmod 755 "$D/fake/pkg-config" "$D/fake/dpkg-query" "$D/fake/apt-get"
	PATH=$D/fake:$PATH
	export PATH
}

start=$(date +%s)
if [ "${CI:-}" = true ]; then
	DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq libbsd-dev \
	    >/dev/null 2>&1
	if dpkg -s libbsd-dev >/dev/null 2>&1; then
		notok "libbsd-dev is purged"
	else
		ok "libbsd-dev is purged"
	fi
	how="libbsd-dev purged"
else
	fake_tools
	if pkg-config --cflags libbsd-overlay >/dev/null 2>&1; then
		notok "the simulation hides libbsd-overlay from pkg-config"
	else
		ok "the simulation hides libbsd-overlay from pkg-config"
	fi
	how="libbsd-dev absence simulated"
fi

git -c advice.detachedHead=false clone -q "$top" "$D/depotd" || { notok "git clone"; exit 1; }
ok "a clean clone of HEAD, in a directory only root may enter"

# `make run' in a session of its own, so that the whole tree stops:
# the session leader's pid names its process group.
(cd "$D/depotd" && DEPOT_RUN_PORT=$port exec setsid -w sh -c \
    'echo $$ >"$1"; exec make run' sh "$D/run.sid") >"$D/run.log" 2>&1 &
runpid=$!
url=
while [ $(($(date +%s) - start)) -lt "$limit" ]; do
	url=$(sed -n 's/^DEPOT_BASE_URL=//p' "$D/run.log")
	[ -n "$url" ] && break
	kill -0 "$runpid" 2>/dev/null || break
	sleep 1
done
took=$(($(date +%s) - start))
if [ -n "$url" ]; then
	ok "the first make run prints DEPOT_BASE_URL ($how, ${took}s)"
else
	notok "the first make run prints DEPOT_BASE_URL ($how)"
	tail -n 30 "$D/run.log" | sed 's/^/# /'
	exit 1
fi
echo "# fresh clone to DEPOT_BASE_URL: ${took}s"

st=$(curl -s -o "$D/healthz" -w '%{http_code}' "$url/healthz")
if [ "$st" = 200 ]; then
	ok "/healthz answers 200 on the first try"
else
	notok "/healthz answers 200 on the first try (got $st)"
fi
case $(readlink "$D/depotd/var") in
/var/lib/depotd-run/[0-9]*)
	ok "./var links to a directory postgres can enter" ;;
*)	notok "./var links to a directory postgres can enter" ;;
esac
if [ "${CI:-}" = true ]; then
	if dpkg -s libbsd-dev >/dev/null 2>&1; then
		ok "make run installed libbsd-dev again"
	else
		notok "make run installed libbsd-dev again"
	fi
else
	if [ -e "$D/fake/libbsd-dev.installed" ]; then
		ok "make run asked apt-get for libbsd-dev"
	else
		notok "make run asked apt-get for libbsd-dev"
	fi
fi

# `make check' on a machine without a Node.js 20 or later (Debian 12's
# own is 18): the SDK suites' harness fetches one from the npm registry.
# A node that says it is 18 stands in front of PATH.
check_node_fetch() {
	local v

	mkdir -m 755 "$D/old-node" || return
	printf '#!/bin/sh\necho 18\n' >"$D/old-node/node"
	chmod 755 "$D/old-node/node"
	(
		PATH=$D/old-node:$PATH
		NODE_HOME=$D/node
		. "$top/regress/harness/node.sh"
		node_ready "$D/node.log" || exit 1
		[ "$(command -v node)" = "$D/node/bin/node" ] || exit 2
		v=$(node --version) && [ "$v" = v22.23.5 ] || exit 3
		[ "$(npm --version)" = 10.9.4 ] || exit 4
		node -e 'if (typeof File !== "function") process.exit(1)' ||
		    exit 5
	)
	v=$?
	if [ "$v" = 0 ]; then
		ok "no Node.js 20 on PATH: the harness fetches Node.js 22 and npm"
	else
		notok "no Node.js 20 on PATH: the harness fetches Node.js 22" \
		    "and npm (step $v, log below)"
		sed 's/^/# /' "$D/node.log" 2>/dev/null
	fi
}
check_node_fetch

echo "# $failures failed"
[ "$failures" -eq 0 ]
