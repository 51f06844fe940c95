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
 * xlate.h: the parts the request and answer translators share; private
 * to xlate*.c.  The files call one way: xlate.c (the entry points)
 * into the dialects (xlate_messages_to_chat.c,
 * xlate_messages_from_chat.c, xlate_responses.c), they into the hub's
 * dialect (xlate_chat.c), and all of them into xlate_json.c.
 */
#ifndef DEPOTD_XLATE_H
#define DEPOTD_XLATE_H

#include <stdint.h>

#include <json-c/json.h>

/* One translation under way: where its error message goes. */
struct xlate {
	char		*err;
	size_t		 errlen;
};

#define XLATE_ID_LEN	64	/* an id we make, with its prefix */

/* xlate_json.c */

/* Sets the error message; always -1. */
int			 xlate_fail(struct xlate *, const char *, ...)
			    __attribute__((__format__(printf, 2, 3)));
/* Puts "where: " before the error message; always -1. */
int			 xlate_where(struct xlate *, const char *, ...)
			    __attribute__((__format__(printf, 2, 3)));
/* o[key], NULL when o is not an object or key is absent or null. */
struct json_object	*xlate_get(struct json_object *, const char *);
/* o[key] when a string, else NULL. */
const char		*xlate_str(struct json_object *, const char *);
int			 xlate_is(struct json_object *, json_type);
/* A deep copy; NULL for NULL (JSON null). */
struct json_object	*xlate_dup(struct json_object *);
/* dst[dkey] = a copy of src[skey], when src has it. */
void			 xlate_copy(struct json_object *, const char *,
			    struct json_object *, const char *);
void			 xlate_set_str(struct json_object *, const char *,
			    const char *);
/* prefix followed by 24 random hex digits. */
void			 xlate_id(char *, size_t, const char *);

/* A function call's arguments: the object, from its JSON text. */
struct json_object	*xlate_args_parse(const char *);
/* ... and back to text. */
struct json_object	*xlate_args_string(struct json_object *);

/*
 * "data:MT;base64,DATA": the media type into mt and a pointer to DATA,
 * which stays opaque (it may be a placeholder).  0, or -1 when url is
 * not a base64 data: URL.
 */
int			 xlate_data_url(const char *, char *, size_t,
			    const char **);
struct json_object	*xlate_data_url_new(const char *, const char *);

/*
 * The text of every item of arr whose type is one of those in types
 * (NULL-terminated), joined with sep; items of other types are
 * counted in *other.  NULL when arr is not an array.
 */
struct json_object	*xlate_join_text(struct json_object *,
			    const char *const *, const char *, int *);
/* {"type": type, key: val} */
struct json_object	*xlate_part(const char *, const char *,
			    struct json_object *);

/*
 * out["tools"]: each of req's tools through conv, which refuses one
 * (NULL, with a message) that the target cannot express.  Without
 * tools, out has no "tools", and the caller then leaves out the
 * tool_choice and parallel_tool_calls the targets refuse alone.
 */
int			 xlate_tools(struct xlate *, struct json_object *,
			    struct json_object *, struct json_object *(*)(
			    struct xlate *, struct json_object *));
/* o[key] as a token count, 0 when it is none (wire_tokens). */
int64_t			 xlate_tokens(struct json_object *, const char *);

/* xlate_chat.c */

/* Chat messages: a new one, and a tool result among them. */
struct json_object	*xlate_chat_message(const char *, struct json_object *);
/*
 * Appends to msgs the role:tool message for call_id carrying the text
 * parts of parts (a string or an array of chat parts); the others
 * (images, files) go to user_parts, for a user message after the tool
 * messages, since chat takes only text in a tool message.
 */
int			 xlate_chat_tool_result(struct xlate *,
			    struct json_object *, const char *,
			    struct json_object *, int, struct json_object *);
/* A chat function tool from a flat {name, description, schema}. */
struct json_object	*xlate_chat_function(struct xlate *,
			    struct json_object *, const char *);
/* stream, and the usage chunk a streamed chat answer needs. */
void			 xlate_chat_stream(struct json_object *,
			    struct json_object *);

/*
 * The parts of a chat answer the other dialects carry: text is a
 * reference the reader puts, the rest is borrowed from resp.
 */
struct xlate_chat_answer {
	struct json_object	*resp;
	struct json_object	*text;		/* string, or NULL */
	struct json_object	*refusal;	/* string, or NULL */
	struct json_object	*calls;		/* array, or NULL */
	const char		*finish;	/* "" when absent */
	struct json_object	*usage;		/* object, or NULL */
};
int			 xlate_chat_answer_read(struct xlate *,
			    struct json_object *, struct xlate_chat_answer *);

/* xlate_messages_to_chat.c */
struct json_object	*xlate_messages_request_to_chat(struct xlate *,
			    struct json_object *);
struct json_object	*xlate_messages_answer_to_chat(struct xlate *,
			    struct json_object *, const char *);

/* xlate_messages_from_chat.c */
struct json_object	*xlate_messages_request_from_chat(struct xlate *,
			    struct json_object *, int);
struct json_object	*xlate_messages_answer_from_chat(struct xlate *,
			    struct json_object *, const char *);

/* xlate_responses.c */
struct json_object	*xlate_responses_request_to_chat(struct xlate *,
			    struct json_object *);
struct json_object	*xlate_responses_answer_from_chat(struct xlate *,
			    struct json_object *, const char *);

#endif
