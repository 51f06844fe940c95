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

# regress/config/suite.sh: depotd.conf(5) through `depotd -n' and `-nv'.
#
# good/*.conf must parse and print exactly good/*.out; what -nv prints
# must parse again and print the same; bad/*.conf must fail with exactly
# the lines in bad/*.err.  Every check prints "ok - ..." or "not ok - ...".
#
# With -update, the golden files (good/*.out, bad/*.err) are first
# rewritten from what depotd prints now; review the diff before a commit.

top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/regress/config
depotd=${DEPOTD:-$top/build/depotd}
failed=0
update=0
[ "${1:-}" = -update ] && update=1

ok() {
	echo "ok - $*"
}

notok() {
	echo "not ok - $*"
	failed=$((failed + 1))
}

quiet() {
	"$@" 2>/dev/null
}

check() {	# description, then a command that must succeed
	what=$1
	shift
	if "$@"; then ok "$what"; else notok "$what"; fi
}

if [ ! -x "$depotd" ]; then
	notok "$depotd is missing or not executable: run make first"
	exit 1
fi

tmp=$(mktemp -d /tmp/depotd-config.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
# Git keeps no file modes: the copies get the 600 that secrets need.
cp -R "$here/good" "$here/bad" "$tmp/"
find "$tmp" -type d -exec chmod 700 {} +
find "$tmp" -type f -exec chmod 600 {} +

# The placeholder -nv prints for a secret, and what replaces it so that
# the printed configuration can be read again.
placeholder='\*\*\*\*\*\*\*\*'
stand_in='stand-in-secret-0123456789'

# Parses $1 (in its own directory) with -nv; leaves $1.nv and $1.stderr.
run_nv() {
	(cd "$(dirname "$1")" && "$depotd" -nv -f "$(basename "$1")" \
	    >"$1.nv" 2>"$1.stderr")
}

# The printed form, secrets replaced, must print identically again.
reparse() {	# file.nv
	sed "s/$placeholder/$stand_in/g" "$1" >"$1.conf"
	chmod 600 "$1.conf"
	"$depotd" -nv -f "$1.conf" >"$1.again" 2>/dev/null &&
	    cmp -s "$1" "$1.again"
}

for conf in "$tmp"/good/*.conf; do
	name=good/$(basename "$conf")
	golden=$here/good/$(basename "$conf" .conf).out
	if ! run_nv "$conf"; then
		notok "$name parses: $(cat "$conf.stderr")"
		continue
	fi
	[ "$update" -eq 1 ] && cp "$conf.nv" "$golden"
	check "$name says configuration OK" \
	    grep -qx 'configuration OK' "$conf.stderr"
	check "$name prints $(basename "$golden")" cmp -s "$conf.nv" "$golden"
	check "$name printed form parses and prints the same" \
	    reparse "$conf.nv"
	if grep -Eq 'TESTSECRET|s3cr et|:pw@|sk-ant-test|sbx-token|key pass|0123456789abcdef0123|"tok"' \
	    "$conf.nv"; then
		notok "$name -nv shows no secret"
	else
		ok "$name -nv shows no secret"
	fi
done

# The shipped sample has no secret: it must parse at its installed mode.
cp "$top/etc/depotd.conf" "$tmp/sample.conf"
chmod 644 "$tmp/sample.conf"
if run_nv "$tmp/sample.conf"; then
	ok "etc/depotd.conf parses"
	check "etc/depotd.conf printed form parses and prints the same" \
	    reparse "$tmp/sample.conf.nv"
else
	notok "etc/depotd.conf parses: $(cat "$tmp/sample.conf.stderr")"
fi

for conf in "$tmp"/bad/*.conf; do
	name=bad/$(basename "$conf")
	expected=$here/bad/$(basename "$conf" .conf).err
	(cd "$tmp/bad" && "$depotd" -n -f "$(basename "$conf")" \
	    >/dev/null 2>"$conf.stderr")
	rc=$?
	[ "$update" -eq 1 ] && cp "$conf.stderr" "$expected"
	check "$name is refused (exit 1)" [ "$rc" -eq 1 ]
	if cmp -s "$conf.stderr" "$expected"; then
		ok "$name reports $(head -1 "$expected")"
	else
		notok "$name reports what $(basename "$expected") says;" \
		    "got: $(tr '\n' '|' <"$conf.stderr")"
	fi
done

# Secrets: refused in a file others can read, accepted at 600.
mkdir "$tmp/secrets"
cd "$tmp/secrets" || exit 1
cat >secret.conf <<'CONF'
database "dbname=depot"
storage "file:///var/depot/files"
admin-key "0123456789abcdef0123"
CONF
chmod 644 secret.conf
"$depotd" -n -f secret.conf >/dev/null 2>err
rc=$?
check "secret in a mode 644 file is refused" [ "$rc" -eq 1 ]
check "the refusal says chmod 600" grep -qx \
    'secret.conf: secrets in a file readable by group or others (mode 0644); chmod 600 it' err
chmod 640 secret.conf
"$depotd" -n -f secret.conf >/dev/null 2>err
check "secret in a mode 640 file is refused" grep -qx \
    'secret.conf: secrets in a file readable by group or others (mode 0640); chmod 600 it' err
chmod 600 secret.conf
check "secret in a mode 600 file is accepted" \
    quiet "$depotd" -n -f secret.conf

cat >db.conf <<'CONF'
database "host=/run/postgresql dbname=depot password=hunter2"
storage "file:///var/depot/files"
CONF
chmod 644 db.conf
"$depotd" -n -f db.conf >/dev/null 2>err
check "a conninfo password in a mode 644 file is refused" grep -qx \
    'db.conf: secrets in a file readable by group or others (mode 0644); chmod 600 it' err
check "the refusal does not show the password" \
    sh -c '! grep -q hunter2 err'

# A secret from a readable include, used in a private file.
cat >keys.conf <<'CONF'
sk = "TESTSECRET"
CONF
chmod 644 keys.conf
cat >main.conf <<'CONF'
include "keys.conf"
database "dbname=depot"
storage "s3://bucket" { access-key "AK" secret-key $sk }
CONF
chmod 600 main.conf
"$depotd" -n -f main.conf >/dev/null 2>err
check "a secret from a readable included file is refused" grep -qx \
    'keys.conf: secrets in a file readable by group or others (mode 0644); chmod 600 it' err
chmod 600 keys.conf
check "the same files at 600 are accepted" quiet "$depotd" -n -f main.conf

# -D overrides a macro of the file and defines new ones.
cat >macro.conf <<'CONF'
port = 8080
listen on 127.0.0.1 port $port
database "dbname=depot"
storage $store
CONF
chmod 600 macro.conf
"$depotd" -nv -f macro.conf -D port=9999 -D store=file:///srv/x \
    >out 2>/dev/null
check "-D port=9999 overrides port = 8080" \
    grep -qx 'listen on 127.0.0.1 port 9999' out
check "-D store=... defines a macro the file uses" \
    grep -qx 'storage "file:///srv/x"' out
check "without -D the undefined macro is an error" \
    sh -c "! '$depotd' -n -f macro.conf 2>/dev/null"

# Includes are relative to the including file, not to the cwd.
cd / || exit 1
check "include with a relative path works from another cwd" \
    quiet "$depotd" -n -f "$tmp/good/include.conf"
"$depotd" -n -f "$tmp/bad/include-missing.conf" >/dev/null 2>"$tmp/err"
check "missing include is reported with its line" grep -qx \
    "$tmp/bad/include-missing.conf:4: include \"$tmp/bad/no-such-file.conf\": No such file or directory" \
    "$tmp/err"

# An upstream whose name does not resolve, or whose CA bundle cannot be
# read: a warning, not an error.
cat >"$tmp/unresolved.conf" <<'CONF'
database "dbname=depot"
storage "file:///var/depot/files"
upstream "u" { url "http://upstream.invalid:8000/v1" }
upstream "c" { url "https://127.0.0.1/v1" ca-file "/nonexistent/ca.pem" }
model "m" upstream "u"
sandbox "https://127.0.0.1:8443" { token "t" ca-file "/nonexistent/sbx.pem" }
CONF
chmod 600 "$tmp/unresolved.conf"
"$depotd" -n -f "$tmp/unresolved.conf" >/dev/null 2>"$tmp/err"
rc=$?
check "an upstream name that does not resolve is no error (exit $rc)" \
    [ "$rc" -eq 0 ]
check "but -n warns that its models will answer 502" \
    grep -q 'upstream "u": cannot resolve upstream.invalid: .*answer 502' \
    "$tmp/err"
check "and that a ca-file it cannot read is missing" \
    grep -q 'upstream "c": ca-file /nonexistent/ca.pem: No such file' \
    "$tmp/err"
check "and so for the sandbox's ca-file" \
    grep -q ']: sandbox: ca-file /nonexistent/sbx.pem: No such file' \
    "$tmp/err"

"$depotd" -n -f "$tmp/no-such.conf" >/dev/null 2>&1
check "a missing configuration file is an error" [ $? -eq 1 ]

[ "$failed" -eq 0 ]
