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

# regress/files/batch.sh: many GETs of a file by id at once, from
# different owners.  The storage helper runs the selects that wait for
# a connection together as one statement (storage_db.h, struct
# db_batch): each request must still get its own file, another owner's
# id must still be 404, and a database lost mid-batch must answer every
# waiting request with a 503, none left hanging.  A lock on files held
# from psql makes the selects wait, so that they do batch.  Sourced by
# suite.sh.

B=$T/batch
rm -rf "$B"; mkdir -p "$B"

# Three owners (alice, bob, alice in another workspace), three files
# each, with contents naming them.
bn=0
for k in KA KB KW; do
	for i in 1 2 3; do
		printf '%s %s\n' "$k" "$i" >"$B/src"
		eval "upload \"\$$k\" -F file=@$B/src"
		bn=$((bn + 1))
		printf '%s %s %s\n' "$k" "$fid" "$k $i" >>"$B/files"
	done
done
check "nine files uploaded for three owners" test "$(wc -l <"$B/files")" -eq 9

# Every key against every file, and a well-formed id nobody has: each
# line is "n key-name id want", want being own, 404.
batch_plan() {
	_n=0
	for _k in KA KB KW; do
		while read -r _o _id _c; do
			_w=404
			[ "$_o" = "$_k" ] && _w=own
			for _p in "" /content; do
				_n=$((_n + 1))
				echo "$_n $_k $_id$_p $_w"
			done
		done <"$B/files"
		_n=$((_n + 1))
		echo "$_n $_k file-00000000000000000000000000000000 404"
	done
}
batch_plan >"$B/plan"

# An exclusive lock on files, held by a psql session on a FIFO until
# batch_unlock, which runs its SQL ($1) in the same session first.
batch_lock() {
	rm -f "$B/lock.in" "$B/lock.out"
	mkfifo "$B/lock.in"
	"$PG_BIN/psql" -X -q -A -t -d depot <"$B/lock.in" >"$B/lock.out" 2>&1 &
	lockpid=$!
	exec 5>"$B/lock.in"
	echo "begin; lock table files in access exclusive mode;" \
	    "select 'locked';" >&5
	_n=0
	until grep -q locked "$B/lock.out" || [ $_n -ge 100 ]; do
		sleep 0.1
		_n=$((_n + 1))
	done
}

batch_unlock() {
	echo "${1:-select 1}; commit;" >&5
	exec 5>&-
	wait $lockpid
}

# Starts every request of the plan at once; their pids in $bpids.
batch_fire() {
	bpids=
	while read -r _n _k _p _w; do
		eval "_key=\$$_k"
		curl -s -m 15 -o "$B/$_n.body" -w '%{http_code}' \
		    -H "Authorization: Bearer $_key" \
		    "$DEPOT_URL/v1/files/$_p" >"$B/$_n.st" 2>/dev/null 5>&- &
		bpids="$bpids $!"
	done <"$B/plan"
}

# Each answer is its own file (metadata with its id, content with its
# bytes) or a 404.
batch_own() {
	while read -r _n _k _p _w; do
		_st=$(cat "$B/$_n.st")
		_id=${_p%/content}
		if [ "$_w" = 404 ]; then
			[ "$_st" = 404 ] || { echo "# $_n $_k $_p: $_st" >&2
			    return 1; }
			continue
		fi
		[ "$_st" = 200 ] || { echo "# $_n $_k $_p: $_st" >&2; return 1; }
		if [ "$_p" = "$_id" ]; then
			grep -q "\"id\":\"$_id\"" "$B/$_n.body" || return 1
		else
			grep -q "^$_k " "$B/$_n.body" || return 1
			[ "$(cat "$B/$_n.body")" = "$(awk -v id="$_id" \
			    '$2 == id { print $3, $4 }' "$B/files")" ] ||
			    return 1
		fi
	done <"$B/plan"
}

# Warm the key cache: a lookup of a key is not a select on files.
for k in "$KA" "$KB" "$KW"; do
	call o "$k" GET /v1/files
done
# Each waits for the lock; the second before it goes is for the last
# of them to reach the storage helper's queue.
batch_lock
batch_fire
sleep 1
batch_unlock
wait $bpids
check "$(wc -l <"$B/plan") GETs at once, held by one lock: each its own \
file, another owner's id and a missing one 404" batch_own

batch_5xx() {
	while read -r _n _k _p _w; do
		_st=$(cat "$B/$_n.st")
		[ "$_st" = 503 ] || { echo "# $_n $_k $_p: $_st" >&2; return 1; }
		case $_p in
		*/content) ;;
		*)	grep -q '"error"' "$B/$_n.body" || return 1 ;;
		esac
	done <"$B/plan"
}

# The pool's backends killed while every select waits: all 503.
batch_lock
batch_fire
sleep 1
t0=$(date +%s)
batch_unlock "select count(pg_terminate_backend(pid)) from \
    pg_stat_activity where datname = 'depot' and \
    pid <> pg_backend_pid() and backend_type = 'client backend'"
wait $bpids
check "the database lost mid-batch: every waiting GET is a 503" batch_5xx
check "and none hung (all answered in $(($(date +%s) - t0)) s)" \
    test $(($(date +%s) - t0)) -lt 10

# The pool comes back by itself; files are served again.
n=0
until curl -fs "$DEPOT_URL/healthz" 2>/dev/null | grep -Eq '"database": ?"up"' ||
    [ $n -ge 100 ]; do
	sleep 0.1
	n=$((n + 1))
done
call o "$KA" GET "/v1/files/$(awk '$1 == "KA" { print $2; exit }' "$B/files")"
check "the pool reconnects and GET answers again" is_status 200
