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
# 503, never the frontend's end (frontend.h, depotd(8)).  Every
# frontend's address space is limited (prlimit, RLIMIT_AS) to what it
# maps now and 16 MiB more; a request within every limit but larger
# than that is answered 503 in its dialect, the same frontends then
# answer twelve health checks, and once the limit is lifted the same
# request goes through.  A case file of suite.sh.

oom_limit() {	# extra-kib, or "unlimited"
	local p vs
	for p in $(hostile_frontends); do
		if [ "$1" = unlimited ]; then
			prlimit --pid "$p" --as=unlimited
		else
			vs=$(_status_kib "$p" VmSize)
			prlimit --pid "$p" --as=$(((vs + $1) * 1024))
		fi
	done
}

o=$w/oom
mkdir -p "$o"
# A 24 MiB string: within max-request-size and the JSON budget.
python3 -c '
import sys
sys.stdout.write("{\"model\":\"%s\",\"max_tokens\":16,\"messages\":[{\"role\":"
    "\"user\",\"content\":\"hi\"}],\"metadata\":{\"blob\":\"%s\"}}" %
    (sys.argv[1], "x" * (24 << 20)))' m >"$o/chat"
sed 's/"model":"m"/"model":"ma"/' "$o/chat" >"$o/messages"
before=$(hostile_frontends | sort | tr '\n' ' ')
oom_limit 16384
for r in /v1/chat/completions /v1/messages; do
	f=$o/chat
	[ "$r" = /v1/messages ] && f=$o/messages
	hostile_post "$r" "$f" 30
	if [ "$HTTP_CODE" = 503 ] && dialect_error "$r" "$w/answer"; then
		ok "out of memory on $r: 503 in its dialect:" \
		    "$(jq -r .error.message "$w/answer")"
	else
		notok "out of memory on $r: status $HTTP_CODE (want 503):" \
		    "$(head -c 300 "$w/answer")"
	fi
done
check "out of memory: twelve health checks in a row pass afterwards" \
    health_twelve
after=$(hostile_frontends | sort | tr '\n' ' ')
check "out of memory: the same frontends serve ($before)" \
    test "$before" = "$after"
oom_limit unlimited
hostile_post /v1/chat/completions "$o/chat" 30
check "the limit lifted, the same request answered 200 ($HTTP_CODE)" \
    test "$HTTP_CODE" = 200
