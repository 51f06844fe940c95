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

# regress/s3/suite.sh: the S3 store against a private radosgw (a one-node
# Ceph started by regress/harness/ceph.sh and stopped on exit).  Prints
# the unit tests' "ok"/"not ok" lines; exits non-zero on any failure.

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
. "$top/regress/harness/ceph.sh"

dir=$(mktemp -d /tmp/depot-s3.XXXXXX)
cleanup() {
	ceph_stop "$dir/ceph"
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

make -s build/regress/test_store_s3 build/regress/test_s3sign >&2 || {
	echo "not ok - build of the S3 tests"
	exit 1
}
if ! ceph_start "$dir/ceph"; then
	echo "not ok - radosgw starts (logs below)"
	tail -n 20 "$dir/ceph/log/stderr" 2>/dev/null | sed 's/^/# /'
	exit 1
fi
echo "ok - radosgw starts at $DEPOT_S3_ENDPOINT"

status=0
build/regress/test_s3sign || status=1
build/regress/test_store_s3 2>"$dir/store.log" || status=1
sed 's/^/# /' "$dir/store.log"
# The store logs bucket, key and status, never the secret.
if grep -qF "$DEPOT_S3_SECRET_KEY" "$dir/store.log"; then
	echo "not ok - the secret key appears in a log line"
	status=1
elif [ -s "$dir/store.log" ]; then
	echo "ok - no log line carries the secret key"
else
	echo "not ok - the store logged nothing to check"
	status=1
fi
exit $status
