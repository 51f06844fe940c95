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

# regress/files/auth.sh: SPEC.md section 2 and the 401/403/405 rows of
# section 3.  Sourced by suite.sh.

for d in o a b; do
	call $d - GET /v1/files
	check "$d: no credential is 401 authentication_error" is_err 401 $d
	call $d - GET /v1/files -H "Authorization: Basic $KA"
	check "$d: a Basic credential is 401" is_err 401 $d
	call $d - GET /v1/files -H "Authorization: Bearer "
	check "$d: an empty bearer token is 401" is_err 401 $d
	call $d dpt-00000000000000000000000000000000 GET /v1/files
	check "$d: an unknown key is 401" is_err 401 $d
	call $d "$KA" GET "/v1/files?user=bob"
	check "$d: a normal key naming another user is 403 permission_error" \
	    is_err 403 $d
	call $d "$KA" PUT /v1/files
	check "$d: PUT /v1/files is 405 invalid_request_error" is_err 405 $d
	call $d "$KA" GET /v1/files/file-0123/content/x
	check "$d: an unknown path under /v1/files is 404" is_err 404 $d
done

call o - GET /v1/files -H "x-api-key: $KA"
check "x-api-key is accepted" is_status 200
call a - GET /v1/files -H "x-api-key: $KA"
check "x-api-key with anthropic-version lists in Anthropic's shape" \
    jc "$T/b" "anthropic_page(j)"
call o "$KA" GET /v1/files -H "x-api-key: dpt-wrong"
check "Authorization wins over x-api-key" is_status 200
call o "$KA" GET "/v1/files?user=alice"
check "a normal key naming its own user is accepted" is_status 200

call o "$ADMIN" GET /v1/files
check "the admin key without user is 400" is_err 400 o
call a "$ADMIN" GET /v1/files
check "the admin key without user is 400 (Anthropic)" is_err 400 a

upload "$KA" -F file=@"$T/hello.txt"
alice_hello=$fid
call o "$ADMIN" GET "/v1/files?user=alice"
check "the admin key with ?user=alice lists alice's files" \
    jc "$T/b" "'$alice_hello' in ids(j)"
call o "$ADMIN" GET "/v1/files/$alice_hello?user=alice"
check "the admin key with ?user=alice retrieves alice's file" is_status 200
call o "$ADMIN" GET "/v1/files/$alice_hello?user=bob"
check "the admin key acting for bob does not see alice's file" is_err 404 o

# SPEC 2: on upload the admin names the user in a multipart field.
call o "$ADMIN" POST /v1/files -F user=alice -F file=@"$T/hello.txt"
check "the admin key uploads for the user named in the form" \
    is_status 200
fid=$(jp "$T/b" "j.get('id')" 2>/dev/null)
call o "$KA" GET "/v1/files/$fid"
check "the file the admin uploaded belongs to alice" is_status 200
call o "$KA" POST /v1/files -F user=bob -F file=@"$T/hello.txt"
check "a normal key naming another user in the form is 403" is_err 403 o

# A key revoked or expired is refused, and the message says which.
depotctl_ user add dave >/dev/null 2>&1
depotctl_ key create -u dave -w default >"$T/dave.key"
KD=$(sed -n 's/^token	//p' "$T/dave.key")
KDID=$(sed -n 's/^\(key-[0-9a-f]*\)	.*/\1/p' "$T/dave.key")
depotctl_ key revoke "$KDID" >/dev/null 2>&1
call o "$KD" GET /v1/files
check "a revoked key is 401" is_err 401 o
check "the message says the key is revoked" \
    jc "$T/b" "'revoked' in j['error']['message']"
depotctl_ key create -u dave -w default -e 1s >"$T/dave2.key"
KE=$(sed -n 's/^token	//p' "$T/dave2.key")
sleep 2
call a "$KE" GET /v1/files
check "an expired key is 401 (Anthropic)" is_err 401 a
check "the message says the key expired" \
    jc "$T/b" "'expired' in j['error']['message']"
