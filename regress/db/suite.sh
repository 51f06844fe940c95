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

# regress/db/suite.sh: the database layer against a private PostgreSQL.
#
# Runs build/regress/test_db and test_db_batch's pg mode against a
# cluster of its own, then test_db again in its restart mode while this
# script stops the server and starts it anew, so that the pool must
# notice the loss and reconnect by itself.

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
. regress/harness/pg.sh

dir=$top/build/regress-db
bin=$top/build/regress/test_db
status=0

cleanup() {
	[ -n "$restart_pid" ] && kill "$restart_pid" 2>/dev/null
	pg_stop "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

if [ ! -x "$bin" ]; then
	echo "not ok - $bin is not built (make build/regress/test_db)"
	exit 1
fi
if ! pg_start "$dir"; then
	echo "not ok - PostgreSQL starts (see $dir/pg.log)"
	exit 1
fi
echo "ok - PostgreSQL starts on port $PGPORT"

"$bin" || status=1
# Batched queries (struct db_batch) against the same server.
if [ -x "$top/build/regress/test_db_batch" ]; then
	"$top/build/regress/test_db_batch" pg || status=1
else
	echo "not ok - build/regress/test_db_batch is not built"
	status=1
fi

# The restart scenario: the test signals through a file once its pool
# is up, then waits up to 20 s for the loss and 20 s for the return.
ready=$dir/test_db.ready
rm -f "$ready"
"$bin" restart "$ready" &
restart_pid=$!
n=0
while [ ! -f "$ready" ] && [ $n -lt 200 ] &&
    kill -0 "$restart_pid" 2>/dev/null; do
	sleep 0.1
	n=$((n + 1))
done
if [ -f "$ready" ]; then
	echo "ok - restart mode connected"
	if pg_stop "$dir"; then
		echo "ok - PostgreSQL stopped under the pool"
	else
		echo "not ok - PostgreSQL stopped under the pool"
	fi
	sleep 1
	if pg_start "$dir"; then
		echo "ok - PostgreSQL started again"
	else
		echo "not ok - PostgreSQL started again"
	fi
else
	echo "not ok - restart mode connected"
fi
wait "$restart_pid" || status=1
restart_pid=

if pg_stop "$dir" && [ ! -f "$dir/pgdata/postmaster.pid" ]; then
	echo "ok - PostgreSQL stopped"
else
	echo "not ok - PostgreSQL stopped"
	status=1
fi
exit $status
