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

# regress/broker/hostile.sh: a whole depotd against a hostile
# protocol-v1 backend (minimal.py with its faults, over plain http on
# $port + 4), sourced by suite.sh after https.sh, whose helpers it
# uses.  The backend lists a produced file with a media type carrying
# CR LF and a header of its own, answers CreateSession with session
# ids that are no ids, and takes its time over PutFile and GetFile;
# then one key asks for more sessions than its share.  Each case: the
# caller's answer, its status and dialect, within a bound, and nothing
# of the backend's reaching a header, a path or a log line.  depotd
# on $port + 12, the upstream double on $port + 13.

H=$work/hostile
hport=$((port + 4))
hmin_pid=

hostile_fault() {	# json
	curl -fsS -o /dev/null -X POST --data-binary "$1" \
	    "http://127.0.0.1:$hport/__fault"
}

# Every path the backend was asked for since the last fault, one a line.
hostile_paths() {
	curl -fsS "http://127.0.0.1:$hport/__paths" | python3 -c '
import json, sys
for p in json.load(sys.stdin)["paths"]:
	print(repr(p)[1:-1])'
}

# Only /sessions and /sessions/<id>/...: no id took a request elsewhere.
hostile_paths_sane() {
	hostile_paths | python3 -c '
import re, sys
bad = [l for l in sys.stdin.read().split("\n") if l and
    not re.match(r"^/sessions(/[A-Za-z0-9_-]+(/.*)?)?$", l)]
sys.exit(1 if bad else 0)'
}

# A chat request with code execution; $1 key, $2 optional extra content.
hostile_round() {	# key [content-json]: the status; seconds in $H/secs
	local t0 content
	content=${2:-'"run it"'}
	upstream_reset &&
	upstream_script '[{"tool_calls": [{"name": "code_execution",
	    "arguments": {"code": "open(\"out.txt\", \"w\").write(\"hi\")\nprint(\"mark\", 6 * 7)"}}]},
	    {"text": "out: {{last_tool_result}}"}]' || return 1
	t0=$(date +%s)
	e2e_req "$1" POST /v1/chat/completions "{\"model\": \"m-chat\",
	    \"tools\": [{\"type\": \"otari_code_execution\"}],
	    \"messages\": [{\"role\": \"user\", \"content\": $content}]}"
	echo $(($(date +%s) - t0)) >"$H/secs"
}

hostile_err_type() {	# the OpenAI error type of $E2E/body
	python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["error"]["type"])' "$E2E/body" 2>/dev/null
}

hostile_newest_id() {	# key
	e2e_req "$1" GET '/v1/files?limit=100' >/dev/null
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print([f["id"] for f in d["data"]
    if f["purpose"] == "code_execution_output"][0])' "$E2E/body"
}

hostile_stop() {
	depot_stop
	upstream_stop
	[ -n "$hmin_pid" ] && kill "$hmin_pid" 2>/dev/null
	[ -n "$E2E_PG" ] && pg_stop "$E2E_PG"
	hmin_pid=
	E2E_PG=
}

hostile_media_type() {	# key
	local st id
	hostile_fault '{"mime": "text/plain\r\nSet-Cookie: injected=1"}'
	st=$(hostile_round "$1")
	check "hostile media type: the request answers 200 ($st)" \
	    e2e_answered "$st"
	id=$(hostile_newest_id "$1")
	curl -s -D "$H/head" -o /dev/null --max-time 10 \
	    -H "Authorization: Bearer $1" "$DEPOT_URL/v1/files/$id/content"
	check "the stored output downloads as application/octet-stream" \
	    grep -qi '^content-type: application/octet-stream' "$H/head"
	check "no header of the backend's reaches the download" \
	    sh -c "! grep -qi '^set-cookie' '$H/head'"
	curl -s -o "$H/meta" --max-time 10 -H "Authorization: Bearer $1" \
	    -H 'anthropic-version: 2023-06-01' "$DEPOT_URL/v1/files/$id"
	check "its metadata says application/octet-stream" python3 -c '
import json, sys
sys.exit(json.load(open(sys.argv[1]))["mime_type"] !=
    "application/octet-stream")' "$H/meta"
}

hostile_session_ids() {	# key
	local st sid
	for sid in '../x' 'abc\r\nX-Injected: 1' '' 'a b'; do
		hostile_fault "{\"session_id\": \"$sid\"}"
		st=$(hostile_round "$1")
		check "a session id '$sid' from the backend: 502 ($st, \
$(hostile_err_type))" [ "$st" = 502 -a "$(hostile_err_type)" = server_error ]
		check "with it, the model is not asked" \
		    [ "$(e2e_model_calls)" = 0 ]
		check "and no request left /sessions/<id>" hostile_paths_sane
	done
	check "no line of the log starts with the backend's header" \
	    sh -c "! grep -q '^X-Injected' '$H/depotd.log'"
}

hostile_slow() {	# key
	local st n0 fid
	n0=$(e2e_outputs "$1")
	hostile_fault '{"get_delay": 20}'
	st=$(hostile_round "$1")
	check "a GetFile that takes 20 s: the request still answers 200 \
($st) within the 3 s transfer-timeout and a little ($(cat "$H/secs")s)" \
	    [ "$st" = 200 -a "$(cat "$H/secs")" -le 10 ]
	check "the output it could not fetch is skipped, not stored" \
	    [ "$(e2e_outputs "$1")" = "$n0" ]
	check "the broker logged the skipped output" \
	    grep -q 'output out.txt not stored: timed out' "$H/depotd.log"
	printf 'a,b\n1,2\n' >"$H/seed.csv"
	fid=$(curl -s --max-time 10 -H "Authorization: Bearer $1" \
	    -F "file=@$H/seed.csv" "$DEPOT_URL/v1/files" | python3 -c '
import json, sys
print(json.load(sys.stdin)["id"])')
	hostile_fault '{"put_delay": 20}'
	st=$(hostile_round "$1" "[{\"type\": \"text\", \"text\": \"run\"},
	    {\"type\": \"file\", \"file\": {\"file_id\": \"$fid\"}}]")
	check "a PutFile that takes 20 s: 504 ($st, $(hostile_err_type)) \
within the 3 s transfer-timeout and a little ($(cat "$H/secs")s)" \
	    [ "$st" = 504 -a "$(hostile_err_type)" = server_error -a \
	    "$(cat "$H/secs")" -le 10 ]
	check "the error names transfer-timeout" \
	    grep -q 'transfer-timeout' "$E2E/body"
}

# max-sessions 2, max-sessions-per-key 1: a key running code holds its
# share; its second request is 429, another key's is served.
hostile_share() {	# key other-key
	local st pid
	hostile_fault '{"exec_delay": 4}'
	upstream_reset
	upstream_script '[{"tool_calls": [{"name": "code_execution",
	    "arguments": {"code": "print(1)"}}]}]'
	# Its own body file: e2e_req's is the next request's.
	curl -s -o "$H/first.body" -w '%{http_code}' --max-time 60 \
	    -H "Authorization: Bearer $1" -H 'Content-Type: application/json' \
	    --data-binary '{"model": "m-chat", "tools": [{"type":
	    "otari_code_execution"}], "messages": [{"role": "user",
	    "content": "hold"}]}' "$DEPOT_URL/v1/chat/completions" \
	    >"$H/first.st" &
	pid=$!
	sleep 1.5
	st=$(curl -s -D "$H/share.head" -o "$E2E/body" -w '%{http_code}' \
	    --max-time 30 -H "Authorization: Bearer $1" \
	    -H 'Content-Type: application/json' \
	    --data-binary '{"model": "m-chat", "tools": [{"type":
	    "otari_code_execution"}], "messages": [{"role": "user",
	    "content": "more"}]}' "$DEPOT_URL/v1/chat/completions")
	check "a key past max-sessions-per-key: 429 ($st, \
$(hostile_err_type))" [ "$st" = 429 -a "$(hostile_err_type)" = \
	    rate_limit_error ]
	check "with a retry-after" grep -qi '^retry-after:' "$H/share.head"
	st=$(e2e_req "$2" POST /v1/chat/completions '{"model": "m-chat",
	    "tools": [{"type": "otari_code_execution"}],
	    "messages": [{"role": "user", "content": "mine"}]}')
	check "another key meanwhile gets its session ($st)" [ "$st" = 200 ]
	wait "$pid"
	check "the first key's request completes ($(cat "$H/first.st"))" \
	    [ "$(cat "$H/first.st")" = 200 ]
}

hostile_e2e() {
	local key other i n

	E2E=$H
	mkdir -p "$H"
	python3 "$top/regress/broker/minimal.py" "$hport" \
	    tok-minimal-0123456789 >"$H/minimal.log" 2>&1 &
	hmin_pid=$!
	for i in $(seq 50); do grep -q listening "$H/minimal.log" && break
		sleep 0.1; done
	if ! upstream_start "$H" "$((port + 13))"; then
		notok "hostile: the upstream double starts"
		hostile_stop
		return
	fi
	E2E_PG=$H/pg
	pg_start "$E2E_PG" >"$H/pg.log" 2>&1 ||
	    { notok "hostile: postgres starts"; hostile_stop; return; }
	depot_conf "$H" "$((port + 12))" "upstream \"chat\" {
	url \"http://127.0.0.1:$((port + 13))/v1\" api openai
	api-key \"test-upstream-key\" timeout 60s
}
model \"m-chat\" upstream \"chat\"
sandbox \"http://127.0.0.1:$hport\" {
	token \"tok-minimal-0123456789\"
	transfer-timeout 3s
	max-sessions 2
	max-sessions-per-key 1
}"
	if ! depot_start "$H"; then
		notok "depotd starts with a hostile sandbox backend"
		sed 's/^/# /' "$H/depotd.log"
		hostile_stop
		return
	fi
	key=$(depot_key hostile default)
	other=$(depot_key hostile-too default)
	hostile_media_type "$key"
	hostile_session_ids "$key"
	hostile_slow "$key"
	hostile_share "$key" "$other"
	n=0
	for i in $(seq 12); do
		curl -fs -o /dev/null --max-time 5 "$DEPOT_URL/healthz" &&
		    n=$((n + 1))
	done
	check "twelve health checks in a row pass afterwards ($n)" \
	    [ "$n" = 12 ]
	hostile_stop
}
