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

# regress/discover/suite.sh: capability discovery and token counting
# (issue 23): depotd in front of three upstream doubles, each playing
# an open-model server (regress/upstream/double_server.py): llama.cpp
# (GET /props, /apply-template, /tokenize; no vision), Ollama (POST
# /api/show; vision) and vLLM (GET /v1/models with max_model_len,
# /tokenize).  Through the official SDKs (discover.mjs): what each
# upstream said, shown by depotctl show models; a PDF to a model whose
# upstream has no PDF input arrives as text; an image to one without
# vision is a 400 naming the model; countTokens equals the double's
# tokenizer's count, with and without a file reference; a model whose
# upstream cannot count is a 400; a reload asks again.
#
# DISCOVER_PORT (20100) moves depotd, the doubles take the next three.

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
here=$top/regress/discover
port=${DISCOVER_PORT:-20100}
lport=$((port + 1))
oport=$((port + 2))
vport=$((port + 3))
D=$top/build/regress-discover
UPSTREAM_KEY=test-upstream-key

. "$top/regress/harness/tap.sh"
. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"
. "$top/regress/harness/sdk.sh"

[ -f "$D/pg/pgdata/postmaster.pid" ] && pg_stop "$D/pg"
rm -rf "$D"
mkdir -p "$D"

pids=
cleanup() {
	local p
	depot_stop
	for p in $pids; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	pg_stop "$D/pg"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE

double() {	# name port server-json
	local i=0
	python3 "$top/regress/upstream/double.py" --port "$2" \
	    >"$D/$1.out" 2>"$D/$1.err" &
	pids="$pids $!"
	while [ $i -lt 300 ]; do
		grep -q "^listening $2\$" "$D/$1.out" 2>/dev/null && break
		sleep 0.1
		i=$((i + 1))
	done
	curl -fsS -o /dev/null -X POST --data-binary "{\"server\": $3}" \
	    "http://127.0.0.1:$2/__config"
}

node_ready "$D/node.log" ||
    { notok "a Node.js 20 or later (see $D/node.log)"; exit 1; }
if ! sdk_install "$D/npm.log"; then
	notok "npm installs the SDKs (log below)"
	sed 's/^/# /' "$D/npm.log"
	exit 1
fi
make -s build/depotd build/depotctl >&2 || { notok "build"; exit 1; }
double llama $lport '{"kind": "llama.cpp", "vision": false, "n_ctx": 2048}'
check "a double plays llama.cpp (no vision) on $lport" [ $? = 0 ]
double ollama $oport '{"kind": "ollama", "vision": true,
    "context_length": 32768}'
check "a double plays Ollama (vision) on $oport" [ $? = 0 ]
double vllm $vport '{"kind": "vllm", "max_model_len": 8192}'
check "a double plays vLLM on $vport" [ $? = 0 ]

depot_user
pg_start "$D/pg" || { notok "postgres starts"; exit 1; }
export DEPOT_SWEEP=0 DEPOT_MAX_SIZE=64M
export DEPOT_FILES_OPTS="extract-pages 5 extract-size 1M"
depot_conf "$D" "$port" "$(cat <<CONF
upstream "llama" { url "http://127.0.0.1:$lport/v1" api openai
	api-key "$UPSTREAM_KEY" discover }
upstream "llama-anth" { url "http://127.0.0.1:$lport/v1" api anthropic
	api-key "$UPSTREAM_KEY" anthropic-version "2023-06-01" }
upstream "ollama" { url "http://127.0.0.1:$oport/v1" api openai
	api-key "$UPSTREAM_KEY" discover }
upstream "vllm" { url "http://127.0.0.1:$vport/v1" api openai
	api-key "$UPSTREAM_KEY" discover }
upstream "plain" { url "http://127.0.0.1:$lport/v1" api openai
	api-key "$UPSTREAM_KEY" no discover }
model "m-llama" upstream "llama" { remote-name "double-llama" }
model "m-llama-anth" upstream "llama-anth" { remote-name "double-llama"
	max-tokens 256 }
model "m-llama-conf" upstream "llama" { pdf-as-text }
model "m-ollama" upstream "ollama" { remote-name "gemma3" }
model "m-vllm" upstream "vllm" { remote-name "gpt-test" }
model "m-vllm-anth" upstream "vllm" { remote-name "claude-test" }
model "m-plain" upstream "plain"
CONF
)"
t0=$(date +%s%N)
if depot_start "$D" -v; then
	ok "depotd starts with five upstreams, four discovered (one by default)"
else
	notok "depotd starts (log below)"
	sed 's/^/# /' "$D/depotd.log"
	exit 1
fi

# Discovery runs in each frontend (prefork 2) after start: wait for
# both to have heard from all four upstreams.
discovered() {	# count
	[ "$(grep -c 'discovery: upstream' "$D/depotd.log")" -ge "$1" ]
}
i=0
while ! discovered 8 && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
check "each frontend discovers the four upstreams" discovered 8
depotctl_ show models >"$D/models.txt" 2>&1
sed 's/^/# /' "$D/models.txt"
has() {	# pattern
	grep -q -- "$1" "$D/models.txt"
}
check "show models: m-llama is llama.cpp, no vision, context 2048, from /props" \
    has "^model m-llama upstream llama: server llama.cpp vision no pdf no context 2048 template yes; text-only (discovered); from GET http://127.0.0.1:$lport/props$"
check "show models: m-llama-conf keeps its configured pdf-as-text" \
    has "^model m-llama-conf upstream llama: .*; pdf-as-text (configured)"
check "show models: m-ollama is Ollama with vision, context 32768, from /api/show" \
    has "^model m-ollama upstream ollama: server ollama vision yes pdf no context 32768 template yes; pdf-as-text (discovered); from POST http://127.0.0.1:$oport/api/show$"
check "show models: m-vllm is vLLM with max_model_len 8192 from /v1/models" \
    has "^model m-vllm upstream vllm: server vllm vision unknown pdf no context 8192 .*from GET http://127.0.0.1:$vport/v1/models$"
check "show models: m-plain (no discover) learnt nothing" \
    has "^model m-plain upstream plain: nothing discovered; files native (configured)$"

status=0
n=0
for run in openai openai6 @anthropic-ai/sdk anthropic0; do
	n=$((n + 1))
	key=$(depot_key "disc$n" default)
	[ -n "$key" ] || { notok "a key for disc$n"; status=1; continue; }
	env -u OPENAI_API_KEY -u OPENAI_BASE_URL -u ANTHROPIC_API_KEY \
	    -u ANTHROPIC_AUTH_TOKEN -u ANTHROPIC_BASE_URL \
	    DEPOT_URL="$DEPOT_URL" DEPOT_KEY="$key" OTHER_KEY="$key" \
	    UPSTREAM_URL="http://127.0.0.1:$lport" \
	    LLAMA_URL="http://127.0.0.1:$lport" \
	    OLLAMA_URL="http://127.0.0.1:$oport" \
	    VLLM_URL="http://127.0.0.1:$vport" \
	    SDK_MODULES="$SDK_MODULES" \
	    node "$here/discover.mjs" "$run" || status=1
done

# A reload asks again: the llama double now says it has vision.
curl -fsS -o /dev/null -X POST --data-binary \
    '{"server": {"kind": "llama.cpp", "vision": true, "n_ctx": 4096}}' \
    "http://127.0.0.1:$lport/__config"
before=$(grep -c 'discovery: upstream' "$D/depotd.log")
depotctl_ reload >/dev/null
i=0
while ! discovered $((before + 8)) && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
depotctl_ show models >"$D/models2.txt" 2>&1
check "after reload: m-llama has vision and context 4096, PDFs as text" \
    grep -q "^model m-llama upstream llama: server llama.cpp vision yes pdf no context 4096 template yes; pdf-as-text (discovered)" \
    "$D/models2.txt"

if kill -0 "$DEPOT_PID" 2>/dev/null &&
    curl -fs -o /dev/null "$DEPOT_URL/healthz"; then
	ok "depotd is still up and healthy"
else
	notok "depotd is still up and healthy"
fi
[ "$failed" = 0 ] && [ "$status" = 0 ]
