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

# regress/xstream/suite.sh: the official SDKs (the versions
# regress/sdk/package.json names) read the streams depotd's translators
# write.  test_xstream dumps every translated stream; sdk.mjs serves
# each to openai's chat.completions and responses streaming helpers and
# to @anthropic-ai/sdk's messages.stream, and checks what they make of
# it.  XSTREAM_PORT overrides the port (default 18470).

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
here=$top/regress/xstream
port=${XSTREAM_PORT:-18470}
D=$top/build/regress-xstream

rm -rf "$D"
mkdir -p "$D/dump"

. "$top/regress/harness/sdk.sh"
node_ready "$D/node.log" ||
    { echo "not ok - a Node.js 20 or later (see $D/node.log)"; exit 1; }
if ! sdk_install "$D/npm.log"; then
	echo "not ok - npm installs the SDKs (log below)"
	sed 's/^/# /' "$D/npm.log"
	exit 1
fi
make -s build/regress/test_xstream >&2 || { echo "not ok - build"; exit 1; }
if XSTREAM_DUMP=$D/dump build/regress/test_xstream >"$D/unit.log"; then
	echo "ok - test_xstream dumps $(ls "$D/dump" | wc -l) streams"
else
	echo "not ok - test_xstream (log below)"
	sed 's/^/# /' "$D/unit.log"
	exit 1
fi
exec node "$here/sdk.mjs" "$D/dump" "$SDK_MODULES" "$port"
