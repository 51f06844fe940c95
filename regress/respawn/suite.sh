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

# regress/respawn/suite.sh: frontends that stop turning or die are
# replaced.  The real depotd against a private PostgreSQL: a frontend
# stopped with SIGSTOP (to the master, a loop that spins) is logged with
# what it served, killed and started again in its slot, and the port
# answers every health check after; a frontend killed with SIGKILL is
# replaced with working channels (uploads and downloads through the
# new one), with the configuration of the last reload; the rate limit
# holds replacements back but keeps the daemon serving; the storage
# helper's death still ends the daemon.  One "ok - ..." line per check.

[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"
. "$top/regress/harness/tap.sh"

work=${RESPAWN_WORK:-$top/build/regress-respawn}
port=${RESPAWN_PORT:-18480}
d=$work/depotd
log=$d/depotd.log
timeout_s=3

cleanup() {
	trap - EXIT INT TERM
	# A stopped frontend would hold the port past the daemon.
	[ -n "${DEPOT_PID:-}" ] && pkill -CONT -P "$DEPOT_PID" 2>/dev/null
	depot_stop
	pg_stop "$work/pg"
}

if [ "$(id -u)" -ne 0 ]; then
	notok "the respawn suite needs root"
	exit 1
fi
[ -d "$work/pg" ] && pg_stop "$work/pg"
rm -rf "$work"
mkdir -p "$work/bin"
trap cleanup EXIT
trap 'exit 1' INT TERM
cp "$DEPOTD" "$DEPOTCTL" "$work/bin/" || { notok "copy the binaries"; exit 1; }
DEPOTD=$work/bin/${DEPOTD##*/}
DEPOTCTL=$work/bin/${DEPOTCTL##*/}
pg_start "$work/pg" || { notok "PostgreSQL starts"; exit 1; }
depot_user
export DEPOT_PREFORK=2 DEPOT_MAX_SIZE=1M
depot_conf "$d" "$port" "frontend-timeout $timeout_s"

alive() {
	local st
	st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ]
}

wait_log() {	# extended regex, seconds
	local i
	for i in $(seq $(($2 * 10))); do
		grep -Eq -- "$1" "$log" && return 0
		sleep 0.1
	done
	return 1
}

# The pid of "frontend N" once it is another than old; "" after secs.
new_pid() {	# instance old seconds
	local i p
	for i in $(seq $(($3 * 10))); do
		p=$(depot_child "frontend $1")
		if [ -n "$p" ] && [ "$p" != "$2" ]; then
			echo "$p"
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# Twelve health checks in a row, each on a connection of its own.
healthz_row() {
	local i
	for i in $(seq 12); do
		[ "$(curl -s -m 2 -o /dev/null -w '%{http_code}' \
		    "$DEPOT_URL/healthz")" = 200 ] || return 1
	done
}

# Upload a file, download it, compare: the storage channel works.
roundtrip() {	# file
	local id
	id=$(curl -s -m 10 -H "Authorization: Bearer $alice" \
	    -F purpose=user_data -F "file=@$1" "$DEPOT_URL/v1/files" |
	    sed -n 's/.*"id": *"\(file-[0-9a-f]*\)".*/\1/p')
	[ -n "$id" ] || return 1
	curl -s -m 10 -H "Authorization: Bearer $alice" \
	    -o "$work/got" "$DEPOT_URL/v1/files/$id/content" &&
	    cmp -s "$1" "$work/got"
}

roundtrips() {	# file count
	local i
	for i in $(seq "$2"); do
		roundtrip "$1" || return 1
	done
}

if ! depot_start "$d"; then
	notok "depotd starts"
	cat "$log" >&2
	exit 1
fi
ok "depotd starts with frontend-timeout $timeout_s"
alice=$(depot_key alice default)
check "a key for alice" test -n "$alice"
head -c 20000 /dev/urandom >"$work/small"
check "an upload and its download work before anything" \
    roundtrips "$work/small" 2

# Each peer holds a channel from every frontend: the same count after
# the replacements says the dead ones' went and the new ones' came.
sockset() {	# pid: its sockets' inodes, one a line, sorted
	find "/proc/${1:-0}/fd" -lname 'socket:*' -printf '%l\n' 2>/dev/null |
	    sort
}
sockset "$(depot_child extract)" >"$work/ext0"
sockset "$(depot_child broker)" >"$work/brk0"
ext0=$(wc -l <"$work/ext0")
brk0=$(wc -l <"$work/brk0")

# --- a frontend that stops turning -------------------------------------

old=$(depot_child "frontend 0")
t0=$(date +%s%N)
kill -STOP "$old"
check "frontend 0 stopped: the master logs that it has not turned" \
    wait_log "master\[$DEPOT_PID\]: frontend 0 \(pid $old\) has not turned for [0-9]+ s, .*; killing it" $((timeout_s + 5))
new=$(new_pid 0 "$old" 5)
t1=$(date +%s%N)
check "a new frontend 0 is running (pid ${new:-none}, was $old)" \
    test -n "$new"
check "the stopped one is gone" sh -c "! kill -0 $old 2>/dev/null"
check "the master logs it started again" \
    wait_log "frontend 0 started again \(pid $new\)" 2
check "and ready again" wait_log "frontend 0 ready again \(pid $new\)" 5
check "twelve /healthz in a row pass after the replacement" healthz_row
echo "# stopped to replaced: $(((t1 - t0) / 1000000)) ms (frontend-timeout $timeout_s s)"
check "the daemon did not go down (master $DEPOT_PID alive)" \
    alive "$DEPOT_PID"

# While one is stopped, a connection the kernel gives its socket hangs;
# the replacement takes new ones within about a second of the kill.
old=$(depot_child "frontend 1")
kill -STOP "$old"
wait_log "frontend 1 \(pid $old\) has not turned" $((timeout_s + 5))
t0=$(date +%s%N)
new=$(new_pid 1 "$old" 5)
ok=0
for i in $(seq 30); do
	healthz_row && { ok=1; break; }
	sleep 0.1
done
t1=$(date +%s%N)
check "frontend 1 stopped: replaced and serving ($(((t1 - t0) / 1000000)) ms after the kill line)" \
    test "$ok" = 1 -a -n "$new"

# --- what it was serving ------------------------------------------------

# A slow upload keeps a request in flight; both frontends stop, and the
# line of the one serving it names it.
head -c 300000 /dev/urandom >"$work/slow"
curl -s -m 30 --limit-rate 20k -H "Authorization: Bearer $alice" \
    -F purpose=user_data -F "file=@$work/slow" "$DEPOT_URL/v1/files" \
    >/dev/null 2>&1 &
slow=$!
sleep 2
p0=$(depot_child "frontend 0")
p1=$(depot_child "frontend 1")
kill -STOP "$p0" "$p1"
check "the line names the request in flight: its id, method and path" \
    wait_log "has not turned for [0-9]+ s, 1 request in flight at its last heartbeat, the oldest id=[0-9a-f]+ \"POST /v1/files\" for [0-9]+ s; killing it" $((timeout_s + 5))
new_pid 0 "$p0" 5 >/dev/null
new_pid 1 "$p1" 5 >/dev/null
wait "$slow" 2>/dev/null
check "both replaced, twelve /healthz in a row pass" healthz_row

# --- a frontend that dies -----------------------------------------------

for n in 0 1; do
	old=$(depot_child "frontend $n")
	kill -KILL "$old"
	check "frontend $n killed: the master logs it is replacing it" \
	    wait_log "frontend $n \(pid $old\) killed by signal 9; replacing it" 3
	new=$(new_pid "$n" "$old" 5)
	check "frontend $n killed: a new one is running (pid ${new:-none})" \
	    test -n "$new"
	check "the storage helper dropped the dead one's channel" \
	    wait_log "storage\[[0-9]+\]: frontend $n channel closed" 3
done
wait_log "frontend 1 ready again" 5
check "both frontends new: uploads and downloads work (storage wired)" \
    roundtrips "$work/small" 4
check "twelve /healthz in a row pass" healthz_row
sockset "$(depot_child extract)" >"$work/ext1"
sockset "$(depot_child broker)" >"$work/brk1"
ext1=$(wc -l <"$work/ext1")
brk1=$(wc -l <"$work/brk1")
extnew=$(comm -13 "$work/ext0" "$work/ext1" | wc -l)
brknew=$(comm -13 "$work/brk0" "$work/brk1" | wc -l)
check "the extract child holds as many channels ($ext1, was $ext0), two of them new ($extnew)" \
    test "$ext1" -eq "$ext0" -a "$extnew" -eq 2
check "and the broker ($brk1, was $brk0; $brknew new)" \
    test "$brk1" -eq "$brk0" -a "$brknew" -eq 2

# --- a reload, then a replacement --------------------------------------

head -c 1500000 /dev/urandom >"$work/big"
check "before the reload a 1.5 MB upload is refused (max-size 1M)" \
    sh -c "! roundtrip '$work/big' 2>/dev/null"
sed -i 's/max-size 1M/max-size 2M/' "$d/depotd.conf"
kill -HUP "$DEPOT_PID"
wait_log "master\[$DEPOT_PID\]: reloaded " 10
for n in 0 1; do
	old=$(depot_child "frontend $n")
	kill -KILL "$old"
	new_pid "$n" "$old" 5 >/dev/null
done
wait_log "frontend 1 ready again \(pid $(depot_child "frontend 1")\)" 5
wait_log "frontend 0 ready again \(pid $(depot_child "frontend 0")\)" 5
check "replacements after a reload have its configuration (2M upload works)" \
    roundtrips "$work/big" 2
check "depotctl show status lists both frontends, running" \
    sh -c "[ \"\$('$DEPOTCTL' -s '$DEPOT_SOCK' show status |
    grep '^frontend ' | grep -vc '(')\" -eq 2 ]"

# --- the rate limit -----------------------------------------------------

# Killed again and again, frontend 1 is replaced at once five times a
# minute, then after a wait that doubles.
limited=0
for i in $(seq 12); do
	old=$(depot_child "frontend 1")
	[ -n "$old" ] && kill -KILL "$old"
	if wait_log "frontend 1 replaced [0-9]+ times in 60 s; the next in [0-9]+ s" 1; then
		limited=1
		break
	fi
	new_pid 1 "$old" 10 >/dev/null
done
check "past five in a minute, a replacement waits (rate limit logged)" \
    test "$limited" = 1
check "meanwhile the other frontend serves: twelve /healthz pass" healthz_row
check "and frontend 1 comes back after the wait" \
    test -n "$(new_pid 1 "$old" 10)"
check "the daemon is still up" alive "$DEPOT_PID"

# --- the storage helper is not replaced ------------------------------

master=$DEPOT_PID
kill -KILL "$(depot_child storage)"
for i in $(seq 100); do
	alive "$master" || break
	sleep 0.1
done
wait "$master"
rc=$?
DEPOT_PID=
check "the storage helper killed: the daemon exits non-zero ($rc)" \
    test "$rc" -ne 0 -a "$rc" -ne 127
check "and the master logs lost child: storage" \
    grep -q "master\[$master\]: lost child: storage" "$log"
check "no frontend was started again for it" \
    sh -c "! sed -n '/lost child: storage/,\$p' '$log' |
    grep -q 'started again'"

echo "# $failed failed"
[ "$failed" -eq 0 ]
