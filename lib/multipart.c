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
 * multipart.c: a streaming multipart/form-data parser (RFC 7578, with
 * the framing of RFC 2046 section 5.1).
 *
 * The body is scanned for the delimiter "\r\n--boundary".  A boundary
 * may not contain CR, so a partial match is always a prefix of the
 * delimiter that starts at its CR: the bytes held back are the
 * delimiter's own first bytes and need no buffer of their own, and on a
 * mismatch the only place a new match can begin is the current byte.
 * The part headers are the only input ever copied, into a buffer of
 * MULTIPART_MAXHEADER bytes allocated once with the parser.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "multipart.h"
#include "names.h"

enum mp_state {
	MP_PREAMBLE,	/* before the first delimiter: ignored */
	MP_AFTER_DELIM,	/* just after a delimiter: "--" or padding CRLF */
	MP_CLOSE_DASH,	/* seen one '-' of the closing "--" */
	MP_PADDING,	/* transport padding after a delimiter */
	MP_DELIM_LF,	/* the CR ending a delimiter line was seen */
	MP_HEADERS,	/* collecting part headers up to the blank line */
	MP_BODY,	/* part body, passed on as it is recognised */
	MP_EPILOGUE,	/* after the closing delimiter: ignored */
	MP_FAILED
};

struct multipart {
	enum mp_state		 state;
	const char		*error;
	/* "\r\n--" and the boundary */
	char			 delim[4 + MULTIPART_MAXBOUNDARY + 1];
	size_t			 delimlen;
	size_t			 match;	/* delimiter bytes matched so far */
	struct multipart_cb	 cb;
	void			*arg;
	struct multipart_part	 part;
	size_t			 hdrlen;
	char			 hdr[MULTIPART_MAXHEADER + 1];
	char			 value[MULTIPART_MAXHEADER + 1];
};

#define OWS(c)		((c) == ' ' || (c) == '\t')

static int	 fail(struct multipart *, const char *);

/* RFC 2046 bchars, less the space, which may not end a boundary. */
static int
is_bchar(int c)
{
	return c != '\0' && isascii(c) &&
	    (isalnum(c) || strchr("'()+_,-./:=? ", c) != NULL);
}

/* RFC 7230 tchar. */
static int
is_tchar(int c)
{
	return c != '\0' && isascii(c) &&
	    (isalnum(c) || strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static const char *
skip_ows(const char *p)
{
	while (OWS(*p))
		p++;
	return p;
}

/*
 * Reads a parameter value at *pp, a quoted-string or a token, into out.
 * Inside quotes a backslash escapes only '"' and '\\' and is otherwise
 * kept: browsers and undici send backslashes unescaped, httpx and
 * urllib3 double them, and both must come out as one backslash.  When
 * the escaped reading never finds the closing quote (undici sending a
 * name that ends in a backslash), the value is read again with the
 * backslash taken literally.  Returns -1 when the value is malformed or
 * does not fit.
 */
static int
read_value(const char **pp, char *out, size_t outlen)
{
	const char	*p = *pp, *end;
	size_t		 n = 0;
	int		 literal;

	if (*p != '"') {
		end = p;
		while (*end != '\0' && *end != ';')
			end++;
		while (end > p && OWS(end[-1]))
			end--;
		if (end == p || (size_t)(end - p) >= outlen)
			return -1;
		memcpy(out, p, end - p);
		out[end - p] = '\0';
		*pp = end;
		return 0;
	}
	for (literal = 0; literal < 2; literal++) {
		n = 0;
		for (p = *pp + 1; *p != '\0' && *p != '"'; p++) {
			if (!literal && *p == '\\' &&
			    (p[1] == '"' || p[1] == '\\'))
				p++;
			if (n + 1 >= outlen)
				return -1;
			out[n++] = *p;
		}
		if (*p == '"')
			break;
	}
	if (*p != '"')
		return -1;
	out[n] = '\0';
	*pp = p + 1;
	return 0;
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower((unsigned char)c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static void
strip_controls(char *s)
{
	char	*w = s;

	for (; *s != '\0'; s++)
		if ((unsigned char)*s >= 0x20 && *s != 0x7f)
			*w++ = *s;
	*w = '\0';
}

void
multipart_decode_filename(char *dst, size_t dstlen, const char *src)
{
	size_t	 n = 0;
	int	 hi, lo, c;

	if (dstlen == 0)
		return;
	while (*src != '\0' && n + 1 < dstlen) {
		c = (unsigned char)*src++;
		if (c == '%' && (hi = hexval(src[0])) != -1 &&
		    (lo = hexval(src[1])) != -1) {
			lo |= hi << 4;
			/* Only what browsers escape; %5C and the rest stay. */
			if (lo == '"' || lo == '\r' || lo == '\n') {
				c = lo;
				src += 2;
			}
		}
		dst[n++] = c;
	}
	if (*src != '\0')
		n = utf8_cut(dst, n);
	dst[n] = '\0';
	strip_controls(dst);
}

/*
 * RFC 8187 ext-value: charset'language'percent-encoded.  UTF-8 is
 * what every client sends; ISO-8859-1 is the other charset the RFC
 * requires and is converted.  Decodes in place: a Latin-1 "%XX" turns
 * three bytes into at most two, and raw bytes above 0x7f are not
 * allowed there anyway.
 */
static int
decode_ext_value(char *s)
{
	char		*q, *lang, *w;
	const char	*r;
	int		 latin1, hi, lo, c;

	if ((lang = strchr(s, '\'')) == NULL ||
	    (q = strchr(lang + 1, '\'')) == NULL)
		return -1;
	*lang = '\0';
	if (strcasecmp(s, "UTF-8") == 0)
		latin1 = 0;
	else if (strcasecmp(s, "ISO-8859-1") == 0)
		latin1 = 1;
	else
		return -1;
	r = q + 1;
	w = s;
	while (*r != '\0') {
		c = (unsigned char)*r++;
		if (c == '%') {
			if ((hi = hexval(r[0])) == -1 ||
			    (lo = hexval(r[1])) == -1)
				return -1;
			c = hi << 4 | lo;
			r += 2;
		} else if (latin1 && c >= 0x80)
			return -1;
		if (c == '\0')	/* a control character: dropped below */
			continue;
		if (latin1 && c >= 0x80) {
			*w++ = 0xc0 | c >> 6;
			c = 0x80 | (c & 0x3f);
		}
		*w++ = c;
	}
	*w = '\0';
	strip_controls(s);
	return 0;
}

static int
parse_disposition(struct multipart *mp, const char *v)
{
	struct multipart_part	*part = &mp->part;
	char			 pname[32];
	const char		*p = v;
	size_t			 n;
	int			 have_name = 0, have_ext = 0, have_plain = 0;

	n = strcspn(p, "; \t");
	if (n != strlen("form-data") || strncasecmp(p, "form-data", n) != 0)
		return fail(mp, "part without Content-Disposition form-data");
	p += n;
	for (;;) {
		p = skip_ows(p);
		if (*p == '\0')
			break;
		if (*p++ != ';')
			return fail(mp, "malformed part headers");
		p = skip_ows(p);
		if (*p == '\0')
			break;
		for (n = 0; is_tchar((unsigned char)p[n]); n++)
			;
		if (n == 0 || n >= sizeof(pname))
			return fail(mp, "malformed part headers");
		memcpy(pname, p, n);
		pname[n] = '\0';
		p = skip_ows(p + n);
		if (*p++ != '=')
			return fail(mp, "malformed part headers");
		p = skip_ows(p);
		if (read_value(&p, mp->value, sizeof(mp->value)) == -1)
			return fail(mp, "malformed part headers");
		if (strcasecmp(pname, "name") == 0) {
			if (have_name++)
				return fail(mp, "malformed part headers");
			multipart_decode_filename(mp->value,
			    sizeof(mp->value), mp->value);
			if (strlcpy(part->name, mp->value, sizeof(part->name)) >=
			    sizeof(part->name))
				return fail(mp, "part name too long");
		} else if (strcasecmp(pname, "filename*") == 0) {
			if (have_ext++)
				return fail(mp, "malformed part headers");
			if (decode_ext_value(mp->value) == -1)
				return fail(mp, "malformed part headers");
			if (strlcpy(part->filename, mp->value,
			    sizeof(part->filename)) >= sizeof(part->filename))
				return fail(mp, "filename too long");
		} else if (strcasecmp(pname, "filename") == 0) {
			if (have_plain++)
				return fail(mp, "malformed part headers");
			/* filename* takes precedence, wherever it stands. */
			if (have_ext)
				continue;
			multipart_decode_filename(mp->value,
			    sizeof(mp->value), mp->value);
			if (strlcpy(part->filename, mp->value,
			    sizeof(part->filename)) >= sizeof(part->filename))
				return fail(mp, "filename too long");
		}
	}
	if (!have_name)
		return fail(mp, "part without a name");
	part->has_filename = have_plain || have_ext;
	return 0;
}

static int
parse_header_line(struct multipart *mp, char *line, int *have_disp)
{
	char	*colon, *v, *end;

	if (OWS(line[0]))	/* obsolete line folding */
		return fail(mp, "malformed part headers");
	if ((colon = strchr(line, ':')) == NULL || colon == line)
		return fail(mp, "malformed part headers");
	for (v = line; v < colon; v++)
		if (!is_tchar((unsigned char)*v))
			return fail(mp, "malformed part headers");
	*colon = '\0';
	v = (char *)skip_ows(colon + 1);
	end = v + strlen(v);
	while (end > v && OWS(end[-1]))
		*--end = '\0';
	if (strcasecmp(line, "Content-Disposition") == 0) {
		if ((*have_disp)++)
			return fail(mp, "malformed part headers");
		return parse_disposition(mp, v);
	}
	if (strcasecmp(line, "Content-Type") == 0) {
		if (strlcpy(mp->part.content_type, v,
		    sizeof(mp->part.content_type)) >=
		    sizeof(mp->part.content_type))
			return fail(mp, "part Content-Type too long");
	}
	return 0;
}

/* hdr holds the header lines, each ending in CRLF, then a blank line. */
static int
parse_headers(struct multipart *mp)
{
	char	*line, *eol;
	int	 have_disp = 0;

	memset(&mp->part, 0, sizeof(mp->part));
	if (memchr(mp->hdr, '\0', mp->hdrlen) != NULL)
		return fail(mp, "malformed part headers");
	mp->hdr[mp->hdrlen - 2] = '\0';	/* drop the blank line */
	for (line = mp->hdr; *line != '\0'; line = eol + 2) {
		eol = strstr(line, "\r\n");
		*eol = '\0';
		if (strpbrk(line, "\r\n") != NULL)
			return fail(mp, "malformed part headers");
		if (parse_header_line(mp, line, &have_disp) == -1)
			return -1;
	}
	if (!have_disp)
		return fail(mp, "part without Content-Disposition form-data");
	return 0;
}

static int
fail(struct multipart *mp, const char *why)
{
	if (mp->state != MP_FAILED) {
		mp->state = MP_FAILED;
		mp->error = why;
	}
	return -1;
}

static int
emit(struct multipart *mp, const void *p, size_t n)
{
	if (n == 0 || mp->state != MP_BODY || mp->cb.part_data == NULL)
		return 0;
	if (mp->cb.part_data(mp->arg, p, n) == -1)
		return fail(mp, "aborted");
	return 0;
}

/*
 * Looks for the delimiter in p[0..n), passing what is certainly not a
 * delimiter to emit (which drops it outside a part body).  Returns 1
 * with *used past the delimiter when one ends in this input, 0 when
 * the input ran out, -1 on an abort.
 *
 * Data goes out in spans as long as the input allows: a CR that turns
 * out not to start the delimiter stays inside the span around it, so
 * that binary data is not cut at every CR.  Only bytes held back at the
 * end of the previous input are emitted from the delimiter's copy.
 */
static int
scan_delimiter(struct multipart *mp, const uint8_t *p, size_t n,
    size_t *used)
{
	const uint8_t	*cr;
	size_t		 i, run = 0, mstart = 0;
	int		 held = mp->match > 0;	/* began before p */

	for (i = 0; i < n; i++) {
		if (mp->match == 0) {
			if ((cr = memchr(p + i, '\r', n - i)) == NULL)
				break;
			i = cr - p;
			mp->match = 1;
			mstart = i;
			continue;
		}
		if (p[i] == (uint8_t)mp->delim[mp->match]) {
			if (++mp->match == mp->delimlen) {
				mp->match = 0;
				*used = i + 1;
				return emit(mp, p + run, mstart - run) == -1 ?
				    -1 : 1;
			}
			continue;
		}
		/* The held-back bytes were data after all. */
		if (held) {
			if (emit(mp, mp->delim, mp->match) == -1)
				return -1;
			held = 0;
			run = i;
		}
		mp->match = p[i] == '\r';
		mstart = i;
	}
	if (emit(mp, p + run, (mp->match ? mstart : n) - run) == -1)
		return -1;
	*used = n;
	return 0;
}

static int
collect_headers(struct multipart *mp, const uint8_t *p, size_t n,
    size_t *used)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		if (mp->hdrlen == MULTIPART_MAXHEADER)
			return fail(mp, "part headers too large");
		mp->hdr[mp->hdrlen++] = p[i];
		if ((mp->hdrlen == 2 && memcmp(mp->hdr, "\r\n", 2) == 0) ||
		    (mp->hdrlen >= 4 &&
		    memcmp(mp->hdr + mp->hdrlen - 4, "\r\n\r\n", 4) == 0)) {
			*used = i + 1;
			if (parse_headers(mp) == -1)
				return -1;
			mp->state = MP_BODY;
			mp->match = 0;
			if (mp->cb.part_begin != NULL &&
			    mp->cb.part_begin(mp->arg, &mp->part) == -1)
				return fail(mp, "aborted");
			return 0;
		}
	}
	*used = n;
	return 0;
}

/* What may follow a delimiter: "--", or padding and CRLF. */
static int
delimiter_line(struct multipart *mp, int c)
{
	switch (mp->state) {
	case MP_AFTER_DELIM:
		if (c == '-') {
			mp->state = MP_CLOSE_DASH;
			return 0;
		}
		/* FALLTHROUGH */
	case MP_PADDING:
		if (OWS(c))
			mp->state = MP_PADDING;
		else if (c == '\r')
			mp->state = MP_DELIM_LF;
		else
			return fail(mp, "malformed boundary line");
		return 0;
	case MP_CLOSE_DASH:
		if (c != '-')
			return fail(mp, "malformed boundary line");
		mp->state = MP_EPILOGUE;
		return 0;
	case MP_DELIM_LF:
		if (c != '\n')
			return fail(mp, "malformed boundary line");
		mp->state = MP_HEADERS;
		mp->hdrlen = 0;
		return 0;
	default:
		return fail(mp, "internal error");
	}
}

int
multipart_feed(struct multipart *mp, const void *buf, size_t len)
{
	const uint8_t	*p = buf;
	size_t		 used;
	int		 r;

	while (len > 0) {
		switch (mp->state) {
		case MP_FAILED:
			return -1;
		case MP_EPILOGUE:
			return 0;
		case MP_PREAMBLE:
		case MP_BODY:
			if ((r = scan_delimiter(mp, p, len, &used)) == -1)
				return -1;
			if (r == 1) {
				if (mp->state == MP_BODY &&
				    mp->cb.part_end != NULL &&
				    mp->cb.part_end(mp->arg) == -1)
					return fail(mp, "aborted");
				mp->state = MP_AFTER_DELIM;
			}
			break;
		case MP_HEADERS:
			if (collect_headers(mp, p, len, &used) == -1)
				return -1;
			break;
		default:
			if (delimiter_line(mp, *p) == -1)
				return -1;
			used = 1;
			break;
		}
		p += used;
		len -= used;
	}
	return mp->state == MP_FAILED ? -1 : 0;
}

int
multipart_finish(struct multipart *mp)
{
	if (mp->state == MP_FAILED)
		return -1;
	if (mp->state != MP_EPILOGUE)
		return fail(mp, "body ended before the closing boundary");
	return 0;
}

const char *
multipart_error(const struct multipart *mp)
{
	return mp->error;
}

/*
 * Finds the boundary parameter of a multipart/form-data media type.
 * Returns NULL with a reason in *why, else the parser's delimiter is set.
 */
static const char *
parse_content_type(struct multipart *mp, const char *ct)
{
	char		 pname[32], value[256];
	const char	*p;
	size_t		 n, blen;
	int		 found = 0;

	p = skip_ows(ct);
	n = strcspn(p, "; \t");
	if (n != strlen("multipart/form-data") ||
	    strncasecmp(p, "multipart/form-data", n) != 0)
		return "not multipart/form-data";
	p += n;
	for (;;) {
		p = skip_ows(p);
		if (*p == '\0')
			break;
		if (*p++ != ';')
			return "malformed Content-Type";
		p = skip_ows(p);
		if (*p == '\0')
			break;
		for (n = 0; is_tchar((unsigned char)p[n]); n++)
			;
		if (n == 0 || n >= sizeof(pname))
			return "malformed Content-Type";
		memcpy(pname, p, n);
		pname[n] = '\0';
		p = skip_ows(p + n);
		if (*p++ != '=')
			return "malformed Content-Type";
		p = skip_ows(p);
		if (read_value(&p, value, sizeof(value)) == -1)
			return "malformed Content-Type";
		if (strcasecmp(pname, "boundary") != 0)
			continue;
		if (found++)
			return "malformed Content-Type";
		blen = strlen(value);
		if (blen < 1 || blen > MULTIPART_MAXBOUNDARY ||
		    value[blen - 1] == ' ')
			return "invalid boundary";
		for (n = 0; n < blen; n++)
			if (!is_bchar((unsigned char)value[n]))
				return "invalid boundary";
		memcpy(mp->delim, "\r\n--", 4);
		memcpy(mp->delim + 4, value, blen + 1);
		mp->delimlen = 4 + blen;
	}
	return found ? NULL : "missing boundary";
}

struct multipart *
multipart_new(const char *content_type, const struct multipart_cb *cb,
    void *arg, const char **why)
{
	struct multipart	*mp;
	const char		*reason;

	if (content_type == NULL) {
		*why = "not multipart/form-data";
		return NULL;
	}
	if ((mp = calloc(1, sizeof(*mp))) == NULL) {
		*why = "out of memory";
		return NULL;
	}
	if ((reason = parse_content_type(mp, content_type)) != NULL) {
		free(mp);
		*why = reason;
		return NULL;
	}
	mp->cb = *cb;
	mp->arg = arg;
	mp->state = MP_PREAMBLE;
	/* The first delimiter may open the body without a CRLF before it. */
	mp->match = 2;
	return mp;
}

void
multipart_free(struct multipart *mp)
{
	free(mp);
}
