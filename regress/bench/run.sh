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

# regress/bench/run.sh: `make bench'.  Each benchmark prints its figures
# as ratios against a reference measured in the same run on this machine.
# BENCHES="files" runs only those named (files, stores, sandbox,
# models, coderun, discover, pools, limits).

top=$(cd "$(dirname "$0")/../.." && pwd)
for b in ${BENCHES:-files stores sandbox models coderun discover pools \
    limits}; do
	[ -f "$top/regress/bench/$b.sh" ] || continue
	echo "== $b"
	sh "$top/regress/bench/$b.sh" || echo "bench $b failed"
done
