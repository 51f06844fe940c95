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

# regress/sandboxd/suite.sh: depot-sandboxd's own tests: the protocol,
# escape and abuse attempts, session lifetime, hardening and limits, and
# depotd's `sandbox local' (local.sh, with a private PostgreSQL).  Needs
# root (the daemon drops to _depotsbx), bubblewrap, Debian's python3
# with numpy, pandas and matplotlib; cgroups writable by root for
# limits.py and safety.py.  walk.py plants 200000 symlinks in one
# workspace.
cd "$(dirname "$0")" || exit 1
PY=/usr/bin/python3
if [ ! -x ../../build/depot-sandboxd ]; then
	echo "not ok - build/depot-sandboxd is missing (run make)"
	exit 1
fi
status=0
for t in safety schema proto abuse lifetime harden standalone limits freeze \
    walk; do
	echo "# $t"
	$PY "$t.py" || status=1
done
echo "# local"
sh ./local.sh || status=1
exit $status
