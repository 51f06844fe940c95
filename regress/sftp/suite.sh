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

# regress/sftp/suite.sh: the SFTP store against a private sshd.
#
# Starts sshd with regress/harness/sshd.sh, runs build/regress/
# test_store_sftp (which stops and restarts that sshd itself for the
# reconnect checks), and stops the server whatever happens.

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
SSHD_HARNESS_FILE=$top/regress/harness/sshd.sh
. "$SSHD_HARNESS_FILE"

test=build/regress/test_store_sftp
if [ ! -x "$test" ]; then
	echo "not ok - $test is not built (make $test)"
	exit 1
fi

dir=$(mktemp -d /tmp/depot-sftp.XXXXXX) || exit 1
cleanup() {
	sshd_stop "$dir"
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

if sshd_start "$dir"; then
	echo "ok - sshd up on 127.0.0.1:$(cat "$dir/port")"
else
	echo "not ok - sshd did not start"
	cat "$dir/sshd.log" 2>/dev/null
	exit 1
fi

"$test" >"$dir/test.log" 2>&1
rc=$?
cat "$dir/test.log"

# The passphrase must never reach a log line.
if grep -qF "$DEPOT_SFTP_PASSPHRASE" "$dir/test.log" "$dir/sshd.log"; then
	echo "not ok - the key passphrase appears in a log"
	rc=1
else
	echo "ok - the key passphrase appears in no log line"
fi
exit $rc
