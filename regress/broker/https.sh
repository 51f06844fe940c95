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

# regress/broker/https.sh: a whole depotd whose sandbox is minimal.py
# over https, sourced by suite.sh once it serves on $tport with the
# certificate of $tls/ca.pem.  A chat request with code execution runs
# code there and stores its output file; then a reload to a ca-file of
# another CA, and the same request is a 502 before the model is asked,
# with no request reaching the backend and no session left.  PostgreSQL
# (regress/harness/pg.sh) and the upstream double on ports $port + 10
# and + 11.

. "$top/regress/harness/pg.sh"
. "$top/regress/harness/upstream.sh"

E2E=$work/e2e
E2E_PG=

# A model request to the depotd under test: the status; the body in
# $E2E/body.
e2e_req() {	# key method path [json]
	curl -s -o "$E2E/body" -w '%{http_code}' --max-time 60 \
	    -H "Authorization: Bearer $1" -H 'Content-Type: application/json' \
	    -X "$2" ${4:+--data-binary "$4"} "$DEPOT_URL$3"
}

# The caller's code_execution_output files.
e2e_outputs() {	# key
	e2e_req "$1" GET '/v1/files?limit=100' >/dev/null
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(sum(1 for f in d["data"] if f["purpose"] == "code_execution_output"))
' "$E2E/body" 2>/dev/null
}

# The model requests the double has had.
e2e_model_calls() {
	upstream_log | python3 -c 'import json, sys
print(sum(1 for q in json.load(sys.stdin)["requests"]
    if q["path"].startswith("/v1/")))'
}

# One round: the model asks for code that writes a file, then answers.
e2e_round() {	# key: the status
	upstream_reset &&
	upstream_script '[{"tool_calls": [{"name": "code_execution",
	    "arguments": {"code": "open(\"out.txt\", \"w\").write(\"hi\")\nprint(\"mark\", 6 * 7)"}}]},
	    {"text": "out: {{last_tool_result}}"}]' || return 1
	e2e_req "$1" POST /v1/chat/completions '{"model": "m-chat",
	    "tools": [{"type": "otari_code_execution"}],
	    "messages": [{"role": "user", "content": "run it"}]}'
}

# The answer carries the run's stdout and names the stored file.
e2e_answered() {	# status
	[ "$1" = 200 ] && grep -q 'mark 42' "$E2E/body" &&
	    grep -q 'out.txt' "$E2E/body"
}

# The bytes of the newest code_execution_output file.
e2e_newest() {	# key
	local id
	e2e_req "$1" GET '/v1/files?limit=100' >/dev/null
	id=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print([f["id"] for f in d["data"]
    if f["purpose"] == "code_execution_output"][0])' "$E2E/body") &&
	e2e_req "$1" GET "/v1/files/$id/content" >/dev/null &&
	cat "$E2E/body"
}

# The backend's session count, once it has dropped to 0 (5 s at most).
e2e_drained() {
	local i
	for i in $(seq 50); do
		[ "$(tls_health | cut -d' ' -f1)" = 0 ] && return 0
		sleep 0.1
	done
	return 1
}

e2e_conf() {	# ca-file
	depot_conf "$E2E" "$((port + 10))" "upstream \"chat\" {
	url \"http://127.0.0.1:$((port + 11))/v1\" api openai
	api-key \"test-upstream-key\" timeout 60s
}
model \"m-chat\" upstream \"chat\"
sandbox \"https://localhost:$tport\" {
	token \"tok-minimal-0123456789\"
	ca-file \"$1\"
}"
}

e2e_stop() {
	depot_stop
	upstream_stop
	[ -n "$E2E_PG" ] && pg_stop "$E2E_PG"
}

https_e2e() {
	local key n0 st before after

	make -s build/depotctl >&2 || { notok "build depotctl"; return; }
	mkdir -p "$E2E"
	if ! upstream_start "$E2E" "$((port + 11))"; then
		notok "the upstream double starts"
		return
	fi
	E2E_PG=$E2E/pg
	pg_start "$E2E_PG" >"$E2E/pg.log" 2>&1 ||
	    { notok "postgres starts"; return; }
	e2e_conf "$tls/ca.pem"
	if ! depot_start "$E2E"; then
		notok "depotd starts with an https sandbox"
		sed 's/^/# /' "$E2E/depotd.log"
		return
	fi
	key=$(depot_key broker-https default)
	n0=$(e2e_outputs "$key")
	st=$(e2e_round "$key")
	cp "$E2E/body" "$E2E/answer-200"
	check "depotd, sandbox over https: the code-execution request answers \
200 with the run's stdout and file ($st)" e2e_answered "$st"
	check "over https: the run's file is stored as a code_execution_output \
($n0 -> $(e2e_outputs "$key"))" [ "$(e2e_outputs "$key")" = $((n0 + 1)) ]
	check "over https: the stored file holds what the code wrote" \
	    [ "$(e2e_newest "$key")" = hi ]
	check "over https: no session is left after the request" e2e_drained

	# A reload to another CA's ca-file: the new bundle reaches the broker.
	e2e_conf "$tls/other.pem"
	depotctl_ reload >"$E2E/reload.out" 2>&1
	check "depotctl reload to a ca-file of another CA" test $? -eq 0
	before=$(tls_health)
	n0=$(e2e_outputs "$key")
	st=$(e2e_round "$key")
	after=$(tls_health)
	cp "$E2E/body" "$E2E/answer-502"
	check "another CA: the request fails 502 ($st)" [ "$st" = 502 ]
	check "another CA: the model was not asked ($(e2e_model_calls) calls)" \
	    [ "$(e2e_model_calls)" = 0 ]
	check "another CA: no request reached the backend, no session is left \
($before -> $after)" test -n "$before" -a "$after" = "$before" \
	    -a "${after% *}" = 0
	check "another CA: nothing stored" [ "$(e2e_outputs "$key")" = "$n0" ]
	check "the broker logged the certificate refused" \
	    grep -q 'broker.*sandbox backend: .*certificate' "$E2E/depotd.log"
	e2e_stop
}
