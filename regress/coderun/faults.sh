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

# regress/coderun/faults.sh: the code-execution faults, sourced by
# suite.sh after depotd A (sandbox local) ran the SDKs.  Each fault must
# leave no session behind: depot-sandboxd's or minimal.py's GET /health
# tells the count.  Uses suite.sh's D, MODELS_CONF, mport, dead,
# MIN_TOKEN and the harnesses' functions (depotd.sh, upstream.sh).
#
#	faults_local DIR	depot-sandboxd killed mid-run
#	faults_minimal DIR PORT	a second depotd on minimal.py: a stored
#				output (control), a refused seed, a
#				failed GetFile, a client gone mid-round
#	faults_unreachable DIR PORT	the backend is not there
#	faults_nosandbox DIR PORT	no sandbox configured

B_=$D/tmp/body		# the last reply's body

# A model or Files API request to the depotd under test; prints the
# status.  DIALECT openai or anthropic picks the credentials' headers.
depot_req() {	# key dialect method path [json] [curl args...]
	local key=$1 dialect=$2 method=$3 path=$4 body=${5:-}
	shift 4
	[ $# -gt 0 ] && shift
	if [ "$dialect" = anthropic ]; then
		set -- -H "x-api-key: $key" -H 'anthropic-version: 2023-06-01' \
		    -H 'anthropic-beta: files-api-2025-04-14' "$@"
	else
		set -- -H "Authorization: Bearer $key" "$@"
	fi
	curl -s -o "$B_" -w '%{http_code}' -X "$method" \
	    ${body:+-H 'Content-Type: application/json' --data "$body"} \
	    "$@" "$DEPOT_URL$path"
}

# The start of the last body, on one line (tap.sh's echo would read
# a backslash's escapes).
peek() {	# bytes
	head -c "$1" "$B_" | tr '\n\\' '  '
}

# What the last body says: an error's message or an answer's text.
said() {
	local s
	s=$(jget '(d.get("error") or {}).get("message") or
	    d["choices"][0]["message"]["content"]')
	[ -n "$s" ] || s=$(peek 200)
	printf '%s' "$s" | head -c 200 | tr '\n\\' '  '
}

# A Python expression over the last body, as d.
jget() {
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(eval("(" + sys.argv[2] + ")"))' "$B_" "$1" 2>/dev/null
}

# The envelope of the dialect: OpenAI's error object, or Anthropic's.
envelope() {	# dialect
	if [ "$1" = anthropic ]; then
		[ "$(jget 'd["type"] == "error" and
		    isinstance(d["error"]["type"], str) and
		    isinstance(d["error"]["message"], str)')" = True ]
	else
		[ "$(jget 'isinstance(d["error"]["message"], str)')" = True ]
	fi
}

# The status is WANT and the body the dialect's error envelope.
replied() {	# status want dialect
	[ "$1" = "$2" ] && envelope "$3"
}

# A gateway's error: the sandbox failing is no fault of the caller's.
failing() {	# status
	case $1 in 5[0-9][0-9]) return 0 ;; esac
	return 1
}

# The model requests the double received.
dbl_count() {
	upstream_log | python3 -c 'import json, sys
print(sum(1 for q in json.load(sys.stdin)["requests"]
    if q["path"].startswith("/v1/")))'
}

# A tool call of code_execution, then (optionally) an answer that
# carries the tool's result.
dbl_code() {	# python [answer]
	local code answer=
	code=$(printf '%s' "$1" | python3 -c 'import json, sys
print(json.dumps(sys.stdin.read()))')
	[ -n "${2:-}" ] && answer=", {\"text\": \"$2\"}"
	upstream_reset &&
	upstream_script "[{\"tool_calls\": [{\"name\": \"code_execution\",
	    \"arguments\": {\"code\": $code}}]}$answer]"
}

# The request bodies: otari_code_execution, and a file if given.
chat_body() {	# model [file-id]
	printf '{"model": "%s", "tools": [{"type": "otari_code_execution"}],
	    "messages": [{"role": "user", "content": [{"type": "text",
	    "text": "run it"}%s]}]}' "$1" \
	    "${2:+, {\"type\": \"file\", \"file\": {\"file_id\": \"$2\"\}\}}"
}
responses_body() {	# model
	printf '{"model": "%s", "tools": [{"type": "otari_code_execution"}],
	    "input": [{"role": "user", "content": [{"type": "input_text",
	    "text": "run it"}]}]}' "$1"
}
messages_body() {	# model
	printf '{"model": "%s", "max_tokens": 256, "tools": [{"type":
	    "otari_code_execution"}], "messages": [{"role": "user",
	    "content": [{"type": "text", "text": "run it"}]}]}' "$1"
}

upload_csv() {	# key: prints the new file's id
	printf 'month,sales\njan,3\nfeb,4\n' >"$D/tmp/fault.csv"
	curl -s -H "Authorization: Bearer $1" -F purpose=user_data \
	    -F "file=@$D/tmp/fault.csv;type=text/csv" "$DEPOT_URL/v1/files" |
	    python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])' \
	    2>/dev/null
}

# The caller's code_execution_output files.
outputs() {	# key
	depot_req "$1" openai GET '/v1/files?limit=100' >/dev/null
	jget 'sum(1 for f in d["data"] if f["purpose"] ==
	    "code_execution_output")'
}

# Waits up to SECONDS for a session count of 0 from COMMAND.
drained() {	# seconds command...
	local n=$(($1 * 10))
	shift
	while [ "$n" -gt 0 ]; do
		[ "$("$@")" = 0 ] && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}

up() {
	kill -0 "$DEPOT_PID" 2>/dev/null &&
	    curl -fs -o /dev/null --max-time 5 "$DEPOT_URL/healthz"
}

# depot-sandboxd killed while the model's code runs.
faults_local() {	# dir
	local d=$1 key st pid sbx
	key=$(depot_key faults-local default)
	dbl_code 'import time
time.sleep(8)
print("late")' 'done: {{last_tool_result}}' || notok "the double takes a script"
	depot_req "$key" openai POST /v1/chat/completions \
	    "$(chat_body m-chat)" --max-time 60 >"$D/tmp/kill.st" &
	pid=$!
	sleep 2.5
	sbx=$(depot_child depot-sandboxd ||
	    pgrep -P "$DEPOT_PID" -x depot-sandboxd | head -1)
	check "depot-sandboxd is the master's child (pid ${sbx:-none})" \
	    [ -n "$sbx" ]
	check "one depot-sandboxd session while the code runs\
 ($(sbx_sessions "$d"))" [ "$(sbx_sessions "$d")" = 1 ]
	[ -n "$sbx" ] && kill "$sbx"
	wait "$pid"
	st=$(cat "$D/tmp/kill.st")
	check "depot-sandboxd killed mid-run: the request gets an error\
 ($st: $(said))" failing "$st"
	# The master hears of its child's death a moment later.
	sleep 2
	check "depot-sandboxd killed mid-run: depotd stays up (2 s later)" up
	echo "# after the kill: depot-sandboxd $(pgrep -P "$DEPOT_PID" \
	    -x depot-sandboxd | head -1 || echo gone), sessions\
 $(sbx_sessions "$d")"
}

min_sessions() {
	curl -s --max-time 5 "http://127.0.0.1:$mport/health" | count_sessions
}

min_fault() {	# json
	curl -s -o /dev/null -w '%{http_code}' -X POST --data "$1" \
	    "http://127.0.0.1:$mport/__fault" | grep -q 204 ||
	    notok "minimal.py takes the fault $1"
}

# Python that writes a small PNG and prints a mark.
PNG_CODE='open("chart.png", "wb").write(bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d4944415478da63f8ffff3f0005fe02fea7d6a4a00000000049454e44ae"
    "426082"))
print("mark", 6 * 7)'

# depotd on dir and port with minimal.py as its sandbox; settings go
# into the sandbox block.  1, said, when it does not start.
minimal_depot() {	# dir port what [settings]
	depot_conf "$1" "$2" "$MODELS_CONF
sandbox \"http://127.0.0.1:$mport\" { token \"$MIN_TOKEN\" ${4:-} }"
	depot_start "$1" && return 0
	notok "depotd starts with $3"
	sed 's/^/# /' "$1/depotd.log"
	return 1
}

# The run of PNG_CODE on a chat naming a new CSV: the CSV's id in
# png_id, the status in png_st.
minimal_png_run() {	# key
	min_fault '{}'
	png_id=$(upload_csv "$1")
	dbl_code "$PNG_CODE" 'out: {{last_tool_result}}'
	png_st=$(depot_req "$1" openai POST /v1/chat/completions \
	    "$(chat_body m-chat "$png_id")" --max-time 60)
}

faults_minimal() {	# dir port
	local d=$1 key id st n0 pid
	minimal_depot "$d" "$2" "minimal.py as its sandbox" || return
	key=$(depot_key faults-min default)

	# The control: without a fault the output is stored.
	n0=$(outputs "$key")
	minimal_png_run "$key"
	id=$png_id st=$png_st
	check "minimal backend: the run answers 200 with the file line\
 ($st: $(peek 300))" [ "$st" = 200 -a \
	    -n "$(grep -o 'mark 42.*chart.png (file_id: file-' "$B_")" ]
	check "minimal backend: one more code_execution_output file\
 ($n0 -> $(outputs "$key"))" [ "$(outputs "$key")" = $((n0 + 1)) ]
	check "minimal backend: 0 sessions after the run" \
	    drained 5 min_sessions

	# Outputs that share a last segment, some 255 bytes long: each is
	# stored under a name of its own (issue 18).
	dbl_code 'import os
for d in ("a", "b", "c"):
    os.makedirs(d)
    open(d + "/plot.png", "w").write(d)
    open(d + "/x." + "a" * 253, "w").write(d)
print("made", 6)' 'out: {{last_tool_result}}'
	st=$(depot_req "$key" openai POST /v1/chat/completions \
	    "$(chat_body m-chat)" --max-time 60)
	depot_req "$key" openai GET '/v1/files?limit=100' >/dev/null
	check "outputs a/plot.png, b/plot.png, c/plot.png: plot.png,\
 plot-2.png, plot-3.png ($st: $(jget '" ".join(sorted(f["filename"] for f
	    in d["data"] if f["filename"].startswith("plot")))'))" [ "$st" = 200 \
	    -a "$(jget 'sorted(f["filename"] for f in d["data"] if
	    f["filename"].startswith("plot")) == ["plot-2.png", "plot-3.png",
	    "plot.png"]')" = True ]
	check "three outputs of a 255-byte last segment: three names, none\
 over max-filename ($(jget 'sorted(len(f["filename"]) for f in d["data"]
	    if f["filename"].startswith("x.aaa"))'))" [ "$(jget 'len(set(
	    f["filename"] for f in d["data"] if f["filename"].startswith(
	    "x.aaa") and len(f["filename"].encode()) <= 255)) == 3')" = True ]

	# A refused seed: 502, before any upstream call.
	min_fault '{"put": 413}'
	upstream_reset
	st=$(depot_req "$key" openai POST /v1/chat/completions \
	    "$(chat_body m-chat "$id")" --max-time 60)
	check "a refused seed (PutFile 413): 502 ($st: $(peek 200))" \
	    [ "$st" = 502 ]
	check "a refused seed: no upstream call ($(dbl_count))" \
	    [ "$(dbl_count)" = 0 ]
	check "a refused seed: 0 sessions after ($(min_sessions))" \
	    drained 5 min_sessions

	# A GetFile that fails: the run still answers, nothing stored.
	min_fault '{"get": 500}'
	n0=$(outputs "$key")
	dbl_code "$PNG_CODE" 'out: {{last_tool_result}}'
	st=$(depot_req "$key" openai POST /v1/chat/completions \
	    "$(chat_body m-chat "$id")" --max-time 60)
	check "a failed GetFile: the run still answers 200 with the stdout\
 ($st: $(peek 300))" [ "$st" = 200 -a \
	    -n "$(grep -o 'mark 42' "$B_")" ]
	check "a failed GetFile: the answer names no file id" \
	    [ "$st" = 200 -a -z "$(grep -o 'file_id: file-' "$B_")" ]
	check "a failed GetFile: no new code_execution_output file\
 ($n0 -> $(outputs "$key"))" [ "$st" = 200 -a "$(outputs "$key")" = "$n0" ]
	check "a failed GetFile: 0 sessions after" drained 5 min_sessions

	# A client gone mid-round (the Execute takes 5 s; it waits 1 s).
	min_fault '{"exec_delay": 5}'
	dbl_code 'print(1)' 'out: {{last_tool_result}}'
	depot_req "$key" openai POST /v1/chat/completions \
	    "$(chat_body m-chat)" --max-time 1 >/dev/null &
	pid=$!
	sleep 0.4
	n0=$(min_sessions)
	check "a client gone mid-round: 1 session while it runs ($n0)" \
	    [ "$n0" = 1 ]
	wait "$pid"
	check "a client gone mid-round: 0 sessions within 3 s of the close" \
	    drained 3 min_sessions
	min_fault '{}'
	sleep 4.5	# the slow Execute ends
	check "the faults leave depotd up" up
	depot_stop
}

# max-output-files 0 stores none of a run's files, as depotd.conf(5)
# says; the broker once took 0 for "the default" and stored 20.
faults_no_outputs() {	# dir port
	local d=$1 key st n0
	minimal_depot "$d" "$2" "max-output-files 0" "max-output-files 0" ||
	    return
	key=$(depot_key faults-noout default)
	n0=$(outputs "$key")
	minimal_png_run "$key"
	st=$png_st
	check "max-output-files 0: the run answers 200 with its output\
 ($st: $(peek 300))" [ "$st" = 200 -a -n "$(grep -o 'mark 42' "$B_")" ]
	check "max-output-files 0: no code_execution_output file stored\
 ($n0 -> $(outputs "$key"))" [ "$(outputs "$key")" = "$n0" ]
	check "max-output-files 0: 0 sessions after the run" \
	    drained 5 min_sessions
	depot_stop
}

# Nothing listens on the backend's port: 502 before any upstream call.
faults_unreachable() {	# dir port
	local d=$1 key st
	depot_conf "$d" "$2" "$MODELS_CONF
sandbox \"http://127.0.0.1:$dead\" { token \"$MIN_TOKEN\" }"
	if ! depot_start "$d"; then
		notok "depotd starts with an unreachable sandbox"
		sed 's/^/# /' "$d/depotd.log"
		return
	fi
	key=$(depot_key faults-dead default)
	upstream_reset
	st=$(depot_req "$key" openai POST /v1/chat/completions \
	    "$(chat_body m-chat)" --max-time 30)
	check "backend unreachable, chat: 502 in OpenAI's envelope ($st)" \
	    replied "$st" 502 openai
	st=$(depot_req "$key" anthropic POST /v1/messages \
	    "$(messages_body m-anth)" --max-time 30)
	check "backend unreachable, messages: 502 in Anthropic's envelope\
 ($st)" replied "$st" 502 anthropic
	check "backend unreachable: the double's log is empty\
 ($(dbl_count))" [ "$(dbl_count)" = 0 ]
	check "backend unreachable: depotd stays up" up
	depot_stop
}

# No sandbox at all: otari_code_execution is a 400 in the dialect.
faults_nosandbox() {	# dir port
	local d=$1 key st r
	depot_conf "$d" "$2" "$MODELS_CONF"
	if ! depot_start "$d"; then
		notok "depotd starts without a sandbox"
		sed 's/^/# /' "$d/depotd.log"
		return
	fi
	key=$(depot_key faults-none default)
	upstream_reset
	for r in chat:openai:/v1/chat/completions \
	    responses:openai:/v1/responses messages:anthropic:/v1/messages; do
		set -- $(echo "$r" | tr : ' ')
		st=$(depot_req "$key" "$2" POST "$3" "$("$1"_body m-chat)")
		check "no sandbox, $1: 400 in the $2 envelope ($st:\
 $(peek 200))" replied "$st" 400 "$2"
	done
	check "no sandbox: the double's log is empty ($(dbl_count))" \
	    [ "$(dbl_count)" = 0 ]
	depot_stop
}
