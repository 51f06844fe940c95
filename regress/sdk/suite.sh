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

# regress/sdk/suite.sh: the official OpenAI and Anthropic node SDKs,
# current and previous major each (exact versions in package.json),
# against a real depotd, a private PostgreSQL and the store named by
# DEPOT_STORE: file (default), s3 (a private radosgw) or sftp (a private
# sshd).  The SDKs are installed with npm into build/sdk.  Prints one
# "ok - " or "not ok - " line per check, prefixed with the SDK's name
# and version, and exits non-zero if any failed.

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
here=$top/regress/sdk
store=${DEPOT_STORE:-file}
case $store in
file)	sdk_port=18321 ;;
s3)	sdk_port=18322 ;;
sftp)	sdk_port=18323 ;;
*)	echo "not ok - unknown DEPOT_STORE $store"; exit 1 ;;
esac
sdk_port=${SDK_PORT:-$sdk_port}	# another port where checkouts share a host
D=$top/build/regress-sdk-$store

. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"
. "$top/regress/harness/store.sh"
. "$top/regress/harness/sdk.sh"

[ -f "$D/pg/pgdata/postmaster.pid" ] && pg_stop "$D/pg"
rm -rf "$D"
mkdir -p "$D/tmp"

cleanup() {
	depot_stop
	pg_stop "$D/pg"
	# Only what store_setup got as far as loading.
	case $store in
	s3)	command -v ceph_stop >/dev/null && ceph_stop "$D/ceph" ;;
	sftp)	command -v sshd_stop >/dev/null && sshd_stop "$D/sshd" ;;
	esac
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE

node_ready "$D/node.log" ||
    { echo "not ok - a Node.js 20 or later (see $D/node.log)"; exit 1; }
if sdk_install "$D/npm.log"; then
	echo "ok - npm installs the SDKs into $SDK_MODULES"
else
	echo "not ok - npm installs the SDKs (log below)"
	sed 's/^/# /' "$D/npm.log"
	exit 1
fi
make -s build/depotd build/depotctl >&2 || { echo "not ok - build"; exit 1; }
depot_user
store_setup "$store" sdk || exit 1
pg_start "$D/pg" || { echo "not ok - postgres starts"; exit 1; }
export DEPOT_SWEEP=0 DEPOT_MAX_SIZE=16M
export DEPOT_ADMIN_KEY=${DEPOT_ADMIN_KEY:-dpt-admin-test-key-0123456789abcdef}
depot_conf "$D" "$sdk_port"
depot_start "$D" || { echo "not ok - depotd starts"; exit 1; }
echo "ok - depotd starts with the $store store"

# Each SDK gets a user of its own, so that its listing holds exactly
# the files it uploaded.
status=0
n=0
for run in openai.mjs:openai openai.mjs:openai6 \
    anthropic.mjs:@anthropic-ai/sdk anthropic.mjs:anthropic0; do
	n=$((n + 1))
	user=sdk$n
	key=$(depot_key "$user" default)
	if [ -z "$key" ]; then
		echo "not ok - a key for $user"
		status=1
		continue
	fi
	mkdir -p "$D/tmp/$n"
	# Only what the suite passes: no OPENAI_* or ANTHROPIC_* settings.
	env -u OPENAI_API_KEY -u OPENAI_BASE_URL -u ANTHROPIC_API_KEY \
	    -u ANTHROPIC_AUTH_TOKEN -u ANTHROPIC_BASE_URL \
	    DEPOT_URL="$DEPOT_URL" DEPOT_KEY="$key" DEPOT_USER="$user" \
	    SDK_MODULES="$SDK_MODULES" SDK_TMP="$D/tmp/$n" \
	    node "$here/${run%%:*}" "${run#*:}" || status=1
done

# The daemon must have survived every SDK.
if kill -0 "$DEPOT_PID" 2>/dev/null &&
    curl -fs -o /dev/null "$DEPOT_URL/healthz"; then
	echo "ok - depotd is still up and healthy"
else
	echo "not ok - depotd is still up and healthy"
	status=1
fi
exit $status
