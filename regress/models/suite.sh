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

# regress/models/suite.sh: depotd's model routes (issue 13) end to end:
# the official SDKs (openai 7 and 6 on chat completions and Responses,
# @anthropic-ai/sdk 1 and 0 on Messages) against a real depotd and
# PostgreSQL, with the scripted upstream double (regress/upstream/
# double.py) as the model server behind two upstreams, one per api.
# Every check reads the double's log: what reached the upstream.  The
# SDKs are installed as regress/sdk/suite.sh does.  Prints one "ok - "
# or "not ok - " line per check, prefixed with the SDK and version.
#
# MODELS_PORT (18450), MODELS_UPSTREAM_PORT (18451) and MODELS_DOWN_PORT
# (18452, where nothing may listen) move the ports;
# MODELS_ONLY="chat.mjs:openai ..." runs only the named scripts.

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
here=$top/regress/models
port=${MODELS_PORT:-18450}
uport=${MODELS_UPSTREAM_PORT:-18451}
dport=${MODELS_DOWN_PORT:-18452}	# nothing listens there
D=$top/build/regress-models
UPSTREAM_KEY=test-upstream-key

. "$top/regress/harness/tap.sh"
# The double and the shared SDK install come with the upstream double.
for f in regress/upstream/double.py regress/harness/sdk.sh; do
	[ -f "$top/$f" ] || { notok "$f exists"; exit 1; }
done
. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"
. "$top/regress/harness/sdk.sh"
. "$top/regress/harness/upstream.sh"

[ -f "$D/pg/pgdata/postmaster.pid" ] && pg_stop "$D/pg"
rm -rf "$D"
mkdir -p "$D"

cleanup() {
	depot_stop
	upstream_stop
	pg_stop "$D/pg"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE

node_ready "$D/node.log" ||
    { notok "a Node.js 20 or later (see $D/node.log)"; exit 1; }
command -v pdftotext >/dev/null ||
    notok "pdftotext is installed (poppler-utils): PDF checks will fail"
if sdk_install "$D/npm.log"; then
	ok "npm installs the SDKs into $SDK_MODULES"
else
	notok "npm installs the SDKs (log below)"
	sed 's/^/# /' "$D/npm.log"
	exit 1
fi
make -s build/depotd build/depotctl >&2 || { notok "build"; exit 1; }
if upstream_start "$D" "$uport"; then
	ok "the upstream double listens on $uport"
else
	notok "the upstream double starts (stderr below)"
	sed 's/^/# /' "$D/double.err"
	exit 1
fi

depot_user
pg_start "$D/pg" || { notok "postgres starts"; exit 1; }
u=http://127.0.0.1:$uport/v1
export DEPOT_SWEEP=0 DEPOT_MAX_SIZE=64M
export DEPOT_ADMIN_KEY=${DEPOT_ADMIN_KEY:-dpt-admin-test-key-0123456789abcdef}
export DEPOT_FILES_OPTS="extract-pages 5 extract-size 1M"
depot_conf "$D" "$port" "$(cat <<CONF
http { max-request-size 32M }
upstream "chat" { url "$u" api openai api-key "$UPSTREAM_KEY"
	timeout 30s connect-timeout 5s idle-timeout 3s }
upstream "anth" { url "$u" api anthropic api-key "$UPSTREAM_KEY"
	anthropic-version "2023-06-01" idle-timeout 3s }
model "m-chat" upstream "chat" { remote-name "remote/chat-model" }
model "m-anth" upstream "anth" { remote-name "remote-anth-model"
	max-tokens 1024 }
model "m-text" upstream "chat" { remote-name "remote/text" text-only }
model "m-pdftext" upstream "chat" { pdf-as-text }
upstream "down" { url "http://127.0.0.1:$dport/v1" api openai
	api-key "$UPSTREAM_KEY" connect-timeout 2s }
model "m-down" upstream "down"
CONF
)"
if depot_start "$D"; then
	ok "depotd starts with three upstreams and five models"
else
	notok "depotd starts (log below)"
	sed 's/^/# /' "$D/depotd.log"
	exit 1
fi

# Another tenant: a user and workspace of its own.
other=$(depot_key tenant2 ws2)
[ -n "$other" ] || { notok "a key for the other tenant"; exit 1; }

# Each SDK run gets a user of its own; the first of each family also
# inlines a 20 MB PDF.
status=0
n=0
keys=
for run in ${MODELS_ONLY:-chat.mjs:openai responses.mjs:openai \
    chat.mjs:openai6 responses.mjs:openai6 \
    messages.mjs:@anthropic-ai/sdk messages.mjs:anthropic0}; do
	n=$((n + 1))
	user=models$n
	key=$(depot_key "$user" default)
	if [ -z "$key" ]; then
		notok "a key for $user"
		status=1
		continue
	fi
	keys="$keys $key"
	big=0
	case $run in
	chat.mjs:openai|messages.mjs:@anthropic-ai/sdk) big=1 ;;
	esac
	env -u OPENAI_API_KEY -u OPENAI_BASE_URL -u ANTHROPIC_API_KEY \
	    -u ANTHROPIC_AUTH_TOKEN -u ANTHROPIC_BASE_URL \
	    DEPOT_URL="$DEPOT_URL" DEPOT_KEY="$key" OTHER_KEY="$other" \
	    UPSTREAM_URL="http://127.0.0.1:$uport" \
	    UPSTREAM_KEY="$UPSTREAM_KEY" MODELS_BIG=$big \
	    SDK_MODULES="$SDK_MODULES" \
	    node "$here/${run%%:*}" "${run#*:}" || status=1
done

# One log line per model request: the access fields, then the route,
# the workspace, the model and the upstream's token counts (11 in, 7
# out, as scripted).
logline() {
	grep -E ' [0-9]+ user=models1 id=[0-9a-f]+ [a-z.]+ workspace default model m-chat upstream 200 status 200 tokens 11/7 ' \
	    "$D/depotd.log" | grep -q -E ': POST /v1/[a-z/]+ 200 '
}
check "a model request's log line: user, workspace, model, tokens" logline
# A request refused before any upstream call says its own status, not
# 499 (which is for a caller that left).
refusedline() {
	grep -q -E ': POST /v1/[a-z/]+ 400 .* status 400 ' "$D/depotd.log" &&
	    ! grep -q -E ': POST /v1/[a-z/]+ 400 .* status 499 ' "$D/depotd.log"
}
check "a refused model request's log line: its status, not 499" refusedline
# /metrics counts requests and tokens per model.
metric() {	# name model: the samples' sum is above 0
	awk -v n="depotd_model_$1_total{" -v m="model=\"$2\"" '
	    index($0, n) == 1 && index($0, m) { s += $NF }
	    END { exit !(s > 0) }' "$D/metrics"
}
metrics() {
	local k m
	curl -fs -o "$D/metrics" "$DEPOT_URL/metrics" || return 1
	for k in requests tokens_in tokens_out; do
		for m in m-chat m-anth; do
			metric $k $m || return 1
		done
	done
}
check "/metrics: requests and tokens in and out for m-chat and m-anth" \
    metrics
# Latency histograms: cumulative buckets, +Inf the count, the count the
# model's requests, ttfb counted for no more requests than duration.
histograms() {
	python3 - "$D/metrics" <<'PY'
import re, sys
samples = {}
for line in open(sys.argv[1]):
    m = re.match(r'(depotd_model_\w+)\{(.*)\} (\S+)$', line.strip())
    if m:
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
        samples.setdefault(labels["model"], []).append(
            (m.group(1), labels.get("le"), float(m.group(3))))
ok = 0
for model in ("m-chat", "m-anth"):
    got = samples.get(model, [])
    req = sum(v for n, le, v in got if n == "depotd_model_requests_total")
    for h in ("duration", "ttfb"):
        b = [v for n, le, v in got
            if n == "depotd_model_%s_seconds_bucket" % h]
        count = [v for n, le, v in got
            if n == "depotd_model_%s_seconds_count" % h]
        total = [v for n, le, v in got
            if n == "depotd_model_%s_seconds_sum" % h]
        les = [le for n, le, v in got
            if n == "depotd_model_%s_seconds_bucket" % h]
        if len(count) != 1 or len(b) != 16 or les[-1] != "+Inf":
            sys.exit("%s %s: %d buckets, %d counts" % (model, h, len(b),
                len(count)))
        if b != sorted(b) or b[-1] != count[0] or total[0] <= 0:
            sys.exit("%s %s: buckets %s count %s sum %s" % (model, h, b,
                count, total))
        if h == "duration" and count[0] != req:
            sys.exit("%s: %d durations for %d requests" % (model,
                count[0], req))
        if h == "ttfb" and not 0 < count[0] <= req:
            sys.exit("%s: %d ttfb for %d requests" % (model, count[0], req))
    ok += 1
sys.exit(0 if ok == 2 else 1)
PY
}
check "/metrics: duration and time-to-first-byte histograms per model,\
 consistent with the requests counted" histograms

# Secrets never reach a log.
leak=0
for k in "$UPSTREAM_KEY" $keys "$other"; do
	grep -qF -- "$k" "$D/depotd.log" && leak=1
done
check "depotd's log names neither the upstream key nor a caller's key" \
    [ "$leak" = 0 ]
if kill -0 "$DEPOT_PID" 2>/dev/null &&
    curl -fs -o /dev/null "$DEPOT_URL/healthz"; then
	ok "depotd is still up and healthy"
else
	notok "depotd is still up and healthy"
fi
[ "$failed" = 0 ] && [ "$status" = 0 ]
