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
# regress/hostile/answers.sh: a hostile upstream (issue 18, items 3 and
# 4): endless streams, a 60 MiB answer, 2000 tool calls in one turn,
# garbage between events, an upstream too slow for request-timeout; in
# every route and upstream API pairing, plain and streamed.  A case
# file of suite.sh (lib.sh's interface); it restarts depotd with small
# bounds, so that each case ends in seconds, and again without them at
# the end.  No ports of its own.

ANS_MAX=4M		# max-answer-size here
ANS_TOOLS=16		# max-tool-calls
ANS_TIMEOUT=6		# request-timeout, seconds

# The request a route takes, for model $2, streamed or not ($3).
ans_body() {	# route model stream file
	case $1 in
	/v1/chat/completions)
		printf '{"model":"%s","stream":%s,"messages":[{"role":"user","content":"hi"}]}' "$2" "$3" ;;
	/v1/messages)
		printf '{"model":"%s","stream":%s,"max_tokens":64,"messages":[{"role":"user","content":"hi"}]}' "$2" "$3" ;;
	/v1/responses)
		printf '{"model":"%s","stream":%s,"input":"hi"}' "$2" "$3" ;;
	esac >"$4"
}

# The last data line of the SSE answer, as JSON text.
ans_last_data() {
	grep '^data: ' "$w/answer" | tail -1 | cut -c7-
}

# The stream in $w/answer ends with an error event in ROUTE's dialect
# whose message holds PATTERN: chat a data line {error:{...}}, Messages
# and Responses "event: error" before it.
ans_stream_error() {	# route pattern
	local last
	last=$(ans_last_data)
	case $1 in
	/v1/chat/completions) ;;
	*) [ "$(grep '^event: ' "$w/answer" | tail -1)" = "event: error" ] ||
		return 1 ;;
	esac
	printf '%s' "$last" | jq -e --arg p "$2" '(.error.message | type) ==
	    "string" and (.error.type | type) == "string" and
	    (.error.message | contains($p))' >/dev/null 2>&1
}

# The double saw its client (depotd) go: the upstream call was cancelled.
ans_upstream_closed() {
	local i
	for i in $(seq 30); do
		upstream_log | jq -e '.requests[-1].client_closed == true' \
		    >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

# A streamed case: 200, then an error event saying PATTERN in time.
ans_stream_case() {	# what route file seconds pattern
	rss_watch_start
	hostile_post "$2" "$3" "$(($4 + 30))"
	rss_watch_stop
	if [ "$HTTP_CODE" = 200 ] && ans_stream_error "$2" "$5"; then
		ok "$1: the stream ends with an error event in the dialect" \
		    "of $2: $(ans_last_data | jq -r .error.message)"
	else
		notok "$1: status $HTTP_CODE, want 200 and an error event" \
		    "saying \"$5\": $(tail -c 300 "$w/answer")"
	fi
	_hostile_after "$1" "$4"
}

ans_says() {	# pattern: the error's message in $w/answer holds it
	jq -e --arg p "$1" '.error.message | contains($p)' "$w/answer" \
	    >/dev/null 2>&1
}

# A plain case: hostile_case, and the message says PATTERN.
ans_plain_case() {	# what route file codes seconds pattern
	hostile_case "$1" "$2" "$3" "$4" "$5"
	check "$1: the message says \"$6\"" ans_says "$6"
}

# Each route, with each upstream API: model "m" is OpenAI chat, "ma"
# Anthropic Messages, so that every translator and pass-through runs.
ANS_PAIRS="/v1/chat/completions:m /v1/chat/completions:ma
/v1/messages:m /v1/messages:ma /v1/responses:m /v1/responses:ma"

hostile_daemon "max-answer-size $ANS_MAX
max-tool-calls $ANS_TOOLS
request-timeout ${ANS_TIMEOUT}s" || notok "depotd with small answer bounds did not start"

for pair in $ANS_PAIRS; do
	route=${pair%:*} model=${pair#*:}
	what="$route of $model"
	ans_body "$route" "$model" true "$w/ans.stream"
	ans_body "$route" "$model" false "$w/ans.plain"

	upstream_reset
	upstream_script '[{"fault":{"kind":"endless"}}]'
	ans_stream_case "endless stream, $what" "$route" "$w/ans.stream" 30 \
	    max-answer-size
	check "endless stream, $what: the upstream call was cancelled" \
	    ans_upstream_closed

	upstream_script '[{"fault":{"kind":"endless"}}]'
	ans_plain_case "endless plain answer, $what" "$route" \
	    "$w/ans.plain" 502 30 max-answer-size
	check "endless plain answer, $what: the upstream call was cancelled" \
	    ans_upstream_closed

	upstream_script '[{"fault":{"kind":"endless","noise":true}}]'
	ans_stream_case "endless garbage, no event, $what" "$route" \
	    "$w/ans.stream" 30 max-answer-size

	upstream_script '[{"fault":{"kind":"huge"}}]'
	ans_plain_case "60 MiB answer, $what" "$route" "$w/ans.plain" 502 30 \
	    max-answer-size
	upstream_script '[{"fault":{"kind":"huge"}}]'
	ans_stream_case "60 MiB answer streamed, $what" "$route" \
	    "$w/ans.stream" 30 max-answer-size

	upstream_script '[{"fault":{"kind":"many_tools","count":2000}}]'
	ans_plain_case "2000 tool calls, $what" "$route" "$w/ans.plain" 502 \
	    30 max-tool-calls
	upstream_script '[{"fault":{"kind":"many_tools","count":2000}}]'
	ans_stream_case "2000 tool calls streamed, $what" "$route" \
	    "$w/ans.stream" 30 max-tool-calls

	# Lines an SSE reader skips change nothing in the answer.
	upstream_script '[{"fault":{"kind":"noise"}}]'
	hostile_post "$route" "$w/ans.stream" 30
	case $route in
	/v1/chat/completions) want='data: \[DONE\]' ;;
	/v1/messages) want='event: message_stop' ;;
	*) want='event: response.completed' ;;
	esac
	if [ "$HTTP_CODE" = 200 ] && grep -q "^$want" "$w/answer" &&
	    grep -q lorem-ipsum "$w/answer" && ! grep -q justaword "$w/answer"
	then
		ok "garbage between events, $what: the whole answer, clean"
	else
		notok "garbage between events, $what: status $HTTP_CODE:" \
		    "$(tail -c 300 "$w/answer")"
	fi

	upstream_script '[{"fault":{"kind":"stall","after":"headers"}}]'
	ans_plain_case "request-timeout, slow upstream, $what" "$route" \
	    "$w/ans.plain" 504 $((ANS_TIMEOUT + 5)) request-timeout
	check "request-timeout, $what: the upstream call was cancelled" \
	    ans_upstream_closed
	upstream_script '[{"fault":{"kind":"stall","after":"first"}}]'
	ans_stream_case "request-timeout, stream begun, $what" "$route" \
	    "$w/ans.stream" $((ANS_TIMEOUT + 5)) request-timeout
done
upstream_reset

# The gateway's own code-execution tool (sandbox local): calls past
# max-tool-calls get an error result the model reads, and what the
# rounds add to the transcript is bounded by max-answer-size.
ans_code_calls() {	# n: a turn of n code_execution calls
	python3 -c 'import json, sys
print(json.dumps([{"name": "code_execution", "arguments":
    {"code": "print(%d * 7)" % i}} for i in range(int(sys.argv[1]))]))' "$1"
}
# The tool results the double's last request carried: all, and refused.
ans_results() {
	upstream_log | jq -r '.requests[-1].body.messages | map(select(.role ==
	    "tool")) | "\(length) \(map(select(.content |
	    contains("max-tool-calls"))) | length)"'
}
ans_code_body() {
	printf '{"model":"m","tools":[{"type":"otari_code_execution"}],"messages":[{"role":"user","content":"run it"}]}' >"$w/ans.code"
}
ans_code_body
DEPOT_SANDBOX_LOCAL=1 hostile_daemon "max-answer-size $ANS_MAX
max-tool-calls 3" || notok "depotd with sandbox local did not start"

upstream_reset
upstream_script "[{\"tool_calls\": $(ans_code_calls 5)}, {\"text\": \"done\"}]"
hostile_post /v1/chat/completions "$w/ans.code" 120
check "5 code calls, max-tool-calls 3: answered 200 ($HTTP_CODE)" \
    [ "$HTTP_CODE" = 200 ]
check "5 code calls: 5 results, the 2 past the bound refused ($(ans_results))" \
    [ "$(ans_results)" = "5 2" ]
ans_ran() {	# the results of the calls that ran hold their output
	upstream_log | jq -e '[.requests[-1].body.messages[] |
	    select(.role == "tool") | .content | contains("14")] | any' \
	    >/dev/null
}
check "5 code calls: the 3 run said their output" ans_ran

upstream_reset
# Too long for an argument: sent from a file.
printf '{"turns": [{"tool_calls": %s}, {"text": "done"}]}' \
    "$(ans_code_calls 2000)" >"$w/turns"
curl -fsS -o /dev/null -X POST --data-binary "@$w/turns" \
    "$UPSTREAM_URL/__script"
rss_watch_start
hostile_post /v1/chat/completions "$w/ans.code" 120
rss_watch_stop
check "2000 code calls in one turn: answered 200 ($HTTP_CODE)" \
    [ "$HTTP_CODE" = 200 ]
check "2000 code calls: 2000 results, 1997 refused ($(ans_results))" \
    [ "$(ans_results)" = "2000 1997" ]
_hostile_after "2000 code calls in one turn" 120

# Each round's answer is 3 MB and carries a call: the second one takes
# the transcript's growth past max-answer-size (4M).
upstream_reset
call=$(ans_code_calls 1)
upstream_script "[{\"tool_calls\": $call, \"fault\": {\"kind\": \"huge\", \"size\": 3000000}},
    {\"tool_calls\": $call, \"fault\": {\"kind\": \"huge\", \"size\": 3000000}},
    {\"tool_calls\": $call, \"fault\": {\"kind\": \"huge\", \"size\": 3000000}},
    {\"text\": \"done\"}]"
ans_plain_case "code rounds past max-answer-size" /v1/chat/completions \
    "$w/ans.code" 502 60 "transcript"
check "code rounds: the third round was not sent ($(upstream_log |
    jq '.requests | length'))" [ "$(upstream_log | jq '.requests | length')" = 2 ]
upstream_reset

hostile_daemon || notok "depotd did not start again"
