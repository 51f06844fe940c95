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

# regress/files/list.sh: SPEC.md 4.2, paging both ways over a page
# boundary where created_at is equal.  Sourced by suite.sh.

# carol: three files sharing one created_at, a fourth a second later.
cids=
for p in alpha alpha alpha beta; do
	upload "$KC" -F purpose=$p -F file=@"$T/hello.txt"
	cids="$cids $fid"
done
set -- $cids
sql "update files set created_at = '2026-01-01 00:00:00+00'
    where id in ('$1', '$2', '$3')" >/dev/null
sql "update files set created_at = '2026-01-01 00:00:01+00'
    where id = '$4'" >/dev/null
printf '%s\n' "$1" "$2" "$3" | sort >"$T/asc"
echo "$4" >>"$T/asc"
tac "$T/asc" >"$T/desc"
check "four files for paging, three with an equal created_at" \
    test "$(wc -l <"$T/asc")" -eq 4

# Walks a listing one item a page; D is o or a; HOW is after (OpenAI),
# after_id, page or before_id; the items land in $T/walk.
walk() {	# D HOW query-prefix [first cursor]
	_d=$1 _how=$2 _q=$3 _cur=${4:-}
	: >"$T/walk"
	_n=0
	while [ $_n -lt 10 ]; do
		_n=$((_n + 1))
		_url="/v1/files?limit=1$_q"
		[ -n "$_cur" ] && _url="$_url&$_how=$_cur"
		call "$_d" "$KC" GET "$_url"
		[ "$st" = 200 ] || { echo "# $_url: $st" >&2; return 1; }
		if [ "$_d" = o ]; then
			jc "$T/b" "openai_page(j)" || return 1
		else
			jc "$T/b" "anthropic_page(j)" || return 1
		fi
		jc "$T/b" "len(j['data']) == 1" || return 1
		jp "$T/b" "ids(j)" >>"$T/walk"
		[ "$(jp "$T/b" "j['has_more']")" = True ] || return 0
		case $_how in
		page)		_cur=$(jp "$T/b" "j['next_page']") ;;
		before_id)	_cur=$(jp "$T/b" "j['first_id']") ;;
		*)		_cur=$(jp "$T/b" "j['last_id']") ;;
		esac
	done
	return 1
}

check "OpenAI: desc (default) walk with after= and limit 1" walk o after ""
check "OpenAI: desc walk is in (created_at, id) descending order" \
    cmp -s "$T/walk" "$T/desc"
check "OpenAI: order=asc walk with after=" walk o after "&order=asc"
check "OpenAI: asc walk is in (created_at, id) order" cmp -s "$T/walk" "$T/asc"
for d in a b; do
	check "$d: desc walk following next_page" walk $d page ""
	check "$d: next_page walk gives every file in desc order" \
	    cmp -s "$T/walk" "$T/desc"
	check "$d: asc walk following next_page" walk $d page "&order=asc"
	check "$d: next_page asc walk in order" cmp -s "$T/walk" "$T/asc"
	check "$d: asc walk with after_id (older SDKs)" \
	    walk $d after_id "&order=asc"
	check "$d: after_id walk in order" cmp -s "$T/walk" "$T/asc"
done
last=$(tail -n 1 "$T/asc")
check "Anthropic: walk backwards with before_id from the last file" \
    walk a before_id "&order=asc" "$last"
head -n 3 "$T/asc" | tac >"$T/back"
check "before_id walk visits the earlier files, nearest first" \
    cmp -s "$T/walk" "$T/back"
check "Anthropic: walk backwards following next_page from before_id" \
    walk a page "&order=asc&before_id=$last"
check "next_page after before_id keeps walking backwards" \
    cmp -s "$T/walk" "$T/back"

call a "$KC" GET "/v1/files?order=asc&limit=2&before_id=$last"
check "a before_id page keeps the natural order" \
    jc "$T/b" "ids(j) == open('$T/asc').read().split()[1:3] and j['has_more']"
call a "$KC" GET "/v1/files?order=asc&limit=10"
check "a full page has has_more false and next_page null" \
    jc "$T/b" "anthropic_page(j) and not j['has_more'] and j['next_page'] is None and len(j['data']) == 4"
call a "$KC" GET "/v1/files?order=asc&after_id=$last"
check "an empty page has null first_id and last_id" \
    jc "$T/b" "anthropic_page(j) and j['data'] == [] and not j['has_more']"
call o "$KC" GET "/v1/files?order=asc&after=$last"
check "an empty OpenAI page" jc "$T/b" "openai_page(j) and j['data'] == []"

first=$(head -n 1 "$T/asc")
call a "$KC" GET "/v1/files?order=asc&limit=1&page=$(
    printf 'a:%s' "$first" | od -An -tx1 | tr -d ' \n' | sed 's/^/page_/')&after_id=file-0123456789abcdef0123456789abcdef"
check "page wins over after_id" \
    jc "$T/b" "ids(j) == ['$(sed -n 2p "$T/asc")']"

# Parameters refused.
for d in o a; do
	call $d "$KC" GET "/v1/files?limit=0"
	check "$d: limit=0 is 400" is_err 400 $d
	call $d "$KC" GET "/v1/files?limit=-1"
	check "$d: limit=-1 is 400" is_err 400 $d
	call $d "$KC" GET "/v1/files?limit=ten"
	check "$d: limit=ten is 400" is_err 400 $d
	call $d "$KC" GET "/v1/files?order=sideways"
	check "$d: order=sideways is 400" is_err 400 $d
done
call a "$KC" GET "/v1/files?limit=1001"
check "Anthropic: limit=1001 is 400" is_err 400 a
call o "$KC" GET "/v1/files?limit=10001"
check "OpenAI: limit=10001 is 400" is_err 400 o
call a "$KC" GET "/v1/files?after_id=$1&before_id=$2"
check "after_id and before_id together are 400" is_err 400 a
call a "$KC" GET "/v1/files?page=garbage"
check "a page token that does not decode is 400" is_err 400 a
call a "$KC" GET "/v1/files?page=page_7a7a"
check "a page token of junk hex is 400" is_err 400 a
call a "$KC" GET "/v1/files?after_id=file-0123456789abcdef0123456789abcdef"
check "an unknown after_id is 404" is_err 404 a
call o "$KC" GET "/v1/files?after=nonsense"
check "a malformed after= is 404" is_err 404 o

# Filters and ignored parameters.
call o "$KC" GET "/v1/files?purpose=alpha"
check "purpose= filters exactly" \
    jc "$T/b" "len(j['data']) == 3 and all(f['purpose'] == 'alpha' for f in j['data'])"
call o "$KC" GET "/v1/files?purpose=alph"
check "purpose= is not a prefix match" jc "$T/b" "j['data'] == []"
call a "$KC" GET "/v1/files?ids=$1,$4"
check "ids= comma-separated restricts the page" \
    jc "$T/b" "sorted(ids(j)) == sorted(['$1', '$4'])"
call a "$KC" GET "/v1/files?ids=$2&ids=$3&ids=$rid"
check "ids= repeated restricts the page and leaves out others' files" \
    jc "$T/b" "sorted(ids(j)) == sorted(['$2', '$3'])"
call a "$KC" GET "/v1/files?beta=true&scope_id=x&order=asc" \
    -H 'anthropic-workspace-id: wrkspc_x' -H 'x-api-key: ignored'
check "beta, scope_id and anthropic-workspace-id are ignored" \
    jc "$T/b" "ids(j) == open('$T/asc').read().split()"

# Default limits and the OpenAI cap, over 1001 rows made in SQL.
KE2=$(depot_key erin default)
sql "insert into files (id, user_id, workspace_id, filename, mime_type,
    bytes, purpose, source, storage_ref, state)
    select 'file-' || md5(g::text || 'erin'), u.id, w.id, 'f.txt',
    'text/plain', 1, 'user_data', 'upload',
    substr(md5(g::text || 'erin'), 1, 2) || '/file-' || md5(g::text || 'erin'),
    'ready' from generate_series(1, 1001) g, users u, workspaces w
    where u.name = 'erin' and w.name = 'default'" >/dev/null
call o "$KE2" GET "/v1/files"
check "OpenAI: the default page is 100" \
    jc "$T/b" "len(j['data']) == 100 and j['has_more']"
call a "$KE2" GET "/v1/files"
check "Anthropic: the default page is 20" \
    jc "$T/b" "len(j['data']) == 20 and j['has_more']"
call o "$KE2" GET "/v1/files?limit=10000"
check "OpenAI: limit=10000 is accepted and capped at 1000" \
    jc "$T/b" "openai_page(j) and len(j['data']) == 1000 and j['has_more']"
call a "$KE2" GET "/v1/files?limit=1000"
check "Anthropic: limit=1000 gives 1000 with has_more" \
    jc "$T/b" "len(j['data']) == 1000 and j['has_more'] and j['next_page']"
sql "delete from files where user_id =
    (select id from users where name = 'erin')" >/dev/null
