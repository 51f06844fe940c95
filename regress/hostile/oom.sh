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

# regress/hostile/oom.sh: out of memory in a frontend is that request's
# 503, never the frontend's end (frontend.h, depotd(8)).  depotd runs
# with every process's address space limited (RLIMIT_AS, 768 MiB, far
# above what any role maps) and limits raised so that one request may
# ask a frontend for more than that: a 256 MiB body of one string (held
# as it comes, made contiguous, then parsed).  The request is answered
# 503 in its dialect, the same frontends answer twelve health checks,
# and a request of ordinary size goes through afterwards.  A sanitizer
# build cannot run under RLIMIT_AS (its shadow memory is address space
# reserved at start), so there the case is not run and says so.  A
# case file of suite.sh; it restarts depotd, and again at its end.

oom_case() {
	local o=$w/oom r f before after real=$DEPOTD
	mkdir -p "$o"
	printf '#!/bin/sh\nexec prlimit --as=%s -- "%s" "$@"\n' \
	    $((768 * 1024 * 1024)) "$real" >"$o/depotd"
	chmod 755 "$o/depotd"
	DEPOTD=$o/depotd
	hostile_daemon "http { max-request-size 512M max-json-memory 1T }" ||
	    notok "out of memory: depotd did not start under RLIMIT_AS"
	DEPOTD=$real
	python3 -c '
import sys
sys.stdout.write("{\"model\":\"%s\",\"max_tokens\":16,\"messages\":[{"
    "\"role\":\"user\",\"content\":\"hi\"}],\"metadata\":{\"blob\":"
    "\"%s\"}}" % (sys.argv[1], "x" * (256 << 20)))' m >"$o/chat"
	sed 's/"model":"m"/"model":"ma"/' "$o/chat" >"$o/messages"
	before=$(hostile_frontends | sort | tr '\n' ' ')
	for r in /v1/chat/completions /v1/messages; do
		f=$o/chat
		[ "$r" = /v1/messages ] && f=$o/messages
		hostile_post "$r" "$f" 60
		if [ "$HTTP_CODE" = 503 ] && dialect_error "$r" "$w/answer"
		then
			ok "out of memory on $r: 503 in its dialect:" \
			    "$(jq -r .error.message "$w/answer")"
		else
			notok "out of memory on $r: status $HTTP_CODE (want" \
			    "503): $(head -c 300 "$w/answer")"
		fi
	done
	check "out of memory: twelve health checks in a row pass afterwards" \
	    health_twelve
	after=$(hostile_frontends | sort | tr '\n' ' ')
	check "out of memory: the same frontends serve ($before)" \
	    test "$before" = "$after"
	hostile_body "$o/small" blob 1000
	hostile_post /v1/chat/completions "$o/small" 30
	check "out of memory: then an ordinary request answered 200 ($HTTP_CODE)" \
	    test "$HTTP_CODE" = 200
	rm -f "$o/chat" "$o/messages"
	hostile_daemon || notok "depotd did not start again"
}

if [ -n "$HOSTILE_ASAN" ]; then
	echo "# oom.sh: not run in a sanitizer build (RLIMIT_AS)"
else
	oom_case
fi
