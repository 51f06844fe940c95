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
 * fe_refs.h: the parts of fe_refs.c that need no event loop, so that
 * tests and fuzzers reach them: finding references in a request
 * (fe_refs_find.c) and rewriting the blocks (fe_refs_rewrite.c).
 */
#ifndef DEPOTD_REFS_H
#define DEPOTD_REFS_H

#include <stddef.h>

#include "fe_model.h"

enum ref_kind {
	REF_IMAGE,		/* image, image_url, input_image */
	REF_DOCUMENT,		/* document, file, input_file */
	REF_CONTAINER_UPLOAD,	/* Messages only */
};

/* One reference: where it is, so that it can be rewritten. */
struct ref_site {
	enum ref_kind		 kind;
	const char		*file_id;	/* in block */
	struct json_object	*block;
	struct json_object	*array;		/* array[index] is block */
	size_t			 index;
	int			 bare;		/* a Responses input item */
};

/* Nonzero stops the walk. */
typedef int	(*refs_find_cb)(void *arg, const struct ref_site *);

/*
 * Calls cb for every file reference of SPEC 6.1 in req, a request in
 * the given wire, in the order the request names them.  Returns the
 * count, or -1 when cb stopped the walk.
 */
int		 refs_find(enum wire, struct json_object *req, refs_find_cb,
		    void *);

/* What becomes of a reference. */
enum ref_treat {
	TREAT_NATIVE,		/* inline base64 */
	TREAT_TEXT,		/* the file's text, wrapped */
	TREAT_PDF,		/* extracted text, wrapped */
	TREAT_OMIT,		/* the omission marker */
	TREAT_SANDBOX,		/* the sandbox marker */
};

/*
 * Why the model cannot take the reference at all (a 400 naming it),
 * NULL when it can: an image where discovery says no vision, or in a
 * token count.  Never dropped silently.
 */
const char	*refs_refused(enum ref_kind, const struct model_conf *);
enum ref_treat	 refs_treatment(enum ref_kind, const struct model_conf *,
		    const struct file_rec *, int sandbox);
/* The type a native block declares: a constant, never the stored one. */
const char	*refs_native_mime(enum ref_kind, const struct file_rec *);

/*
 * The block becomes inline data in its own shape, every other key
 * kept: data is what goes where the base64 belongs (a placeholder).
 */
int		 refs_rewrite_native(enum wire, const struct ref_site *,
		    const struct file_rec *, const char *data);
/* The block becomes a text block (a bare item: a user message). */
int		 refs_rewrite_text(enum wire, const struct ref_site *,
		    const char *text, size_t len);

/*
 * "[Attached file: NAME]\n" text "\n[End of NAME]" with text made valid
 * UTF-8 (U+FFFD for what is not) and a note when it was cut.  NULL
 * when out of memory.
 */
char		*refs_attached_text(const char *name, const char *text,
		    size_t len, int truncated, size_t *outlen);
/* The marker text for an omitted file or one in the sandbox. */
void		 refs_marker(enum ref_treat, const char *name, char *out,
		    size_t len);
/*
 * The name fr gets in the sandbox: its last path segment, -2, -3 ...
 * when a file before it in the list took that name (SPEC 6.2).
 */
void		 refs_seed_name(struct fref_list *,
		    const struct fref *, char *out, size_t len);

#endif
