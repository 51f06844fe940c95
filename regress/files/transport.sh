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

# regress/files/transport.sh: how the body arrives (100-continue,
# chunked, over the cap, cut short, the database going away) and the
# per-key upload limit.  Each failure case ends with a sweep and a
# comparison of the store with the visible rows.  Sourced by suite.sh.

head -c 600000 /dev/urandom >"$T/600k.bin"
head -c 1500000 /dev/urandom >"$T/1500k.bin"

download_matches() {	# id file
	call o "$KA" GET "/v1/files/$1/content"
	[ "$st" = 200 ] && cmp -s "$T/b" "$2"
}

call o "$KA" POST /v1/files -H 'Expect: 100-continue' \
    -F file=@"$T/600k.bin" -v 2>"$T/expect.err"
check "Expect: 100-continue upload is 200" is_status 200
check "the server answered 100 Continue" grep -q '< HTTP/1.1 100' "$T/expect.err"
fid=$(jp "$T/b" "j['id']")
check "the 100-continue upload reads back the same" \
    download_matches "$fid" "$T/600k.bin"

call o "$KA" POST /v1/files -H 'Transfer-Encoding: chunked' \
    -F file=@"$T/600k.bin" -v 2>"$T/chunk.err"
check "a chunked upload is 200" is_status 200
check "curl sent it chunked" grep -qi '> Transfer-Encoding: chunked' \
    "$T/chunk.err"
fid=$(jp "$T/b" "j['id']")
check "the chunked upload reads back the same" \
    download_matches "$fid" "$T/600k.bin"
check "the chunked upload's row records its size" \
    test "$(sql "select bytes from files where id = '$fid'")" = 600000

# Over the cap (max-size 1M).
for d in o a; do
	call $d "$KA" POST /v1/files -F file=@"$T/1500k.bin"
	check "$d: a declared length over the cap is 413" is_err 413 $d
	call $d "$KA" POST /v1/files -H 'Transfer-Encoding: chunked' \
	    -F file=@"$T/1500k.bin"
	check "$d: a chunked body over the cap is 413" is_err 413 $d
done
call o "$KA" POST /v1/files -H 'Expect:' -F file=@"$T/1500k.bin"
check "413 without 100-continue reaches the client as a status" \
    is_err 413 o
check "nothing of the refused uploads is visible" \
    test "$(sql "select count(*) from files where bytes > 1000000")" = 0
sweep_consistent "uploads over the cap"

# The client goes away mid-body.
python3 "$here/rawhttp.py" half "$DPORT" "$KA" 800000
python3 "$here/rawhttp.py" halfchunk "$DPORT" "$KA" 800000
sleep 1
call o "$KA" GET "/v1/files?limit=1000"
check "no half upload is listed" \
    jc "$T/b" "all(f['filename'] != 'half.bin' for f in j['data'])"
sweep_consistent "client gone mid-body"

# The database stops mid-upload: a clean failure or a whole file.
curl -s -o "$T/slow.body" -w '%{http_code}' --limit-rate 200k \
    -H "Authorization: Bearer $KA" -F file=@"$T/600k.bin" \
    "$DEPOT_URL/v1/files" >"$T/slow.status" &
slow=$!
sleep 1
pg_stop "$D/pg"
sleep 1
pg_start "$D/pg"
wait $slow
slow_st=$(cat "$T/slow.status")
echo "# upload across a database restart: $slow_st"
i=0
until call o "$KA" GET /v1/files && [ "$st" = 200 ] || [ $i -ge 60 ]; do
	sleep 0.5
	i=$((i + 1))
done
check "the daemon serves again after the database restart" is_status 200
if [ "$slow_st" = 200 ]; then
	fid=$(jp "$T/slow.body" "j['id']")
	check "the upload across the restart succeeded whole" \
	    download_matches "$fid" "$T/600k.bin"
else
	check "the upload across the restart failed with an error envelope" \
	    jc "$T/slow.body" "err(j, $slow_st, 'openai')"
	check "the failed upload left no visible row" test "$(sql \
	    "select count(*) from files where state = 'ready' and bytes = 600000
	    and created_at > now() - interval '1 minute'")" -le 2
fi
sweep_consistent "database stopped mid-upload"

# One upload at a time per key.
depot_stop
depot_conf "$D" "$DPORT" 'files { max-uploads-per-key 1 }'
depot_start "$D" 3>&- 4<&- || echo "not ok - depotd restarts with max-uploads-per-key"
slow_upload() {	# key outfile
	curl -s -o "$2.body" -D "$2.hdr" -w '%{http_code}' --limit-rate 300k \
	    -H "Authorization: Bearer $1" -F file=@"$T/600k.bin" \
	    "$DEPOT_URL/v1/files" >"$2.status"
}
slow_upload "$KA" "$T/u1" &
p1=$!
sleep 0.3
slow_upload "$KA" "$T/u2" &
p2=$!
wait $p1 $p2
s1=$(cat "$T/u1.status") s2=$(cat "$T/u2.status")
echo "# two concurrent uploads with one key: $s1 $s2"
check "two concurrent uploads on one key: one 200, one 429" \
    test "$s1:$s2" = "200:429"
check "the 429 is a rate_limit_error" jc "$T/u2.body" "err(j, 429, 'openai')"
check "the 429 carries retry-after" grep -qi '^retry-after:' "$T/u2.hdr"
slow_upload "$KA" "$T/u3" &
p3=$!
sleep 0.3
slow_upload "$KB" "$T/u4" &
p4=$!
wait $p3 $p4
s3=$(cat "$T/u3.status") s4=$(cat "$T/u4.status")
echo "# concurrent uploads with two keys: $s3 $s4"
check "the limit is per key: another key's upload meanwhile is 200" \
    test "$s3:$s4" = "200:200"
sweep_consistent "uploads refused with 429"
