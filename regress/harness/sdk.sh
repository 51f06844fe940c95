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
# regress/harness/sdk.sh: the official node SDKs, installed with npm
# into SDK_MODULES (default build/sdk) from regress/sdk/package.json.
# Sourced, not run:
#
#	sdk_install LOGFILE	install once; again only when package.json
#				changes; npm's output goes to LOGFILE

. "$top/regress/harness/node.sh"

SDK_MODULES=${SDK_MODULES:-$top/build/sdk}

sdk_install() {
	local pkg=$top/regress/sdk/package.json
	mkdir -p "$SDK_MODULES" || return 1
	if cmp -s "$pkg" "$SDK_MODULES/package.json" &&
	    [ -f "$SDK_MODULES/node_modules/.package-lock.json" ]; then
		return 0
	fi
	cp "$pkg" "$SDK_MODULES/package.json" || return 1
	(cd "$SDK_MODULES" && npm install --no-audit --no-fund \
	    --loglevel=error) >"$1" 2>&1
}
