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

# regress/harness/depotd.sh: run the real depotd for tests and `make run'.
# Sourced, after pg.sh:
#
#	depot_user			create the users if missing: _depotd
#					(frontends, broker), DEPOT_STORE_USER
#					(the storage helper), _depotsbx,
#					_depotext (the extract child)
#	depot_conf DIR PORT [extra]	write DIR/depotd.conf (mode 600) for a
#					local store in DIR/files (with
#					DEPOT_SANDBOX_LOCAL=1, sandbox local
#					in DIR/sandbox; DEPOT_FILES_OPTS more
#					files options); the admin key is
#					DEPOT_ADMIN_KEY, else the suites'
#					public test key (make run sets a
#					random one)
#	depot_start DIR [flags]		start depotd -d in the background;
#					DEPOT_PID, DEPOT_URL, DEPOT_SOCK set
#	depot_stop			SIGTERM and wait
#	depot_key DIR USER WORKSPACE	create user, workspace and key;
#					prints the token
#	depotctl_ ARGS			depotctl on DEPOT_SOCK
#	depot_child TITLE		the pid of the master's child titled
#					"depotd: TITLE"

top=${top:-$(cd "$(dirname "$0")/../.." && pwd)}
DEPOTD=${DEPOTD:-$top/build/depotd}
DEPOTCTL=${DEPOTCTL:-$top/build/depotctl}
# The storage helper's own user: the store and its keys are its alone.
DEPOT_STORE_USER=${DEPOT_STORE_USER:-_depotstore}

depot_user() {
	id _depotd >/dev/null 2>&1 ||
	    useradd -r -M -d /var/empty -s /usr/sbin/nologin _depotd
	id "$DEPOT_STORE_USER" >/dev/null 2>&1 ||
	    useradd -r -M -d /var/empty -s /usr/sbin/nologin \
	    "$DEPOT_STORE_USER"
	# Jailed code runs as _depotsbx; the broker (_depotd) reaches the
	# sandbox socket through the group.
	id _depotsbx >/dev/null 2>&1 ||
	    useradd -r -M -d /var/empty -s /usr/sbin/nologin _depotsbx
	id -nG _depotd | grep -qw _depotsbx || usermod -aG _depotsbx _depotd
	id _depotext >/dev/null 2>&1 ||
	    useradd -r -M -d /var/empty -s /usr/sbin/nologin _depotext
}

depot_conf() {	# dir port [extra lines]
	local d=$1 port=$2 extra=${3:-}
	mkdir -p "$d/files" "$d/run"
	# -R: a store left by an older run may still be _depotd's.
	chown -R "$DEPOT_STORE_USER" "$d/files"
	chmod 750 "$d/files"
	cat >"$d/depotd.conf" <<CONF
listen on 127.0.0.1 port $port
prefork ${DEPOT_PREFORK:-2}
control socket "$d/run/depotd.sock"
database "$DEPOT_PG_CONNINFO"
storage "${DEPOT_STORAGE:-file://$d/files}"${DEPOT_STORAGE_OPTS:-}
files {
	max-size ${DEPOT_MAX_SIZE:-64M}
	sweep-interval ${DEPOT_SWEEP:-0}
	writing-grace ${DEPOT_GRACE:-1d}${DEPOT_FILES_OPTS:+
	$DEPOT_FILES_OPTS}
}
admin-key "${DEPOT_ADMIN_KEY:-dpt-admin-test-key-0123456789abcdef}"
$([ -n "${DEPOT_SANDBOX_LOCAL:-}" ] &&
    echo "sandbox local { directory \"$d/sandbox\" }")
$extra
CONF
	chmod 600 "$d/depotd.conf"
}

depot_start() {	# dir [flags]
	local d=$1 i
	shift
	DEPOT_SOCK=$d/run/depotd.sock
	DEPOT_PORT=$(sed -n 's/^listen on .* port \([0-9]*\)$/\1/p' \
	    "$d/depotd.conf" | head -1)
	DEPOT_URL=http://127.0.0.1:$DEPOT_PORT
	"$DEPOTD" -d "$@" -f "$d/depotd.conf" >>"$d/depotd.log" 2>&1 &
	DEPOT_PID=$!
	for i in $(seq 100); do
		curl -fs -o /dev/null "$DEPOT_URL/healthz" && return 0
		kill -0 "$DEPOT_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "depotd did not come up; see $d/depotd.log" >&2
	return 1
}

depot_stop() {
	[ -n "${DEPOT_PID:-}" ] || return 0
	kill "$DEPOT_PID" 2>/dev/null
	wait "$DEPOT_PID" 2>/dev/null
	DEPOT_PID=
}

depotctl_() {
	"$DEPOTCTL" -s "$DEPOT_SOCK" "$@"
}

depot_key() {	# user workspace
	depotctl_ user add "$1" >/dev/null 2>&1
	depotctl_ workspace add "$2" >/dev/null 2>&1
	depotctl_ key create -u "$1" -w "$2" | sed -n 's/^token	//p'
}

depot_child() {	# title
	local p
	for p in $(pgrep -P "$DEPOT_PID"); do
		case $(ps -o args= -p "$p") in
		"depotd: $1"|"depotd: $1 "*) echo "$p"; return 0 ;;
		esac
	done
	return 1
}
