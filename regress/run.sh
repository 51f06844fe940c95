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

# regress/run.sh: the whole test suite, as `make check' runs it.
#
# Every suite prints one line per check, "ok - ..." or "not ok - ...".
# Suites are the unit test binaries in build/regress and every
# regress/*/suite.sh; SUITES="unit config" runs only those named.
# The last line is the plain total the CI reads: "N passed, N failed".

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
out=${REGRESS_OUT:-$top/build/regress-out}
mkdir -p "$out"
passed=0
failed=0

wanted() {
	[ -z "$SUITES" ] && return 0
	case " $SUITES " in *" $1 "*) return 0 ;; esac
	return 1
}

count() {	# suite-name logfile exit-status
	p=$(grep -c '^ok - ' "$2")
	f=$(grep -c '^not ok - ' "$2")
	if [ "$3" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - suite $1 exited $3 (see $2)"
		f=1
	fi
	# Each failure with the "# " lines after it: what CI's log keeps.
	awk '/^not ok - / { print; tail = 24; next }
	    tail > 0 && /^# / { print; tail--; next } { tail = 0 }' "$2"
	echo "# $1: $p passed, $f failed"
	passed=$((passed + p))
	failed=$((failed + f))
}

if wanted unit; then
	for t in build/regress/test_*; do
		[ -x "$t" ] || continue
		# These need a real server; their own suites start one.
		case ${t##*/} in
		test_db|test_store_s3|test_store_sftp|test_storage_peer|\
		test_broker_peer) continue ;;
		esac
		name=unit/${t##*/}
		log=$out/${t##*/}.log
		"$t" >"$log" 2>&1
		count "$name" "$log" $?
	done
fi

for s in regress/*/suite.sh; do
	[ -f "$s" ] || continue
	d=${s%/suite.sh}
	name=${d#regress/}
	wanted "$name" || continue
	log=$out/$name.log
	echo "# running $name"
	t0=$(date +%s)
	sh "$s" >"$log" 2>&1
	count "$name" "$log" $?
	# make check has 30 minutes on 2 cores: where they go.
	echo "# $name took $(($(date +%s) - t0)) s"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
