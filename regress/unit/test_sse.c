/*
 * Copyright (c) 2026 The depotd authors
 *
 * Permission to use, copy, modify, and distribute this software for any
 * purpose with or without fee is hereby granted, provided that the above
 * copyright notice and this permission notice appear in all copies.
 *
 * THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
 * WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
 * MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR
 * ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
 * WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN
 * ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF
 * OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE.
 */


/*
 * test_sse.c: the server-sent-events parser.  Each stream is fed whole,
 * in two pieces split at every byte, and one byte at a time; the events
 * must be the same every time and equal to what the standard gives.
 */
#include <stdlib.h>
#include <string.h>

#include "sse.h"
#include "t.h"

struct rec {
	char	 out[4096];
	size_t	 len;
	int	 calls;
	int	 fail_at;	/* the callback returns -1 on this call */
};

/* Each event as "<event>data|" so that joins and empties show. */
static int
rec_cb(void *arg, const char *event, const char *data, size_t len)
{
	struct rec	*r = arg;
	int		 n;

	if (++r->calls == r->fail_at)
		return -1;
	if (strlen(data) != len)
		return -1;	/* the tests hold no NULs */
	n = snprintf(r->out + r->len, sizeof(r->out) - r->len, "<%s>%s|",
	    event, data);
	if (n > 0 && (size_t)n < sizeof(r->out) - r->len)
		r->len += n;
	return 0;
}

/* Feeds s in pieces cut at the offsets in cuts (ending with len). */
static int
feed_cuts(const char *s, size_t len, const size_t *cuts, size_t ncuts,
    size_t max, struct rec *r, int *fin)
{
	struct sse_parser	*p;
	size_t			 i, at = 0;
	int			 rc = 0;

	memset(r, 0, sizeof(*r));
	if ((p = sse_new(max, rec_cb, r)) == NULL)
		return -2;
	for (i = 0; i < ncuts && rc == 0; i++) {
		rc = sse_feed(p, s + at, cuts[i] - at);
		at = cuts[i];
	}
	*fin = sse_finish(p);
	sse_free(p);
	return rc;
}

/* Whole, every two-piece split, every three-piece split, bytewise. */
static void
check_stream(const char *name, const char *s, const char *want, int want_fin)
{
	struct rec	 r;
	size_t		 len = strlen(s), i, j, cuts[3], *bytes;
	int		 fin, bad = 0;

	cuts[0] = len;
	T_EQ_INT(feed_cuts(s, len, cuts, 1, 1024, &r, &fin), 0, name);
	T_EQ_STR(r.out, want, name);
	T_EQ_INT(fin, want_fin, "finish after it");
	for (i = 0; i <= len; i++)
		for (j = i; j <= len; j++) {
			cuts[0] = i;
			cuts[1] = j;
			cuts[2] = len;
			if (feed_cuts(s, len, cuts, 3, 1024, &r, &fin) != 0 ||
			    strcmp(r.out, want) != 0 || fin != want_fin)
				bad++;
		}
	T_EQ_INT(bad, 0, "every split in three pieces gives the same");
	if ((bytes = calloc(len + 1, sizeof(*bytes))) == NULL)
		abort();
	for (i = 0; i < len; i++)
		bytes[i] = i + 1;
	feed_cuts(s, len, bytes, len, 1024, &r, &fin);
	T_EQ_STR(r.out, want, "one byte at a time");
	free(bytes);
}

static void
test_streams(void)
{
	check_stream("chat framing",
	    "data: {\"a\":1}\n\ndata: [DONE]\n\n",
	    "<>{\"a\":1}|<>[DONE]|", 0);
	check_stream("Messages framing",
	    "event: message_start\ndata: {}\n\nevent: ping\n"
	    "data: {\"type\": \"ping\"}\n\n",
	    "<message_start>{}|<ping>{\"type\": \"ping\"}|", 0);
	check_stream("CRLF, CR and LF mixed",
	    "event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\rdata: 3\n\n",
	    "<a>1|<b>2|<>3|", 0);
	check_stream("comments anywhere",
	    ": hello\n\n:\ndata: x\n: mid\ndata: y\n\n: bye\n",
	    "<>x\ny|", 0);
	check_stream("multi-line data and empty lines of it",
	    "data: one\ndata\ndata:\ndata: two\n\n",
	    "<>one\n\n\ntwo|", 0);
	check_stream("one space stripped, no more",
	    "data:x\n\ndata:  y\n\nevent:e\ndata: z \n\n",
	    "<>x|<> y|<e>z |", 0);
	check_stream("an event without data is not sent; its name is not "
	    "kept", "event: lost\n\ndata: d\n\n", "<>d|", 0);
	check_stream("id, retry and unknown fields ignored",
	    "id: 7\nretry: 10\nfoo: bar\ndata: ok\nevent\n\n",
	    "<>ok|", 0);
	check_stream("UTF-8 passes through",
	    "data: caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\n\n",
	    "<>caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80|", 0);
	check_stream("a BOM at the start is dropped",
	    "\xef\xbb\xbf" "data: b\n\n", "<>b|", 0);
	check_stream("a BOM later is data",
	    "data: \xef\xbb\xbf\n\n", "<>\xef\xbb\xbf|", 0);
	check_stream("a half BOM is a field name",
	    "\xef\xbb" "data: h\n\ndata: i\n\n", "<>i|", 0);
	check_stream("an unfinished event is dropped at the end",
	    "data: a\n\ndata: b\n", "<>a|", -1);
	check_stream("an unfinished line is dropped at the end",
	    "data: a\n\ndata: b", "<>a|", -1);
	check_stream("a final CR ends the event", "data: a\r\r", "<>a|", 0);
	check_stream("an empty stream", "", "", 0);
}

static void
test_bounds(void)
{
	struct sse_parser	*p;
	struct rec		 r;
	char			 big[300];
	size_t			 cuts[1];
	int			 fin, i;

	memset(big, 'x', sizeof(big));
	memcpy(big, "data: ", 6);
	big[sizeof(big) - 3] = '\n';
	big[sizeof(big) - 2] = '\n';
	big[sizeof(big) - 1] = '\0';
	cuts[0] = strlen(big);
	T_EQ_INT(feed_cuts(big, cuts[0], cuts, 1, 1024, &r, &fin), 0,
	    "an event under the bound passes");
	T_EQ_INT(r.calls, 1, "and is sent");
	T_EQ_INT(feed_cuts(big, cuts[0], cuts, 1, 200, &r, &fin), -1,
	    "a line over the bound fails");
	T_EQ_INT(r.calls, 0, "and nothing is sent");
	T_EQ_INT(fin, -1, "finish after a failure is -1");

	memset(&r, 0, sizeof(r));
	p = sse_new(64, rec_cb, &r);
	for (i = 0; i < 7; i++)
		sse_feed(p, "data: 0123456789\n", 17);
	T_EQ_INT(sse_feed(p, "\n", 1), -1,
	    "data lines adding up past the bound fail");
	T_EQ_INT(sse_feed(p, "data: a\n\n", 9), -1, "and the parser stays "
	    "failed");
	sse_free(p);

	memset(&r, 0, sizeof(r));
	p = sse_new(64, rec_cb, &r);
	for (i = 0; i < 100; i++)
		if (sse_feed(p, "data: 0123456789\n\n", 18) != 0)
			break;
	T_EQ_INT(r.calls, 100, "the bound is per event, not per stream");
	T_EQ_INT(sse_finish(p), 0, "a clean end");
	sse_free(p);

	memset(&r, 0, sizeof(r));
	r.fail_at = 2;
	p = sse_new(64, rec_cb, &r);
	T_EQ_INT(sse_feed(p, "data: 1\n\ndata: 2\n\ndata: 3\n\n", 27), -1,
	    "a callback's -1 stops the feed");
	T_EQ_INT(r.calls, 2, "at that event");
	sse_free(p);
	sse_free(NULL);
}

int
main(void)
{
	test_streams();
	test_bounds();
	return t_done();
}
