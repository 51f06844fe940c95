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
 * fe_refs_rewrite.c: what becomes of a file reference, and the blocks
 * it becomes, in the caller's wire.  The other keys of a block stay.
 * No I/O: the data or text comes from fe_refs.c.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "log.h"
#include "names.h"
#include "fe_refs.h"

/* What the Messages API takes as an image, and OpenAI's too. */
static const char *const native_images[] = {
	"image/png", "image/jpeg", "image/gif", "image/webp",
};
#define PDF_MIME	"application/pdf"

/* The type less its parameters, lower case. */
static void
mime_base(const char *mime, char *out, size_t len)
{
	size_t	 i;

	for (i = 0; i + 1 < len && mime[i] != '\0' && mime[i] != ';' &&
	    mime[i] != ' '; i++)
		out[i] = tolower((unsigned char)mime[i]);
	out[i] = '\0';
}

const char *
refs_native_mime(enum ref_kind kind, const struct file_rec *rec)
{
	char	 base[MIME_MAX];
	size_t	 i;

	mime_base(rec->mime_type, base, sizeof(base));
	if (kind != REF_IMAGE)
		return strcmp(base, PDF_MIME) == 0 ? PDF_MIME : NULL;
	if (strcmp(base, "image/jpg") == 0)
		return "image/jpeg";
	for (i = 0; i < sizeof(native_images) / sizeof(native_images[0]); i++)
		if (strcmp(base, native_images[i]) == 0)
			return native_images[i];
	return NULL;
}

const char *
refs_refused(enum ref_kind kind, const struct model_conf *model)
{
	if (kind != REF_IMAGE || !model->refuse_images)
		return NULL;
	if (model->refuse_images == REFUSE_IMAGES_COUNT)
		return "cannot count image input";
	return "does not take images: its upstream says it has no vision "
	    "input";
}

enum ref_treat
refs_treatment(enum ref_kind kind, const struct model_conf *model,
    const struct file_rec *rec, int sandbox)
{
	char	 base[MIME_MAX];

	if (kind == REF_CONTAINER_UPLOAD) {
		if (sandbox)
			return TREAT_SANDBOX;
		kind = REF_DOCUMENT;	/* read as a document */
	}
	/* pdf-as-text: a model that sees images but not PDFs. */
	if (refs_native_mime(kind, rec) != NULL && !model->text_only &&
	    !(model->pdf_as_text && kind == REF_DOCUMENT))
		return TREAT_NATIVE;
	mime_base(rec->mime_type, base, sizeof(base));
	if (strcmp(base, PDF_MIME) == 0)
		return TREAT_PDF;
	if (mime_is_text(base, rec->filename))
		return TREAT_TEXT;
	return TREAT_OMIT;
}

/* --- native --- */

static int
set_str(struct json_object *o, const char *key, const char *v)
{
	struct json_object	*s;

	if ((s = json_object_new_string(v)) == NULL)
		return -1;
	return json_object_object_add(o, key, s);
}

static char *
data_url(const char *mime, const char *data)
{
	char	*url;

	if (asprintf(&url, "data:%s;base64,%s", mime, data) == -1)
		return NULL;
	return url;
}

/* {type:"base64", media_type, data} in place of {type:"file", ...}. */
static int
native_messages(const struct ref_site *s, const char *mime,
    const char *data)
{
	struct json_object	*src;

	if (s->kind == REF_CONTAINER_UPLOAD) {
		json_object_object_del(s->block, "file_id");
		if (set_str(s->block, "type", "document") == -1)
			return -1;
	}
	if ((src = json_object_new_object()) == NULL)
		return -1;
	if (set_str(src, "type", "base64") == -1 ||
	    set_str(src, "media_type", mime) == -1 ||
	    set_str(src, "data", data) == -1) {
		json_object_put(src);
		return -1;
	}
	return json_object_object_add(s->block, "source", src);
}

/* OpenAI shapes: a data: URL where the file id was. */
static int
native_openai(enum wire wire, const struct ref_site *s,
    const struct file_rec *rec, const char *mime, const char *data)
{
	struct json_object	*o = s->block;
	char			*url, name[FILENAME_MAX_BYTES];
	int			 rc = -1;

	if (wire == WIRE_CHAT)
		o = json_object_object_get(s->block, s->kind == REF_IMAGE ?
		    "image_url" : "file");
	if ((url = data_url(mime, data)) == NULL)
		return -1;
	json_object_object_del(o, "file_id");
	if (s->kind == REF_IMAGE)
		rc = set_str(o, wire == WIRE_CHAT ? "url" : "image_url", url);
	else {
		name_last_segment(rec->filename, name, sizeof(name));
		rc = set_str(o, "file_data", url);
		if (rc == 0 && !json_object_object_get_ex(o, "filename", NULL))
			rc = set_str(o, "filename", name);
	}
	free(url);
	return rc;
}

int
refs_rewrite_native(enum wire wire, const struct ref_site *s,
    const struct file_rec *rec, const char *data)
{
	const char	*mime;

	mime = refs_native_mime(s->kind == REF_IMAGE ? REF_IMAGE :
	    REF_DOCUMENT, rec);
	if (mime == NULL)
		return -1;
	if (wire == WIRE_MESSAGES)
		return native_messages(s, mime, data);
	return native_openai(wire, s, rec, mime, data);
}

/* --- text --- */

int
refs_rewrite_text(enum wire wire, const struct ref_site *s,
    const char *text, size_t len)
{
	struct json_object	*b, *v, *msg, *content;

	if ((b = json_object_new_object()) == NULL)
		return -1;
	set_str(b, "type", wire == WIRE_RESPONSES ? "input_text" : "text");
	json_object_object_add(b, "text", json_object_new_string_len(text,
	    len));
	/* A cache breakpoint on the file stays on what replaces it. */
	if (wire == WIRE_MESSAGES &&
	    json_object_object_get_ex(s->block, "cache_control", &v))
		json_object_object_add(b, "cache_control", json_object_get(v));
	if (s->bare) {
		msg = json_object_new_object();
		content = json_object_new_array();
		set_str(msg, "type", "message");
		set_str(msg, "role", "user");
		json_object_array_add(content, b);
		json_object_object_add(msg, "content", content);
		b = msg;
	}
	/* Frees the old block: s->block and s->file_id die here. */
	return json_object_array_put_idx(s->array, s->index, b);
}

/* The length of a valid UTF-8 sequence at p (n bytes left), or 0. */
static size_t
utf8_seq(const unsigned char *p, size_t n)
{
	size_t		 need, i;
	unsigned char	 lo = 0x80, hi = 0xbf;

	if (p[0] >= 0x01 && p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		need = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		need = 3;
		if (p[0] == 0xe0)
			lo = 0xa0;
		else if (p[0] == 0xed)
			hi = 0x9f;	/* no surrogates */
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		need = 4;
		if (p[0] == 0xf0)
			lo = 0x90;
		else if (p[0] == 0xf4)
			hi = 0x8f;
	} else
		return 0;	/* NUL, a continuation byte, or never valid */
	if (n < need || p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < need; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return need;
}

/* Copies text to out, each byte of invalid UTF-8 (and NUL) as U+FFFD. */
static size_t
utf8_clean(const char *text, size_t len, char *out)
{
	const unsigned char	*p = (const unsigned char *)text;
	size_t			 i = 0, o = 0, k;

	while (i < len) {
		if ((k = utf8_seq(p + i, len - i)) == 0) {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
			continue;
		}
		memcpy(out + o, p + i, k);
		o += k;
		i += k;
	}
	return o;
}

char *
refs_attached_text(const char *name, const char *text, size_t len,
    int truncated, size_t *outlen)
{
	char	 head[FILENAME_MAX_BYTES + 32], tail[FILENAME_MAX_BYTES + 64];
	char	*out;
	size_t	 hl, tl, n;

	if (truncated)
		len = utf8_cut(text, len);	/* no character cut in two */
	hl = snprintf(head, sizeof(head), "[Attached file: %s]\n", name);
	tl = snprintf(tail, sizeof(tail), "%s\n[End of %s]", truncated ?
	    "\n[Truncated: the rest of the file is not shown]" : "", name);
	if (hl >= sizeof(head) || tl >= sizeof(tail) || len > SIZE_MAX / 4 ||
	    (out = malloc(hl + 3 * len + tl + 1)) == NULL)
		return NULL;
	memcpy(out, head, hl);
	n = hl + utf8_clean(text, len, out + hl);
	memcpy(out + n, tail, tl + 1);
	*outlen = n + tl;
	return out;
}

void
refs_marker(enum ref_treat t, const char *name, char *out, size_t len)
{
	if (t == TREAT_SANDBOX)
		snprintf(out, len, "[File available in the code execution "
		    "sandbox: %s]", name);
	else
		snprintf(out, len, "[Unprocessable attachment omitted: %s]",
		    name);
}

/* --- names in the sandbox --- */

/* name_unique's taken(): the names the files before upto took. */
struct seed_taken {
	const struct fref_list	*files;
	const struct fref	*upto;
};

/* Every name given out stays within the room a sandbox name has. */
_Static_assert(SBX_NAME_MAX >= NAME_DEDUPE_MIN, "SBX_NAME_MAX");

static int
name_taken(const char *name, void *arg)
{
	const struct seed_taken	*st = arg;
	const struct fref	*f;

	TAILQ_FOREACH(f, st->files, entry) {
		if (f == st->upto)
			break;
		if (strcmp(f->seed_name, name) == 0)
			return 1;
	}
	return 0;
}

/*
 * How many files before upto have the last segment base: each took the
 * first candidate free then, so the first that many are taken.
 */
static int
same_base(const struct fref_list *files, const struct fref *upto,
    const char *base)
{
	const struct fref	*f;
	char			 seg[SBX_NAME_MAX];
	int			 n = 0;

	TAILQ_FOREACH(f, files, entry) {
		if (f == upto)
			break;
		name_last_segment(f->rec.filename, seg, sizeof(seg));
		n += strcmp(seg, base) == 0;
	}
	return n;
}

void
seed_names(struct fref_list *files)
{
	struct seed_taken	 st;
	struct fref		*f;
	char			 base[SBX_NAME_MAX];
	size_t			 before = 0;

	st.files = files;
	TAILQ_FOREACH(f, files, entry) {
		/* "file" when nothing usable is left of the name. */
		name_last_segment(f->rec.filename, base, sizeof(base));
		st.upto = f;
		/* At most before + 2 tries: see name_unique. */
		if (name_unique(base, same_base(files, f, base) + 1, before,
		    name_taken, &st, f->seed_name,
		    sizeof(f->seed_name)) == -1)
			log_warnx("%s: no sandbox name of its own", f->rec.id);
		before++;
	}
}

/* The name fr has in the sandbox: every file's, given in order. */
void
refs_seed_name(struct fref_list *list, const struct fref *fr, char *out,
    size_t len)
{
	seed_names(list);
	strlcpy(out, fr->seed_name, len);
}
