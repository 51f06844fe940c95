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

# regress/upstream/suite.sh: the upstream double (double.py) checked
# on its own, before any test trusts it: framing.py holds it to the
# exact wire format on raw sockets, then the official OpenAI and
# Anthropic node SDKs, current and previous major each, talk to it
# directly.  No C build is needed.  UPSTREAM_PORT (default 18400)
# moves the double.  Prints one "ok - " or "not ok - " line per check
# and exits non-zero if any failed.

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
here=$top/regress/upstream
port=${UPSTREAM_PORT:-18400}
D=$top/build/regress-upstream

. "$top/regress/harness/tap.sh"
. "$top/regress/harness/sdk.sh"
. "$top/regress/harness/upstream.sh"

rm -rf "$D"
mkdir -p "$D"

trap upstream_stop EXIT
trap 'exit 1' INT TERM HUP PIPE

if upstream_start "$D" "$port"; then
	ok "double.py listens on port $port"
else
	notok "double.py listens on port $port (stderr below)"
	sed 's/^/# /' "$D/double.err"
	exit 1
fi

# The shell helpers other suites use.
upstream_script '[{"text": "from the shell"}]' &&
    curl -fsS -H "Authorization: Bearer test-upstream-key" \
    -d '{"model": "m", "messages": [{"role": "user", "content": "x"}]}' \
    "$UPSTREAM_URL/v1/chat/completions" >"$D/shell.json" &&
    upstream_log >"$D/log.json" && upstream_reset
check "harness/upstream.sh: script, log and reset from the shell" \
    grep -q '"content": "from the shell"' "$D/shell.json"
check "harness/upstream.sh: the log has the request" \
    grep -q '"path": "/v1/chat/completions"' "$D/log.json"

status=0
UPSTREAM_PORT=$port "$UPSTREAM_PYTHON" "$here/framing.py" || status=1

if ! node_ready "$D/node.log"; then
	notok "a Node.js 20 or later (see $D/node.log)"
	exit 1
fi
if sdk_install "$D/npm.log"; then
	ok "npm installs the SDKs into $SDK_MODULES"
else
	notok "npm installs the SDKs (log below)"
	sed 's/^/# /' "$D/npm.log"
	exit 1
fi

# Only what the suite passes: no OPENAI_* or ANTHROPIC_* settings.
for run in openai.mjs:openai openai.mjs:openai6 \
    anthropic.mjs:@anthropic-ai/sdk anthropic.mjs:anthropic0; do
	env -u OPENAI_API_KEY -u OPENAI_BASE_URL -u ANTHROPIC_API_KEY \
	    -u ANTHROPIC_AUTH_TOKEN -u ANTHROPIC_BASE_URL \
	    UPSTREAM_URL="$UPSTREAM_URL" SDK_MODULES="$SDK_MODULES" \
	    node "$here/${run%%:*}" "${run#*:}" 2>>"$D/node.err" || status=1
done

if kill -0 "$UPSTREAM_PID" 2>/dev/null; then
	ok "double.py is still up"
else
	notok "double.py is still up (stderr below)"
	sed 's/^/# /' "$D/double.err"
	status=1
fi
if [ -s "$D/double.err" ]; then
	notok "double.py wrote nothing to stderr (below)"
	sed 's/^/# /' "$D/double.err" | head -40
	status=1
else
	ok "double.py wrote nothing to stderr"
fi
[ "$failed" -eq 0 ] || status=1
exit $status
