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

# regress/files/lifecycle.sh: SPEC.md 4.5 and 4.6, deleted and expired
# files are invisible everywhere.  Sourced by suite.sh.

invisible() {	# id: 404 everywhere, in no list, not a cursor
	for _d in o a; do
		call $_d "$KA" GET "/v1/files/$1"
		is_err 404 $_d || return 1
		call $_d "$KA" GET "/v1/files/$1/content"
		is_err 404 $_d || return 1
		call $_d "$KA" DELETE "/v1/files/$1"
		is_err 404 $_d || return 1
	done
	call o "$KA" GET "/v1/files?limit=1000"
	jc "$T/b" "'$1' not in ids(j)" || return 1
	call a "$KA" GET "/v1/files?limit=1000&ids=$1"
	jc "$T/b" "ids(j) == []" || return 1
	call o "$KA" GET "/v1/files?after=$1"
	is_err 404 o || return 1
	call a "$KA" GET "/v1/files?before_id=$1"
	is_err 404 a
}

upload "$KA" -F file=@"$T/hello.txt"
call o "$KA" DELETE "/v1/files/$fid"
check "OpenAI delete is 200 {id, object: file, deleted: true}" jc "$T/b" \
    "j == {'id': '$fid', 'object': 'file', 'deleted': True}"
check "a deleted file is invisible everywhere" invisible "$fid"
call o "$KA" DELETE "/v1/files/$fid"
check "OpenAI: a second delete is 404" is_err 404 o

upload "$KA" -F file=@"$T/hello.txt"
call a "$KA" DELETE "/v1/files/$fid"
check "Anthropic delete is 200 {id, type: file_deleted}" jc "$T/b" \
    "j == {'id': '$fid', 'type': 'file_deleted'}"
call b "$KA" DELETE "/v1/files/$fid"
check "Anthropic: a second delete is 404" is_err 404 b
sweep_consistent "deletes"

# Expiry the caller asked for, then one set in SQL.
upload "$KA" -F 'expires_after[seconds]=1' -F file=@"$T/hello.txt"
exp1=$fid
upload "$KA" -F file=@"$T/hello.txt"
exp2=$fid
sql "update files set expires_at = now() - interval '1 second'
    where id = '$exp2'" >/dev/null
sleep 2
check "a file past expires_after[seconds] is invisible everywhere" \
    invisible "$exp1"
check "a file whose expires_at passed is invisible everywhere" \
    invisible "$exp2"
sweep_consistent "expiry"
check "the sweep removed the expired rows" \
    test "$(sql "select count(*) from files where id in ('$exp1', '$exp2')")" = 0
