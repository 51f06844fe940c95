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

# regress/daemon/suite.sh: the real depotd against a private PostgreSQL
# on loopback: processes and their users, lockdown, /healthz and
# /metrics, the access log, depotctl, -n and -nv, SIGHUP reloads, the
# HTTP layer (http_layer.py), the database going away and coming back,
# the control socket refusing non-root clients, and the whole daemon
# going down when any child but a frontend dies (frontends are replaced:
# regress/respawn).  One "ok - ..." / "not ok - ..." line
# per check.  Takes about a minute.

[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/regress/daemon
. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"

work=${DAEMON_WORK:-$top/build/regress-daemon}
port=${DAEMON_PORT:-18431}
d=$work/depotd
log=$d/depotd.log
header_timeout=2
body_timeout=3
per_address=4
http_extra="http { header-timeout $header_timeout body-timeout $body_timeout"
http_extra="$http_extra max-connections-per-address $per_address }"
. "$top/regress/harness/tap.sh"

cleanup() {
	trap - EXIT INT TERM
	depot_stop
	pg_stop "$work/pg"
}

for f in "$DEPOTD" "$DEPOTCTL"; do
	if [ ! -x "$f" ]; then
		notok "$f is missing: run make first"
		exit 1
	fi
done
if [ "$(id -u)" -ne 0 ]; then
	notok "the daemon suite needs root (depotd drops to _depotd and _depotstore)"
	exit 1
fi

# A fresh cluster and daemon directory each run.
[ -d "$work/pg" ] && pg_stop "$work/pg"
rm -rf "$work"
mkdir -p "$work"
trap cleanup EXIT
trap 'exit 1' INT TERM
# Private copies: other work in the tree may relink build/ meanwhile.
# Same names: the process titles derive from the program name.
mkdir -p "$work/bin" && cp "$DEPOTD" "$DEPOTCTL" "$work/bin/" ||
    { notok "copy the binaries"; exit 1; }
DEPOTD=$work/bin/${DEPOTD##*/}
DEPOTCTL=$work/bin/${DEPOTCTL##*/}
pg_start "$work/pg" || { notok "PostgreSQL starts"; exit 1; }
depot_user
export DEPOT_PREFORK=3 DEPOT_MAX_SIZE=1M
depot_conf "$d" "$port" "$http_extra"

# --- helpers ----------------------------------------------------------

# Alive and not a zombie waiting for a late reaper.
alive() {
	local st
	st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ]
}

http_code() {	# curl arguments; prints the status code
	curl -s -o "$work/body" -w '%{http_code}' "$@"
}

wait_log() {	# extended regex, seconds
	local i
	for i in $(seq $(($2 * 10))); do
		grep -Eq -- "$1" "$log" && return 0
		sleep 0.1
	done
	return 1
}

upload() {	# key file; prints the status code
	http_code -H "Authorization: Bearer $1" -F purpose=user_data \
	    -F "file=@$2" "$DEPOT_URL/v1/files"
}

# Polls GET /v1/files with key until status is want; the time taken is
# left in $waited (tenths of a second).
poll_status() {	# key want seconds
	local i code
	for i in $(seq $(($3 * 10))); do
		code=$(http_code -H "Authorization: Bearer $1" \
		    "$DEPOT_URL/v1/files")
		if [ "$code" = "$2" ]; then
			waited=$i
			return 0
		fi
		sleep 0.1
	done
	waited=$(($3 * 10))
	return 1
}

poll_healthz() {	# want seconds
	local i
	for i in $(seq $(($2 * 10))); do
		[ "$(http_code "$DEPOT_URL/healthz")" = "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# SO_REUSEPORT would let a second daemon share the port silently.
port_free() {
	! ss -Hltn "sport = :$port" | grep -q .
}

start_daemon() {
	if ! port_free; then
		notok "port $port is free before depotd starts"
		exit 1
	fi
	# Each run's log on its own; the earlier ones are kept in all.log.
	[ -f "$log" ] && cat "$log" >>"$work/all.log"
	: >"$log"
	if ! DEPOT_ENV_CANARY=master-only depot_start "$d"; then
		notok "depotd starts"
		cat "$log" >&2
		exit 1
	fi
}

# --- processes, users, lockdown ------------------------------------------

start_daemon
ok "depotd starts and /healthz answers 200"

# A second daemon on the same configuration must refuse to start, and
# leave the first one's control socket alone.
timeout 10 "$DEPOTD" -d -f "$d/depotd.conf" >"$work/second.out" 2>&1
rc=$?
check "a second depotd on the same port exits at once, non-zero ($rc)" \
    test "$rc" -ne 0 -a "$rc" -ne 124
check "and says the port is taken" grep -q "port $port is taken" "$work/second.out"
check "the first daemon's control socket still answers" \
    depotctl_ show status

check "master runs as root titled 'depotd: master'" \
    test "$(ps -o user=,args= -p "$DEPOT_PID" | awk '{ print $1, $2, $3 }')" \
    = "root depotd: master"
frontends=0
for p in $(pgrep -P "$DEPOT_PID"); do
	case $(ps -o args= -p "$p") in
	"depotd: frontend "*) frontends=$((frontends + 1)) ;;
	esac
done
check "prefork 3 gives exactly 3 frontends (found $frontends)" \
    test "$frontends" -eq 3

locked_down() {	# pid user
	local u g
	u=$(id -u "$2") g=$(id -g "$2")
	awk -v u="$u" -v g="$g" '
	    $1 == "Uid:" { uid = ($2 == u && $3 == u && $4 == u && $5 == u) }
	    $1 == "Gid:" { gid = ($2 == g && $3 == g && $4 == g && $5 == g) }
	    $1 == "Groups:" { grp = (NF == 1 || (NF == 2 && $2 == g)) }
	    $1 == "NoNewPrivs:" { nnp = ($2 == 1) }
	    END { exit !(uid && gid && grp && nnp) }' "/proc/$1/status"
}
for role in storage broker extract "frontend 0" "frontend 1" "frontend 2"; do
	p=$(depot_child "$role")
	if [ -z "$p" ]; then
		notok "a child titled 'depotd: $role' runs"
		continue
	fi
	case $role in
	storage)	user=_depotstore ;;
	extract)	user=_depotext ;;
	*)		user=_depotd ;;
	esac
	check "'depotd: $role' runs as $user:$user, no other groups, NoNewPrivs 1" \
	    locked_down "$p" "$user"
done
check "the storage helper's uid is not a frontend's" test \
    "$(stat -c %u "/proc/$(depot_child storage)")" != \
    "$(stat -c %u "/proc/$(depot_child "frontend 0")")"

# Children start from a fixed, minimal environment: nothing of the
# master's reaches them (DEPOT_ENV_CANARY is set for the master only;
# the master's own /proc environ is overwritten by its process title).
child_env() {	# pid
	tr '\0' '\n' <"/proc/$1/environ"
}
for role in storage broker extract "frontend 0" "frontend 1" "frontend 2"; do
	p=$(depot_child "$role")
	check "'depotd: $role' has only PATH in its environment, no canary" \
	    test "$(child_env "$p")" = "PATH=/usr/sbin:/usr/bin:/sbin:/bin"
done
# Landlock itself cannot be seen from outside; what can be seen is
# whether the kernel offers it and whether a child said it went without.
landlock_abi=$(python3 -c 'import ctypes
libc = ctypes.CDLL(None, use_errno=True)
print(libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1)))')
if [ "${landlock_abi:--1}" -ge 1 ]; then
	check "kernel has Landlock (ABI $landlock_abi): no child skipped its lockdown" \
	    sh -c "! grep -qi landlock '$log'"
else
	check "kernel lacks Landlock: every child says lockdown was skipped" \
	    test "$(grep -c 'landlock is not available' "$log")" -eq 6
fi
# A frontend has no business with files: beyond stdio only sockets,
# pipes and event descriptors.
fe_files() {	# pid
	local f t
	for f in /proc/"$1"/fd/*; do
		case ${f##*/} in 0|1|2) continue ;; esac
		t=$(readlink "$f")
		case $t in
		socket:*|pipe:*|anon_inode:*) ;;
		*) echo "$t" ;;
		esac
	done
}
p=$(depot_child "frontend 0")
check "frontend 0 holds no file or directory open ($(fe_files "$p" | head -3 |
    tr '\n' ' '))" test -z "$(fe_files "$p")"
check "the master has no other children" \
    test "$(pgrep -P "$DEPOT_PID" | wc -l)" -eq 6

# --- /healthz, /metrics, access log ---------------------------------------

code=$(http_code "$DEPOT_URL/healthz")
check "/healthz 200 JSON with database and store up" \
    python3 -c 'import json,sys; o=json.load(open(sys.argv[1]));
sys.exit(not (o["status"] == "ok" and o["database"] == "up" and
    o["store"] == "up" and sys.argv[2] == "200"))' "$work/body" "$code"

# One connection (curl reuses it) reaches one frontend, whose counters
# must move by exactly what was asked between the two scrapes.
u=$DEPOT_URL
curl -s -o "$work/m1" "$u/metrics" -o /dev/null "$u/healthz" \
    -o /dev/null "$u/healthz" -o /dev/null "$u/healthz" \
    -o /dev/null "$u/healthz" -o /dev/null "$u/healthz" \
    -o /dev/null "$u/no-such-route" -o "$work/m2" "$u/metrics"
metric() {	# file route status
	awk -v r="route=\"$2\"" -v s="status=\"$3\"" '
	    /^depotd_requests_total\{/ && index($1, r) && index($1, s) {
		n += $2 }
	    END { print n + 0 }' "$1"
}
fe_label() { sed -n 's/^depotd_up{frontend="\([0-9]*\)"} 1$/\1/p' "$1"; }
check "/metrics: both scrapes came from one frontend" \
    test -n "$(fe_label "$work/m1")" -a \
    "$(fe_label "$work/m1")" = "$(fe_label "$work/m2")"
check "/metrics: depotd_requests_total healthz 200 grew by 5" \
    test $(($(metric "$work/m2" healthz 200) - \
    $(metric "$work/m1" healthz 200))) -eq 5
check "/metrics: depotd_requests_total metrics 200 grew by 1" \
    test $(($(metric "$work/m2" metrics 200) - \
    $(metric "$work/m1" metrics 200))) -eq 1
check "/metrics: the 404 is counted" \
    test $(($(metric "$work/m2" notfound 404) - \
    $(metric "$work/m1" notfound 404))) -eq 1
check "/metrics: depotd_database_up 1" \
    grep -qx 'depotd_database_up 1' "$work/m2"
check "/metrics: Prometheus TYPE line for depotd_requests_total" \
    grep -qx '# TYPE depotd_requests_total counter' "$work/m2"

alice=$(depot_key alice default)
check "depot_key made a token for alice" test -n "$alice"
curl -s -D "$work/hdr" -o /dev/null -H "Authorization: Bearer $alice" \
    "$DEPOT_URL/v1/files?limit=5"
rid=$(sed -n 's/^request-id: \([0-9a-f]*\)\r$/\1/p' "$work/hdr")
xrid=$(sed -n 's/^x-request-id: \([0-9a-f]*\)\r$/\1/p' "$work/hdr")
check "response request-id and x-request-id agree" \
    test -n "$rid" -a "$rid" = "$xrid"
check "access log: 'GET /v1/files 200 in out ms user=alice id=<request-id>'" \
    wait_log "frontend [0-9]+\[[0-9]+\]: GET /v1/files 200 [0-9]+ [0-9]+ [0-9]+ user=alice id=$rid\$" 3
check "access log leaves the query string out" \
    sh -c "! grep -q 'limit=5' '$log'"

# --- depotctl -------------------------------------------------------------

depotctl_ show status >"$work/status" 2>&1
check "depotctl show status exits 0" test $? -eq 0
check "show status lists the master with its pid" \
    grep -Eq "^master +0 +$DEPOT_PID " "$work/status"
for role in storage broker extract "frontend 0" "frontend 1" "frontend 2"; do
	p=$(depot_child "$role")
	inst=0
	case $role in *" "*) inst=${role#* } ;; esac
	check "show status lists $role with pid $p" \
	    grep -Eq "^${role% *} +$inst +$p " "$work/status"
done
check "show status says the database is up" \
    grep -q "database up" "$work/status"

depotctl_ user add bob >"$work/out" 2>&1
check "depotctl user add bob" test $? -eq 0 -a -n "$(grep bob "$work/out")"
depotctl_ user add bob >/dev/null 2>&1
check "depotctl user add bob again fails" test $? -ne 0
depotctl_ workspace add team >"$work/out" 2>&1
check "depotctl workspace add team" test $? -eq 0
depotctl_ user list >"$work/out" 2>&1
check "depotctl user list shows alice and bob" \
    test "$(cut -f2 "$work/out" | sort | tr '\n' ' ')" = "alice bob "
depotctl_ workspace list >"$work/out" 2>&1
check "depotctl workspace list shows default and team" \
    test "$(cut -f2 "$work/out" | sort | tr '\n' ' ')" = "default team "

depotctl_ key create -u bob -w team >"$work/key" 2>&1
check "depotctl key create exits 0" test $? -eq 0
bob=$(sed -n 's/^token	//p' "$work/key")
check "key create prints a dpt- token of at least 128 bits" \
    test "${#bob}" -ge 26 -a "${bob#dpt-}" != "$bob"
check "the new token works (GET /v1/files 200)" \
    test "$(http_code -H "Authorization: Bearer $bob" \
    "$DEPOT_URL/v1/files")" = 200
depotctl_ key create -u nobody-here -w team >/dev/null 2>&1
check "key create for an unknown user fails" test $? -ne 0
depotctl_ key list >"$work/keys" 2>&1
check "key list shows bob's key by prefix, active" \
    grep -Eq "	${bob:0:12}\.\.\.	bob	team	.*	active$" "$work/keys"
check "key list never shows a token" \
    sh -c "! grep -qF -e '$bob' -e '$alice' '$work/keys'"
check "no token reaches the log" \
    sh -c "! grep -qF -e '$bob' -e '$alice' '$log'"

depotctl_ key revoke "${bob:0:12}" >"$work/out" 2>&1
check "depotctl key revoke by prefix" \
    test $? -eq 0 -a -n "$(grep revoked "$work/out")"
if poll_status "$bob" 401 7; then
	check "revoked key refused within the 5 s cache TTL (took $((waited / 10)).$((waited % 10)) s)" \
	    test "$waited" -le 62
else
	notok "revoked key refused within the 5 s cache TTL"
fi
check "401 message says 'API key revoked'" \
    grep -q '"API key revoked"' "$work/body"
depotctl_ key revoke "${bob:0:12}" >/dev/null 2>&1
check "revoking it again fails (no such key)" test $? -ne 0

depotctl_ key create -u bob -w team -e '3 seconds' >"$work/key" 2>&1
short=$(sed -n 's/^token	//p' "$work/key")
check "a key with -e '3 seconds' works at first" \
    test "$(http_code -H "Authorization: Bearer $short" \
    "$DEPOT_URL/v1/files")" = 200
check "then gets 401 once expired" poll_status "$short" 401 12
check "401 message says 'API key expired'" \
    grep -q '"API key expired"' "$work/body"

depotctl_ log verbose >"$work/out" 2>&1
check "depotctl log verbose" test $? -eq 0
check "the log says log verbose" wait_log "log verbose" 3
depotctl_ log brief >"$work/out" 2>&1
check "depotctl log brief" test $? -eq 0
check "the log says log brief" wait_log "log brief" 3

echo "sweep me" >"$work/sweep.txt"
curl -s -o "$work/up.json" -H "Authorization: Bearer $alice" \
    -F 'expires_after[anchor]=created_at' -F 'expires_after[seconds]=1' \
    -F "file=@$work/sweep.txt" "$DEPOT_URL/v1/files"
fid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' \
    "$work/up.json" 2>/dev/null)
check "an upload that expires after 1 s gives a file id" test -n "$fid"
blobs() { find "$d/files" -type f -name "*${fid#file-}*" | wc -l; }
check "its blob is in the store" test "$(blobs)" -ge 1
sleep 1.5
check "once expired it is 404 before any sweep" \
    test "$(http_code -H "Authorization: Bearer $alice" \
    "$DEPOT_URL/v1/files/$fid")" = 404
depotctl_ sweep >"$work/out" 2>&1
check "depotctl sweep exits 0" test $? -eq 0
check "depotctl sweep reports the expired file removed" \
    grep -Eq "^removed 1 files, 0 failed" "$work/out"
check "the blob is gone from the store" test "$(blobs)" -eq 0
check "the PostgreSQL row is gone" test "$("$PG_BIN/psql" -X -Atq -d depot \
    -c "select count(*) from files where id = '$fid'")" = 0

# --- -n and -nv -------------------------------------------------------------

"$DEPOTD" -n -f "$d/depotd.conf" >"$work/n.out" 2>&1
check "depotd -n on a good file exits 0" test $? -eq 0
"$DEPOTD" -nv -f "$d/depotd.conf" >"$work/nv" 2>"$work/out"
check "depotd -nv exits 0" test $? -eq 0
check "-nv prints the configuration (listen, prefork, max-size)" \
    test -n "$(grep "port $port" "$work/nv")" -a \
    -n "$(grep "prefork 3" "$work/nv")" -a -n "$(grep max-size "$work/nv")"
check "-nv prints no admin key" \
    sh -c "! grep -q dpt-admin-test-key '$work/nv'"
cp "$d/depotd.conf" "$work/broken.conf"
echo "no-such-keyword 12" >>"$work/broken.conf"
"$DEPOTD" -n -f "$work/broken.conf" >"$work/out" 2>&1
check "depotd -n on a broken file exits non-zero" test $? -ne 0
check "its error names the file and line" \
    grep -q "broken.conf:[0-9]" "$work/out"
"$DEPOTD" -nv -f "$work/broken.conf" >/dev/null 2>&1
check "depotd -nv on a broken file exits non-zero" test $? -ne 0

# --- SIGHUP and depotctl reload -------------------------------------------------

head -c 300000 /dev/urandom >"$work/300k"
check "a 300 KB upload under max-size 1M is 200" \
    test "$(upload "$alice" "$work/300k")" = 200
DEPOT_MAX_SIZE=100K depot_conf "$d" "$port" "$http_extra"
kill -HUP "$DEPOT_PID"
check "SIGHUP with max-size 100K: the log says reloaded" \
    wait_log "reloaded $d/depotd.conf" 3
sleep 0.3
check "the same 300 KB upload is now 413" \
    test "$(upload "$alice" "$work/300k")" = 413
cp "$work/broken.conf" "$d/depotd.conf"
kill -HUP "$DEPOT_PID"
check "SIGHUP with a broken file: the log says reload failed" \
    wait_log "reload failed" 3
check "the daemon still serves /healthz" poll_healthz 200 3
check "the running configuration stays (300 KB still 413)" \
    test "$(upload "$alice" "$work/300k")" = 413
echo small >"$work/small"
check "and a small upload is still 200" \
    test "$(upload "$alice" "$work/small")" = 200
depotctl_ reload >"$work/out" 2>&1
check "depotctl reload of a broken file exits non-zero" test $? -ne 0
DEPOT_MAX_SIZE=1M depot_conf "$d" "$port" "$http_extra"
n=$(grep -c "reloaded $d/depotd.conf" "$log")
depotctl_ reload >"$work/out" 2>&1
check "depotctl reload of a good file exits 0" test $? -eq 0
check "and answers reloaded" grep -qx "reloaded $d/depotd.conf" "$work/out"
# depotctl answers only once every child has acknowledged: no waiting.
check "the log already says reloaded once more" \
    test "$(grep -c "reloaded $d/depotd.conf" "$log")" -eq $((n + 1))
check "max-size 1M again, at once: the 300 KB upload is 200" \
    test "$(upload "$alice" "$work/300k")" = 200
DEPOT_MAX_SIZE=200K depot_conf "$d" "$port" "$http_extra"
depotctl_ reload >/dev/null 2>&1
check "depotctl reload to max-size 200K: at once the 300 KB upload is 413" \
    test "$(upload "$alice" "$work/300k")" = 413
head -c 150000 /dev/urandom >"$work/150k"
check "and 150 KB under the new cap is 200" \
    test "$(upload "$alice" "$work/150k")" = 200
DEPOT_MAX_SIZE=1M depot_conf "$d" "$port" "$http_extra"
depotctl_ reload >/dev/null 2>&1
check "all 3 frontends and the other children survived the reloads" \
    test "$(pgrep -P "$DEPOT_PID" | wc -l)" -eq 6

# --- the HTTP layer ---------------------------------------------------------------

python3 "$here/http_layer.py" "$port" "$alice" $((1024 * 1024)) \
    "$header_timeout" "$body_timeout" "$DEPOT_PREFORK" "$per_address" \
    >"$work/http.out" 2>&1
cat "$work/http.out"
failed=$((failed + $(grep -c '^not ok - ' "$work/http.out")))
check "http_layer.py ran to the end" \
    test "$(grep -c '^ok - \|^not ok - ' "$work/http.out")" -ge 30

# --- the control socket refuses non-root clients ------------------------------

runuser -u _depotd -- "$DEPOTCTL" -s "$DEPOT_SOCK" show status \
    >"$work/out" 2>&1
check "depotctl as _depotd fails" test $? -ne 0
check "and prints nothing from the daemon" \
    sh -c "! grep -q ROLE '$work/out'"
# With the socket's file mode out of the way (CAP_DAC_OVERRIDE kept as
# an ambient capability), the peer-credential check must still refuse.
setpriv --reuid=nobody --regid=nogroup --clear-groups \
    --inh-caps=+dac_override --ambient-caps=+dac_override \
    "$DEPOTCTL" -s "$DEPOT_SOCK" show status >"$work/out" 2>&1
check "depotctl as nobody with CAP_DAC_OVERRIDE fails" test $? -ne 0
check "the master logs that it refused a client that is not root" \
    wait_log "refused a client that is not root" 3
check "the control socket still serves root" \
    sh -c "'$DEPOTCTL' -s '$DEPOT_SOCK' show status | grep -q '^master'"

# --- the database goes away and comes back ------------------------------------------

pg_stop "$work/pg"
check "database stopped: /healthz turns 503" poll_healthz 503 15
check "503 body says database down" \
    grep -q '"database":"down"' "$work/body"
curl -s -o "$work/m3" "$DEPOT_URL/metrics"
check "database stopped: depotd_database_up 0" \
    grep -qx 'depotd_database_up 0' "$work/m3"
check "database stopped: uploads fail with a status, not a hang" \
    sh -c "[ \"\$(curl -s -m 10 -o /dev/null -w '%{http_code}' \
    -H 'Authorization: Bearer $alice' -F 'file=@$work/small' \
    '$DEPOT_URL/v1/files')\" -ge 500 ]"
pg_start "$work/pg" || notok "PostgreSQL restarts"
check "database back: /healthz 200 by itself within 30 s" \
    poll_healthz 200 30
check "database back: an upload works again" \
    test "$(upload "$alice" "$work/small")" = 200
check "all children survived the database outage" \
    test "$(pgrep -P "$DEPOT_PID" | wc -l)" -eq 6

# --- kill -9 of each kind of child ------------------------------------------------

lose_child() {	# role title
	local role=$1 victim pids master rc i left
	[ -n "${DEPOT_PID:-}" ] || start_daemon
	master=$DEPOT_PID
	victim=$(depot_child "$role")
	pids="$master $(pgrep -P "$master" | tr '\n' ' ')"
	# Only ever one real pid: kill -9 -1 as root ends every process.
	case $victim in
	''|*[!0-9]*|0|1) victim= ;;
	esac
	if [ -z "$victim" ] || [ "$victim" = "$$" ]; then
		notok "kill -9 $role: no such child"
		depot_stop
		return
	fi
	kill -9 "$victim"
	for i in $(seq 100); do
		alive "$master" || break
		sleep 0.1
	done
	wait "$master"
	rc=$?
	DEPOT_PID=
	check "kill -9 $role: the daemon exits non-zero (status $rc)" \
	    test "$rc" -ne 0 -a "$rc" -ne 127
	# The frontends notice a dead storage helper too and leave; the
	# master names whichever child it hears of first.
	check "kill -9 $role: the master logs lost child ($(grep -o \
	    'lost child: [a-z]* [0-9]*' "$log" | head -1))" \
	    grep -q "master\[$master\]: lost child: " "$log"
	for i in $(seq 50); do
		left=
		for p in $pids; do
			alive "$p" && left="$left $p"
		done
		[ -z "$left" ] && break
		sleep 0.1
	done
	check "kill -9 $role: no depotd process is left (${left:-none})" \
	    test -z "$left"
	left=
	for p in $(pgrep -f '^depotd: '); do
		case " $pids " in *" $p "*) left="$left $p" ;; esac
	done
	check "kill -9 $role: pgrep finds none of them (${left:-none})" \
	    test -z "$left"
	check "kill -9 $role: nothing listens on port $port" \
	    test "$(http_code -m 2 "$DEPOT_URL/healthz")" = 000
	check "kill -9 $role: the control socket is removed" \
	    test ! -e "$DEPOT_SOCK"
}

lose_child storage
start_daemon
lose_child broker
start_daemon
lose_child extract

echo "# $failed failed"
[ "$failed" -eq 0 ]
