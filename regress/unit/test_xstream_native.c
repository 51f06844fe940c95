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
 * test_xstream_native.c: a streamed code-execution answer for a caller
 * that declared the provider's own tool, as fe_coderun.c makes it: the
 * runs' native blocks (fe_coderun_native.c) put first with
 * xstream_prepend, then the model's last answer replayed.  The events
 * are checked in order, by index and sequence number, and folded the
 * way the SDKs' stream helpers fold them: the result must equal the
 * whole (non-streamed) answer's blocks.
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "wire/xstream.h"
#include "fe_coderun.h"
#include "t.h"

/* The events out: [{event, data}], data parsed. */
static void
rec_emit(void *arg, const char *event, const char *data, size_t len)
{
	struct json_object	*ev, *js;

	if ((js = json_tokener_parse(data)) == NULL || strlen(data) != len)
		abort();
	ev = xstream_object("event", XSTREAM_STR(event ? event : ""), "data",
	    js, NULL);
	json_object_array_add(arg, ev);
}

static struct json_object *
J(const char *s)
{
	struct json_object	*o = json_tokener_parse(s);

	if (o == NULL)
		abort();
	return o;
}

/* The events' names, joined with commas. */
static const char *
names(struct json_object *evs)
{
	static char	 buf[4096];
	size_t		 i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < json_object_array_length(evs); i++)
		len += snprintf(buf + len, sizeof(buf) - len, "%s%s",
		    i ? "," : "", xstream_str(json_object_array_get_idx(evs, i),
		    "event"));
	return buf;
}

static struct json_object *
ev_data(struct json_object *evs, size_t i)
{
	return xstream_get(json_object_array_get_idx(evs, i), "data");
}

/* Two runs: one drew a file, one printed and failed. */
static struct json_object *
two_runs(void)
{
	struct json_object	*runs = json_object_new_array(), *c, *r;

	c = J("{\"id\":\"c1\",\"code\":\"plot()\\nprint(\\\"ok\\\")\"}");
	r = J("{\"result_block\":{\"content\":{\"stdout\":\"ok\\n\","
	    "\"stderr\":\"\",\"return_code\":0}},\"outputs\":[{\"path\":"
	    "\"chart.png\",\"filename\":\"chart.png\",\"file_id\":"
	    "\"file-abc\"}]}");
	native_record(runs, c, r, NULL);
	json_object_put(c);
	json_object_put(r);
	c = J("{\"id\":\"c2\",\"code\":\"1/0\"}");
	r = J("{\"result_block\":{\"content\":{\"stdout\":\"\",\"stderr\":"
	    "\"ZeroDivisionError\\n\",\"return_code\":1}},\"outputs\":[]}");
	native_record(runs, c, r, NULL);
	json_object_put(c);
	json_object_put(r);
	return runs;
}

/* The model's last answer, as the upstream gave it. */
static const char completion[] = "{\"id\":\"chatcmpl-9\",\"object\":"
    "\"chat.completion\",\"created\":1764590000,\"model\":\"remote-m\","
    "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
    "\"content\":\"Here: chart.png (file_id: file-abc)\"},"
    "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":12,"
    "\"completion_tokens\":7,\"total_tokens\":19}}";

/* fe_coderun.c's order: new, prepend, replay, end.  The rc of each. */
static int
stream(enum wire to, struct json_object *list, struct json_object *evs)
{
	struct xstream		*xs;
	struct json_object	*ans = J(completion);
	int			 rc;

	if ((xs = xstream_new(WIRE_CHAT, to, "caller-m", rec_emit,
	    evs)) == NULL)
		abort();
	rc = xstream_prepend(xs, list);
	if (rc == 0)
		rc = xstream_replay(xs, ans);
	if (rc == 0)
		rc = xstream_end(xs);
	xstream_free(xs);
	json_object_put(ans);
	return rc;
}

/*
 * The content the Anthropic SDK's MessageStream builds: a block per
 * start, text deltas appended, a tool's input_json_delta fragments
 * parsed when its block stops.
 */
static struct json_object *
msg_fold(struct json_object *evs)
{
	struct json_object	*content = json_object_new_array(), *d, *b;
	char			 json[4096], text[4096];
	const char		*type, *s;
	size_t			 i;

	json[0] = '\0';
	for (i = 0; i < json_object_array_length(evs); i++) {
		d = ev_data(evs, i);
		type = xstream_str(d, "type");
		b = json_object_array_get_idx(content, xstream_int(d, "index"));
		if (strcmp(type, "content_block_start") == 0)
			json_object_array_add(content, json_object_get(
			    xstream_get(d, "content_block")));
		else if (strcmp(type, "content_block_delta") == 0 &&
		    (s = xstream_str(d, "delta.text")) != NULL) {
			snprintf(text, sizeof(text), "%s%s",
			    xstream_str(b, "text"), s);
			json_object_object_add(b, "text", XSTREAM_STR(text));
		} else if (strcmp(type, "content_block_delta") == 0 &&
		    (s = xstream_str(d, "delta.partial_json")) != NULL)
			strlcat(json, s, sizeof(json));
		else if (strcmp(type, "content_block_stop") == 0 &&
		    json[0] != '\0') {
			json_object_object_add(b, "input", J(json));
			json[0] = '\0';
		}
	}
	return content;
}

static void
test_messages(void)
{
	struct json_object	*runs = two_runs(), *list, *evs, *content;
	struct json_object	*whole;
	static const int	 index[] = { 0, 0, 0, 1, 1, 2, 2, 2, 3, 3, 4,
				    4, 4 };
	size_t			 i;
	int			 bad = 0;

	list = native_blocks(WIRE_MESSAGES, runs, 0, 1);
	evs = json_object_new_array();
	T_EQ_INT(stream(WIRE_MESSAGES, list, evs), 0, "messages: streamed");
	T_EQ_STR(names(evs), "message_start,"
	    "content_block_start,content_block_delta,content_block_stop,"
	    "content_block_start,content_block_stop,"
	    "content_block_start,content_block_delta,content_block_stop,"
	    "content_block_start,content_block_stop,"
	    "content_block_start,content_block_delta,content_block_stop,"
	    "message_delta,message_stop", "messages: each run's use and "
	    "result, then the model's text");
	T_EQ_STR(xstream_str(ev_data(evs, 1), "content_block.type"),
	    "server_tool_use", "messages: server_tool_use first");
	T_EQ_STR(xstream_str(ev_data(evs, 1), "content_block.name"),
	    "code_execution", "messages: named code_execution");
	T_EQ_INT(json_object_object_length(xstream_get(ev_data(evs, 1),
	    "content_block.input")), 0, "messages: its input {} at start");
	T_EQ_STR(xstream_str(ev_data(evs, 2), "delta.type"), "input_json_delta",
	    "messages: the input as input_json_delta");
	T_EQ_STR(xstream_str(ev_data(evs, 2), "delta.partial_json"),
	    "{\"code\":\"plot()\\nprint(\\\"ok\\\")\"}",
	    "messages: the whole input in one fragment");
	T_EQ_STR(xstream_str(ev_data(evs, 4), "content_block.type"),
	    "code_execution_tool_result", "messages: then its result");
	T_EQ_STR(xstream_str(ev_data(evs, 4),
	    "content_block.content.content.0.file_id"), "file-abc",
	    "messages: the result lists the file id");
	T_EQ_STR(xstream_str(ev_data(evs, 4), "content_block.tool_use_id"),
	    xstream_str(ev_data(evs, 1), "content_block.id"),
	    "messages: the result names its use");
	for (i = 1; i < 14; i++)
		if (xstream_int(ev_data(evs, i), "index") != index[i - 1])
			bad++;
	T_EQ_INT(bad, 0, "messages: indices 0,0,0,1,1,2,2,2,3,3,4,4,4");
	T_EQ_STR(xstream_str(ev_data(evs, 11), "content_block.type"), "text",
	    "messages: the model's text at index 4");
	T_EQ_STR(xstream_str(ev_data(evs, 14), "delta.stop_reason"), "end_turn",
	    "messages: end_turn");

	content = msg_fold(evs);
	whole = J("{\"content\":[{\"type\":\"text\",\"text\":"
	    "\"Here: chart.png (file_id: file-abc)\"}]}");
	native_prepend(WIRE_MESSAGES, whole, runs, 1);
	T_OK(json_object_equal(content, xstream_get(whole, "content")),
	    "messages: folded as the SDK does, the same blocks as the "
	    "whole answer: %s", json_object_to_json_string(content));
	json_object_put(content);
	json_object_put(whole);
	json_object_put(evs);
	json_object_put(list);
	json_object_put(runs);
}

static void
test_responses(void)
{
	struct json_object	*runs = two_runs(), *list, *evs, *d, *out;
	size_t			 i, n;
	int			 bad = 0;

	list = native_blocks(WIRE_RESPONSES, runs, 0, 1);
	evs = json_object_new_array();
	T_EQ_INT(stream(WIRE_RESPONSES, list, evs), 0, "responses: streamed");
#define CI(n) "response.output_item.added,"				\
	"response.code_interpreter_call.in_progress,"			\
	"response.code_interpreter_call_code.delta,"			\
	"response.code_interpreter_call_code.done,"			\
	"response.code_interpreter_call.interpreting,"			\
	"response.code_interpreter_call.completed,"			\
	"response.output_item.done,"
	T_EQ_STR(names(evs), "response.created,response.in_progress,"
	    CI(0) CI(1) "response.output_item.added,"
	    "response.content_part.added,response.output_text.delta,"
	    "response.output_text.done,response.content_part.done,"
	    "response.output_item.done,response.completed",
	    "responses: each run's code_interpreter_call, then the message");
#undef CI
	n = json_object_array_length(evs);
	for (i = 0; i < n; i++) {
		d = ev_data(evs, i);
		if (xstream_int(d, "sequence_number") != (int64_t)i ||
		    !json_object_equal(xstream_get(d, "type"), xstream_get(
		    json_object_array_get_idx(evs, i), "event")))
			bad++;
	}
	T_EQ_INT(bad, 0, "responses: sequence numbers 0.., type = event");
	d = ev_data(evs, 2);
	T_EQ_INT(xstream_int(d, "output_index"), 0, "responses: run 1 at 0");
	T_EQ_STR(xstream_str(d, "item.status"), "in_progress",
	    "responses: announced in progress");
	T_EQ_STR(xstream_str(d, "item.code"), "",
	    "responses: without its code");
	T_OK(json_object_object_get_ex(xstream_get(d, "item"), "outputs",
	    NULL) &&
	    xstream_get(d, "item.outputs") == NULL, "responses: outputs null");
	for (i = 3, bad = 0; i < 9; i++)
		if (!json_object_equal(xstream_get(ev_data(evs, i), "item_id"),
		    xstream_get(d, "item.id")) &&
		    !json_object_equal(xstream_get(ev_data(evs, i), "item.id"),
		    xstream_get(d, "item.id")))
			bad++;
	T_EQ_INT(bad, 0, "responses: every event names the item");
	T_EQ_STR(xstream_str(ev_data(evs, 4), "delta"),
	    "plot()\nprint(\"ok\")", "responses: the code as a delta");
	T_EQ_STR(xstream_str(ev_data(evs, 5), "code"), "plot()\nprint(\"ok\")",
	    "responses: and done");
	T_EQ_INT(xstream_int(ev_data(evs, 9), "output_index"), 1,
	    "responses: run 2 at 1");
	T_EQ_INT(xstream_int(ev_data(evs, 16), "output_index"), 2,
	    "responses: the message at 2");
	T_EQ_INT(xstream_int(ev_data(evs, 18), "output_index"), 2,
	    "responses: its text delta at 2");
	out = xstream_get(ev_data(evs, n - 1), "response.output");
	T_EQ_INT(json_object_array_length(out), 3, "responses: completed "
	    "lists 3 items");
	T_OK(json_object_equal(json_object_array_get_idx(out, 0),
	    json_object_array_get_idx(list, 0)) &&
	    json_object_equal(json_object_array_get_idx(out, 1),
	    json_object_array_get_idx(list, 1)) &&
	    json_object_equal(xstream_get(ev_data(evs, 8), "item"),
	    json_object_array_get_idx(list, 0)) &&
	    json_object_equal(xstream_get(ev_data(evs, 15), "item"),
	    json_object_array_get_idx(list, 1)),
	    "responses: each run's item done whole, the same in completed");
	T_OK(strstr(xstream_str(out, "0.outputs.0.logs"),
	    "chart.png (file_id: file-abc)") != NULL,
	    "responses: the logs name the file id");
	T_EQ_STR(xstream_str(out, "2.type"), "message",
	    "responses: the message "
	    "last");
	T_EQ_STR(xstream_str(out, "2.id"), xstream_str(ev_data(evs, 16),
	    "item.id"),
	    "responses: with the id it was announced under");
	json_object_put(evs);
	json_object_put(list);
	json_object_put(runs);
}

/* Where nothing can be put first, nothing is. */
static void
test_refused(void)
{
	struct json_object	*runs = two_runs(), *list, *evs, *empty;
	struct xstream		*xs;

	list = native_blocks(WIRE_MESSAGES, runs, 0, 1);
	T_OK(native_blocks(WIRE_CHAT, runs, 0, 1) == NULL, "chat: no blocks");
	evs = json_object_new_array();
	T_EQ_INT(stream(WIRE_CHAT, list, evs), -1, "chat: refused");
	T_EQ_INT(json_object_array_length(evs), 0, "chat: nothing sent");
	json_object_put(evs);

	evs = json_object_new_array();
	xs = xstream_new(WIRE_MESSAGES, WIRE_MESSAGES, "m", rec_emit, evs);
	T_EQ_INT(xstream_prepend(xs, list), -1, "pass-through: refused");
	xstream_free(xs);

	xs = xstream_new(WIRE_CHAT, WIRE_MESSAGES, "m", rec_emit, evs);
	xstream_event(xs, "", "{\"choices\":[{\"index\":0,\"delta\":"
	    "{\"content\":\"Hi\"}}]}", 46);
	T_EQ_INT(xstream_prepend(xs, list), -1, "messages: refused once "
	    "the model's text began");
	xstream_free(xs);
	json_object_put(evs);

	evs = json_object_new_array();
	empty = json_object_new_array();
	T_EQ_INT(stream(WIRE_RESPONSES, empty, evs), 0, "no runs: streamed");
	T_EQ_INT(xstream_int(ev_data(evs, 2), "output_index"), 0,
	    "no runs: the message at 0");
	json_object_put(empty);
	json_object_put(evs);
	json_object_put(list);
	json_object_put(runs);
}

int
main(void)
{
	test_messages();
	test_responses();
	test_refused();
	return t_done();
}
