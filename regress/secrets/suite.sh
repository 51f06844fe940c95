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

# regress/secrets/suite.sh: depotd runs with every secret set to a
# random value it can be recognised by: the database password (a role
# that must log in with SCRAM over TCP), the S3 secret key, the
# passphrase of the SFTP identity, the admin key and an API key.  Files
# go up, are listed, come down and are deleted through the S3 and the
# SFTP store; a wrong key is refused; the daemon reloads (SIGHUP and
# depotctl reload); depotctl show status and depotd -nv run.  Then no
# log line and no output holds any secret, and no process of depotd
# carries one in its command line or environment, and no frontend or
# broker has the admin key anywhere in its memory.  First, `make run'
# is started twice on one ./var and once on another: each ./var gets a
# random admin key of its own, kept across runs.
# Runs in about a minute; ports 18351-18353.

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
D=$top/build/regress-secrets
SSHD_HARNESS_FILE=$top/regress/harness/sshd.sh
. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"
. "$top/regress/harness/ceph.sh"
. "$SSHD_HARNESS_FILE"

status=0
ok() { echo "ok - $*"; }
nok() { echo "not ok - $*"; status=1; }
check() {	# label command...
	_l=$1
	shift
	if "$@"; then ok "$_l"; else nok "$_l"; fi
}
rnd() { od -An -N"$1" -tx1 /dev/urandom | tr -d ' \n'; }

for pg in "$D/pg" "$D/run1/pg" "$D/run2/pg"; do
	[ -f "$pg/pgdata/postmaster.pid" ] && pg_stop "$pg"
done
rm -rf "$D"
mkdir -p "$D/sshd" "$D/out"

RUN_PID=
run_local_stop() {
	[ -n "$RUN_PID" ] || return 0
	kill "$RUN_PID" 2>/dev/null
	wait "$RUN_PID" 2>/dev/null
	RUN_PID=
}

cleanup() {
	run_local_stop
	depot_stop
	sshd_stop "$D/sshd"
	ceph_stop "$D/ceph"
	pg_stop "$D/pg"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE

PG_SECRET=pgpw-$(rnd 12)
SFTP_SECRET=sftppass-$(rnd 12)
ADMIN_SECRET=dpt-admin-$(rnd 16)
BAD_KEY=dpt-wrong-$(rnd 16)

make -s build/depotd build/depotctl >&2 || { nok "build"; exit 1; }
depot_user

# --- make run: a random admin key for each ./var ---
# Starts make run's script on VAR; RUN_KEY is the admin key it prints.
run_local() {	# var port
	env -u PGHOST -u PGPORT -u PGUSER -u DEPOT_PG_CONNINFO \
	    -u DEPOT_ADMIN_KEY DEPOT_RUN_VAR="$1" DEPOT_RUN_PORT="$2" \
	    sh "$top/regress/harness/run-local.sh" >"$1.out" 2>&1 &
	RUN_PID=$!
	for _i in $(seq 300); do
		grep -q '^DEPOT_ADMIN_KEY=' "$1.out" 2>/dev/null && break
		kill -0 "$RUN_PID" 2>/dev/null || break
		sleep 0.1
	done
	RUN_KEY=$(sed -n 's/^DEPOT_ADMIN_KEY=//p' "$1.out")
}
run_status() {	# key: the status of an admin listing for make run's user
	curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $1" \
	    "http://127.0.0.1:18353/v1/files?user=local"
}
run_local "$D/run1" 18353
key1=$RUN_KEY
check "make run prints an admin key" test -n "$key1"
check "it is not the suites' public test key" \
    test "$key1" != dpt-admin-test-key-0123456789abcdef
check "it is random: 48 hex digits after dpt-admin-" \
    sh -c "printf '%s' '$key1' | grep -Eqx 'dpt-admin-[0-9a-f]{48}'"
check "it is kept in ./var, mode 600" \
    test "$(stat -c %a "$D/run1/admin-key" 2>/dev/null)" = 600
check "make run's admin key acts for its user (200)" \
    test "$(run_status "$key1")" = 200
check "the suites' public test key is refused there (401)" \
    test "$(run_status dpt-admin-test-key-0123456789abcdef)" = 401
run_local_stop
run_local "$D/run1" 18353
check "a second make run on the same ./var keeps its key" \
    test -n "$RUN_KEY" -a "$RUN_KEY" = "$key1"
run_local_stop
run_local "$D/run2" 18353
check "another ./var gets another key" \
    test -n "$RUN_KEY" -a "$RUN_KEY" != "$key1"
check "and the first ./var's key is refused there (401)" \
    test "$(run_status "$key1")" = 401
run_local_stop

# --- PostgreSQL: a role that logs in with a password over TCP ---
pg_start "$D/pg" || { nok "postgres starts"; exit 1; }
hba=$D/pg/pgdata/pg_hba.conf
{ echo "host all depot_pw 127.0.0.1/32 scram-sha-256"; cat "$hba"; } \
    >"$D/hba" && cat "$D/hba" >"$hba"
"$PG_BIN/psql" -X -q -d postgres >/dev/null <<SQL
set password_encryption = 'scram-sha-256';
create role depot_pw login password '$PG_SECRET';
create database depot_sec_s3 owner depot_pw;
create database depot_sec_sftp owner depot_pw;
select pg_reload_conf();
SQL
[ $? -eq 0 ] || { nok "role depot_pw"; exit 1; }
sleep 0.5
conninfo() {	# dbname
	echo "host=127.0.0.1 port=$PGPORT user=depot_pw password=$PG_SECRET dbname=$1"
}
check "the database refuses depot_pw without its password" \
    sh -c "! PGPASSWORD=wrong '$PG_BIN/psql' -X -w -Atq \
    'host=127.0.0.1 port=$PGPORT user=depot_pw dbname=depot_sec_s3' \
    -c 'select 1' >/dev/null 2>&1"
check "the database lets depot_pw in with its password" \
    sh -c "\"$PG_BIN/psql\" -X -w -Atq \"$(conninfo depot_sec_s3)\" -c 'select 1' >/dev/null"

# --- S3: radosgw with a user of fresh random keys ---
if ! ceph_start "$D/ceph"; then
	nok "radosgw starts"
	exit 1
fi
S3_SECRET=$DEPOT_S3_SECRET_KEY
[ "$(s3_curl -o /dev/null -w '%{http_code}' -X PUT \
    "$DEPOT_S3_ENDPOINT/secrets")" = 200 ] || { nok "bucket"; exit 1; }

# --- SFTP: an identity under a random passphrase ---
sshd_start "$D/sshd" || { nok "sshd starts"; exit 1; }
ssh-keygen -q -t ed25519 -N "$SFTP_SECRET" -C depot-secrets -f "$D/id_enc"
cat "$D/id_enc.pub" >>"$D/sshd/authorized_keys"
chown _depotstore "$D/id_enc"
ok "postgres, radosgw and sshd start"

head -c 3000000 /dev/urandom >"$D/blob"
# depot_conf reads the admin key from the shell; exported, it would sit
# in the environment of every process of depotd.
unset DEPOT_ADMIN_KEY
DEPOT_ADMIN_KEY=$ADMIN_SECRET
export DEPOT_SWEEP=0

# Upload, list, download and delete as a user and as the admin; a bad
# key; both reloads; status; -nv.  Every output goes to $D/out.
exercise() {	# store
	s=$1
	key=$(depot_key alice default)
	API_SECRETS="$API_SECRETS $key"
	echo "$key" >"$D/key-$s"
	A="Authorization: Bearer $key"
	out=$D/out/$s
	id=$(curl -s -H "$A" -F purpose=user_data -F file=@"$D/blob" \
	    "$DEPOT_URL/v1/files" | tee "$out.upload" |
	    sed -n 's/.*"id": *"\(file-[0-9a-zA-Z]*\)".*/\1/p')
	check "$s: upload" test -n "$id"
	check "$s: list" grep -q "$id" \
	    "$(curl -s -H "$A" "$DEPOT_URL/v1/files" >"$out.list"; echo "$out.list")"
	check "$s: download" sh -c "curl -sf -H '$A' \
	    '$DEPOT_URL/v1/files/$id/content' | cmp -s - '$D/blob'"
	check "$s: delete" sh -c "curl -s -X DELETE -H '$A' \
	    '$DEPOT_URL/v1/files/$id' | grep -q deleted"
	AA="Authorization: Bearer $ADMIN_SECRET"
	check "$s: admin upload for alice" sh -c "curl -s -H '$AA' \
	    -F user=alice -F purpose=user_data -F file=@'$D/blob' \
	    '$DEPOT_URL/v1/files' | grep -q '\"id\"'"
	check "$s: admin list for alice" sh -c "curl -sf -H '$AA' \
	    '$DEPOT_URL/v1/files?user=alice' >'$out.adminlist'"
	check "$s: a wrong key is refused with 401" test "$(curl -s \
	    -o "$out.bad" -w '%{http_code}' -H "Authorization: Bearer $BAD_KEY" \
	    "$DEPOT_URL/v1/files")" = 401
	check "$s: an admin key named in x-api-key but wrong is refused" \
	    test "$(curl -s -o /dev/null -w '%{http_code}' \
	    -H "x-api-key: $BAD_KEY" -H 'anthropic-version: 2023-06-01' \
	    "$DEPOT_URL/v1/files")" = 401
	kill -HUP "$DEPOT_PID"
	sleep 1
	check "$s: depotctl reload" sh -c "'$DEPOTCTL' -s '$DEPOT_SOCK' \
	    reload >'$out.reload' 2>&1"
	sleep 1
	check "$s: depotctl show status" sh -c "'$DEPOTCTL' -s \
	    '$DEPOT_SOCK' show status >'$out.status' 2>&1"
	"$DEPOTCTL" -s "$DEPOT_SOCK" log verbose >"$out.verbose" 2>&1
	curl -s -H "$A" "$DEPOT_URL/v1/files" >/dev/null
	"$DEPOTD" -nv -f "$D/$s/depotd.conf" >"$out.nv" 2>&1
	check "$s: depotd -nv accepts the file" test $? -eq 0
	check "$s: depotd -nv prints secrets as ********" \
	    grep -q '\*\*\*\*\*\*\*\*' "$out.nv"
	check "$s: depotd -nv prints the conninfo (user depot_pw)" \
	    grep -q 'depot_pw' "$out.nv"
	check "$s: the daemon is still running" kill -0 "$DEPOT_PID"
	# The processes while the secrets are loaded.
	for p in $DEPOT_PID $(pgrep -P "$DEPOT_PID"); do
		tr '\0' '\n' <"/proc/$p/cmdline" >"$out.cmdline.$p"
		tr '\0' '\n' <"/proc/$p/environ" >"$out.environ.$p"
	done
	n=$(ls "$out".cmdline.* | wc -l)
	check "$s: the command lines of $n processes were read" test "$n" -ge 4
	depot_stop
}

# Before any request has shown it: the storage process decides who is
# admin, so it alone of the children holds the admin key.  Finding it
# there shows that the scan can find it at all.
memory_check() {	# store
	_n=0
	for p in $(pgrep -P "$DEPOT_PID"); do
		role=$(tr '\0' ' ' <"/proc/$p/cmdline" |
		    grep -Eo 'frontend [0-9]+|storage|broker' | head -1)
		r=$(python3 "$top/regress/secrets/memscan.py" "$p" \
		    "$ADMIN_SECRET")
		case $role in
		storage)
			check "$1: the storage process holds the admin key ($r)" \
			    test "${r%% *}" = found ;;
		frontend*|broker)
			_n=$((_n + 1))
			check "$1: $role never had the admin key in memory ($r)" \
			    test "${r%% *}" = absent ;;
		esac
	done
	check "$1: every frontend and the broker were scanned ($_n)" \
	    test "$_n" -ge 3
}

API_SECRETS=
DEPOT_PG_CONNINFO=$(conninfo depot_sec_s3) \
DEPOT_STORAGE=s3://secrets/blobs DEPOT_STORAGE_OPTS=" { endpoint \
\"$DEPOT_S3_ENDPOINT\" access-key \"$DEPOT_S3_ACCESS_KEY\" secret-key \
\"$S3_SECRET\" path-style part-size 5M }" depot_conf "$D/s3" 18351
if depot_start "$D/s3" -v; then
	ok "s3: depotd starts"
	memory_check s3
	exercise s3
else
	nok "s3: depotd starts"
fi

DEPOT_PG_CONNINFO=$(conninfo depot_sec_sftp) \
DEPOT_STORAGE=$DEPOT_SFTP_URL DEPOT_STORAGE_OPTS=" { identity \
\"$D/id_enc\" passphrase \"$SFTP_SECRET\" known-hosts \
\"$DEPOT_SFTP_KNOWN_HOSTS\" }" depot_conf "$D/sftp" 18352
if depot_start "$D/sftp" -v; then
	ok "sftp: depotd starts"
	exercise sftp
else
	nok "sftp: depotd starts"
fi

# Everything depotd and its tools wrote; the command lines and
# environments are checked on their own.
logs="$D/s3/depotd.log $D/sftp/depotd.log $(ls "$D"/out/* |
    grep -v -e '\.cmdline\.' -e '\.environ\.' -e '\.upload$' \
    -e '\.list$' -e '\.adminlist$')"
check "the logs hold lines to search ($(cat $logs | wc -l))" \
    test "$(cat $logs | wc -l)" -gt 20
leak_check() {	# name value
	if grep -lF -- "$2" $logs >"$D/hits"; then
		nok "the $1 appears in: $(tr '\n' ' ' <"$D/hits")"
	else
		ok "the $1 appears in no log line or output"
	fi
	if cat "$D"/out/*.cmdline.* "$D"/out/*.environ.* 2>/dev/null |
	    grep -qF -- "$2"; then
		nok "the $1 is in a process's command line or environment"
	else
		ok "the $1 is in no process's command line or environment"
	fi
}
leak_check "database password" "$PG_SECRET"
leak_check "S3 secret key" "$S3_SECRET"
leak_check "SFTP key passphrase" "$SFTP_SECRET"
leak_check "admin key" "$ADMIN_SECRET"
leak_check "wrong API key a client sent" "$BAD_KEY"
n=0
for k in $API_SECRETS; do
	n=$((n + 1))
	leak_check "API key $n" "$k"
	# The key's secret part, should a log show a shortened form.
	leak_check "API key $n, last 16 characters" \
	    "$(echo "$k" | rev | cut -c1-16 | rev)"
done
[ $n -eq 2 ] || nok "an API key was made for each store ($n)"
exit $status
