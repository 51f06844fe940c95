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

# regress/files/download.sh: SPEC.md 4.3 and 4.4, and ownership (a file
# of another user or workspace does not exist).  Sourced by suite.sh.

upload "$KA" -F "file=@$T/rand.bin;type=application/x-test"
rid=$fid
size=$(wc -c <"$T/rand.bin")
check "the random blob uploads" test -n "$rid"

call o "$KA" GET "/v1/files/$rid"
check "retrieve (OpenAI) is 200 with a file object" jc "$T/b" \
    "openai_file(j) and j['id'] == '$rid' and j['bytes'] == $size"
call a "$KA" GET "/v1/files/$rid?beta=true"
check "retrieve (Anthropic, ?beta=true) is 200 with FileMetadata" \
    jc "$T/b" "anthropic_file(j) and j['size_bytes'] == $size"

call o "$KA" GET "/v1/files/$rid/content" -H 'Accept: application/binary'
check "download is 200" is_status 200
check "download returns the bytes uploaded" cmp -s "$T/b" "$T/rand.bin"
check "Content-Length is the blob's size" test "$(hdr content-length)" = "$size"
check "Content-Type is the stored MIME type" \
    test "$(hdr content-type)" = application/x-test
check "the download has a request-id" test -n "$(hdr request-id)"

range() {	# range-spec status expected-content-range [first len]
	call o "$KA" GET "/v1/files/$rid/content" -H "Range: bytes=$1"
	is_status "$2" || return 1
	[ "$(hdr content-range)" = "$3" ] ||
	    { echo "# Content-Range: $(hdr content-range)" >&2; return 1; }
	[ $# -eq 5 ] || return 0
	tail -c +$(($4 + 1)) "$T/rand.bin" | head -c "$5" >"$T/want.bin"
	cmp -s "$T/b" "$T/want.bin" &&
	    [ "$(hdr content-length)" = "$5" ]
}
check "Range 2-5 is 206 with those 4 bytes" \
    range 2-5 206 "bytes 2-5/$size" 2 4
check "suffix Range -100 is 206 with the last 100 bytes" \
    range -100 206 "bytes $((size - 100))-$((size - 1))/$size" \
    $((size - 100)) 100
check "open Range 2990- is 206 with the tail" \
    range 2990- 206 "bytes 2990-$((size - 1))/$size" 2990 10
check "Range past the end is clipped" \
    range 2995-9999 206 "bytes 2995-$((size - 1))/$size" 2995 5
check "Range starting at the size is 416 with bytes */SIZE" \
    range "$size-" 416 "bytes */$size"
check "the 416 carries an invalid_request_error" is_err 416 o
check "an inverted Range 5-2 is 416 with bytes */SIZE" \
    range 5-2 416 "bytes */$size"
call a "$KA" GET "/v1/files/$rid/content" -H "Range: bytes=5-2"
check "an inverted Range is 416 in Anthropic's envelope" is_err 416 a

# Content-Disposition for a name with quotes, CR LF, UTF-8 and slashes.
call o "$KA" GET "/v1/files/$esc_id/content"
disp=$(hdr content-disposition)
echo "# Content-Disposition: $disp"
check "Content-Disposition is attachment with filename and filename*" \
    python3 -c '
import re, sys, urllib.parse
d = sys.argv[1]
m = re.fullmatch(r"attachment; filename=\"([^\"\\\\/\x00-\x1f\x7f]*)\"; "
    r"filename\*=UTF-8'"''"'([A-Za-z0-9%!#$&+.^_`|~-]*)", d)
if not m:
    sys.exit("no match")
if not m.group(1).isascii() or not m.group(1):
    sys.exit("fallback")
if urllib.parse.unquote(m.group(2)) != "a\"qb \u00e9t\u00e9.txt":
    sys.exit("filename* is " + urllib.parse.unquote(m.group(2)))
' "$disp"
check "the download says nosniff" \
    test "$(hdr x-content-type-options)" = nosniff

# A name too long for filename*, typed text/html: still an attachment,
# under its ASCII fallback, and never sniffed.
raw_upload o "$KA" long-utf8-html
check "a 999-byte UTF-8 .html name uploads" \
    jc "$T/b" "len(j['filename'].encode()) == 999"
long_id=$(jp "$T/b" "j['id']")
call o "$KA" GET "/v1/files/$long_id/content"
check "its download is 200 as text/html" \
    test "$st" = 200 -a "$(hdr content-type)" = text/html
disp=$(hdr content-disposition)
echo "# Content-Disposition: $(printf %.60s "$disp")..."
check "a name too long to encode is still an attachment, in ASCII" \
    python3 -c '
import re, sys
if not re.fullmatch(r"attachment; filename=\"_{330}\.html\"(; .*)?", sys.argv[1]):
    sys.exit("not an ASCII attachment")' "$disp"
check "the text/html download says nosniff" \
    test "$(hdr x-content-type-options)" = nosniff
call o "$KA" DELETE "/v1/files/$long_id"

headers_well_formed() {
	[ "$(tr -d '\r' <"$T/h" | grep -c .)" -eq \
	    "$(tr -d '\r' <"$T/h" | grep -ci '^[a-z0-9-]*: \|^HTTP/')" ]
}
check "no raw CR or LF reaches the response headers" headers_well_formed

# Ownership: another user, another workspace, an unknown id.
for who in "$KB" "$KW"; do
	for d in o a; do
		call $d "$who" GET "/v1/files/$rid"
		check "$d: retrieve of another owner's file is 404" is_err 404 $d
		call $d "$who" GET "/v1/files/$rid/content"
		check "$d: content of another owner's file is 404" is_err 404 $d
		call $d "$who" DELETE "/v1/files/$rid"
		check "$d: delete of another owner's file is 404" is_err 404 $d
	done
	call o "$who" GET "/v1/files?limit=1000"
	check "another owner's list does not show the file" \
	    jc "$T/b" "'$rid' not in ids(j)"
	call o "$who" GET "/v1/files?after=$rid"
	check "another owner's file as after= cursor is 404" is_err 404 o
	call a "$who" GET "/v1/files?after_id=$rid"
	check "another owner's file as after_id cursor is 404" is_err 404 a
	call a "$who" GET "/v1/files?before_id=$rid"
	check "another owner's file as before_id cursor is 404" is_err 404 a
	call a "$who" GET "/v1/files?ids=$rid"
	check "ids= leaves out another owner's file" \
	    jc "$T/b" "anthropic_page(j) and ids(j) == []"
done
call o "$KA" GET "/v1/files/$rid"
check "the owner still has the file after others tried to delete it" \
    is_status 200
call o "$KA" GET /v1/files/file-0123456789abcdef0123456789abcdef
check "an unknown id is 404" is_err 404 o
call a "$KA" GET /v1/files/file-0123456789abcdef0123456789abcdef/content
check "content of an unknown id is 404" is_err 404 a
call o "$KA" GET /v1/files/not-an-id
check "a malformed id is 404" is_err 404 o
