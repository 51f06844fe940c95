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

# regress/hostile/suite.sh: one tenant against a whole depotd.  Starts
# PostgreSQL, the upstream double and depotd (regress/hostile/lib.sh),
# then runs every case file regress/hostile/*.sh there is, in name
# order, in this shell (HOSTILE_CASES="a b": only a.sh and b.sh).  Each case checks that the caller gets an
# answer in its dialect within a bound, that every frontend's resident
# set stays bounded while it runs and after, and that twelve health
# checks in a row pass afterwards.  Ports HOSTILE_PORT (18900) to +9.

[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"
. "$top/regress/harness/tap.sh"
. "$top/regress/harness/upstream.sh"
. "$top/regress/hostile/lib.sh"
w=${HOSTILE_WORK:-$top/build/regress-hostile}
RSS_WATCHER=
cleanup() {
	trap - EXIT INT TERM
	[ -n "$RSS_WATCHER" ] && kill "$RSS_WATCHER" 2>/dev/null
	depot_stop
	upstream_stop
	pg_stop "$w/pg"
}
if [ "$(id -u)" -ne 0 ]; then
	notok "the hostile suite needs root (depotd drops privileges)"
	exit 1
fi
rm -rf "$w"; mkdir -p "$w"; chmod 755 "$w"
trap cleanup EXIT INT TERM
pg_start "$w/pg" || { notok "PostgreSQL did not start"; exit 1; }
depot_user
upstream_start "$w" "$((HOSTILE_PORT + 1))" ||
    { notok "the upstream double did not start"; exit 1; }
hostile_daemon || { notok "depotd did not start"; exit 1; }
for f in "$top"/regress/hostile/*.sh; do
	case ${f##*/} in
	suite.sh|lib.sh) continue ;;
	esac
	# HOSTILE_CASES="bodies oom" runs only those case files.
	if [ -n "${HOSTILE_CASES:-}" ]; then
		case " $HOSTILE_CASES " in
		*" $(basename "$f" .sh) "*) ;;
		*) continue ;;
		esac
	fi
	echo "# case file ${f##*/}"
	. "$f"
done
exit 0
