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

# regress/bench/lib.sh: measuring helpers shared by the benchmarks.

# Seconds (with decimals) that a command takes.
elapsed() {
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>&1
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc -l
}

ratio() {	# reference-time measured-time -> reference/measured
	echo "scale=3; $1 / $2" | bc -l
}

# Peak resident set (VmHWM, KiB) of the master DEPOT_PID and its children.
depot_peaks() {
	local p
	for p in $DEPOT_PID $(ps -o pid= --ppid "$DEPOT_PID"); do
		printf '%s %s KiB\n' "$(tr -d '\0' </proc/$p/cmdline | \
		    sed 's/ *\.*$//')" \
		    "$(awk '/VmHWM/ {print $2}' /proc/$p/status)"
	done
}

# Prints p50 and p99 of the numbers on stdin.
percentiles() {
	sort -n | awk '{ v[NR] = $1 } END {
		i50 = int(NR * 0.50); if (i50 < 1) i50 = 1;
		i99 = int(NR * 0.99); if (i99 < 1) i99 = 1;
		printf "p50 %.2f ms p99 %.2f ms", v[i50] * 1000, v[i99] * 1000 }'
}

# wrk's latency at a percentile ("50%", "99%") in microseconds, from
# wrk --latency output in a file.
wrk_pct_us() {	# file pct
	awk -v p="$2" '$1 == p {
		v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v)
		if (u == "us") m = 1; else if (u == "ms") m = 1000
		else if (u == "s") m = 1000000; else if (u == "m") m = 60000000
		printf "%.0f", v * m }' "$1"
}

# Requests done and requests/s of a wrk run in a file.
wrk_requests() {
	awk '/requests in/ { print $1 }' "$1"
}
wrk_rate() {
	awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$1"
}

# System calls entered by the pids (comma separated) while a command
# runs, counted by perf: a figure that holds on any machine; and the
# CPU time they took (task-clock, ms), to set against a reference.
syscalls_during() {	# pids command...: "syscalls cpu-ms"
	local pids=$1 out
	shift
	out=$(mktemp)
	perf stat -x, -e raw_syscalls:sys_enter,task-clock -p "$pids" \
	    -o "$out" &
	local perf=$!
	sleep 0.3
	"$@"
	kill -INT "$perf"
	wait "$perf" 2>/dev/null
	awk -F, '/raw_syscalls/ { n = $1 } /task-clock/ { ms = $1 }
	    END { printf "%d %.1f\n", n, ms }' "$out"
	rm -f "$out"
}

# Where the pids' CPU goes while the command runs: the symbols with the
# most samples, self time, and the share of each library, in
# DIR/profile.txt (BENCH_PROFILE=DIR); DIR/perf.data keeps the chains.
profile_during() {	# dir pids command...
	local dir=$1 pids=$2 perf
	shift 2
	mkdir -p "$dir"
	# dwarf call chains: the libraries have no frame pointers
	perf record -q -F 499 --call-graph dwarf,8192 -p "$pids" \
	    -o "$dir/perf.data" 2>/dev/null &
	perf=$!
	sleep 0.3
	"$@"
	kill -INT "$perf"
	wait "$perf" 2>/dev/null
	{
		echo "# by object"
		perf report -q -i "$dir/perf.data" --no-children --sort dso \
		    --stdio -g none 2>/dev/null | grep -v '^$' | head -12
		echo "# by symbol, self"
		perf report -q -i "$dir/perf.data" --no-children --sort sym \
		    --stdio -g none 2>/dev/null | grep -v '^$' | head -40
	} >"$dir/profile.txt"
}

# Peak VmRSS in KiB among the pids.
rss_max() {
	local p v m=0
	for p in "$@"; do
		v=$(awk '/VmRSS/ { print $2 }' /proc/$p/status)
		[ "$v" -gt "$m" ] && m=$v
	done
	echo "$m"
}
