#!/bin/sh
# regress/bench/run.sh: `make bench'.  Each benchmark prints its figures
# as ratios against a reference measured in the same run on this machine.
# BENCHES="files" runs only those named (files, stores, sandbox).

top=$(cd "$(dirname "$0")/../.." && pwd)
for b in ${BENCHES:-files stores sandbox}; do
	[ -f "$top/regress/bench/$b.sh" ] || continue
	echo "== $b"
	sh "$top/regress/bench/$b.sh" || echo "bench $b failed"
done
