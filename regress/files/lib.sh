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

# regress/files/lib.sh: helpers for the Files API suite, sourced.
#
#	check NAME CMD...	"ok - NAME" when CMD succeeds
#	call D KEY METHOD PATH [curl args]
#				one request; D is o (OpenAI), a
#				(anthropic-version) or b (anthropic-beta);
#				KEY "-" sends none.  Sets st; the body is in
#				$T/b, the headers in $T/h
#	jc FILE EXPR, jp FILE EXPR	regress/files/jcheck.py
#	hdr NAME		the last value of header NAME in $T/h
#	is_err STATUS DIALECT	st is STATUS, the body is that dialect's
#				envelope, and request-id is set
#	upload KEY [curl args]	POST /v1/files (OpenAI); sets fid
#	sql QUERY		psql on the suite's database, unaligned
#	store_setup		regress/harness/store.sh
#	sweep_consistent NAME	sweep, then the store holds exactly the
#				blobs of visible files and no row is writing

failures=0
checks=0

ok() {
	checks=$((checks + 1))
	echo "ok - $1"
}

notok() {
	checks=$((checks + 1))
	failures=$((failures + 1))
	echo "not ok - $1"
}

check() {
	_name=$1
	shift
	if "$@"; then ok "$_name"; else notok "$_name"; fi
}

summary() {
	echo "# $checks checks, $failures failed"
	[ "$failures" -eq 0 ]
	exit $?
}

call() {
	_d=$1 _k=$2 _m=$3 _p=$4
	shift 4
	case $_d in
	a)	set -- -H 'anthropic-version: 2023-06-01' "$@" ;;
	b)	set -- -H 'anthropic-beta: files-api-2025-04-14' "$@" ;;
	esac
	[ "$_k" = - ] || set -- -H "Authorization: Bearer $_k" "$@"
	st=$(curl -s -o "$T/b" -D "$T/h" -w '%{http_code}' -X "$_m" "$@" \
	    "$DEPOT_URL$_p")
}

# One interpreter answers every JSON check, through two FIFOs.
jstart() {
	rm -f "$T/jq.in" "$T/jq.out"
	mkfifo "$T/jq.in" "$T/jq.out" || return 1
	python3 "$here/jcheck.py" --serve <"$T/jq.in" >"$T/jq.out" &
	JQPID=$!
	exec 3>"$T/jq.in" 4<"$T/jq.out"
}

jstop() {
	[ -n "${JQPID:-}" ] || return 0
	exec 3>&- 4<&-
	# Daemons started meanwhile may hold the FIFO open: no EOF to wait on.
	kill "$JQPID" 2>/dev/null
	wait "$JQPID" 2>/dev/null
	JQPID=
}

jask() {	# c|p file expr
	printf '%s\t%s\t%s\n' "$1" "$2" "$3" >&3
	_rc=1
	while IFS= read -r _l <&4; do
		case $_l in
		"@@ "*)	_rc=${_l#@@ }; break ;;
		esac
		printf '%s\n' "$_l"
	done
	return "$_rc"
}

jc() {
	jask c "$@"
}

jp() {
	jask p "$@"
}

hdr() {
	tr -d '\r' <"$T/h" | grep -i "^$1:" | tail -n 1 |
	    sed 's/^[^:]*: *//'
}

is_status() {
	[ "$st" = "$1" ] || { echo "# got status $st, want $1" >&2; return 1; }
}

is_err() {
	_dn=openai
	[ "$2" = o ] || _dn=anthropic
	is_status "$1" && jc "$T/b" "err(j, $1, '$_dn')" &&
	    [ -n "$(hdr request-id)" ] && [ -n "$(hdr x-request-id)" ]
}

upload() {
	_k=$1
	shift
	fid=
	call o "$_k" POST /v1/files "$@"
	[ "$st" = 200 ] && fid=$(jp "$T/b" "j['id']")
}

sql() {
	"$PG_BIN/psql" -X -q -A -t -d depot -c "$1"
}

# --- the store ---

# Every object or file in the store, as its reference "xx/file-...".
store_list() {
	case $store in
	file)
		(cd "$D/files" && find . -type f | sed 's,^\./,,')
		;;
	sftp)
		(cd "$DEPOT_SFTP_ROOT" && find . -type f | sed 's,^\./,,')
		;;
	s3)
		s3_curl "$DEPOT_S3_ENDPOINT/depot?list-type=2&prefix=files%2F" |
		    python3 -c '
import sys, xml.etree.ElementTree as E
root = E.parse(sys.stdin).getroot()
if not root.tag.endswith("ListBucketResult"):
    print("listing-failed-" + root.tag)
for e in root.iter():
    if e.tag.endswith("}Key") or e.tag == "Key":
        print(e.text[len("files/"):])'
		# Unfinished multipart uploads are leftovers too.
		s3_curl "$DEPOT_S3_ENDPOINT/depot?uploads" | python3 -c '
import sys, xml.etree.ElementTree as E
for e in E.parse(sys.stdin).getroot().iter():
    if e.tag.endswith("}Upload") or e.tag == "Upload":
        print("multipart-upload-in-progress")'
		;;
	esac
}

# Ages rows left writing past the grace, then sweeps.
sweep_now() {
	sleep 1
	sql "update files set updated_at = updated_at - interval '2 minutes'
	    where state = 'writing'" >/dev/null
	depotctl_ sweep >"$T/sweep.out" 2>&1
}

sweep_consistent() {
	sweep_now
	sql "select substr(id, 6, 2) || '/' || id from files
	    where state = 'ready' and deleted_at is null" | sort >"$T/want"
	store_list | sort >"$T/have"
	_w=$(sql "select count(*) from files where state = 'writing'")
	if [ "$_w" = 0 ] && cmp -s "$T/want" "$T/have"; then
		ok "$1: after a sweep no row is writing and the store holds exactly the visible files"
	else
		notok "$1: after a sweep no row is writing and the store holds exactly the visible files"
		echo "# writing rows: $_w; sweep: $(cat "$T/sweep.out")"
		diff "$T/want" "$T/have" | sed 's/^/# /' | head -n 20
	fi
}
