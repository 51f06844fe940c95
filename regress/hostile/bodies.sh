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

# regress/hostile/bodies.sh: request bodies shaped to cost the most
# memory for their size, under the default max-request-size (32M), at
# the default max-json-values and max-json-memory: each is refused,
# unbuilt, in the route's dialect, and the frontends stay small.  A
# case file of suite.sh (sourced; lib.sh's helpers).  Then bodies
# within the budget that are large all the same: answered, and the
# memory they took goes back.

b=$w/bodies
mkdir -p "$b"
mib=$((1024 * 1024))

# 16 MiB of [],: 5.6 million arrays.
hostile_body "$b/chat-arrays" arrays $((16 * mib / 3))
hostile_case "nested arrays, 16 MiB" /v1/chat/completions \
    "$b/chat-arrays" "413" 20

# 30 MiB of "a",: 7.8 million strings, in Anthropic's dialect.
hostile_body "$b/messages-strings" strings $((30 * mib / 4))
hostile_case "one-character strings, 30 MiB" /v1/messages \
    "$b/messages-strings" "413" 20

# A million objects in one another (5 MiB): past the depth limit.
hostile_body "$b/responses-deep" deep 1000000
hostile_case "objects nested a million deep" /v1/responses \
    "$b/responses-deep" "400" 20

# 28 MiB of "k":0 members in one object: 2.6 million keys.
hostile_body "$b/chat-keys" keys $((30 * mib / 12))
hostile_case "2.6 million keys in one object, 28 MiB" \
    /v1/chat/completions "$b/chat-keys" "413" 20

# 16 MiB of {},: 5.6 million objects, to the Messages route.
hostile_body "$b/messages-objects" objects $((16 * mib / 3))
hostile_case "empty objects, 16 MiB" /v1/messages \
    "$b/messages-objects" "413" 20

# Eight of the first at once.
hostile_case_many 8 "eight 16 MiB bodies of nested arrays at once" \
    /v1/chat/completions "$b/chat-arrays" "413" 60

# Within the budget, and large: answered by the upstream, and the
# memory goes back afterwards.  50000 empty objects (a 40 MiB tree):
hostile_body "$b/chat-within" objects 50000
rss_watch_start
hostile_post /v1/chat/completions "$b/chat-within" 30
rss_watch_stop
check "50000 empty objects (within the budget) answered 200" \
    test "$HTTP_CODE" = 200
_hostile_after "50000 empty objects, within the budget" 10

# A 30 MiB string: a large body of few values is no trouble.
hostile_body "$b/chat-blob" blob $((30 * mib))
rss_watch_start
hostile_post /v1/chat/completions "$b/chat-blob" 30
rss_watch_stop
check "a 30 MiB string (within the budget) answered 200" \
    test "$HTTP_CODE" = 200
_hostile_after "one 30 MiB string, within the budget" 15
