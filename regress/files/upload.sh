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

# regress/files/upload.sh: SPEC.md 4.1, shapes, names, MIME types and the
# 400s.  Sourced by suite.sh.

MP="Content-Type: multipart/form-data; boundary=XyZzyBoundary42"

raw_upload() {	# dialect key case
	python3 "$here/rawhttp.py" body "$T/body.$3" "$3"
	call "$1" "$2" POST /v1/files -H "$MP" --data-binary @"$T/body.$3"
}

call o "$KA" POST /v1/files -F file=@"$T/hello.txt"
check "OpenAI upload is 200 with a file object" jc "$T/b" "openai_file(j)"
check "purpose defaults to user_data" jc "$T/b" "j['purpose'] == 'user_data'"
check "bytes is the size and filename the part's" \
    jc "$T/b" "j['bytes'] == 13 and j['filename'] == 'hello.txt'"
check "no retention: expires_at is null" jc "$T/b" "j['expires_at'] is None"
call o "$KA" POST /v1/files -F purpose= -F file=@"$T/hello.txt"
check "an empty purpose becomes user_data" \
    jc "$T/b" "j['purpose'] == 'user_data'"
call o "$KA" POST /v1/files -F purpose=my-own-purpose -F file=@"$T/hello.txt"
check "purpose is free text" jc "$T/b" "j['purpose'] == 'my-own-purpose'"

for d in a b; do
	call $d "$KA" POST /v1/files -F file=@"$T/hello.txt"
	check "$d: Anthropic upload is 200 with FileMetadata" \
	    jc "$T/b" "anthropic_file(j)"
	check "$d: size_bytes and mime_type" \
	    jc "$T/b" "j['size_bytes'] == 13 and j['mime_type'] == 'text/plain'"
done

# expires_after: an expiry the caller asks for.
call o "$KA" POST /v1/files -F 'expires_after[anchor]=created_at' \
    -F 'expires_after[seconds]=3600' -F file=@"$T/hello.txt"
check "expires_after[seconds] sets expires_at = created_at + seconds" \
    jc "$T/b" "j['expires_at'] == j['created_at'] + 3600"
call o "$KA" POST /v1/files -F 'expires_after[seconds]=soon' \
    -F file=@"$T/hello.txt"
check "a non-numeric expires_after[seconds] is 400" is_err 400 o

# MIME rules: the part's type, else a guess from the extension.
mime_of() {	# expected, then curl -F arguments
	_want=$1
	shift
	call a "$KA" POST /v1/files "$@"
	jc "$T/b" "j['mime_type'] == '$_want'" || return 1
	_id=$(jp "$T/b" "j['id']")
	call o "$KA" GET "/v1/files/$_id/content"
	[ "$(hdr content-type)" = "$_want" ] ||
	    { echo "# download type $(hdr content-type)" >&2; return 1; }
}
check "MIME: the part's Content-Type is kept" \
    mime_of image/png -F "file=@$T/rand.bin;type=image/png"
check "MIME: octet-stream is replaced by a guess from .json" \
    mime_of application/json \
    -F "file=@$T/data.json;type=application/octet-stream"
raw_upload a "$KA" no-type-txt
check "MIME: no Content-Type and .txt guesses text/plain" \
    jc "$T/b" "j['mime_type'] == 'text/plain'"
check "MIME: unknown extension and octet-stream stays octet-stream" \
    mime_of application/octet-stream \
    -F "file=@$T/rand.bin;type=application/octet-stream"

# Filenames: escapes decoded, controls removed, slashes and UTF-8 kept.
raw_upload o "$KA" escaped-name
check "escaped filename: 200" is_status 200
check "escaped filename: %22 decoded, CR LF removed, slashes and UTF-8 kept" \
    jc "$T/b" "j['filename'] == 'dir/sub/a\"qb \u00e9t\u00e9.txt'"
esc_id=$(jp "$T/b" "j['id']")
raw_upload o "$KA" backslash-name
check "a %5C in a filename stays as it came" \
    jc "$T/b" "j['filename'] == 'x%5Cy.txt'"
raw_upload o "$KA" control-name
check "control characters are removed from a filename" \
    jc "$T/b" "j['filename'] == 'ctl.txt'"
raw_upload o "$KA" empty-name
check "an empty filename becomes the id" \
    jc "$T/b" "j['filename'] == j['id']"
raw_upload o "$KA" long-name
check "a filename over max-filename is 400" is_err 400 o

# The 400s of 4.1, in both dialects.
for d in o a; do
	raw_upload $d "$KA" empty-file
	check "$d: an empty file is 400" is_err 400 $d
	raw_upload $d "$KA" no-file
	check "$d: no file part is 400" is_err 400 $d
	check "$d: the message names the missing file part" \
	    jc "$T/b" "'file' in j['error']['message']"
	raw_upload $d "$KA" two-files
	check "$d: a second file part is 400" is_err 400 $d
	check "$d: the message names the second file part" \
	    jc "$T/b" "'second' in j['error']['message']"
	raw_upload $d "$KA" unterminated
	check "$d: multipart without its closing boundary is 400" is_err 400 $d
	raw_upload $d "$KA" garbage
	check "$d: a body that is not multipart is 400" is_err 400 $d
	raw_upload $d "$KA" no-headers-end
	check "$d: a part whose headers never end is 400" is_err 400 $d
	call $d "$KA" POST /v1/files -H 'Content-Type: text/plain' \
	    --data-binary @"$T/hello.txt"
	check "$d: a text/plain upload is 400" is_err 400 $d
	call $d "$KA" POST /v1/files -H 'Content-Type: multipart/form-data' \
	    --data-binary @"$T/hello.txt"
	check "$d: multipart without a boundary is 400" is_err 400 $d
done

# Refused while its create is still in flight (the second file part
# arrives in the same write as the first one's headers): the frontend
# must abort what the storage helper creates for it, or each repeat
# holds one of the key's max-uploads-per-key (8) until a restart.
KD=$(depot_key dave default)
n400=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	raw_upload o "$KD" two-files
	[ "$st" = 400 ] && n400=$((n400 + 1))
done
check "ten uploads refused early are each 400" test "$n400" = 10
sleep 0.2
call o "$KD" POST /v1/files -F file=@"$T/hello.txt"
check "then a normal upload with the same key is 200, not 429" is_status 200
sweep_consistent "refused uploads"
