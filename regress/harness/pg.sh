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

# regress/harness/pg.sh: a private PostgreSQL cluster for the harness.
# Sourced, not run:
#
#	. regress/harness/pg.sh
#	pg_start DIR	create (once) and start a cluster in DIR/pgdata with
#			its socket in DIR; exports PGHOST, PGPORT, PGUSER and
#			DEPOT_PG_CONNINFO (database "depot", created if absent)
#	pg_stop DIR	fast shutdown; returns once postmaster.pid is gone
#	pg_restart DIR
#
# initdb and postgres refuse to run as root, so as root every server
# command runs as the postgres user.  The server is stopped by its pid
# and awaited on its pid file: PID 1 on our test machines reaps orphans
# late, so kill -0 would keep seeing the zombie.  Quiet on success.

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}

_pg_as_postgres() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

# Creates DIR and hands it to postgres; the components this creates are
# made 755 so that postgres can reach the socket and data directories.
_pg_mkdir() {
	local d missing
	d=$1
	missing=
	while [ ! -d "$d" ]; do
		missing="$d $missing"
		d=$(dirname "$d")
	done
	for d in $missing; do
		mkdir -m 755 "$d" || return 1
	done
	if [ "$(id -u)" -eq 0 ]; then
		chown postgres:postgres "$1" || return 1
	fi
	chmod 755 "$1" || return 1
	if ! _pg_as_postgres test -w "$1"; then
		echo "pg.sh: $1 is not writable by postgres" \
		    "(is a parent directory not traversable?)" >&2
		return 1
	fi
}

_pg_running() {
	[ -f "$1/pgdata/postmaster.pid" ] &&
	    _pg_as_postgres "$PG_BIN/pg_ctl" -D "$1/pgdata" status \
	    >/dev/null 2>&1
}

# The port a running cluster listens on: line 4 of postmaster.pid.
_pg_running_port() {
	sed -n 4p "$1/pgdata/postmaster.pid"
}

_pg_try_start() {	# dir port
	_pg_as_postgres "$PG_BIN/pg_ctl" -D "$1/pgdata" -l "$1/pg.log" \
	    -w -t 60 start -o "-p $2 -k $1 -c listen_addresses=127.0.0.1 \
	    -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
	    >/dev/null 2>&1
}

# A port that was free when last used, from PGPORT, or a random one;
# then the next ones while the server reports the address in use.
_pg_start_on_free_port() {
	local dir port tries
	dir=$1
	if [ -n "${PGPORT:-}" ]; then
		port=$PGPORT
	elif [ -f "$dir/pgport" ]; then
		port=$(cat "$dir/pgport")
	else
		port=$((20000 + $(od -An -N2 -tu2 /dev/urandom) % 20000))
	fi
	tries=0
	while [ $tries -lt 20 ]; do
		if _pg_try_start "$dir" "$port"; then
			echo "$port" >"$dir/pgport"
			return 0
		fi
		if ! tail -n 20 "$dir/pg.log" 2>/dev/null |
		    grep -q -i -e 'could not bind' -e 'already in use' \
		    -e 'could not create any TCP/IP sockets'; then
			echo "pg.sh: postgres did not start, see $dir/pg.log" >&2
			return 1
		fi
		if [ -n "${PGPORT:-}" ]; then
			echo "pg.sh: port $PGPORT is in use" >&2
			return 1
		fi
		port=$((20000 + $(od -An -N2 -tu2 /dev/urandom) % 20000))
		tries=$((tries + 1))
	done
	echo "pg.sh: no free port found" >&2
	return 1
}

pg_start() {
	local dir port
	[ -n "${1:-}" ] || { echo "usage: pg_start DIR" >&2; return 1; }
	case $1 in
	/*)	dir=$1 ;;
	*)	dir=$(pwd)/$1 ;;
	esac
	_pg_mkdir "$dir" || return 1
	dir=$(cd "$dir" && pwd)
	if [ ! -f "$dir/pgdata/PG_VERSION" ]; then
		rm -rf "$dir/pgdata"
		if ! _pg_as_postgres "$PG_BIN/initdb" -D "$dir/pgdata" \
		    -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync \
		    >"$dir/initdb.log" 2>&1; then
			echo "pg.sh: initdb failed, see $dir/initdb.log" >&2
			return 1
		fi
	fi
	if _pg_running "$dir"; then
		port=$(_pg_running_port "$dir")
	else
		_pg_start_on_free_port "$dir" || return 1
		port=$(cat "$dir/pgport")
	fi
	export PGHOST="$dir" PGPORT="$port" PGUSER=postgres
	export DEPOT_PG_CONNINFO="host=$dir port=$port user=postgres dbname=depot"
	if [ "$("$PG_BIN/psql" -X -q -d postgres -Atc \
	    "select count(*) from pg_database where datname = 'depot'")" \
	    != 1 ]; then
		"$PG_BIN/createdb" depot || return 1
	fi
}

pg_stop() {
	local dir pid n
	[ -n "${1:-}" ] || { echo "usage: pg_stop DIR" >&2; return 1; }
	dir=$1
	[ -f "$dir/pgdata/postmaster.pid" ] || return 0
	pid=$(head -n 1 "$dir/pgdata/postmaster.pid")
	# SIGINT is the fast shutdown: abort sessions, checkpoint, exit.
	kill -INT "$pid" 2>/dev/null || {
		# Nobody there: a stale pid file from a crash.
		_pg_running "$dir" || return 0
	}
	n=0
	while [ -f "$dir/pgdata/postmaster.pid" ]; do
		n=$((n + 1))
		if [ $n -gt 1200 ]; then
			echo "pg.sh: postgres $pid did not stop" >&2
			return 1
		fi
		sleep 0.05
	done
}

pg_restart() {
	pg_stop "$1" && pg_start "$1"
}
