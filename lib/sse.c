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
 * sse.c: server-sent events read as the WHATWG standard says: lines end
 * in LF, CR or CRLF (a CR and its LF may arrive in separate reads); a
 * line starting with ':' is a comment; "field: value" loses one space;
 * data lines join with "\n"; a blank line dispatches; a UTF-8 BOM at
 * the very start is dropped.  id and retry mean nothing to a proxy and
 * are ignored.
 */
#include <stdlib.h>
#include <string.h>

#include "sse.h"

struct sse_buf {
	char	*p;
	size_t	 len;
	size_t	 cap;
};

struct sse_parser {
	size_t		 max_event;
	sse_event_cb	 cb;
	void		*arg;
	struct sse_buf	 line;		/* the line being read */
	struct sse_buf	 data;		/* data lines, each with its "\n" */
	struct sse_buf	 event;		/* the event field */
	int		 bom;		/* BOM bytes matched; -1: past it */
	int		 after_cr;	/* an LF now ends no line */
	int		 failed;
};

static const char sse_bom[] = "\xef\xbb\xbf";

struct sse_parser *
sse_new(size_t max_event, sse_event_cb cb, void *arg)
{
	struct sse_parser	*p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->max_event = max_event;
	p->cb = cb;
	p->arg = arg;
	return p;
}

void
sse_free(struct sse_parser *p)
{
	if (p == NULL)
		return;
	free(p->line.p);
	free(p->data.p);
	free(p->event.p);
	free(p);
}

/* The bytes this event holds now, plus extra, within the bound? */
static int
sse_room(const struct sse_parser *p, size_t extra)
{
	size_t	 held;

	held = p->line.len + p->data.len + p->event.len;
	return held <= p->max_event && extra <= p->max_event - held;
}

/* Appends n bytes and keeps a NUL after them. */
static int
sse_buf_add(struct sse_buf *b, const char *s, size_t n)
{
	size_t	 cap;
	char	*np;

	if (b->len + n + 1 > b->cap) {
		cap = b->cap ? b->cap : 128;
		while (cap < b->len + n + 1)
			cap *= 2;
		if ((np = realloc(b->p, cap)) == NULL)
			return -1;
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

static int
sse_dispatch(struct sse_parser *p)
{
	const char	*event;
	int		 rc;

	if (p->data.len == 0) {
		p->event.len = 0;
		return 0;
	}
	p->data.p[--p->data.len] = '\0';	/* the last line's "\n" */
	event = p->event.len > 0 ? p->event.p : "";
	rc = p->cb(p->arg, event, p->data.p, p->data.len);
	p->data.len = 0;
	p->event.len = 0;
	return rc == -1 ? -1 : 0;
}

/* One whole line, without its end. */
static int
sse_line(struct sse_parser *p)
{
	const char	*line = p->line.p, *colon, *v;
	size_t		 len = p->line.len, flen, vlen;

	p->line.len = 0;		/* its bytes stay readable below */
	if (len == 0)
		return sse_dispatch(p);
	if ((colon = memchr(line, ':', len)) == line)
		return 0;
	if (colon != NULL) {
		flen = colon - line;
		v = colon + 1;
		vlen = len - flen - 1;
		if (vlen > 0 && *v == ' ') {
			v++;
			vlen--;
		}
	} else {
		flen = len;
		v = line + len;
		vlen = 0;
	}
	if (flen == 5 && memcmp(line, "event", 5) == 0) {
		p->event.len = 0;
		if (!sse_room(p, vlen))
			return -1;
		return sse_buf_add(&p->event, v, vlen);
	}
	if (flen == 4 && memcmp(line, "data", 4) == 0) {
		if (!sse_room(p, vlen + 1) ||
		    sse_buf_add(&p->data, v, vlen) == -1)
			return -1;
		return sse_buf_add(&p->data, "\n", 1);
	}
	return 0;
}

static int
sse_bytes(struct sse_parser *p, const char *s, size_t n)
{
	size_t	 i;

	while (n > 0) {
		if (p->after_cr) {
			p->after_cr = 0;
			if (*s == '\n') {
				s++;
				n--;
				continue;
			}
		}
		for (i = 0; i < n && s[i] != '\r' && s[i] != '\n'; i++)
			;
		if (i > 0 && (!sse_room(p, i) ||
		    sse_buf_add(&p->line, s, i) == -1))
			return -1;
		if (i == n)
			break;
		p->after_cr = s[i] == '\r';
		if (sse_line(p) == -1)
			return -1;
		s += i + 1;
		n -= i + 1;
	}
	return 0;
}

/* Drops a BOM at the start; bytes that only began like one are data. */
static int
sse_skip_bom(struct sse_parser *p, const unsigned char **s, size_t *n)
{
	int	 matched;

	while (p->bom >= 0 && *n > 0) {
		if (**s == (unsigned char)sse_bom[p->bom]) {
			(*s)++;
			(*n)--;
			if (++p->bom == 3)
				p->bom = -1;
			continue;
		}
		matched = p->bom;
		p->bom = -1;
		if (matched > 0 && sse_bytes(p, sse_bom, matched) == -1)
			return -1;
	}
	return 0;
}

int
sse_feed(struct sse_parser *p, const void *buf, size_t len)
{
	const unsigned char	*s = buf;

	if (p->failed)
		return -1;
	if (sse_skip_bom(p, &s, &len) == -1 ||
	    sse_bytes(p, (const char *)s, len) == -1) {
		p->failed = 1;
		return -1;
	}
	return 0;
}

int
sse_finish(struct sse_parser *p)
{
	int	 matched;

	if (p->failed)
		return -1;
	if ((matched = p->bom) > 0) {
		p->bom = -1;
		if (sse_bytes(p, sse_bom, matched) == -1) {
			p->failed = 1;
			return -1;
		}
	}
	if (p->line.len > 0 || p->data.len > 0 || p->event.len > 0) {
		p->line.len = p->data.len = p->event.len = 0;
		return -1;
	}
	return 0;
}
