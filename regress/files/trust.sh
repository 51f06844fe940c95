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

# regress/files/trust.sh: the storage helper trusts no child and keeps
# nothing for a request that is gone (issue 10 item 5, issue 12).
# Sourced by suite.sh.

# --- a compromised frontend, played by a test acting as the master ---
if [ "$store" = file ]; then
	upload "$KA" -F file=@"$T/hello.txt"
	trust_alice=$fid
	upload "$KB" -F file=@"$T/hello.txt"
	trust_bob=$fid
	"$top/build/regress/test_storage_peer" "$top/build/depotd" \
	    "$D/depotd.conf" "$KA" "$trust_alice" "$trust_bob" "$ADMIN" \
	    >"$T/peer.out" 2>"$T/peer.err"
	peer_rc=$?
	grep '^ok - \|^not ok - ' "$T/peer.out" | sed 's/^\(not \)*ok - /&storage peer: /'
	check "the fake frontend gets nothing it may not have" \
	    test "$peer_rc" -eq 0
	check "the fake frontend's test ran every check" \
	    test "$(grep -c '^ok - ' "$T/peer.out")" -ge 40
fi

# --- revocation and prefixes ---
depotctl_ user add erin >/dev/null 2>&1
trust_key() {	# prints "id token"
	depotctl_ key create -u erin -w default >"$T/erin.key" || return 1
	printf '%s %s\n' \
	    "$(sed -n 's/^\(key-[0-9a-f]*\)	.*/\1/p' "$T/erin.key")" \
	    "$(sed -n 's/^token	//p' "$T/erin.key")"
}
set -- $(trust_key)
erin_id=$1 erin_key=$2
# Eight calls each way, so that every frontend has seen the key.
trust_calls() {	# key status: how many of 8 calls answered status
	_n=0
	for _i in 1 2 3 4 5 6 7 8; do
		call o "$1" GET /v1/files
		[ "$st" = "$2" ] && _n=$((_n + 1))
	done
	echo "$_n"
}
check "erin's key works" test "$(trust_calls "$erin_key" 200)" = 8
depotctl_ key revoke "$erin_id" >/dev/null
check "revocation takes effect at once on this host" \
    test "$(trust_calls "$erin_key" 401)" = 8
check "and the message says revoked" \
    jc "$T/b" "'revoked' in j['error']['message']"

set -- $(trust_key)
e1_id=$1 e1_key=$2
set -- $(trust_key)
e2_id=$1 e2_key=$2
sql "update api_keys set prefix = 'dpt-ambig000' where id in ('$e1_id', '$e2_id')"
check "revoking by a prefix two keys share is refused" \
    sh -c "! '$DEPOTCTL' -s '$DEPOT_SOCK' key revoke dpt-ambig000 >'$T/ambig' 2>&1"
check "the refusal says why" grep -q "prefix" "$T/ambig"
call o "$e1_key" GET /v1/files
check "neither key of the ambiguous prefix was revoked (1)" is_status 200
call o "$e2_key" GET /v1/files
check "neither key of the ambiguous prefix was revoked (2)" is_status 200
set -- $(trust_key)
e3_key=$2
check "a prefix only one key has revokes it" \
    depotctl_ key revoke "$(printf %.12s "$e3_key")"
call o "$e3_key" GET /v1/files
check "the key revoked by its prefix is refused" is_err 401 o

# --- failed attempts are throttled per client address ---
trust_429=0
for i in $(seq 60); do
	s=$(curl -s -o /dev/null -w '%{http_code}' --interface 127.0.0.2 \
	    -H "Authorization: Bearer dpt-guess-$i" "$DEPOT_URL/v1/files")
	[ "$s" = 429 ] && trust_429=$((trust_429 + 1))
done
check "60 wrong keys from one address: the last ones are 429 ($trust_429)" \
    test "$trust_429" -ge 20
s=$(curl -s -o /dev/null -w '%{http_code}' --interface 127.0.0.2 \
    -H "Authorization: Bearer $KA" "$DEPOT_URL/v1/files")
check "that address is throttled even with a good key" test "$s" = 429
call o "$KA" GET /v1/files
check "another address is not" is_status 200

# --- an upload rejected early leaves nothing behind ---
depotctl_ user add frank >/dev/null 2>&1
KF=$(depot_key frank default)
python3 "$here/rawhttp.py" body "$T/body.two" two-files
trust_400=0
for i in $(seq 10); do
	call o "$KF" POST /v1/files \
	    -H "Content-Type: multipart/form-data; boundary=XyZzyBoundary42" \
	    --data-binary @"$T/body.two"
	[ "$st" = 400 ] && trust_400=$((trust_400 + 1))
done
check "ten uploads with a second file part are 400" test "$trust_400" -eq 10
upload "$KF" -F file=@"$T/hello.txt"
check "then a normal upload of that key works (no 429)" is_status 200
sleep 0.5
check "no live 'writing' row is left for those uploads" test "$(sql \
    "select count(*) from files f join users u on u.id = f.user_id where \
    u.name = 'frank' and f.state = 'writing' and \
    f.updated_at > now() - interval '1 hour'")" = 0

# --- an upload in progress keeps its row from the sweep ---
python3 "$here/rawhttp.py" drip "$DPORT" "$KF" 20 >"$T/drip.out" &
drip_pid=$!
for i in $(seq 50); do
	[ "$(sql "select count(*) from files where filename = 'drip.bin' \
	    and state = 'writing'")" = 1 ] && break
	sleep 0.1
done
# Stands for a sweep that runs writing-grace after the last refresh.
sql "update files set updated_at = now() - interval '2 minutes' where \
    filename = 'drip.bin' and state = 'writing'"
sleep 12
depotctl_ sweep >/dev/null
check "the dripping upload's row survives a sweep" test "$(sql \
    "select count(*) from files where filename = 'drip.bin'")" = 1
wait "$drip_pid"
check "the dripping upload completes (200)" test "$(cat "$T/drip.out")" = 200
check "its row is ready with every byte" test "$(sql \
    "select bytes from files where filename = 'drip.bin' and \
    state = 'ready'")" = 20
