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
 * test_xlate_ans.c: answers between chat completions, Responses and
 * Messages (xlate_response, xlate_usage): shapes, stop reasons, usage,
 * generated ids, and malformed upstream answers refused.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "wire/wire.h"
#include "tjson.h"

static char	 err[256];

static struct json_object *
ans(enum wire from, enum wire to, const char *in)
{
	struct json_object	*o = J(in), *out;

	err[0] = '\0';
	out = xlate_response(from, to, o, "caller-model", err, sizeof(err));
	json_object_put(o);
	return out;
}

static void
ans_fails(enum wire from, enum wire to, const char *in, const char *what)
{
	struct json_object	*out = ans(from, to, in);

	T_OK(out == NULL && err[0] != '\0', "%s (err \"%s\")", what, err);
	json_object_put(out);
}

/* The id (and time) a translated answer carries, checked and taken out. */
static struct json_object *
ans_noid(enum wire from, enum wire to, const char *in, const char *what)
{
	struct json_object	*out = ans(from, to, in);
	const char		*prefix = to == WIRE_CHAT ? "chatcmpl-" :
	    to == WIRE_MESSAGES ? "msg_" : "resp_";
	int			 ok;

	if (out == NULL)
		return NULL;
	ok = take(out, "id", prefix);
	if (to == WIRE_CHAT)
		ok = ok && take(out, "created", NULL);
	if (to == WIRE_RESPONSES)
		ok = ok && take(out, "created_at", NULL);
	T_OK(ok, "%s: a fresh %s id", what, prefix);
	return out;
}

static const char *chat_tool_answer =
    "{'id':'chatcmpl-up','object':'chat.completion','created':1700000000,"
    "'model':'remote','choices':[{'index':0,'message':{'role':'assistant',"
    "'content':'Let me look.','tool_calls':[{'id':'call_9','type':"
    "'function','function':{'name':'get','arguments':"
    "'{\\'city\\':\\'Oslo\\'}'}}]},'finish_reason':'tool_calls'}],"
    "'usage':{'prompt_tokens':30,'completion_tokens':12,'total_tokens':42,"
    "'prompt_tokens_details':{'cached_tokens':10}}}";

static void
test_chat_to_msg(void)
{
	struct json_object	*out;

	out = ans_noid(WIRE_CHAT, WIRE_MESSAGES, chat_tool_answer,
	    "chat->messages");
	same(out, "{'type':'message','role':'assistant','model':"
	    "'caller-model','content':[{'type':'text','text':'Let me look.'},"
	    "{'type':'tool_use','id':'call_9','name':'get','input':{'city':"
	    "'Oslo'}}],'stop_reason':'tool_use','stop_sequence':null,"
	    "'usage':{'input_tokens':20,'cache_creation_input_tokens':0,"
	    "'cache_read_input_tokens':10,'output_tokens':12}}", err,
	    "chat->messages: text and tool_use, usage with the cached part");
	json_object_put(out);

	out = ans_noid(WIRE_CHAT, WIRE_MESSAGES, "{'choices':[{'message':"
	    "{'role':'assistant','content':'cut'},'finish_reason':'length'}],"
	    "'usage':{'prompt_tokens':1,'completion_tokens':2}}",
	    "chat->messages length");
	same(out, "{'type':'message','role':'assistant','model':"
	    "'caller-model','content':[{'type':'text','text':'cut'}],"
	    "'stop_reason':'max_tokens','stop_sequence':null,'usage':"
	    "{'input_tokens':1,'cache_creation_input_tokens':0,"
	    "'cache_read_input_tokens':0,'output_tokens':2}}", err,
	    "chat->messages: length is max_tokens");
	json_object_put(out);

	out = ans(WIRE_CHAT, WIRE_MESSAGES, "{'choices':[{'message':"
	    "{'role':'assistant','content':'a'},'finish_reason':'stop',"
	    "'stop_reason':'###'}]}");
	T_EQ_STR(json_object_get_string(json_object_object_get(out,
	    "stop_reason")), "stop_sequence", "chat->messages: vLLM's "
	    "matched stop string");
	T_EQ_STR(json_object_get_string(json_object_object_get(out,
	    "stop_sequence")), "###", "chat->messages: the sequence named");
	json_object_put(out);

	out = ans(WIRE_CHAT, WIRE_MESSAGES, "{'choices':[{'message':"
	    "{'role':'assistant','content':null,'refusal':'no'},"
	    "'finish_reason':'content_filter'}]}");
	T_EQ_STR(json_object_get_string(json_object_object_get(out,
	    "stop_reason")), "refusal", "chat->messages: content_filter");
	T_EQ_STR(S(json_object_object_get(out, "content")),
	    "[{\"type\":\"text\",\"text\":\"no\"}]",
	    "chat->messages: a refusal as text");
	json_object_put(out);

	out = ans(WIRE_CHAT, WIRE_MESSAGES, "{'choices':[{'message':"
	    "{'role':'assistant','content':''},'finish_reason':'stop'}]}");
	T_EQ_STR(S(json_object_object_get(out, "content")), "[]",
	    "chat->messages: empty text gives no block");
	T_EQ_STR(json_object_get_string(json_object_object_get(out,
	    "stop_reason")), "end_turn", "chat->messages: stop is end_turn");
	json_object_put(out);
}

static const char *msg_answer =
    "{'id':'msg_up','type':'message','role':'assistant','model':'remote',"
    "'content':[{'type':'thinking','thinking':'...','signature':'x'},"
    "{'type':'text','text':'Part one, '},{'type':'text','text':"
    "'part two.'},{'type':'tool_use','id':'toolu_5','name':'f','input':"
    "{'a':[1,'b/c']}}],'stop_reason':'tool_use','stop_sequence':null,"
    "'usage':{'input_tokens':5,'cache_read_input_tokens':7,"
    "'cache_creation_input_tokens':3,'output_tokens':4}}";

static void
test_msg_to_chat(void)
{
	struct json_object	*out;
	size_t			 i;
	static const char *stops[][2] = {
		{ "end_turn", "stop" }, { "stop_sequence", "stop" },
		{ "max_tokens", "length" }, { "tool_use", "tool_calls" },
		{ "refusal", "content_filter" }, { "pause_turn", "stop" },
	};
	char			 in[256];

	out = ans_noid(WIRE_MESSAGES, WIRE_CHAT, msg_answer,
	    "messages->chat");
	same(out, "{'object':'chat.completion','model':'caller-model',"
	    "'choices':[{'index':0,'message':{'role':'assistant','content':"
	    "'Part one, part two.','refusal':null,'tool_calls':[{'id':"
	    "'toolu_5','type':'function','function':{'name':'f','arguments':"
	    "'{\\'a\\':[1,\\'b/c\\']}'}}]},'logprobs':null,'finish_reason':"
	    "'tool_calls'}],'usage':{'prompt_tokens':15,'completion_tokens':4,"
	    "'total_tokens':19,'prompt_tokens_details':{'cached_tokens':7}}}",
	    err, "messages->chat: text joined, thinking dropped, tool call, "
	    "cached input counted in");
	json_object_put(out);

	for (i = 0; i < sizeof(stops) / sizeof(stops[0]); i++) {
		snprintf(in, sizeof(in), "{'type':'message','content':[],"
		    "'stop_reason':'%s','usage':{'input_tokens':1,"
		    "'output_tokens':1}}", stops[i][0]);
		out = ans(WIRE_MESSAGES, WIRE_CHAT, in);
		T_EQ_STR(json_object_get_string(json_object_object_get(
		    json_object_array_get_idx(json_object_object_get(out,
		    "choices"), 0), "finish_reason")), stops[i][1],
		    stops[i][0]);
		json_object_put(out);
	}
}

static void
test_to_responses(void)
{
	struct json_object	*out, *item;
	size_t			 i;
	static const char *ids[] = { "msg_", "fc_" };

	out = ans_noid(WIRE_CHAT, WIRE_RESPONSES, chat_tool_answer,
	    "chat->responses");
	for (i = 0; i < 2; i++) {
		item = json_object_array_get_idx(json_object_object_get(out,
		    "output"), i);
		T_OK(take(item, "id", ids[i]), "chat->responses: item %zu "
		    "has a %s id", i, ids[i]);
	}
	same(out, "{'object':'response','status':'completed',"
	    "'incomplete_details':null,'model':'caller-model','output':["
	    "{'type':'message','status':'completed','role':'assistant',"
	    "'content':[{'type':'output_text','text':'Let me look.',"
	    "'annotations':[],'logprobs':[]}]},"
	    "{'type':'function_call','status':'completed','call_id':'call_9',"
	    "'name':'get','arguments':'{\\'city\\':\\'Oslo\\'}'}],"
	    "'usage':{'input_tokens':30,'input_tokens_details':"
	    "{'cached_tokens':10},'output_tokens':12,'output_tokens_details':"
	    "{'reasoning_tokens':0},'total_tokens':42},"
	    "'background':false,'error':null,'instructions':null,"
	    "'max_output_tokens':null,"
	    "'metadata':{},'parallel_tool_calls':true,"
	    "'previous_response_id':null,'reasoning':{'effort':null,"
	    "'summary':null},'store':false,'temperature':null,'text':"
	    "{'format':{'type':'text'}},'tool_choice':'auto','tools':[],"
	    "'top_p':null,'truncation':'disabled'}", err,
	    "chat->responses: a message item and a function_call item");
	json_object_put(out);

	out = ans(WIRE_CHAT, WIRE_RESPONSES, "{'choices':[{'message':"
	    "{'role':'assistant','content':'trunc'},'finish_reason':"
	    "'length'}]}");
	T_EQ_STR(json_object_get_string(json_object_object_get(out,
	    "status")), "incomplete", "chat->responses: length incomplete");
	T_EQ_STR(S(json_object_object_get(out, "incomplete_details")),
	    "{\"reason\":\"max_output_tokens\"}",
	    "chat->responses: the reason named");
	item = json_object_array_get_idx(json_object_object_get(out,
	    "output"), 0);
	T_EQ_STR(json_object_get_string(json_object_object_get(item,
	    "status")), "incomplete", "chat->responses: the item too");
	T_OK(json_object_object_get(out, "usage") == NULL,
	    "chat->responses: no usage when the upstream gave none");
	json_object_put(out);

	out = ans(WIRE_CHAT, WIRE_RESPONSES, "{'choices':[{'message':"
	    "{'role':'assistant','content':null,'tool_calls':[{'id':'c',"
	    "'type':'function','function':{'name':'f'}}]},'finish_reason':"
	    "'tool_calls'}]}");
	item = json_object_object_get(out, "output");
	T_EQ_INT(json_object_array_length(item), 1,
	    "chat->responses: only calls, no empty message item");
	T_EQ_STR(json_object_get_string(json_object_object_get(
	    json_object_array_get_idx(item, 0), "arguments")), "{}",
	    "chat->responses: missing arguments are {}");
	json_object_put(out);

	out = ans(WIRE_MESSAGES, WIRE_RESPONSES, msg_answer);
	item = json_object_object_get(out, "output");
	T_EQ_INT(json_object_array_length(item), 2,
	    "messages->responses: a message and a call");
	T_EQ_STR(json_object_get_string(json_object_object_get(
	    json_object_array_get_idx(json_object_object_get(
	    json_object_array_get_idx(item, 0), "content"), 0), "text")),
	    "Part one, part two.", "messages->responses: the text");
	T_EQ_STR(json_object_get_string(json_object_object_get(
	    json_object_array_get_idx(item, 1), "call_id")), "toolu_5",
	    "messages->responses: the call id kept");
	T_EQ_INT(json_object_get_int(json_object_object_get(
	    json_object_object_get(out, "usage"), "input_tokens")), 15,
	    "messages->responses: input tokens with the cached ones");
	json_object_put(out);
}

static void
test_same(void)
{
	struct json_object	*out;
	enum wire		 w;

	static const char *const ids[] = {
		[WIRE_CHAT] = "chatcmpl-x",
		[WIRE_RESPONSES] = "resp_x",
		[WIRE_MESSAGES] = "msg_x",
	};
	char	 in[128], want[128];

	for (w = WIRE_CHAT; w <= WIRE_MESSAGES; w++) {
		snprintf(in, sizeof(in), "{'id':'%s','model':'remote',"
		    "'weird':[1,2]}", ids[w]);
		snprintf(want, sizeof(want), "{'id':'%s','model':"
		    "'caller-model','weird':[1,2]}", ids[w]);
		out = ans(w, w, in);
		same(out, want, err, "same dialect: a copy under the caller's "
		    "model name, its id kept");
		json_object_put(out);
	}
}

static void
test_malformed(void)
{
	ans_fails(WIRE_CHAT, WIRE_MESSAGES, "[]", "not an object");
	ans_fails(WIRE_CHAT, WIRE_MESSAGES, "{'id':'x'}", "no choices");
	ans_fails(WIRE_CHAT, WIRE_MESSAGES, "{'choices':[]}",
	    "empty choices");
	ans_fails(WIRE_CHAT, WIRE_RESPONSES, "{'choices':{}}",
	    "choices not an array");
	ans_fails(WIRE_CHAT, WIRE_MESSAGES, "{'choices':[7]}",
	    "a choice not an object");
	ans_fails(WIRE_CHAT, WIRE_MESSAGES, "{'choices':[{'message':"
	    "{'content':5}}]}", "content a number");
	ans_fails(WIRE_CHAT, WIRE_RESPONSES, "{'choices':[{'message':"
	    "{'content':'a','tool_calls':{}}}]}", "tool_calls not an array");
	ans_fails(WIRE_CHAT, WIRE_RESPONSES, "{'choices':[{'message':"
	    "{'content':'a','tool_calls':[{'function':{'name':'f'}}]}}]}",
	    "a tool call without an id");
	ans_fails(WIRE_CHAT, WIRE_MESSAGES, "{'choices':[{'message':"
	    "{'content':'a','tool_calls':[{'id':'c','function':{'name':'f',"
	    "'arguments':'{oops'}}]}}]}", "arguments that are not JSON");
	ans_fails(WIRE_CHAT, WIRE_MESSAGES, "{'choices':[{'message':"
	    "{'refusal':3}}]}", "refusal not a string");
	ans_fails(WIRE_MESSAGES, WIRE_CHAT, "{'type':'error','error':"
	    "{'type':'overloaded_error','message':'x'}}", "an error object");
	ans_fails(WIRE_MESSAGES, WIRE_CHAT, "{'type':'message','content':"
	    "'text'}", "content not an array");
	ans_fails(WIRE_MESSAGES, WIRE_RESPONSES, "{'content':[{'type':"
	    "'tool_use','name':'f','input':{}}]}", "tool_use without id");
	ans_fails(WIRE_MESSAGES, WIRE_CHAT, "{'content':[{'type':"
	    "'tool_use','id':'t','name':'f','input':[1]}]}",
	    "tool_use input not an object");
	ans_fails(WIRE_MESSAGES, WIRE_CHAT, "{'content':[{'text':'x'}]}",
	    "a block without a type");
	ans_fails(WIRE_RESPONSES, WIRE_CHAT, "{'object':'response'}",
	    "Responses answers are not translated");
}

static void
test_usage(void)
{
	struct json_object	*o;
	int64_t			 in, out;

	o = J("{'usage':{'prompt_tokens':3,'completion_tokens':4}}");
	xlate_usage(WIRE_CHAT, o, &in, &out);
	T_OK(in == 3 && out == 4, "usage: chat");
	json_object_put(o);
	o = J("{'usage':{'input_tokens':3,'output_tokens':4}}");
	xlate_usage(WIRE_RESPONSES, o, &in, &out);
	T_OK(in == 3 && out == 4, "usage: responses");
	json_object_put(o);
	o = J("{'usage':{'input_tokens':3,'cache_read_input_tokens':10,"
	    "'cache_creation_input_tokens':null,'output_tokens':4}}");
	xlate_usage(WIRE_MESSAGES, o, &in, &out);
	T_OK(in == 13 && out == 4, "usage: messages, cached input counted");
	json_object_put(o);
	o = J("{'usage':{'prompt_tokens':'3'}}");
	xlate_usage(WIRE_CHAT, o, &in, &out);
	T_OK(in == -1 && out == -1, "usage: wrong types are absent");
	json_object_put(o);
	o = J("{'choices':[]}");
	xlate_usage(WIRE_MESSAGES, o, &in, &out);
	T_OK(in == -1 && out == -1, "usage: none");
	json_object_put(o);
	xlate_usage(WIRE_CHAT, NULL, &in, &out);
	T_OK(in == -1 && out == -1, "usage: no answer at all");
}

int
main(void)
{
	test_chat_to_msg();
	test_msg_to_chat();
	test_to_responses();
	test_same();
	test_malformed();
	test_usage();
	return t_done();
}
