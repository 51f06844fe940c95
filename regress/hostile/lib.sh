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
# regress/hostile/lib.sh: what every hostile case shares.  suite.sh
# sources it, starts PostgreSQL, the upstream double and a depotd, then
# sources every other regress/hostile/*.sh (a "case file") in the same
# shell, in name order.  A case file uses:
#
#	$w			the suite's work directory
#	$HOSTILE_PORT		depotd's port; +1 is the upstream double;
#				case files take +2 and up for their own
#				doubles and say which
#	$UPSTREAM_URL		the double (regress/harness/upstream.sh)
#	$HOSTILE_KEY		a caller's key (alice, default)
#	$HOSTILE_ASAN		1 in a sanitizer build
#	HOSTILE_RSS_MAX		the bound on a frontend's peak resident set
#				while a case runs, KiB (256 MiB; 1 GiB
#				under AddressSanitizer)
#	HOSTILE_RSS_AFTER	the bound once the case is over, KiB (64 MiB;
#				384 MiB under AddressSanitizer)
#
#	hostile_daemon [EXTRA]	(re)start depotd with upstreams "oa"
#				(openai) and "an" (anthropic) at the
#				double, models "m" (oa) and "ma" (an),
#				and EXTRA configuration lines; sets
#				HOSTILE_KEY
#	hostile_frontends	the pids of the running frontends
#	rss_watch_start		reset every frontend's VmHWM and sample
#				every frontend's VmRSS in the background
#	rss_watch_stop		stop; RSS_PEAK the highest figure, KiB
#	rss_now			the largest VmRSS of a frontend now, KiB
#	rss_settle KIB		wait (5 s at most) for rss_now <= KIB
#	health_twelve		twelve GET /healthz in a row answer 200,
#				each within 2 s
#	hostile_post ROUTE FILE [SECONDS]
#				POST FILE to ROUTE (/v1/...) with the
#				key; HTTP_CODE, HTTP_TIME set, the answer
#				in $w/answer
#	hostile_post_many N ROUTE FILE [SECONDS]
#				N such posts at once; HTTP_CODES (one a
#				line), HTTP_TIME the slowest; answers in
#				$w/answer.1 .. N
#	dialect_error ROUTE FILE
#				FILE is an error in ROUTE's dialect
#				(OpenAI's {error:{message,type,...}},
#				Anthropic's {type:"error",error:{...}})
#	hostile_case WHAT ROUTE FILE CODES SECONDS
#				the standard case: one post of FILE,
#				answered with a status in CODES ("413
#				400") in ROUTE's dialect within
#				SECONDS; every frontend's peak under
#				HOSTILE_RSS_MAX, back under
#				HOSTILE_RSS_AFTER, and health_twelve;
#				prints "# WHAT: peak RSS N MiB"
#	hostile_case_many N WHAT ROUTE FILE CODES SECONDS
#				the same with N posts at once
#	hostile_body FILE SHAPE N
#				write a model request to FILE (see below)

HOSTILE_PORT=${HOSTILE_PORT:-18900}
HOSTILE_ASAN=
grep -q __asan_init "$DEPOTD" 2>/dev/null && HOSTILE_ASAN=1
if [ -n "$HOSTILE_ASAN" ]; then
	# AddressSanitizer's quarantine keeps up to 256 MiB of what was
	# freed, and its shadow and red zones add to every block: the
	# bounds are 1 GiB and 384 MiB there, still far under the
	# gigabytes an unbounded body takes.
	HOSTILE_RSS_MAX=${HOSTILE_RSS_MAX:-1048576}
	HOSTILE_RSS_AFTER=${HOSTILE_RSS_AFTER:-393216}
fi
HOSTILE_RSS_MAX=${HOSTILE_RSS_MAX:-262144}
HOSTILE_RSS_AFTER=${HOSTILE_RSS_AFTER:-65536}

hostile_daemon() {	# [extra configuration]
	local u=$UPSTREAM_URL/v1
	depot_stop
	depot_conf "$w/d" "$HOSTILE_PORT" "
upstream \"oa\" { url \"$u\" api openai api-key \"test-upstream-key\" }
upstream \"an\" { url \"$u\" api anthropic api-key \"test-upstream-key\" }
model \"m\" upstream \"oa\"
model \"ma\" upstream \"an\"
${1:-}
"
	depot_start "$w/d" || return 1
	HOSTILE_KEY=$(depot_key alice default)
	[ -n "$HOSTILE_KEY" ]
}

hostile_frontends() {
	local p
	[ -n "${DEPOT_PID:-}" ] || return 0
	for p in $(pgrep -P "$DEPOT_PID"); do
		case $(ps -o args= -p "$p" 2>/dev/null) in
		"depotd: frontend"*) echo "$p" ;;
		esac
	done
}

_status_kib() {	# pid field
	awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null
}

rss_now() {
	local p v max=0
	for p in $(hostile_frontends); do
		v=$(_status_kib "$p" VmRSS)
		[ -n "$v" ] && [ "$v" -gt "$max" ] && max=$v
	done
	echo "$max"
}

rss_watch_start() {
	local p
	# 5: VmHWM starts again from VmRSS (proc(5)).
	for p in $(hostile_frontends); do
		echo 5 >"/proc/$p/clear_refs" 2>/dev/null
	done
	echo 0 >"$w/rss.max"
	(
		max=0
		while :; do
			v=$(rss_now)
			if [ "$v" -gt "$max" ]; then
				max=$v
				echo "$max" >"$w/rss.max"
			fi
			sleep 0.05
		done
	) &
	RSS_WATCHER=$!
}

rss_watch_stop() {
	local p v
	[ -n "${RSS_WATCHER:-}" ] && kill "$RSS_WATCHER" 2>/dev/null &&
	    wait "$RSS_WATCHER" 2>/dev/null
	RSS_WATCHER=
	RSS_PEAK=$(cat "$w/rss.max" 2>/dev/null || echo 0)
	# The sampler can miss a short peak; the kernel's mark does not.
	for p in $(hostile_frontends); do
		v=$(_status_kib "$p" VmHWM)
		[ -n "$v" ] && [ "$v" -gt "$RSS_PEAK" ] && RSS_PEAK=$v
	done
}

rss_settle() {	# kib
	local i
	for i in $(seq 50); do
		[ "$(rss_now)" -le "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

health_twelve() {
	local i
	for i in $(seq 12); do
		curl -fs -o /dev/null --max-time 2 "$DEPOT_URL/healthz" ||
		    return 1
	done
}

_hostile_curl() {	# route file seconds out
	curl -s -o "$4" -w '%{http_code} %{time_total}\n' \
	    --max-time "$3" -H "Authorization: Bearer $HOSTILE_KEY" \
	    -H "x-api-key: $HOSTILE_KEY" -H "anthropic-version: 2023-06-01" \
	    -H "Content-Type: application/json" \
	    --data-binary "@$2" "$DEPOT_URL$1"
}

hostile_post() {	# route file [seconds]
	local r
	r=$(_hostile_curl "$1" "$2" "${3:-60}" "$w/answer")
	HTTP_CODE=${r%% *}
	HTTP_TIME=${r#* }
}

hostile_post_many() {	# n route file [seconds]
	local i pids=
	for i in $(seq "$1"); do
		_hostile_curl "$2" "$3" "${4:-60}" "$w/answer.$i" \
		    >"$w/code.$i" &
		pids="$pids $!"
	done
	wait $pids
	HTTP_CODES=$(for i in $(seq "$1"); do
		cut -d' ' -f1 "$w/code.$i"; done)
	HTTP_TIME=$(for i in $(seq "$1"); do
		cut -d' ' -f2 "$w/code.$i"; done | sort -g | tail -1)
}

dialect_error() {	# route file
	case $1 in
	/v1/messages*)
		jq -e '.type == "error" and (.error.type | type) == "string"
		    and (.error.message | type) == "string"' "$2" \
		    >/dev/null 2>&1 ;;
	*)
		jq -e '(.error.message | type) == "string" and
		    (.error.type | type) == "string" and
		    (.error | has("param")) and (.error | has("code"))' "$2" \
		    >/dev/null 2>&1 ;;
	esac
}

_code_in() {	# code "list"
	case " $2 " in *" $1 "*) return 0 ;; esac
	return 1
}

# The figures and checks after a case's request(s).
_hostile_after() {	# what seconds
	local mib=$((RSS_PEAK / 1024))
	echo "# $1: peak RSS $mib MiB, answered in ${HTTP_TIME}s"
	check "$1: answered within $2 s (${HTTP_TIME}s)" \
	    awk -v t="$HTTP_TIME" -v b="$2" 'BEGIN { exit !(t + 0 < b + 0) }'
	check "$1: every frontend's peak RSS $mib MiB under $((HOSTILE_RSS_MAX / 1024)) MiB" \
	    test "$RSS_PEAK" -lt "$HOSTILE_RSS_MAX"
	if rss_settle "$HOSTILE_RSS_AFTER"; then
		ok "$1: RSS back under $((HOSTILE_RSS_AFTER / 1024)) MiB" \
		    "($(($(rss_now) / 1024)) MiB)"
	else
		notok "$1: RSS back under $((HOSTILE_RSS_AFTER / 1024))" \
		    "MiB ($(($(rss_now) / 1024)) MiB)"
	fi
	check "$1: twelve health checks in a row pass afterwards" \
	    health_twelve
}

hostile_case() {	# what route file codes seconds
	rss_watch_start
	hostile_post "$2" "$3" "$(($5 + 30))"
	rss_watch_stop
	if _code_in "$HTTP_CODE" "$4" && dialect_error "$2" "$w/answer"; then
		ok "$1: $HTTP_CODE in the dialect of $2:" \
		    "$(jq -r '.error.message' "$w/answer" 2>/dev/null)"
	else
		notok "$1: status $HTTP_CODE (want $4) in the dialect of $2:" \
		    "$(head -c 300 "$w/answer" 2>/dev/null)"
	fi
	_hostile_after "$1" "$5"
}

hostile_case_many() {	# n what route file codes seconds
	local c bad=0 i
	rss_watch_start
	hostile_post_many "$1" "$3" "$4" "$(($6 + 30))"
	rss_watch_stop
	for i in $(seq "$1"); do
		c=$(cut -d' ' -f1 "$w/code.$i")
		_code_in "$c" "$5" && dialect_error "$3" "$w/answer.$i" ||
		    bad=$((bad + 1))
	done
	check "$2: all $1 answered $5 in the dialect of $3 ($(echo $HTTP_CODES))" \
	    test "$bad" -eq 0
	_hostile_after "$2" "$6"
}

# hostile_body FILE SHAPE N: a model request whose metadata is N of
# SHAPE (arrays: [], strings: "a", keys: "kI":0, deep: N objects in
# one another, objects: {}, blob: one string of N bytes); the model
# is "ma" when FILE's name starts with "messages", else "m", and a
# name starting "responses" gives an input instead of messages.
hostile_body() {
	python3 - "$@" <<'PY'
import sys
path, shape, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
name = path.rsplit("/", 1)[-1]
model = "ma" if name.startswith("messages") else "m"
head = ('{"model":"%s","max_tokens":16,' % model)
if name.startswith("responses"):
    head += '"input":"hi",'
else:
    head += '"messages":[{"role":"user","content":"hi"}],'
with open(path, "w") as f:
    f.write(head)
    if shape == "arrays":
        f.write('"metadata":[' + ",".join(["[]"] * n) + "]}")
    elif shape == "objects":
        f.write('"metadata":[' + ",".join(["{}"] * n) + "]}")
    elif shape == "strings":
        f.write('"metadata":[' + ",".join(['"a"'] * n) + "]}")
    elif shape == "keys":
        f.write('"metadata":{' + ",".join('"%x":0' % i
            for i in range(n)) + "}}")
    elif shape == "deep":
        f.write('"metadata":' + '{"a":' * n + "0" + "}" * n + "}")
    elif shape == "blob":
        f.write('"metadata":{"blob":"' + "x" * n + '"}}')
PY
}
