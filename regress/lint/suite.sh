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

# regress/lint/suite.sh: the tree's layout as DESIGN.md section 1 gives
# it: no circle of calls between files (circles.py, read from the
# objects `make all' built), every flat file of cmd/depotd says its
# process in its name, no source file over 800 lines.

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
failed=0

python3 regress/lint/circles.py build || failed=1

# The prefixes of DESIGN.md section 1: the process a flat file runs in,
# or the parts every process shares (proto.c, roster.c, child.c,
# confine.c, schema.c, conf*.c and parse.y).
odd=
for f in cmd/depotd/*.c cmd/depotd/*.h; do
	case ${f##*/} in
	fe_*|frontend*|storage*|broker*|master*|extract*|conf*|depotd.*|\
	roster.*|proto.*|child.*|confine.*|schema.*) ;;
	*) odd="$odd ${f##*/}" ;;
	esac
done
if [ -z "$odd" ]; then
	echo "ok - every flat file of cmd/depotd says its process"
else
	echo "not ok - flat files of cmd/depotd that say no process:$odd"
	failed=1
fi

big=$(find cmd lib -name '*.[ch]' -exec wc -l {} + |
    awk '$2 != "total" && $1 > 800 { printf " %s (%d)", $2, $1 }')
if [ -z "$big" ]; then
	echo "ok - no source file over 800 lines"
else
	echo "not ok - source files over 800 lines:$big"
	failed=1
fi

exit $failed
