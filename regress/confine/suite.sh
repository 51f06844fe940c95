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
#
# regress/confine/suite.sh: what each role of depotd must not do, tried
# under that role's real lockdown (confine_try runs lockdown_role, the
# code every child's start-up runs), next to what the role still needs.
# Each refusal is matched by the same attempt, as the same user without
# the lockdown, succeeding: the refusal is the lockdown's doing.  Then
# the real daemon: every child filtered by seccomp with NoNewPrivs, the
# storage helper under its own uid, frontends and broker in an empty
# root, the extract child as its user with bwrap's rights, the plan of
# -n -v and the line of depotctl show status.  Runs in about 15
# seconds; port 18461, and 18500 to 18503 (upstreams named, and HTTP
# and HTTPS servers standing in for one).

[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"

work=${CONFINE_WORK:-$top/build/regress-confine}
port=${CONFINE_PORT:-18461}
try=$top/build/regress/confine_try
sibling=
httpd=
httpsd=
tfo_sysctl=/proc/sys/net/ipv4/tcp_fastopen
tfo_saved=
. "$top/regress/harness/tap.sh"

cleanup() {
	trap - EXIT INT TERM
	[ -n "$sibling" ] && kill "$sibling" 2>/dev/null
	[ -n "$httpd" ] && kill "$httpd" 2>/dev/null
	[ -n "$httpsd" ] && kill "$httpsd" 2>/dev/null
	[ -n "$tfo_saved" ] && echo "$tfo_saved" >"$tfo_sysctl"
	depot_stop
	pg_stop "$work/pg"
}

for f in "$try" "$DEPOTD" "$DEPOTCTL"; do
	[ -x "$f" ] || { notok "$f is missing: run make all units"; exit 1; }
done
[ "$(id -u)" -eq 0 ] ||
    { notok "the suite needs root: it changes users"; exit 1; }
# A fresh cluster each run.
[ -d "$work/pg" ] && pg_stop "$work/pg"
rm -rf "$work"
mkdir -p "$work/store" "$work/other" "$work/bin"
chmod 755 "$work"
trap cleanup EXIT
trap 'exit 1' INT TERM
cp "$DEPOTD" "$DEPOTCTL" "$work/bin/" || { notok "copy the binaries"; exit 1; }
DEPOTD=$work/bin/depotd
DEPOTCTL=$work/bin/depotctl
pg_start "$work/pg" || { notok "PostgreSQL starts"; exit 1; }
depot_user
chown "$DEPOT_STORE_USER" "$work/store" "$work/other"
# Readable by anyone: only a lockdown keeps a role from it.
echo secret >"$work/outside"
chmod 644 "$work/outside"
pgsock=$PGHOST/.s.PGSQL.$PGPORT
storage_paths="-R /etc -R /usr/share/ca-certificates -R /var/run/postgresql
    -W $work/store"

# What confine_try printed, or the signal that ended it.
outcome() {	# confine_try arguments
	local out rc
	out=$("$try" "$@" 2>"$work/try.err")
	rc=$?
	if [ $rc -gt 128 ]; then
		echo "SIG$(kill -l $((rc - 128)))"
	elif [ $rc -ne 0 ]; then
		echo "exit $rc: $(head -1 "$work/try.err")"
	else
		echo "$out"
	fi
}

# A sleeping process of user $1: the sibling a role tries to signal.
start_sibling() {
	[ -n "$sibling" ] && kill "$sibling" 2>/dev/null && wait "$sibling"
	setpriv --reuid="$1" --regid="$1" --clear-groups sleep 300 &
	sibling=$!
	sleep 0.1
}

# refused ROLE USER WANT ACTION [ARG]: locked down, ACTION ends in
# WANT; as the same user without the lockdown, it succeeds.
refused() {
	local role=$1 user=$2 want=$3 got bare
	shift 3
	# shellcheck disable=SC2086
	got=$(outcome -u "$user" $extra "$role" "$@")
	bare=$(outcome -x -u "$user" "$role" "$@")
	check "$role: $* is refused ($want; got $got; unconfined: $bare)" \
	    test "$got" = "$want" -a "$bare" = ok
}

allowed() {	# ROLE USER ACTION [ARG]
	local role=$1 user=$2 got
	shift 2
	# shellcheck disable=SC2086
	got=$(outcome -u "$user" $extra "$role" "$@")
	check "$role: $* still works (got $got)" test "$got" = ok
}

# --- the frontend: HTTP in, descriptors from the storage helper ---------

start_sibling _depotd
extra=
for role in frontend broker; do
	refused $role _depotd EPERM open "$work/outside"
	refused $role _depotd EPERM open /etc/passwd
	refused $role _depotd EPERM socket
	refused $role _depotd EPERM kill "$sibling"
	refused $role _depotd SIGSYS exec /bin/echo
	refused $role _depotd SIGSYS ptrace "$sibling"
	allowed $role _depotd pair
done
refused frontend _depotd EPERM unix "$pgsock"
refused frontend _depotd EPERM tcp "$PGPORT"
refused frontend _depotd EPERM bind
refused frontend _depotd EPERM abstract
# The broker may connect unix sockets (its backend's): the empty root
# hides PostgreSQL's, Landlock keeps it from TCP and abstract sockets.
refused broker _depotd ENOENT unix "$pgsock"
refused broker _depotd EACCES tcp "$PGPORT"
refused broker _depotd EACCES bind
refused broker _depotd EPERM abstract

# --- a frontend with upstreams: TCP to their ports, nothing else --------

# PostgreSQL's port stands in for an upstream's: it listens.  Port 1 is
# another upstream's, so that "another port" is refused by the rule
# set, not because no rule was made.
extra="-p $PGPORT -p 1"
allowed frontend _depotd tcp "$PGPORT"
allowed frontend _depotd socket
allowed frontend _depotd pair
extra="-p 1"
refused frontend _depotd EACCES tcp "$PGPORT"
extra="-p $PGPORT"
refused frontend _depotd EPERM open "$work/outside"
refused frontend _depotd EPERM open /etc/passwd
refused frontend _depotd EPERM udp
refused frontend _depotd EACCES bind
# connect(2) is allowed now, whatever the family: the empty root hides
# PostgreSQL's socket, and the frontend can make no unix socket.
refused frontend _depotd ENOENT unix "$pgsock"
refused frontend _depotd EPERM abstract
refused frontend _depotd SIGSYS exec /bin/echo
extra=
# Without upstreams it has no inet at all (above): not even UDP.
refused frontend _depotd EPERM udp

# --- TCP Fast Open: connections Landlock's connect rule never sees -----

# sendto(2), sendmsg(2) or sendmmsg(2) with MSG_FASTOPEN connect from
# inside the call to the address given, and Landlock's connect hook
# does not see it: unconfined, and under Landlock alone, it reaches
# PostgreSQL's port, which is not among the ports named (-p 1).  The
# frontend and the broker, held to named ports, are refused it; and
# the socket options that turn Fast Open on (tfo-connect sets its
# option with junk in the registers' upper halves, which the kernel
# ignores).  The sockets are made before the lockdown, so that without
# ports too the calls are tried, not the socket(2).  Client Fast Open
# must be on (bit 1 of the sysctl) for the unconfined attempts to
# connect: it is turned on for the suite if it is not.
tfo_now=$(cat "$tfo_sysctl" 2>/dev/null || echo 0)
if [ $((tfo_now & 1)) -eq 0 ]; then
	tfo_saved=$tfo_now
	echo $((tfo_now | 1)) >"$tfo_sysctl"
fi
for role in frontend broker; do
	for extra in "-p 1" ""; do
		for act in fastopen fastopen-msg fastopen-mmsg tfo-connect; do
			refused $role _depotd EPERM $act "$PGPORT"
		done
		refused $role _depotd EPERM tfo-listen
	done
done
# What the roles send without the flag still goes (pair: sendmsg(2)).
extra="-p $PGPORT"
allowed frontend _depotd tcp "$PGPORT"
allowed broker _depotd tcp "$PGPORT"
allowed broker _depotd pair
extra=
if [ -n "$tfo_saved" ]; then
	echo "$tfo_saved" >"$tfo_sysctl"
	tfo_saved=
fi

# libcurl, as the frontend will call its upstreams: the name from
# CURLOPT_RESOLVE, a plain HTTP server standing in for the upstream.
http_port=${CONFINE_HTTP_PORT:-18502}
mkdir -p "$work/www"
echo ok >"$work/www/index.html"
python3 -m http.server --bind 127.0.0.1 --directory "$work/www" \
    "$http_port" >/dev/null 2>&1 &
httpd=$!
for i in $(seq 50); do
	curl -fs -o /dev/null "http://127.0.0.1:$http_port/" && break
	sleep 0.1
done
extra="-p $http_port"
allowed frontend _depotd curl "$http_port"
extra="-p 1"
refused frontend _depotd EACCES curl "$http_port"

# The same over TLS, the CA given as a blob read before the lockdown:
# OpenSSL needs no file once locked down.
https_port=${CONFINE_HTTPS_PORT:-18503}
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=upstream.test \
    -addext subjectAltName=DNS:upstream.test -keyout "$work/tls.key" \
    -out "$work/tls.pem" >/dev/null 2>&1
chmod 644 "$work/tls.pem"
(cd "$work/www" && exec python3 -c '
import http.server, ssl, sys
s = http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])),
    http.server.SimpleHTTPRequestHandler)
c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
c.load_cert_chain(sys.argv[2], sys.argv[3])
s.socket = c.wrap_socket(s.socket, server_side=True)
s.serve_forever()' "$https_port" "$work/tls.pem" "$work/tls.key" \
    >/dev/null 2>&1) &
httpsd=$!
for i in $(seq 50); do
	curl -fs --cacert "$work/tls.pem" -o /dev/null \
	    --resolve "upstream.test:$https_port:127.0.0.1" \
	    "https://upstream.test:$https_port/" && break
	sleep 0.1
done
extra="-p $https_port -C $work/tls.pem"
allowed frontend _depotd curl "$https_port"
extra=

# A root another user may write is no jail.
mkdir -m 755 "$work/badroot"
chown _depotd "$work/badroot"
got=$(outcome -r "$work/badroot" frontend pair)
check "a frontend refuses a root _depotd may write ($got)" \
    grep -q "only root may write" "$work/try.err"

# --- the storage helper: database, store, credentials -------------------

start_sibling "$DEPOT_STORE_USER"
u=$DEPOT_STORE_USER
extra=$storage_paths
allowed storage "$u" create "$work/store"
allowed storage "$u" open /etc/passwd
allowed storage "$u" unix "$pgsock"
allowed storage "$u" tcp "$PGPORT"
allowed storage "$u" pair
refused storage "$u" EACCES open "$work/outside"
refused storage "$u" EACCES create "$work/other"
refused storage "$u" EACCES bind
refused storage "$u" EPERM abstract
refused storage "$u" EPERM kill "$sibling"
refused storage "$u" SIGSYS exec /bin/echo
refused storage "$u" SIGSYS ptrace "$sibling"
extra=

# --- the extract child: bubblewrap and pdftotext -------------------------

# It may fork and exec (bwrap), and make namespaces; it has no Landlock
# file rules, because a domain with them may not mount(2) and bwrap
# mounts.  Its user, _depotext, keeps it from files, and from those of
# the other children's user; seccomp from TCP sockets and
# from connect(2) of any kind; Landlock's network rules and scoping
# from binding TCP ports, signals to processes not its own and
# abstract sockets.
start_sibling _depotext
extra=
refused extract _depotext EPERM socket
refused extract _depotext EPERM tcp "$PGPORT"
refused extract _depotext EPERM unix "$pgsock"
refused extract _depotext EACCES bind
refused extract _depotext EPERM kill "$sibling"
refused extract _depotext EPERM abstract
refused extract _depotext SIGSYS ptrace "$sibling"
allowed extract _depotext exec /bin/echo
allowed extract _depotext pair
# A file only root may read, as /etc/shadow is: the uid's doing alone.
echo secret >"$work/rootonly"
chmod 600 "$work/rootonly"
got=$(outcome -u _depotext extract open "$work/rootonly")
check "extract: a file only root may read is refused ($got)" \
    test "$got" = EACCES
# What the frontends' and the broker's user owns is not extract's: its
# files, and its processes even without the lockdown.  In a session of
# its own, since the kill action's SIGCONT may reach any process of the
# sender's session whatever its user.
setsid setpriv --reuid=_depotd --regid=_depotd --clear-groups sleep 300 &
theirs=$!
sleep 0.1
got=$(outcome -x -u _depotext extract kill "$theirs")
check "extract's user may not signal a _depotd process, unconfined ($got)" \
    test "$got" = EPERM
got=$(outcome -x -u _depotext extract ptrace "$theirs")
check "nor trace one ($got)" test "$got" = EPERM
kill "$theirs" 2>/dev/null && wait "$theirs" 2>/dev/null
echo theirs >"$work/depotd-own"
chown _depotd "$work/depotd-own"
chmod 600 "$work/depotd-own"
got=$(outcome -u _depotext extract open "$work/depotd-own")
check "extract: a file only _depotd may read is refused ($got)" \
    test "$got" = EACCES
got=$(outcome -u _depotext extract open "$work/outside")
check "extract: a file anyone may read is readable: no file rules ($got)" \
    test "$got" = ok

# --- the daemon ---------------------------------------------------------

depot_conf "$work/d" "$port"
chown "$DEPOT_STORE_USER" "$work/d/files"
"$DEPOTD" -n -v -f "$work/d/depotd.conf" >/dev/null 2>"$work/plan"
check "depotd -n -v prints the frontend's plan: _depotd in /var/empty" \
    grep -qx "frontend: user _depotd, root /var/empty" "$work/plan"
check "and the storage helper's: $DEPOT_STORE_USER, plus its store's paths" \
    sh -c "grep -qx 'storage: user $DEPOT_STORE_USER, root /' '$work/plan' &&
    grep -q 'plus the paths its store names: file://$work/d/files ' \
    '$work/plan'"
check "and the broker's" \
    grep -qx "broker: user _depotd, root /var/empty" "$work/plan"
check "and the extract child's: _depotext, no file rules" \
    sh -c "grep -qx 'extract: user _depotext, root /' '$work/plan' &&
    grep -q 'files: what its user may open (no Landlock file rules' \
    '$work/plan'"
check "a frontend without upstreams may not connect over TCP" \
    sh -c "sed -n '/^frontend:/,/^[a-z]/p' '$work/plan' |
    grep -q 'tcp: no connect, no bind'"

# Upstreams on two ports: the plan names both, and the daemon that runs
# with them still serves.
up_port=${CONFINE_UPSTREAM_PORT:-18500}
depot_conf "$work/d" "$port" "upstream \"a\" { url \"http://127.0.0.1:$up_port/v1\" }
upstream \"b\" { url \"https://localhost/v1\" api anthropic }
model \"m\" upstream \"a\""
chown "$DEPOT_STORE_USER" "$work/d/files"
"$DEPOTD" -n -v -f "$work/d/depotd.conf" >/dev/null 2>"$work/plan-up"
check "with upstreams, the frontend may connect to their ports only" \
    grep -q "tcp: connect to ports $up_port, 443 only, no bind, no Fast Open" \
    "$work/plan-up"

if ! depot_start "$work/d"; then
	notok "depotd starts"
	cat "$work/d/depotd.log" >&2
	exit 1
fi
ok "depotd starts under the lockdown and /healthz answers"

status_field() {	# pid field
	awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"
}

fe_uid=
st_uid=
for role in "frontend 0" "frontend 1" storage broker extract; do
	p=$(depot_child "$role")
	if [ -z "$p" ]; then
		notok "a child titled 'depotd: $role' runs"
		continue
	fi
	check "'$role' is under a seccomp filter (Seccomp: 2) with NoNewPrivs" \
	    test "$(status_field "$p" Seccomp)" = 2 -a \
	    "$(status_field "$p" NoNewPrivs)" = 1
	root=$(readlink "/proc/$p/root")
	case $role in
	extract)
		check "'$role' runs as _depotext, root / (it runs bwrap)" \
		    test "$(status_field "$p" Uid)" = "$(id -u _depotext)" -a \
		    "$root" = /
		;;
	storage)
		st_uid=$(status_field "$p" Uid)
		check "'$role' runs as $DEPOT_STORE_USER" \
		    test "$st_uid" = "$(id -u "$DEPOT_STORE_USER")"
		;;
	*)
		fe_uid=$(status_field "$p" Uid)
		check "'$role' runs as _depotd in /var/empty (root $root)" \
		    test "$fe_uid" = "$(id -u _depotd)" -a "$root" = /var/empty
		;;
	esac
done
check "the storage helper's uid ($st_uid) is not the frontends' ($fe_uid)" \
    test -n "$st_uid" -a -n "$fe_uid" -a "$st_uid" != "$fe_uid"
check "the store directory is the storage helper's alone" \
    test "$(stat -c '%U %a' "$work/d/files")" = "$DEPOT_STORE_USER 750"
depotctl_ show status >"$work/status" 2>&1
check "depotctl show status: confinement complete on this kernel" \
    grep -q "^confinement complete (seccomp, Landlock ABI" "$work/status"
key=$(depot_key "$work/d" alice wsp)
echo hello >"$work/hello.txt"
code=$(curl -s -o "$work/up" -w '%{http_code}' -H "Authorization: Bearer $key" \
    -F purpose=user_data -F "file=@$work/hello.txt" "$DEPOT_URL/v1/files")
check "an upload goes through the confined processes ($code)" \
    test "$code" = 200
check "no child was denied a system call it needed (log clean)" \
    sh -c "! grep -Eqi 'not permitted|permission denied|lost child' \
    '$work/d/depotd.log'"
# The Landlock rules were made at start: a new port waits for a restart.
printf 'upstream "c" { url "http://127.0.0.1:%s/v1" }\n' $((up_port + 1)) \
    >>"$work/d/depotd.conf"
depotctl_ reload >/dev/null 2>&1
check "a reload that adds an upstream port says it needs a restart" \
    grep -q "reload: new upstream ports take effect at restart" \
    "$work/d/depotd.log"
# Each frontend read its https upstream's CA bundle from a descriptor
# again, after its lockdown.
for i in $(seq 50); do
	grep -q "master.*reloaded" "$work/d/depotd.log" && break
	sleep 0.1
done
check "every child took the reload, CA descriptors and all" \
    sh -c "grep -q 'master.*reloaded' '$work/d/depotd.log' &&
    ! grep -Eqi 'lost child|CA bundle' '$work/d/depotd.log'"
depot_stop

# --- a kernel without Landlock: said, not hidden --------------------------

# confine_try -L makes the Landlock calls fail with ENOSYS for depotd
# and every child it starts.
printf '#!/bin/sh\nexec "%s" -L "%s" "$@"\n' "$try" "$DEPOTD" \
    >"$work/bin/depotd-nolandlock"
chmod 755 "$work/bin/depotd-nolandlock"
DEPOTD=$work/bin/depotd-nolandlock
log=$work/d/depotd.log
: >"$log"
"$DEPOTD" -n -v -f "$work/d/depotd.conf" >/dev/null 2>"$work/plan2"
check "depotd -n -v says what this kernel would not enforce" \
    grep -q "not enforced here: landlock file rules" "$work/plan2"
if depot_start "$work/d"; then
	ok "depotd starts without Landlock"
	check "the master logs the missing layers at start" \
	    grep -q "master.*confinement partial: this kernel lacks landlock \
file rules, landlock network rules (ABI 4), landlock signal" "$log"
	# depot_start returns once a frontend answers; a loaded machine
	# may not have run the last child's confinement by then.
	for i in $(seq 50); do
		[ "$(grep -c "landlock is not available" "$log")" -ge 5 ] &&
		    break
		sleep 0.1
	done
	check "each of the 5 children says it went without Landlock" \
	    test "$(grep -c "landlock is not available" "$log")" -eq 5
	depotctl_ show status >"$work/status2" 2>&1
	check "depotctl show status says the confinement is partial" \
	    grep -q "^confinement partial: this kernel lacks landlock" \
	    "$work/status2"
	check "and that frontends may then connect to any TCP port" \
	    grep -q "frontends may connect to any TCP port" "$work/status2"
	p=$(depot_child "frontend 0")
	check "the frontend still has its seccomp filter and empty root" \
	    test "$(status_field "${p:-0}" Seccomp)" = 2 -a \
	    "$(readlink "/proc/${p:-0}/root")" = /var/empty
else
	notok "depotd starts without Landlock"
fi

[ $failed -eq 0 ]
