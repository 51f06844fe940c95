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
 * test_xstream.c: streamed answers from each upstream wire to each
 * caller wire, on recorded upstream streams fed through the SSE parser
 * whole and one byte at a time.  The events out are checked by name,
 * in order, and by the JSON fields the SDKs read.  With XSTREAM_DUMP
 * set to a directory, each translated stream is also written there as
 * the caller would receive it (regress/xstream feeds them to the SDKs).
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "sse.h"
#include "wire/xstream.h"
#include "t.h"
#include "xstream_rec.h"

#define CAP_MAX	128

struct cap {
	int			 n;
	char			*ev[CAP_MAX];	/* NULL: no event line */
	char			*data[CAP_MAX];
	struct json_object	*js[CAP_MAX];	/* NULL for [DONE] */
	char			 names[4096];
};

static void
cap_emit(void *arg, const char *event, const char *data, size_t len)
{
	struct cap	*c = arg;

	if (c->n >= CAP_MAX)
		abort();
	c->ev[c->n] = event ? strdup(event) : NULL;
	c->data[c->n] = strndup(data, len);
	c->js[c->n] = json_tokener_parse(c->data[c->n]);
	c->n++;
}

static void
cap_free(struct cap *c)
{
	int	 i;

	for (i = 0; i < c->n; i++) {
		free(c->ev[i]);
		free(c->data[i]);
		json_object_put(c->js[i]);
	}
	memset(c, 0, sizeof(*c));
}

/* A chat chunk in a word: what the SDK makes of it. */
static const char *
chat_word(struct json_object *js, const char *data)
{
	static char	 buf[64];
	const char	*r;

	if (js == NULL)
		return strcmp(data, "[DONE]") == 0 ? "DONE" : "junk";
	if (xstream_get(js, "error") != NULL)
		return "error";
	if (json_object_array_length(xstream_get(js, "choices")) == 0)
		return xstream_get(js, "usage") ? "usage" : "empty";
	if ((r = xstream_str(js, "choices.0.finish_reason")) != NULL) {
		snprintf(buf, sizeof(buf), "finish:%s", r);
		return buf;
	}
	if (xstream_get(js, "choices.0.delta.role") != NULL)
		return "role";
	if (xstream_get(js, "choices.0.delta.tool_calls.0.id") != NULL)
		return "tool";
	if (xstream_get(js, "choices.0.delta.tool_calls") != NULL)
		return "args";
	return "text";
}

/* The events' names joined with commas, chat chunks as words. */
static const char *
cap_names(struct cap *c)
{
	size_t	 len = 0;
	int	 i;

	c->names[0] = '\0';
	for (i = 0; i < c->n; i++)
		len += snprintf(c->names + len, sizeof(c->names) - len,
		    "%s%s", i ? "," : "", c->ev[i] ? c->ev[i] :
		    chat_word(c->js[i], c->data[i]));
	return c->names;
}

static void
cap_dump(struct cap *c, const char *name)
{
	const char	*dir;
	char		 path[512];
	FILE		*f;
	int		 i;

	if ((dir = getenv("XSTREAM_DUMP")) == NULL)
		return;
	snprintf(path, sizeof(path), "%s/%s.sse", dir, name);
	if ((f = fopen(path, "w")) == NULL)
		abort();
	for (i = 0; i < c->n; i++) {
		if (c->ev[i] != NULL)
			fprintf(f, "event: %s\n", c->ev[i]);
		fprintf(f, "data: %s\n\n", c->data[i]);
	}
	fclose(f);
}

static int
run_cb(void *arg, const char *event, const char *data, size_t len)
{
	return xstream_event(arg, event, data, len);
}

struct result {
	int	 feed;		/* sse_feed's result */
	int	 end;		/* xstream_end's */
	int64_t	 in, out;
};

/* The recorded stream rec through a translator, step bytes a read. */
static struct result
run(enum wire from, enum wire to, const char *rec, size_t step,
    struct cap *c)
{
	struct result		 r;
	struct xstream		*xs;
	struct sse_parser	*p;
	size_t			 len = strlen(rec), at, n;

	memset(c, 0, sizeof(*c));
	memset(&r, 0, sizeof(r));
	if ((xs = xstream_new(from, to, "caller-m", cap_emit, c)) == NULL ||
	    (p = sse_new(1 << 16, run_cb, xs)) == NULL)
		abort();
	xstream_caller_usage(xs, 1);	/* test_faith.c: when it did not */
	for (at = 0; at < len && r.feed == 0; at += n) {
		n = len - at < step ? len - at : step;
		r.feed = sse_feed(p, rec + at, n);
	}
	if (sse_finish(p) == -1 && r.feed == 0)
		r.feed = -2;
	r.end = xstream_end(xs);
	xstream_usage(xs, &r.in, &r.out);
	sse_free(p);
	xstream_free(xs);
	return r;
}

/* Runs whole and bytewise: both must give the same events. */
static struct result
run2(enum wire from, enum wire to, const char *rec, struct cap *c,
    const char *name)
{
	struct result	 r, r1;
	struct cap	 c1;
	char		 whole[4096];

	r1 = run(from, to, rec, 1, &c1);
	snprintf(whole, sizeof(whole), "%s", cap_names(&c1));
	r = run(from, to, rec, strlen(rec), c);
	T_EQ_STR(cap_names(c), whole, "one byte a read, the same events");
	T_OK(r.feed == r1.feed && r.end == r1.end, "and the same end");
	cap_free(&c1);
	cap_dump(c, name);
	return r;
}

static const char *
js_str(struct cap *c, int i, const char *path)
{
	return i < c->n ? xstream_str(c->js[i], path) : NULL;
}

static int64_t
js_int(struct cap *c, int i, const char *path)
{
	return i < c->n ? xstream_int(c->js[i], path) : -2;
}

/* For strings with newlines, which T_EQ_STR would print. */
static int
same(const char *a, const char *b)
{
	return a != NULL && strcmp(a, b) == 0;
}

static void
check_usage(struct result r, int64_t in, int64_t out)
{
	T_EQ_INT(r.in, in, "usage: tokens in");
	T_EQ_INT(r.out, out, "usage: tokens out");
}

/* Chat: one id and the caller's model in every chunk. */
static void
check_chat_chunks(struct cap *c)
{
	int	 i, bad = 0;

	for (i = 0; i < c->n - 1; i++)
		if (c->ev[i] != NULL ||
		    !same(js_str(c, i, "object"), "chat.completion.chunk") ||
		    !same(js_str(c, i, "model"), "caller-m") ||
		    !same(js_str(c, i, "id"), js_str(c, 0, "id")))
			bad++;
	T_EQ_INT(bad, 0, "chunks: no event line, one id, the caller's model");
	T_OK(strncmp(js_str(c, 0, "id") ? js_str(c, 0, "id") : "",
	    "chatcmpl-", 9) == 0, "a chat id");
}

static void
test_chat_pass(void)
{
	struct cap	 c;
	struct result	 r;

	r = run2(WIRE_CHAT, WIRE_CHAT, rec_chat_tools, &c, "chat-chat-tools");
	T_EQ_STR(cap_names(&c), "role,text,tool,args,args,args,tool,"
	    "finish:tool_calls,usage,DONE", "chat to chat: every chunk");
	T_EQ_INT(r.feed, 0, "no failure");
	T_EQ_INT(r.end, 0, "ended by [DONE]");
	check_usage(r, 12, 7);
	check_chat_chunks(&c);
	T_EQ_STR(js_str(&c, 0, "id"), "chatcmpl-up1", "the upstream's id "
	    "kept");
	T_EQ_STR(js_str(&c, 3, "choices.0.delta.tool_calls.0.function."
	    "arguments"), "{\"city\":", "fragments as sent");
	cap_free(&c);
}

static void
test_chat_out(void)
{
	struct cap	 c;
	struct result	 r;

	r = run2(WIRE_MESSAGES, WIRE_CHAT, rec_msg_text, &c, "msg-chat-text");
	T_EQ_STR(cap_names(&c), "role,text,text,finish:stop,usage,DONE",
	    "Messages to chat, text");
	T_EQ_INT(r.end, 0, "ended by message_stop");
	check_usage(r, 12, 7);
	check_chat_chunks(&c);
	T_EQ_STR(js_str(&c, 0, "choices.0.delta.role"), "assistant",
	    "the first chunk has the role");
	T_EQ_STR(js_str(&c, 0, "choices.0.delta.content"), "",
	    "and empty content");
	T_OK(same(js_str(&c, 2, "choices.0.delta.content"),
	    ", w\xc3\xb6rld \"q\"\n"), "text as sent");
	T_EQ_INT(js_int(&c, 4, "usage.prompt_tokens"), 12, "usage chunk in");
	T_EQ_INT(js_int(&c, 4, "usage.completion_tokens"), 7,
	    "usage chunk out");
	T_EQ_INT(js_int(&c, 4, "usage.total_tokens"), 19, "usage total");
	cap_free(&c);

	r = run2(WIRE_MESSAGES, WIRE_CHAT, rec_msg_tools, &c,
	    "msg-chat-tools");
	T_EQ_STR(cap_names(&c), "role,text,tool,args,args,tool,args,"
	    "finish:tool_calls,usage,DONE", "Messages to chat, tools; "
	    "thinking and empty fragments not sent");
	check_chat_chunks(&c);
	T_EQ_STR(js_str(&c, 2, "choices.0.delta.tool_calls.0.id"),
	    "toolu_a1", "the call's id");
	T_EQ_STR(js_str(&c, 2, "choices.0.delta.tool_calls.0.type"),
	    "function", "its type");
	T_EQ_STR(js_str(&c, 2, "choices.0.delta.tool_calls.0.function.name"),
	    "get_weather", "its name");
	T_EQ_INT(js_int(&c, 3, "choices.0.delta.tool_calls.0.index"), 0,
	    "fragments carry the index");
	T_OK(xstream_get(c.js[3], "choices.0.delta.tool_calls.0.id") == NULL,
	    "and no id");
	T_EQ_STR(js_str(&c, 4, "choices.0.delta.tool_calls.0.function."
	    "arguments"), " \"Paris\"}", "arguments as sent");
	T_EQ_INT(js_int(&c, 5, "choices.0.delta.tool_calls.0.index"), 1,
	    "the second call is index 1");
	cap_free(&c);
}

static void
test_messages_out(void)
{
	struct cap	 c;
	struct result	 r;
	int		 i, bad = 0;

	r = run2(WIRE_CHAT, WIRE_MESSAGES, rec_chat_text, &c, "chat-msg-text");
	T_EQ_STR(cap_names(&c), "message_start,content_block_start,"
	    "content_block_delta,content_block_delta,content_block_stop,"
	    "message_delta,message_stop", "chat to Messages, text");
	for (i = 0; i < c.n; i++)
		if (strcmp(js_str(&c, i, "type") ? js_str(&c, i, "type") :
		    "", c.ev[i]) != 0)
			bad++;
	T_EQ_INT(bad, 0, "every event's type is its name");
	T_EQ_STR(js_str(&c, 0, "message.model"), "caller-m", "the model");
	T_EQ_STR(js_str(&c, 0, "message.role"), "assistant", "the role");
	T_EQ_INT(json_object_array_length(xstream_get(c.js[0],
	    "message.content")), 0, "empty content");
	T_OK(strncmp(js_str(&c, 0, "message.id") ? js_str(&c, 0,
	    "message.id") : "", "msg_", 4) == 0, "a message id");
	T_EQ_STR(js_str(&c, 1, "content_block.type"), "text", "a text block");
	T_EQ_INT(js_int(&c, 1, "index"), 0, "at index 0");
	T_EQ_STR(js_str(&c, 2, "delta.type"), "text_delta", "text_delta");
	T_EQ_STR(js_str(&c, 2, "delta.text"), "Hello", "its text");
	T_EQ_STR(js_str(&c, 5, "delta.stop_reason"), "end_turn",
	    "stop -> end_turn");
	T_OK(xstream_get(c.js[5], "delta.stop_sequence") == NULL &&
	    json_object_object_get_ex(xstream_get(c.js[5], "delta"),
	    "stop_sequence", NULL), "stop_sequence null");
	T_EQ_INT(js_int(&c, 5, "usage.output_tokens"), 7, "output tokens");
	T_EQ_INT(js_int(&c, 5, "usage.input_tokens"), 12, "input tokens");
	check_usage(r, 12, 7);
	cap_free(&c);

	r = run2(WIRE_CHAT, WIRE_MESSAGES, rec_chat_tools, &c,
	    "chat-msg-tools");
	T_EQ_STR(cap_names(&c), "message_start,content_block_start,"
	    "content_block_delta,content_block_stop,content_block_start,"
	    "content_block_delta,content_block_delta,content_block_delta,"
	    "content_block_stop,content_block_start,content_block_delta,"
	    "content_block_stop,message_delta,message_stop",
	    "chat to Messages, tools");
	T_EQ_STR(js_str(&c, 4, "content_block.type"), "tool_use", "tool_use");
	T_EQ_STR(js_str(&c, 4, "content_block.id"), "call_a1", "its id");
	T_EQ_STR(js_str(&c, 4, "content_block.name"), "get_weather",
	    "its name");
	T_EQ_INT(js_int(&c, 4, "index"), 1, "block 1");
	T_EQ_STR(js_str(&c, 5, "delta.type"), "input_json_delta",
	    "input_json_delta");
	T_EQ_STR(js_str(&c, 5, "delta.partial_json"), "{\"city\":",
	    "partial_json");
	T_EQ_INT(js_int(&c, 10, "index"), 2, "the second call, block 2");
	T_EQ_STR(js_str(&c, 12, "delta.stop_reason"), "tool_use",
	    "tool_calls -> tool_use");
	cap_free(&c);

	r = run2(WIRE_MESSAGES, WIRE_MESSAGES, rec_msg_tools, &c,
	    "msg-msg-tools");
	T_EQ_INT(c.n, 18, "Messages to Messages: every event");
	T_EQ_STR(js_str(&c, 0, "message.model"), "caller-m", "the model "
	    "put back");
	T_EQ_STR(js_str(&c, 1, "content_block.type"), "thinking",
	    "thinking passes");
	T_EQ_STR(c.ev[17], "message_stop", "to message_stop");
	check_usage(r, 12, 7);
	cap_free(&c);
}

/* Responses: sequence numbers, type = name, items as announced. */
static void
check_responses(struct cap *c, int items)
{
	struct json_object	*out;
	int			 i, bad = 0, seq = 0, idx;
	char			 path[64];

	for (i = 0; i < c->n; i++)
		if (js_int(c, i, "sequence_number") != seq++ ||
		    strcmp(js_str(c, i, "type") ? js_str(c, i, "type") : "",
		    c->ev[i]) != 0)
			bad++;
	T_EQ_INT(bad, 0, "sequence numbers from 0; type = event name");
	T_EQ_STR(js_str(c, 0, "response.model"), "caller-m", "the model");
	T_EQ_STR(js_str(c, 0, "response.status"), "in_progress", "created");
	out = xstream_get(c->js[c->n - 1], "response.output");
	T_EQ_INT(json_object_array_length(out), items, "completed: items");
	for (i = 0, bad = 0; i < c->n; i++) {
		if (strcmp(c->ev[i], "response.output_item.done") != 0)
			continue;
		idx = js_int(c, i, "output_index");
		snprintf(path, sizeof(path), "%d", idx);
		if (!json_object_equal(xstream_get(c->js[i], "item"),
		    xstream_get(out, path)))
			bad++;
	}
	T_EQ_INT(bad, 0, "each item done equals the completed one");
	T_EQ_STR(js_str(c, 0, "response.id"), js_str(c, c->n - 1,
	    "response.id"), "one response id");
}

static void
test_responses_out(void)
{
	struct cap	 c;
	struct result	 r;

	r = run2(WIRE_CHAT, WIRE_RESPONSES, rec_chat_text, &c,
	    "chat-resp-text");
	T_EQ_STR(cap_names(&c), "response.created,response.in_progress,"
	    "response.output_item.added,response.content_part.added,"
	    "response.output_text.delta,response.output_text.delta,"
	    "response.output_text.done,response.content_part.done,"
	    "response.output_item.done,response.completed",
	    "chat to Responses, text");
	check_responses(&c, 1);
	T_OK(same(js_str(&c, 6, "text"), "Hello, w\xc3\xb6rld \"q\"\n"),
	    "output_text.done: the whole text");
	T_EQ_STR(js_str(&c, 4, "item_id"), js_str(&c, 2, "item.id"),
	    "deltas name the item");
	T_OK(same(js_str(&c, 9, "response.output.0.content.0.text"),
	    "Hello, w\xc3\xb6rld \"q\"\n"), "completed: the text");
	T_EQ_STR(js_str(&c, 9, "response.status"), "completed", "completed");
	T_EQ_INT(js_int(&c, 9, "response.usage.input_tokens"), 12,
	    "usage in");
	T_EQ_INT(js_int(&c, 9, "response.usage.output_tokens"), 7,
	    "usage out");
	check_usage(r, 12, 7);
	cap_free(&c);

	r = run2(WIRE_MESSAGES, WIRE_RESPONSES, rec_msg_tools, &c,
	    "msg-resp-tools");
	T_EQ_STR(cap_names(&c), "response.created,response.in_progress,"
	    "response.output_item.added,response.content_part.added,"
	    "response.output_text.delta,response.output_text.done,"
	    "response.content_part.done,response.output_item.done,"
	    "response.output_item.added,"
	    "response.function_call_arguments.delta,"
	    "response.function_call_arguments.delta,"
	    "response.function_call_arguments.done,"
	    "response.output_item.done,response.output_item.added,"
	    "response.function_call_arguments.delta,"
	    "response.function_call_arguments.done,"
	    "response.output_item.done,response.completed",
	    "Messages to Responses, tools");
	check_responses(&c, 3);
	T_EQ_STR(js_str(&c, 8, "item.type"), "function_call", "a call");
	T_EQ_STR(js_str(&c, 8, "item.call_id"), "toolu_a1", "its call_id");
	T_EQ_STR(js_str(&c, 8, "item.name"), "get_weather", "its name");
	T_EQ_STR(js_str(&c, 11, "arguments"), "{\"city\": \"Paris\"}",
	    "arguments done: whole");
	T_EQ_STR(js_str(&c, 17, "response.output.2.name"), "get_time",
	    "the second call in the completed response");
	check_usage(r, 12, 7);
	cap_free(&c);

	r = run2(WIRE_CHAT, WIRE_RESPONSES, rec_chat_tools, &c,
	    "chat-resp-tools");
	check_responses(&c, 3);
	cap_free(&c);

	r = run2(WIRE_RESPONSES, WIRE_RESPONSES, rec_resp_text, &c,
	    "resp-resp-text");
	T_EQ_INT(c.n, 9, "Responses to Responses: every event");
	T_EQ_INT(r.end, 0, "ended by response.completed");
	T_EQ_STR(js_str(&c, 8, "response.model"), "caller-m", "the model "
	    "put back");
	T_EQ_STR(js_str(&c, 4, "delta"), "Hi", "the rest as sent");
	check_usage(r, 12, 7);
	cap_free(&c);
}

/* A chat stream cut by max_tokens: finish_reason "length". */
static void
test_length(void)
{
	struct cap	 c;
	struct result	 r;
	char		 rec[sizeof(rec_chat_text) + 8], *p;

	snprintf(rec, sizeof(rec), "%s", rec_chat_text);
	p = strstr(rec, "\"stop\"");
	memcpy(p, "\"length\"", 8);
	snprintf(p + 8, sizeof(rec) - (p + 8 - rec), "%s",
	    strstr(rec_chat_text, "\"stop\"") + 6);
	run(WIRE_CHAT, WIRE_MESSAGES, rec, 9, &c);
	T_EQ_STR(js_str(&c, c.n - 2, "delta.stop_reason"), "max_tokens",
	    "length -> max_tokens");
	cap_free(&c);
	run(WIRE_CHAT, WIRE_RESPONSES, rec, 9, &c);
	T_EQ_STR(c.ev[c.n - 1], "response.incomplete", "length -> "
	    "response.incomplete");
	T_EQ_STR(js_str(&c, c.n - 1, "response.status"), "incomplete",
	    "status incomplete");
	T_EQ_STR(js_str(&c, c.n - 1, "response.incomplete_details.reason"),
	    "max_output_tokens", "reason max_output_tokens");
	cap_dump(&c, "chat-resp-length");
	cap_free(&c);
	r = run(WIRE_MESSAGES, WIRE_CHAT, strstr(rec_msg_text, "event: ping"),
	    9, &c);
	T_EQ_INT(r.feed, -1, "a delta for a block never started fails");
	cap_free(&c);
}

static void
test_failures(void)
{
	struct cap	 c;
	struct result	 r;
	char		 cut[sizeof(rec_chat_text)];
	const enum wire	 to[] = { WIRE_CHAT, WIRE_MESSAGES, WIRE_RESPONSES };
	size_t		 i;

	T_OK(xstream_new(WIRE_RESPONSES, WIRE_CHAT, "m", cap_emit, &c) ==
	    NULL, "Responses upstreams serve Responses callers only");
	for (i = 0; i < 3; i++) {
		r = run(WIRE_MESSAGES, to[i], rec_msg_error, 7, &c);
		T_EQ_INT(r.feed, -1, "Anthropic's event: error fails the feed");
		T_EQ_INT(r.end, -1, "and the end");
		cap_free(&c);
	}
	/* Cut after the finish chunk: no usage, no [DONE]. */
	snprintf(cut, sizeof(cut), "%.*s", (int)(strstr(rec_chat_text,
	    "\"stop\"") - rec_chat_text + 11), rec_chat_text);
	for (i = 0; i < 3; i++) {
		r = run(WIRE_CHAT, to[i], cut, 1000, &c);
		T_EQ_INT(r.feed, 0, "a cut stream reads");
		T_EQ_INT(r.end, -1, "but ends early");
		cap_free(&c);
	}
	r = run(WIRE_CHAT, WIRE_MESSAGES, CHUNK("{\"tool_calls\":[{"
	    "\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}")
	    "data: [DONE]\n\n", 100, &c);
	T_OK(js_str(&c, 1, "content_block.id") != NULL &&
	    strncmp(js_str(&c, 1, "content_block.id"), "call_", 5) == 0,
	    "a call without id or index gets an id");
	T_EQ_STR(js_str(&c, 2, "delta.partial_json"), "{}", "and its "
	    "arguments");
	T_EQ_INT(r.end, 0, "[DONE] alone ends the stream");
	cap_free(&c);
	r = run(WIRE_CHAT, WIRE_MESSAGES, "data: {\"error\":{\"message\":"
	    "\"boom\"}}\n\n", 100, &c);
	T_EQ_INT(r.feed, -1, "chat's data.error fails");
	cap_free(&c);
	r = run(WIRE_CHAT, WIRE_CHAT, "data: {\"a\":\n\n", 100, &c);
	T_EQ_INT(r.feed, -1, "JSON cut short fails");
	cap_free(&c);
	r = run(WIRE_CHAT, WIRE_RESPONSES, "data: [1]\n\n", 100, &c);
	T_EQ_INT(r.feed, -1, "data not an object fails");
	cap_free(&c);
	r = run(WIRE_CHAT, WIRE_CHAT, "data: [DONE]\n\ndata: {\"x\":1}\n\n",
	    100, &c);
	T_EQ_STR(cap_names(&c), "DONE", "nothing after the terminator");
	T_EQ_INT(r.end, 0, "and it ended well");
	T_EQ_INT(r.in, -1, "no usage: -1");
	cap_free(&c);
}

/* Each error after the stream's first events, for the SDKs too. */
static void
dump_error(enum wire to, int status, const char *msg, const char *rec,
    const char *name)
{
	struct cap	 c;

	run(WIRE_MESSAGES, to, rec, 10, &c);
	xstream_error(to, status, msg, cap_emit, &c);
	cap_dump(&c, name);
	cap_free(&c);
}

static void
test_errors(void)
{
	struct cap	 c;

	memset(&c, 0, sizeof(c));
	xstream_error(WIRE_CHAT, 502, "upstream failed", cap_emit, &c);
	xstream_error(WIRE_MESSAGES, 529, "busy", cap_emit, &c);
	xstream_error(WIRE_RESPONSES, 504, "stalled", cap_emit, &c);
	dump_error(WIRE_CHAT, 502, "upstream failed", rec_msg_error,
	    "err-chat");
	dump_error(WIRE_MESSAGES, 529, "busy", rec_msg_error, "err-msg");
	dump_error(WIRE_RESPONSES, 504, "stalled", rec_msg_error,
	    "err-resp");
	T_OK(c.ev[0] == NULL, "chat: no event line");
	T_EQ_STR(js_str(&c, 0, "error.message"), "upstream failed",
	    "chat: data.error.message");
	T_EQ_STR(js_str(&c, 0, "error.type"), "server_error", "and type");
	T_EQ_STR(c.ev[1], "error", "Messages: event: error");
	T_EQ_STR(js_str(&c, 1, "type"), "error", "type error");
	T_EQ_STR(js_str(&c, 1, "error.type"), "overloaded_error",
	    "529: overloaded_error");
	T_EQ_STR(js_str(&c, 1, "error.message"), "busy", "message");
	T_EQ_STR(c.ev[2], "error", "Responses: event: error");
	T_EQ_STR(js_str(&c, 2, "type"), "error", "type error");
	T_EQ_STR(js_str(&c, 2, "message"), "stalled", "message");
	T_OK(js_str(&c, 2, "code") != NULL, "a code");
	T_EQ_INT(js_int(&c, 2, "sequence_number"), 0, "a sequence number");
	cap_free(&c);
}

/* --- bounds (issue 18): an endless or over-full upstream --- */

struct count {
	long	 n;		/* events out */
	size_t	 bytes;
};

static void
count_emit(void *arg, const char *event, const char *data, size_t len)
{
	struct count	*c = arg;

	c->n++;
	c->bytes += len;
}

#define MSG_START_DATA "{\"type\":\"message_start\",\"message\":{"	\
	"\"id\":\"msg_up1\",\"type\":\"message\",\"role\":\"assistant\","	\
	"\"model\":\"remote-m\",\"content\":[],\"stop_reason\":null,"	\
	"\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}"

/* Feeds event i of an endless text stream; its xstream_event result. */
static int
feed_text(struct xstream *xs, enum wire from, long i)
{
	static char	 data[2048], fill[1025];

	memset(fill, 'x', sizeof(fill) - 1);
	if (from == WIRE_CHAT) {
		snprintf(data, sizeof(data), "{\"id\":\"c\",\"object\":"
		    "\"chat.completion.chunk\",\"created\":1,\"model\":\"r\","
		    "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%s\"},"
		    "\"finish_reason\":null}]}", fill);
		return xstream_event(xs, "", data, strlen(data));
	}
	if (i == 0)
		return xstream_event(xs, "message_start", MSG_START_DATA,
		    strlen(MSG_START_DATA));
	if (i == 1) {
		snprintf(data, sizeof(data), "{\"type\":"
		    "\"content_block_start\",\"index\":0,\"content_block\":"
		    "{\"type\":\"text\",\"text\":\"\"}}");
		return xstream_event(xs, "content_block_start", data,
		    strlen(data));
	}
	snprintf(data, sizeof(data), "{\"type\":\"content_block_delta\","
	    "\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":"
	    "\"%s\"}}", fill);
	return xstream_event(xs, "content_block_delta", data, strlen(data));
}

/* Feeds tool call i of a turn that makes one call after the other. */
static int
feed_tool(struct xstream *xs, enum wire from, long i)
{
	char	 data[512];

	if (from == WIRE_CHAT) {
		snprintf(data, sizeof(data), "{\"id\":\"c\",\"object\":"
		    "\"chat.completion.chunk\",\"created\":1,\"model\":\"r\","
		    "\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{"
		    "\"index\":%ld,\"id\":\"call_%ld\",\"type\":\"function\","
		    "\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]},"
		    "\"finish_reason\":null}]}", i, i);
		return xstream_event(xs, "", data, strlen(data));
	}
	if (i == 0 && xstream_event(xs, "message_start", MSG_START_DATA,
	    strlen(MSG_START_DATA)) == -1)
		return -1;
	snprintf(data, sizeof(data), "{\"type\":\"content_block_start\","
	    "\"index\":%ld,\"content_block\":{\"type\":\"tool_use\","
	    "\"id\":\"toolu_%ld\",\"name\":\"f\",\"input\":{}}}", i, i);
	return xstream_event(xs, "content_block_start", data, strlen(data));
}

static void
test_bounds(void)
{
	const enum wire	 w[] = { WIRE_CHAT, WIRE_MESSAGES, WIRE_RESPONSES };
	struct xstream	*xs;
	struct count	 c;
	char		 what[128];
	size_t		 f, t;
	long		 i;
	int		 rc;

	for (f = 0; f < 2; f++)
		for (t = 0; t < 3; t++) {
			memset(&c, 0, sizeof(c));
			xs = xstream_new(w[f], w[t], "m", count_emit, &c);
			xstream_limits(xs, 64 * 1024, 0);
			for (i = 0, rc = 0; i < 100000 && rc == 0; i++)
				rc = feed_text(xs, w[f], i);
			snprintf(what, sizeof(what), "endless %d -> %d: ends "
			    "at max-answer-size (after %ld events, %zu "
			    "bytes out)", (int)w[f], (int)w[t], i, c.bytes);
			T_OK(rc == -1 && i < 70, "%s", what);
			T_EQ_INT(xstream_limit(xs), XSTREAM_OVER_SIZE,
			    "and says so");
			T_OK(c.bytes < 4 * 64 * 1024,
			    "what went out is bounded");
			T_EQ_INT(xstream_end(xs), -1, "the stream did not end");
			xstream_free(xs);

			memset(&c, 0, sizeof(c));
			xs = xstream_new(w[f], w[t], "m", count_emit, &c);
			xstream_limits(xs, 0, 16);
			for (i = 0, rc = 0; i < 2000 && rc == 0; i++)
				rc = feed_tool(xs, w[f], i);
			snprintf(what, sizeof(what), "2000 calls %d -> %d: "
			    "the 17th fails (max-tool-calls 16)", (int)w[f],
			    (int)w[t]);
			T_OK(rc == -1 && i == 17, "%s", what);
			T_EQ_INT(xstream_limit(xs), XSTREAM_OVER_TOOLS,
			    "and says so");
			xstream_free(xs);

			/* No bound set: the translators' own, 128. */
			memset(&c, 0, sizeof(c));
			xs = xstream_new(w[f], w[t], "m", count_emit, &c);
			for (i = 0, rc = 0; i < 2000 && rc == 0; i++)
				rc = feed_tool(xs, w[f], i);
			T_OK(rc == -1 && i == XSTREAM_TOOLS_MAX + 1,
			    "2000 calls without a bound: the 129th fails");
			T_EQ_INT(xstream_limit(xs), XSTREAM_OVER_TOOLS,
			    "as a tool-call bound");
			xstream_free(xs);
		}
}

int
main(void)
{
	test_chat_pass();
	test_chat_out();
	test_messages_out();
	test_responses_out();
	test_length();
	test_failures();
	test_errors();
	test_bounds();
	return t_done();
}
