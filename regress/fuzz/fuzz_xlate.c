/* fuzz-sources: lib/jsontext.c lib/util.c lib/log.c cmd/depotd/wire/xlate.c cmd/depotd/wire/xlate_json.c cmd/depotd/wire/xlate_chat.c cmd/depotd/wire/xlate_messages_to_chat.c cmd/depotd/wire/xlate_messages_from_chat.c cmd/depotd/wire/xlate_responses.c cmd/depotd/wire/wire_words.c cmd/depotd/wire/wire_usage.c cmd/depotd/wire/wire_ids.c */
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
 * fuzz_xlate.c: the JSON request normaliser.  The input is parsed as
 * a request body is (json_text_parse, depth limit JSON_DEPTH_MAX) and
 * put through xlate_request for every pair of dialects, each result
 * through the way back, and through xlate_response and xlate_usage
 * likewise.  A
 * translation may refuse (NULL with a message) but must never return
 * something that is not an object, leave err empty on refusal, or
 * change its input; a same-dialect request must come back equal.
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "jsontext.h"
#include "wire/wire.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check(struct json_object *out, const char *err)
{
	if (out == NULL) {
		if (err[0] == '\0')
			abort();
		return;
	}
	if (!json_object_is_type(out, json_type_object))
		abort();
	/* What goes upstream or to the caller must serialise. */
	if (json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN) ==
	    NULL)
		abort();
}

static void
requests(struct json_object *in, int max_tokens)
{
	struct json_object	*out, *back;
	char			 err[256];
	int			 from, to;

	for (from = WIRE_CHAT; from <= WIRE_MESSAGES; from++)
		for (to = WIRE_CHAT; to <= WIRE_MESSAGES; to++) {
			out = xlate_request(from, to, in, max_tokens, err,
			    sizeof(err));
			check(out, err);
			if (out != NULL && from == to &&
			    !json_object_equal(out, in))
				abort();
			if (out != NULL && from != to) {
				back = xlate_request(to, from, out, max_tokens,
				    err, sizeof(err));
				check(back, err);
				json_object_put(back);
			}
			json_object_put(out);
		}
}

static void
answers(struct json_object *in)
{
	struct json_object	*out, *back;
	char			 err[256];
	int			 from, to;
	int64_t			 tin, tout;

	for (from = WIRE_CHAT; from <= WIRE_MESSAGES; from++) {
		xlate_usage(from, in, &tin, &tout);
		for (to = WIRE_CHAT; to <= WIRE_MESSAGES; to++) {
			out = xlate_response(from, to, in, "fuzz-model", err,
			    sizeof(err));
			check(out, err);
			if (out != NULL && from != to) {
				xlate_usage(to, out, &tin, &tout);
				back = xlate_response(to, from, out, "m", err,
				    sizeof(err));
				check(back, err);
				json_object_put(back);
			}
			json_object_put(out);
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_object	*in, *copy = NULL;

	/* As the model routes read a body. */
	if (size > 1 << 16 || (in = json_text_parse((const char *)data, size,
	    JSON_DEPTH_MAX)) == NULL)
		return 0;
	if (json_object_deep_copy(in, &copy, NULL) != 0)
		abort();
	/* A model's own max-tokens, and the default (conf_model_init). */
	requests(in, (int)size + 1);
	requests(in, 4096);
	answers(in);
	/* Translations read their input and never change it. */
	if (!json_object_equal(in, copy))
		abort();
	json_object_put(copy);
	json_object_put(in);
	return 0;
}
