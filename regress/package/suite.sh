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

# regress/package/suite.sh: the install tree and the Debian package, end
# to end on this machine: build, dpkg -i, start with the init script
# against a private PostgreSQL, syslog, reload, stop, manuals, purge.
#
# Runs as root (it installs a package and writes /etc/depotd.conf); an
# existing /etc/depotd.conf is put aside and restored, and a depotd
# package that is already installed is left alone (the suite fails).
# One "ok - " or "not ok - " line per check.

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
. regress/harness/pg.sh

failed=0
ok() { echo "ok - $*"; }
nok() { echo "not ok - $*"; failed=1; }
check() {	# description command...
	local what=$1
	shift
	if "$@"; then ok "$what"; else nok "$what"; fi
}

if [ "$(id -u)" -ne 0 ]; then
	nok "the package suite needs root"
	exit 1
fi
if dpkg-query -W -f='${Status}' depotd 2>/dev/null | grep -q installed; then
	nok "a depotd package is already installed; not touching it"
	exit 1
fi
if [ -e /dev/log ]; then
	nok "/dev/log belongs to a running syslog; cannot capture depotd's log"
	exit 1
fi

tmp=$(mktemp -d /tmp/depotd-pkg.XXXXXX)
chmod 755 "$tmp"	# postgres and _depotd reach their directories in it
installed=0
syslog_pid=
conf_backup=

cleanup() {
	if [ "$installed" -eq 1 ]; then
		/etc/init.d/depotd stop >/dev/null 2>&1
		dpkg --purge depotd >/dev/null 2>&1
	fi
	[ -n "$syslog_pid" ] && kill "$syslog_pid" 2>/dev/null &&
	    wait "$syslog_pid" 2>/dev/null
	rm -f /dev/log
	pg_stop "$tmp/pg" >/dev/null 2>&1
	[ -n "$conf_backup" ] && mv "$conf_backup" /etc/depotd.conf
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# Pids of live processes running one of the installed programs (a
# zombie has no exe link, so the late reaping of orphans does not count).
installed_pids() {
	local p exe
	for p in /proc/[0-9]*; do
		exe=$(readlink "$p/exe" 2>/dev/null) || continue
		case $exe in
		/usr/sbin/depotd|/usr/sbin/depot-sandboxd) echo "${p#/proc/}" ;;
		esac
	done
}

wait_for() {	# tenths-of-a-second command...
	local n=$1
	shift
	while [ "$n" -gt 0 ]; do
		"$@" && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); \
s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# --- make install, with the default prefix, in a staging tree
inst=$tmp/inst
if make -s install DESTDIR="$inst" PREFIX=/usr/local >"$tmp/install.log" 2>&1
then
	ok "make install DESTDIR PREFIX=/usr/local"
else
	nok "make install DESTDIR PREFIX=/usr/local (see output below)"
	sed 's/^/# /' "$tmp/install.log"
fi
for f in sbin/depotd sbin/depotctl sbin/depot-sandboxd; do
	check "install: $f is an executable" test -x "$inst/usr/local/$f"
done
for f in libexec/depotd/runner.py share/man/man8/depotd.8 \
    share/man/man8/depotctl.8 share/man/man8/depot-sandboxd.8 \
    share/man/man5/depotd.conf.5 share/examples/depotd/depotd.conf \
    share/examples/depotd/depotd.service \
    share/examples/depotd/depotd.sysvinit share/examples/depotd/depotd; do
	check "install: $f" test -f "$inst/usr/local/$f"
done
check "install: depot-sandboxd looks for its runner under the prefix" \
    grep -q /usr/local/libexec/depotd/runner.py \
    "$inst/usr/local/sbin/depot-sandboxd"

# --- the package
if make -s package >"$tmp/package.log" 2>&1; then
	deb=$(tail -n 1 "$tmp/package.log")
else
	deb=
fi
if [ -n "$deb" ] && [ -f "$deb" ]; then
	ok "make package built ${deb##*/}"
else
	nok "make package"
	sed 's/^/# /' "$tmp/package.log"
	exit 1
fi
dpkg-deb -c "$deb" | awk '{ print $1, $6 }' >"$tmp/contents"
for f in ./usr/sbin/depotd ./usr/sbin/depotctl ./usr/sbin/depot-sandboxd \
    ./etc/init.d/depotd; do
	check "package: $f, mode 755" grep -qx -- "-rwxr-xr-x $f" "$tmp/contents"
done
for f in ./lib/systemd/system/depotd.service ./usr/libexec/depotd/runner.py \
    ./usr/share/man/man8/depotd.8.gz ./usr/share/man/man8/depotctl.8.gz \
    ./usr/share/doc/depotd/copyright ./usr/share/doc/depotd/README.Debian; do
	check "package: $f" grep -qx -- "-rw-r--r-- $f" "$tmp/contents"
done
dpkg-deb -f "$deb" Depends >"$tmp/depends"
for p in libevent-2.1-7 libpq5 libjson-c5 libssh2-1 libcurl4 libbsd0 \
    libssl3 libhttp-parser2.9 bubblewrap python3 adduser; do
	check "package depends on $p" grep -Eq "(^|, )$p(,|\$)" "$tmp/depends"
done

# --- install it
[ -e /etc/depotd.conf ] && conf_backup=$tmp/depotd.conf.saved &&
    mv /etc/depotd.conf "$conf_backup"
if dpkg -i "$deb" >"$tmp/dpkg.log" 2>&1; then
	installed=1
	ok "dpkg -i"
else
	nok "dpkg -i"
	sed 's/^/# /' "$tmp/dpkg.log"
	exit 1
fi
check "postinst created the user _depotd" \
    sh -c "getent passwd _depotd >/dev/null"
check "postinst created the user _depotstore" \
    sh -c "getent passwd _depotstore >/dev/null"
check "postinst created the user _depotext" \
    sh -c "getent passwd _depotext >/dev/null"
check "/var/depot/files is _depotstore's, mode 750" test \
    "$(stat -c '%U %a' /var/depot/files 2>/dev/null)" = "_depotstore 750"
check "/var/empty is root's, mode 755" test \
    "$(stat -c '%U %a' /var/empty 2>/dev/null)" = "root 755"
check "/etc/depotd.conf is root's, mode 600" test \
    "$(stat -c '%U %a' /etc/depotd.conf 2>/dev/null)" = "root 600"
check "the shipped configuration passes depotd -n" \
    sh -c '/usr/sbin/depotd -n >/dev/null 2>&1'
check "the installed scripts name /usr/sbin" grep -q \
    'ExecStart=/usr/sbin/depotd -p /run/depotd.pid' \
    /lib/systemd/system/depotd.service
check "the installed init script names /usr/sbin" \
    grep -q '^DAEMON=/usr/sbin/depotd$' /etc/init.d/depotd
# Only the manuals another package may not have installed yet are let go.
systemd-analyze verify /lib/systemd/system/depotd.service >"$tmp/verify" 2>&1
check "systemd-analyze verify finds nothing wrong in the unit" \
    sh -c "! grep -v \"Command 'man \" '$tmp/verify' | grep -q ."

# --- a syslog of our own on /dev/log
cat >"$tmp/rsyslog.conf" <<CONF
global(workDirectory="$tmp")
module(load="imuxsock" SysSock.Name="/dev/log")
*.* action(type="omfile" file="$tmp/syslog")
CONF
rsyslogd -n -f "$tmp/rsyslog.conf" -i "$tmp/rsyslog.pid" \
    >"$tmp/rsyslog.out" 2>&1 &
syslog_pid=$!
check "rsyslogd listens on /dev/log" wait_for 50 test -S /dev/log

# --- a database and a configuration for it
if pg_start "$tmp/pg"; then
	ok "private PostgreSQL started"
else
	nok "private PostgreSQL started"
	exit 1
fi
port=$(free_port)
install -d -m 750 -o _depotstore -g _depotstore "$tmp/files"
write_conf() {
	(umask 077; cat >/etc/depotd.conf <<CONF
listen on 127.0.0.1 port $port
prefork 2
user "_depotd"
database "$DEPOT_PG_CONNINFO"
storage "file://$tmp/files"
files {
	max-size 1M
	sweep-interval 0
}
$1
CONF
	)
}
write_conf ""
chmod 600 /etc/depotd.conf
url=http://127.0.0.1:$port

# --- start, health, syslog, privileges
check "/etc/init.d/depotd start" sh -c '/etc/init.d/depotd start \
    >/dev/null 2>&1'
healthz() {
	test "$(curl -s -o /dev/null -w '%{http_code}' "$url/healthz")" = 200
}
check "/healthz answers 200" wait_for 100 healthz
check "/etc/init.d/depotd status says running" \
    sh -c '/etc/init.d/depotd status >/dev/null 2>&1'
master=$(cat /run/depotd.pid 2>/dev/null)
check "the pid file names the master, running /usr/sbin/depotd" test \
    "$(readlink "/proc/${master:-0}/exe" 2>/dev/null)" = /usr/sbin/depotd
check "the master runs as root" test \
    "$(ps -o user= -p "${master:-0}" 2>/dev/null)" = root
ps -o user:16=,args= --ppid "${master:-0}" >"$tmp/child-users" 2>/dev/null
check "the master has five children (2 frontends, storage, broker, extract)" \
    test "$(wc -l <"$tmp/child-users")" -eq 5
check "storage runs as _depotstore, extract as _depotext, the rest as _depotd" \
    sh -c "awk '{ u = \"_depotd\" }
    \$3 == \"storage\" { u = \"_depotstore\" }
    \$3 == \"extract\" { u = \"_depotext\" }
    \$1 != u { exit 1 }' '$tmp/child-users'"
started() { grep -Eq 'depotd\[[0-9]+\]: .*started' "$tmp/syslog"; }
check "a depotd line arrived in syslog" wait_for 50 started

# --- the installed depotctl, on the default socket, as depotctl(8) shows
/usr/sbin/depotctl user add alice >/dev/null 2>&1
/usr/sbin/depotctl workspace add research >/dev/null 2>&1
token=$(/usr/sbin/depotctl key create -u alice -w research -e '1 day' \
    2>/dev/null | awk -F '\t' '$1 == "token" { print $2 }')
check "depotctl key create prints a token line" \
    sh -c "printf '%s' '$token' | grep -Eq '^dpt-[A-Za-z0-9_-]{20,}\$'"
check "the token lists files (200)" test "$(curl -s -o /dev/null \
    -w '%{http_code}' -H "Authorization: Bearer $token" "$url/v1/files")" = 200
check "depotctl key list never shows the token" \
    sh -c "! /usr/sbin/depotctl key list | grep -qF -- '$token'"
check "depotctl show status names the storage process" \
    sh -c '/usr/sbin/depotctl show status | grep -q "^storage "'

# --- reload
reload_out=$(/etc/init.d/depotd reload 2>&1)
check "/etc/init.d/depotd reload exits 0" test $? -eq 0
reloaded() { grep -q 'depotd\[[0-9]*\]: .*configuration reloaded' \
    "$tmp/syslog"; }
check "syslog says the configuration was reloaded" wait_for 50 reloaded
write_conf "this is not a keyword"
bad_out=$(/etc/init.d/depotd reload 2>&1)
check "reload of a broken file fails" test $? -ne 0
check "reload of a broken file shows depotd's error" \
    sh -c "printf '%s' \"\$1\" | grep -q 'depotd.conf:'" - "$bad_out"
check "the server still answers after the failed reload" healthz
restart_out=$(/etc/init.d/depotd restart 2>&1)
check "restart with a broken file refuses" test $? -ne 0
check "restart with a broken file keeps the server" healthz

# --- stop
write_conf ""
check "/etc/init.d/depotd stop" sh -c '/etc/init.d/depotd stop \
    >/dev/null 2>&1'
none_left() { test -z "$(installed_pids)"; }
check "no depotd process is left after stop" wait_for 50 none_left
check "the pid file is gone" test ! -e /run/depotd.pid
check "nothing listens on the port any more" \
    sh -c "! curl -s -o /dev/null '$url/healthz'"
write_conf "this is not a keyword"
start_out=$(/etc/init.d/depotd start 2>&1)
check "start with a broken file refuses" test $? -ne 0
check "start with a broken file shows depotd's error" \
    sh -c "printf '%s' \"\$1\" | grep -q 'depotd.conf:'" - "$start_out"
check "start with a broken file leaves no process" none_left

# --- manuals, as installed
for m in /usr/share/man/man8/depotd.8.gz /usr/share/man/man8/depotctl.8.gz \
    /usr/share/man/man8/depot-sandboxd.8.gz \
    /usr/share/man/man5/depotd.conf.5.gz; do
	name=${m##*/}
	check "man -l renders $name" sh -c "test -f '$m' && \
	    MANWIDTH=80 man -l '$m' 2>/dev/null | grep -q '^NAME'"
	check "mandoc -Tlint -Wwarning is silent on $name" sh -c \
	    "test -f '$m' && test -z \"\$(mandoc -Tlint -Wwarning '$m' 2>&1)\""
done

# --- purge
check "dpkg --purge" sh -c 'dpkg --purge depotd >/dev/null 2>&1'
installed=0
check "purge removed the programs" test ! -e /usr/sbin/depotd
check "purge removed /etc/depotd.conf" test ! -e /etc/depotd.conf
check "purge removed /var/depot" test ! -e /var/depot
check "purge removed the init script and the unit" \
    test ! -e /etc/init.d/depotd -a ! -e /lib/systemd/system/depotd.service

exit $failed
