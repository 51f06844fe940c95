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
 * xlate.h: the parts the request and answer translators share
 * (xlate.c); private to xlate_*.c.
 */
#ifndef DEPOTD_XLATE_H
#define DEPOTD_XLATE_H

#include <json-c/json.h>

/* One translation under way: where its error message goes. */
struct xl {
	char		*err;
	size_t		 errlen;
};

#define XL_IDLEN	64	/* an id we make, with its prefix */

/* Sets the error message; always -1. */
int			 xl_fail(struct xl *, const char *, ...)
			    __attribute__((__format__(printf, 2, 3)));
/* Puts "where: " before the error message; always -1. */
int			 xl_where(struct xl *, const char *, ...)
			    __attribute__((__format__(printf, 2, 3)));
/* o[key], NULL when o is not an object or key is absent or null. */
struct json_object	*xl_get(struct json_object *, const char *);
/* o[key] when a string, else NULL. */
const char		*xl_str(struct json_object *, const char *);
int			 xl_is(struct json_object *, json_type);
/* A deep copy; NULL for NULL (JSON null). */
struct json_object	*xl_dup(struct json_object *);
/* dst[dkey] = a copy of src[skey], when src has it. */
void			 xl_copy(struct json_object *, const char *,
			    struct json_object *, const char *);
void			 xl_set_str(struct json_object *, const char *,
			    const char *);
/* prefix followed by 24 random hex digits. */
void			 xl_id(char *, size_t, const char *);

/* A function call's arguments: the object, from its JSON text. */
struct json_object	*xl_args_parse(const char *);
/* ... and back to text. */
struct json_object	*xl_args_string(struct json_object *);

/*
 * "data:MT;base64,DATA": the media type into mt and a pointer to DATA,
 * which stays opaque (it may be a placeholder).  0, or -1 when url is
 * not a base64 data: URL.
 */
int			 xl_data_url(const char *, char *, size_t,
			    const char **);
struct json_object	*xl_data_url_new(const char *, const char *);

/*
 * The text of every item of arr whose type is one of those in types
 * (NULL-terminated), joined with sep; items of other types are
 * counted in *other.  NULL when arr is not an array.
 */
struct json_object	*xl_join_text(struct json_object *,
			    const char *const *, const char *, int *);
/* {"type": type, key: val} */
struct json_object	*xl_part(const char *, const char *,
			    struct json_object *);

/* Chat messages: a new one, and a tool result among them. */
struct json_object	*xl_chat_msg(const char *, struct json_object *);
/*
 * Appends to msgs the role:tool message for call_id carrying the text
 * parts of parts (a string or an array of chat parts); the others
 * (images, files) go to user_parts, for a user message after the tool
 * messages, since chat takes only text in a tool message.
 */
int			 xl_chat_tool(struct xl *, struct json_object *,
			    const char *, struct json_object *, int,
			    struct json_object *);
/* A chat function tool from a flat {name, description, schema}. */
struct json_object	*xl_chat_function(struct xl *, struct json_object *,
			    const char *);
/*
 * out["tools"]: each of req's tools through conv, which refuses one
 * (NULL, with a message) that the target cannot express.  Without
 * tools, out has no "tools", and the caller then leaves out the
 * tool_choice and parallel_tool_calls the targets refuse alone.
 */
int			 xl_tools(struct xl *, struct json_object *,
			    struct json_object *, struct json_object *(*)(
			    struct xl *, struct json_object *));
/* stream, and the usage chunk a streamed chat answer needs. */
void			 xl_chat_stream(struct json_object *,
			    struct json_object *);

/* xlate_messages.c */
struct json_object	*xl_msgreq_to_chat(struct xl *, struct json_object *);
/* A tool_use block appended to chat tool_calls. */
int			 xl_tool_call(struct xl *, struct json_object *,
			    struct json_object *);

/* xlate_tomessages.c */
struct json_object	*xl_chatreq_to_msg(struct xl *, struct json_object *,
			    int);
/* Chat tool_calls appended as tool_use blocks. */
int			 xl_tool_uses(struct xl *, struct json_object *,
			    struct json_object *);

/* xlate_manswer.c */

/* The parts of a chat answer the other dialects carry: text is a
 * reference the reader puts, the rest is borrowed from resp. */
struct xl_chatans {
	struct json_object	*resp;
	struct json_object	*text;		/* string, or NULL */
	struct json_object	*refusal;	/* string, or NULL */
	struct json_object	*calls;		/* array, or NULL */
	const char		*finish;	/* "" when absent */
	struct json_object	*usage;		/* object, or NULL */
};
int			 xl_chatans_read(struct xl *, struct json_object *,
			    struct xl_chatans *);
struct json_object	*xl_chat_to_msgans(struct xl *, struct json_object *,
			    const char *);
struct json_object	*xl_msgans_to_chat(struct xl *, struct json_object *,
			    const char *);

/* xlate_responses.c */
struct json_object	*xl_respreq_to_chat(struct xl *, struct json_object *);
struct json_object	*xl_chat_to_respans(struct xl *, struct json_object *,
			    const char *);

#endif
