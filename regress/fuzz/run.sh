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

# regress/fuzz/run.sh: builds every regress/fuzz/fuzz_*.c as a libFuzzer
# target and runs each for FUZZ_SECONDS (default 20).
#
# The first line of each target, "/* fuzz-sources: lib/a.c ... */", names
# the project sources it is compiled with.  Seeds come from
# regress/fuzz/corpus/NAME, copied to build/fuzz/corpus-NAME so that the
# inputs the fuzzer finds stay out of the tree.  One line per target:
# "ok - fuzz NAME (N runs)" or "not ok - fuzz NAME: ...".
# FUZZ_TARGETS="http multipart" runs only those.

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
secs=${FUZZ_SECONDS:-20}
out=build/fuzz
pkgs="libbsd-overlay libevent json-c openssl libpq"
mkdir -p "$out"

if ! command -v clang >/dev/null 2>&1; then
	echo "not ok - fuzz: clang is not installed"
	exit 1
fi
cflags=$(pkg-config --cflags $pkgs) || exit 1
libs="$(pkg-config --libs $pkgs) -lhttp_parser"

status=0
for src in regress/fuzz/fuzz_*.c; do
	[ -f "$src" ] || continue
	name=$(basename "$src" .c)
	name=${name#fuzz_}
	if [ -n "$FUZZ_TARGETS" ]; then
		case " $FUZZ_TARGETS " in
		*" $name "*) ;;
		*) continue ;;
		esac
	fi
	bin=$out/fuzz_$name
	log=$out/fuzz_$name.log
	sources=$(head -n 1 "$src" |
	    sed -n 's|^/\*[[:space:]]*fuzz-sources:\(.*\)\*/[[:space:]]*$|\1|p')

	# shellcheck disable=SC2086	# word splitting wanted
	if ! clang -g -O1 -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=undefined -std=gnu11 -D_GNU_SOURCE \
	    -Ilib -Icmd/depotd $cflags -o "$bin" "$src" $sources $libs \
	    >"$log" 2>&1; then
		echo "not ok - fuzz $name: build failed, see $log"
		status=1
		continue
	fi
	corpus=$out/corpus-$name
	rm -rf "$corpus" "$out/crash-$name-"*
	mkdir -p "$corpus"
	if [ -d "regress/fuzz/corpus/$name" ]; then
		cp -R "regress/fuzz/corpus/$name/." "$corpus/"
	fi
	if "$bin" -max_total_time="$secs" -print_final_stats=1 \
	    -artifact_prefix="$out/crash-$name-" "$corpus" >>"$log" 2>&1; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" |
		    tail -n 1)
		echo "ok - fuzz $name (${runs:-?} runs)"
	else
		echo "not ok - fuzz $name: crash, see $log and" \
		    "$out/crash-$name-*"
		# What a CI log keeps of it: the sanitizer's verdict, what
		# the target said, and the frames of our own code (libFuzzer's
		# and the sanitizer's own frames come first and say nothing).
		grep -m 3 -E '^(SUMMARY|==[0-9]+== ?ERROR)|runtime error|^fuzz_' \
		    "$log" | sed 's/^/# /'
		grep -E '^ *#[0-9]+ ' "$log" |
		    grep -v -E 'fuzzer::|__sanitizer|libc\.so|_start' |
		    head -n 8 | sed 's/^/# /'
		# And the input itself, so that a crash CI found can be
		# replayed here: "$bin" FILE, FILE decoded from these lines.
		for f in "$out/crash-$name-"*; do
			[ -f "$f" ] || continue
			echo "# input ${f##*/} (base64):"
			head -c 512 "$f" | base64 | sed 's/^/# /'
			break
		done
		status=1
	fi
done
exit $status
