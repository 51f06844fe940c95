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
# regress/extract/suite.sh: the extract child, which turns PDFs into
# text with pdftotext in a bubblewrap jail.  extract_try runs the real
# child under a test master and asks it through fe_extract.c: text,
# page cap, garbage, timeouts, the queue, cancel, the jail seen from
# outside, a frontend that goes.  Then the same with pdftotext missing,
# and the daemon with the role in its roster.  About 25 seconds; port
# 18650 (EXTRACT_PORT).

[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"
. "$top/regress/harness/tap.sh"

work=${EXTRACT_WORK:-$top/build/regress-extract}
port=${EXTRACT_PORT:-18650}
try=$top/build/regress/extract_try

cleanup() {
	trap - EXIT INT TERM
	depot_stop
	pg_stop "$work/pg"
}

for f in "$try" "$DEPOTD" "$DEPOTCTL"; do
	[ -x "$f" ] || { notok "$f is missing: run make all units"; exit 1; }
done
[ "$(id -u)" -eq 0 ] ||
    { notok "the suite needs root: it changes users"; exit 1; }
for f in /usr/bin/bwrap /usr/bin/pdftotext; do
	[ -x "$f" ] || { notok "$f is missing: make deps"; exit 1; }
done
[ -d "$work/pg" ] && pg_stop "$work/pg"
rm -rf "$work"
mkdir -p "$work"
chmod 755 "$work"
trap cleanup EXIT
trap 'exit 1' INT TERM
depot_user

# --- the child, asked through the frontend's code -------------------------

/usr/bin/python3 "$top/regress/extract/mkpdf.py" One Two Three \
    >"$work/three.pdf"
check "mkpdf.py writes a PDF pdftotext reads" \
    sh -c "pdftotext -q '$work/three.pdf' - | grep -q Three"
head -c 20000 /dev/urandom >"$work/garbage"
"$try" "$DEPOTD" "$work/three.pdf" "$work/garbage" 2>"$work/try.err"
rc=$?
check "extract_try exits 0 ($rc)" test "$rc" -eq 0
check "the child logged each timeout it enforced" \
    grep -q "over 2 s, killed" "$work/try.err"

# pdftotext hidden in a mount namespace of the test's own.
unshare -m sh -c "mount --bind /dev/null /usr/bin/pdftotext &&
    exec '$try' -m '$DEPOTD' '$work/three.pdf' '$work/garbage'" \
    2>"$work/missing.err"
rc=$?
check "without pdftotext every request fails ($rc)" test "$rc" -eq 0
check "and the child says once what is missing" \
    test "$(grep -c '/usr/bin/pdftotext is missing' "$work/missing.err")" \
    -eq 1

# --- the daemon -------------------------------------------------------------

pg_start "$work/pg" || { notok "PostgreSQL starts"; exit 1; }
depot_conf "$work/d" "$port"
"$DEPOTD" -n -v -f "$work/d/depotd.conf" >/dev/null 2>"$work/plan"
check "depotd -n -v prints the extract child's plan" \
    grep -qx "extract: user _depotext, root /" "$work/plan"
if ! depot_start "$work/d"; then
	notok "depotd starts"
	cat "$work/d/depotd.log" >&2
	exit 1
fi
ok "depotd starts with the extract role"
p=$(depot_child extract)
check "a child titled 'depotd: extract' runs ($p)" test -n "$p"
check "it runs as _depotext, its own user, under seccomp with NoNewPrivs" \
    awk -v u="$(id -u _depotext)" '
	$1 == "Uid:" { uid = ($2 == u && $5 == u) }
	$1 == "Seccomp:" { sc = ($2 == 2) }
	$1 == "NoNewPrivs:" { nnp = ($2 == 1) }
	END { exit !(uid && sc && nnp) }' "/proc/${p:-0}/status"
depotctl_ show status >"$work/status" 2>&1
check "depotctl show status lists it" \
    grep -Eq "^extract +0 +${p:-x} " "$work/status"
# A frontend that dropped its channel would leave the child only the
# master's.
check "the child holds a channel from each of 2 frontends and the master" \
    test "$(find "/proc/${p:-0}/fd" -lname 'socket:*' | wc -l)" -eq 3
check "no child was denied a system call or lost (log clean)" \
    sh -c "! grep -Eqi 'not permitted|permission denied|lost child|missing' \
    '$work/d/depotd.log'"
depot_stop

[ $failed -eq 0 ]
