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
 * test_refs_find.c: the file references of SPEC 6.1 found in each wire
 * (and only there), and the blocks they become: inline data with the
 * block's other keys kept, text blocks, bare Responses items wrapped,
 * the attachment wrapper with invalid UTF-8 replaced, and sandbox names.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "fe_refs.h"
#include "t.h"

#define MAXFOUND	32

struct found {
	int		 n;
	enum ref_kind	 kind[MAXFOUND];
	char		 id[MAXFOUND][64];
	int		 bare[MAXFOUND];
	int		 consistent;	/* array[index] is block, id in it */
	int		 stop_after;
	struct ref_site	 site[MAXFOUND];
};

static int
collect(void *arg, const struct ref_site *s)
{
	struct found	*f = arg;

	if (f->n < MAXFOUND) {
		f->kind[f->n] = s->kind;
		strlcpy(f->id[f->n], s->file_id, sizeof(f->id[0]));
		f->bare[f->n] = s->bare;
		f->site[f->n] = *s;
	}
	if (json_object_array_get_idx(s->array, s->index) != s->block ||
	    strstr(json_object_to_json_string(s->block), s->file_id) == NULL)
		f->consistent = 0;
	f->n++;
	return f->stop_after != 0 && f->n >= f->stop_after;
}

static struct json_object *
find(enum wire w, const char *json, struct found *f)
{
	struct json_object	*o = json_tokener_parse(json);

	memset(f, 0, sizeof(*f));
	f->consistent = 1;
	if (o == NULL) {
		printf("# bad test JSON: %s\n", json);
		return NULL;
	}
	refs_find(w, o, collect, f);
	return o;
}

static void
found_is(enum wire w, const char *json, const char *want, const char *what)
{
	struct json_object	*o;
	struct found		 f;
	char			 got[512] = "";
	static const char	 k[] = "idc";
	int			 i;

	o = find(w, json, &f);
	for (i = 0; i < f.n && i < MAXFOUND; i++) {
		if (i > 0)
			strlcat(got, " ", sizeof(got));
		strlcat(got, f.id[i], sizeof(got));
		strlcat(got, ":", sizeof(got));
		strncat(got, &k[f.kind[i]], 1);
		if (f.bare[i])
			strlcat(got, "b", sizeof(got));
	}
	T_EQ_STR(got, want, what);
	T_OK(f.consistent, "%s: each site points at its block", what);
	json_object_put(o);
}

static void
test_find_messages(void)
{
	found_is(WIRE_MESSAGES, "{\"messages\":[{\"role\":\"user\",\"content\":"
	    "[{\"type\":\"text\",\"text\":\"hi\"},"
	    "{\"type\":\"image\",\"source\":{\"type\":\"file\",\"file_id\":"
	    "\"file-a\"}},"
	    "{\"type\":\"document\",\"title\":\"t\",\"source\":{\"type\":"
	    "\"file\",\"file_id\":\"file-b\"}},"
	    "{\"type\":\"container_upload\",\"file_id\":\"file-c\"}]},"
	    "{\"role\":\"assistant\",\"content\":\"plain\"},"
	    "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
	    "\"tool_use_id\":\"x\",\"content\":[{\"type\":\"image\",\"source\":"
	    "{\"type\":\"file\",\"file_id\":\"file-d\"}}]}]}]}",
	    "file-a:i file-b:d file-c:c file-d:i",
	    "Messages: image, document, container_upload, in a tool_result");
	found_is(WIRE_MESSAGES, "{\"messages\":[{\"role\":\"user\",\"content\":"
	    "[{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"file_id\":"
	    "\"file-x\",\"data\":\"\"}},"
	    "{\"type\":\"image\",\"source\":{\"type\":\"file\",\"file_id\":5}},"
	    "{\"type\":\"image\",\"source\":{\"type\":\"file\","
	    "\"file_id\":\"\"}},"
	    "{\"type\":\"document\",\"source\":\"file-y\"},"
	    "{\"type\":\"container_upload\"},"
	    "{\"type\":\"tool_result\",\"content\":[{\"type\":\"tool_result\","
	    "\"content\":[{\"type\":\"container_upload\",\"file_id\":"
	    "\"file-z\"}]}]},"
	    "{\"source\":{\"type\":\"file\",\"file_id\":\"file-w\"}},"
	    "[{\"type\":\"container_upload\",\"file_id\":\"file-v\"}]]}],"
	    "\"system\":[{\"type\":\"container_upload\",\"file_id\":"
	    "\"file-s\"}]}",
	    "", "Messages: not references (other sources, bad ids, nesting, "
	    "system)");
	found_is(WIRE_MESSAGES, "[1,2]", "", "Messages: not an object");
	found_is(WIRE_MESSAGES, "{\"messages\":{\"content\":[]}}", "",
	    "Messages: messages not an array");
}

static void
test_find_chat(void)
{
	found_is(WIRE_CHAT, "{\"messages\":[{\"role\":\"system\",\"content\":"
	    "\"s\"},{\"role\":\"user\",\"content\":["
	    "{\"type\":\"text\",\"text\":\"hi\"},"
	    "{\"type\":\"image_url\",\"image_url\":{\"file_id\":\"file-a\","
	    "\"detail\":\"high\"}},"
	    "{\"type\":\"file\",\"file\":{\"file_id\":\"file-b\"}},"
	    "{\"type\":\"image_url\",\"image_url\":{\"url\":\"file-c\"}},"
	    "{\"type\":\"file\",\"file\":{\"file_data\":\"data:x\"}},"
	    "{\"type\":\"file\",\"file_id\":\"file-d\"},"
	    "{\"type\":\"image\",\"source\":{\"type\":\"file\",\"file_id\":"
	    "\"file-e\"}}]},"
	    "{\"role\":\"tool\",\"tool_call_id\":\"t\",\"content\":["
	    "{\"type\":\"file\",\"file\":{\"file_id\":\"file-a\"}}]}]}",
	    "file-a:i file-b:d file-a:d",
	    "chat: image_url and file parts with a file_id, and only those");
}

static void
test_find_responses(void)
{
	found_is(WIRE_RESPONSES, "{\"input\":["
	    "{\"type\":\"input_file\",\"file_id\":\"file-a\"},"
	    "{\"role\":\"user\",\"content\":[{\"type\":\"input_text\","
	    "\"text\":\"x\"},{\"type\":\"input_image\",\"file_id\":\"file-b\","
	    "\"detail\":\"auto\"}]},"
	    "{\"type\":\"message\",\"role\":\"user\",\"content\":["
	    "{\"type\":\"input_file\",\"file_id\":\"file-c\"}]},"
	    "{\"type\":\"input_image\",\"file_id\":\"file-d\"},"
	    "{\"type\":\"function_call_output\",\"call_id\":\"c\",\"output\":["
	    "{\"type\":\"input_file\",\"file_id\":\"file-e\"}]},"
	    "{\"type\":\"function_call\",\"arguments\":\"{}\",\"file_id\":"
	    "\"file-f\"},"
	    "{\"type\":\"input_file\",\"file_url\":\"https://x/y\"}]}",
	    "file-a:db file-b:i file-c:d file-d:ib file-e:d",
	    "Responses: bare items, in messages, in a function's output");
	found_is(WIRE_RESPONSES, "{\"input\":\"file-a\"}", "",
	    "Responses: a string input");
	found_is(WIRE_RESPONSES, "{\"messages\":[{\"role\":\"user\","
	    "\"content\":[{\"type\":\"input_file\",\"file_id\":"
	    "\"file-a\"}]}]}", "",
	    "Responses: messages is not where input is");
}

static void
test_find_stop(void)
{
	struct json_object	*o;
	struct found		 f;
	int			 rc;

	o = json_tokener_parse("{\"input\":[{\"type\":\"input_file\","
	    "\"file_id\":\"a\"},{\"type\":\"input_file\",\"file_id\":\"b\"},"
	    "{\"type\":\"input_file\",\"file_id\":\"c\"}]}");
	memset(&f, 0, sizeof(f));
	f.stop_after = 2;
	rc = refs_find(WIRE_RESPONSES, o, collect, &f);
	T_EQ_INT(rc, -1, "a callback that stops the walk gets -1");
	T_EQ_INT(f.n, 2, "and no call after");
	memset(&f, 0, sizeof(f));
	T_EQ_INT(refs_find(WIRE_RESPONSES, o, collect, &f), 3,
	    "the count otherwise");
	json_object_put(o);
}

/* --- rewriting --- */

static struct file_rec *
rec_of(const char *name, const char *mime)
{
	static struct file_rec	 rec;

	memset(&rec, 0, sizeof(rec));
	strlcpy(rec.id, "file-x", sizeof(rec.id));
	strlcpy(rec.filename, name, sizeof(rec.filename));
	strlcpy(rec.mime_type, mime, sizeof(rec.mime_type));
	return &rec;
}

static const char *
plain(struct json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
}

/*
 * Rewrites every reference of json natively (data "PH"; documents are
 * PDFs) or as text.
 */
static void
rewrite_is(enum wire w, const char *json, const char *name,
    const char *mime, const char *text, const char *want, const char *what)
{
	struct json_object	*o;
	struct found		 f;
	int			 i, bad = 0;

	o = find(w, json, &f);
	for (i = 0; i < f.n; i++)
		bad += (text == NULL ? refs_rewrite_native(w, &f.site[i],
		    rec_of(name, f.kind[i] == REF_IMAGE ? mime :
		    "application/pdf"), "PH") : refs_rewrite_text(w,
		    &f.site[i], text, strlen(text))) != 0;
	T_OK(bad == 0 && f.n > 0, "%s: rewritten", what);
	T_EQ_STR(plain(o), want, what);
	json_object_put(o);
}

static void
test_rewrite_native(void)
{
	rewrite_is(WIRE_MESSAGES, "{\"messages\":[{\"role\":\"user\","
	    "\"content\":[{\"type\":\"image\",\"source\":{\"type\":\"file\","
	    "\"file_id\":\"file-a\"},\"cache_control\":{\"type\":"
	    "\"ephemeral\"}}]}]}", "a.png", "image/PNG",
	    NULL, "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":"
	    "\"image\",\"source\":{\"type\":\"base64\",\"media_type\":"
	    "\"image/png\",\"data\":\"PH\"},\"cache_control\":{\"type\":"
	    "\"ephemeral\"}}]}]}",
	    "Messages image: base64, cache_control kept");
	rewrite_is(WIRE_MESSAGES, "{\"messages\":[{\"content\":[{\"type\":"
	    "\"document\",\"title\":\"T\",\"context\":\"C\",\"citations\":"
	    "{\"enabled\":true},\"source\":{\"type\":\"file\",\"file_id\":"
	    "\"file-a\"}}]}]}", "r.pdf", "application/pdf", NULL,
	    "{\"messages\":[{\"content\":[{\"type\":\"document\",\"title\":"
	    "\"T\",\"context\":\"C\",\"citations\":{\"enabled\":true},"
	    "\"source\":{\"type\":\"base64\",\"media_type\":"
	    "\"application/pdf\",\"data\":\"PH\"}}]}]}",
	    "Messages document: title, context, citations kept");
	rewrite_is(WIRE_MESSAGES, "{\"messages\":[{\"content\":[{\"type\":"
	    "\"container_upload\",\"file_id\":\"file-a\"}]}]}", "r.pdf",
	    "application/pdf", NULL, "{\"messages\":[{\"content\":[{\"type\":"
	    "\"document\",\"source\":{\"type\":\"base64\",\"media_type\":"
	    "\"application/pdf\",\"data\":\"PH\"}}]}]}",
	    "Messages container_upload without a sandbox: a document");
	rewrite_is(WIRE_CHAT, "{\"messages\":[{\"content\":[{\"type\":"
	    "\"image_url\",\"image_url\":{\"file_id\":\"file-a\",\"detail\":"
	    "\"low\"}},{\"type\":\"file\",\"file\":{\"file_id\":"
	    "\"file-b\"}}]}]}",
	    "dir/x.jpg", "image/jpeg", NULL,
	    "{\"messages\":[{\"content\":[{\"type\":\"image_url\","
	    "\"image_url\":{\"detail\":\"low\",\"url\":"
	    "\"data:image/jpeg;base64,PH\"}},"
	    "{\"type\":\"file\",\"file\":{\"file_data\":\"data:application/pdf;"
	    "base64,PH\",\"filename\":\"x.jpg\"}}]}]}",
	    "chat: data: URLs, detail kept, a filename");
	rewrite_is(WIRE_RESPONSES, "{\"input\":[{\"type\":\"input_image\","
	    "\"file_id\":\"file-a\",\"detail\":\"auto\"},{\"role\":\"user\","
	    "\"content\":[{\"type\":\"input_file\",\"file_id\":\"file-b\","
	    "\"filename\":\"mine.pdf\"}]}]}", "a.webp", "image/webp", NULL,
	    "{\"input\":[{\"type\":\"input_image\",\"detail\":\"auto\","
	    "\"image_url\":\"data:image/webp;base64,PH\"},{\"role\":\"user\","
	    "\"content\":[{\"type\":\"input_file\",\"filename\":\"mine.pdf\","
	    "\"file_data\":\"data:application/pdf;base64,PH\"}]}]}",
	    "Responses: data: URLs, the caller's filename kept");
}

static void
test_rewrite_text(void)
{
	rewrite_is(WIRE_MESSAGES, "{\"messages\":[{\"content\":[{\"type\":"
	    "\"document\",\"title\":\"T\",\"source\":{\"type\":\"file\","
	    "\"file_id\":\"file-a\"},\"cache_control\":{\"type\":"
	    "\"ephemeral\"}}]}]}", "", "", "T\"\n",
	    "{\"messages\":[{\"content\":[{\"type\":\"text\",\"text\":"
	    "\"T\\\"\\n\",\"cache_control\":{\"type\":\"ephemeral\"}}]}]}",
	    "Messages: a text block, escaped, cache_control kept");
	rewrite_is(WIRE_CHAT, "{\"messages\":[{\"content\":[{\"type\":\"file\","
	    "\"file\":{\"file_id\":\"file-b\"}}]}]}", "", "", "x",
	    "{\"messages\":[{\"content\":[{\"type\":\"text\","
	    "\"text\":\"x\"}]}]}",
	    "chat: a text part");
	rewrite_is(WIRE_RESPONSES, "{\"input\":[{\"type\":\"input_file\","
	    "\"file_id\":\"file-a\"},{\"role\":\"user\",\"content\":[{\"type\":"
	    "\"input_image\",\"file_id\":\"file-b\"}]}]}", "", "", "x",
	    "{\"input\":[{\"type\":\"message\",\"role\":\"user\",\"content\":"
	    "[{\"type\":\"input_text\",\"text\":\"x\"}]},{\"role\":\"user\","
	    "\"content\":[{\"type\":\"input_text\",\"text\":\"x\"}]}]}",
	    "Responses: input_text; a bare item wrapped in a user message");
}

static void
test_attached(void)
{
	char	*s;
	size_t	 len;

	s = refs_attached_text("notes.txt", "a\xff" "b\xc3\xa9\xed\xa0\x80"
	    "c\0d\xe2\x82", 13, 0, &len);
	T_OK(s != NULL && strcmp(s, "[Attached file: notes.txt]\n"
	    "a\xef\xbf\xbd" "b\xc3\xa9"
	    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" "c\xef\xbf\xbd"
	    "d\xef\xbf\xbd\xef\xbf\xbd\n[End of notes.txt]") == 0,
	    "invalid UTF-8, surrogates, NUL and a cut end become U+FFFD");
	T_EQ_INT(len, strlen(s), "its length");
	free(s);
	s = refs_attached_text("n", "ab\xe2\x82", 4, 1, &len);
	T_OK(s != NULL && strcmp(s, "[Attached file: n]\nab\n[Truncated: the "
	    "rest of the file is not shown]\n[End of n]") == 0,
	    "cut: no half character, a note");
	free(s);
	s = refs_attached_text("e", "", 0, 0, &len);
	T_OK(s != NULL && strcmp(s, "[Attached file: e]\n\n[End of e]") == 0,
	    "an empty file");
	free(s);
}

static void
test_treatment(void)
{
	static const struct {
		enum ref_kind	 kind;
		int		 model;	/* 0 native, 1 text-only, 2 pdf */
		const char	*name, *mime;
		int		 sandbox;
		enum ref_treat	 want;
		const char	*what;
	} cases[] = {
	{ REF_IMAGE, 0, "a.png", "image/png", 0, TREAT_NATIVE,
	    "image, native model" },
	{ REF_IMAGE, 0, "a.png", "Image/PNG; x=y", 0, TREAT_NATIVE,
	    "image type in any case, parameters" },
	{ REF_IMAGE, 0, "a.bmp", "image/bmp", 0, TREAT_OMIT,
	    "an image type upstreams do not take" },
	{ REF_IMAGE, 0, "a.txt", "text/plain", 0, TREAT_TEXT,
	    "a text file in an image block" },
	{ REF_DOCUMENT, 0, "a.pdf", "application/pdf", 0, TREAT_NATIVE,
	    "PDF, native model" },
	{ REF_DOCUMENT, 0, "a.csv", "text/csv", 0, TREAT_TEXT,
	    "CSV document: text even for a native model" },
	{ REF_DOCUMENT, 0, "a.zip", "application/zip", 0, TREAT_OMIT,
	    "a zip: omitted" },
	{ REF_IMAGE, 1, "a.png", "image/png", 0, TREAT_OMIT,
	    "image, text-only model" },
	{ REF_DOCUMENT, 1, "a.pdf", "application/pdf", 0, TREAT_PDF,
	    "PDF, text-only model" },
	{ REF_DOCUMENT, 1, "main.py", "application/octet-stream", 0,
	    TREAT_TEXT, "source code by its name" },
	{ REF_DOCUMENT, 2, "a.pdf", "application/pdf", 0, TREAT_PDF,
	    "PDF under pdf-as-text" },
	{ REF_IMAGE, 2, "a.gif", "image/gif", 0, TREAT_NATIVE,
	    "image under pdf-as-text" },
	{ REF_CONTAINER_UPLOAD, 0, "a.pdf", "application/pdf", 1,
	    TREAT_SANDBOX, "container_upload, sandbox" },
	{ REF_CONTAINER_UPLOAD, 0, "a.pdf", "application/pdf", 0,
	    TREAT_NATIVE, "container_upload, none" },
	{ REF_CONTAINER_UPLOAD, 1, "a.json", "application/json", 0,
	    TREAT_TEXT, "container_upload, none, text-only" },
	};
	struct model_conf	 m[3];
	size_t			 i;

	memset(m, 0, sizeof(m));
	m[1].text_only = 1;
	m[2].pdf_as_text = 1;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		T_EQ_INT(refs_treatment(cases[i].kind, &m[cases[i].model],
		    rec_of(cases[i].name, cases[i].mime), cases[i].sandbox),
		    cases[i].want, cases[i].what);
	T_EQ_STR(refs_native_mime(REF_IMAGE, rec_of("a", "image/jpg")),
	    "image/jpeg", "image/jpg is sent as image/jpeg");
}

static void
test_seed_names(void)
{
	static const char *names[] = { "a/data.csv", "b\\data.csv",
	    "data-2.csv", "x/Makefile", "Makefile", "data.csv" };
	static const char *want[] = { "data.csv", "data-2.csv",
	    "data-2-2.csv", "Makefile", "Makefile-2", "data-3.csv" };
	struct fref_list	 list;
	struct fref		 fr[6];
	char			 out[64];
	size_t			 i;

	TAILQ_INIT(&list);
	for (i = 0; i < 6; i++) {
		memset(&fr[i], 0, sizeof(fr[i]));
		strlcpy(fr[i].rec.filename, names[i],
		    sizeof(fr[i].rec.filename));
		TAILQ_INSERT_TAIL(&list, &fr[i], entry);
	}
	for (i = 0; i < 6; i++) {
		refs_seed_name(&list, &fr[i], out, sizeof(out));
		T_EQ_STR(out, want[i], "a sandbox name, deduplicated in order");
	}
	refs_marker(TREAT_SANDBOX, "data-2.csv", out, sizeof(out));
	T_EQ_STR(out, "[File available in the code execution sandbox: "
	    "data-2.csv]", "the sandbox marker");
	refs_marker(TREAT_OMIT, "a.zip", out, sizeof(out));
	T_EQ_STR(out, "[Unprocessable attachment omitted: a.zip]",
	    "the omission marker");
}

int
main(void)
{
	test_find_messages();
	test_find_chat();
	test_find_responses();
	test_find_stop();
	test_rewrite_native();
	test_rewrite_text();
	test_attached();
	test_treatment();
	test_seed_names();
	return t_done();
}
