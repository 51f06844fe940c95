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
 * test_xlate.c: requests between chat completions, Responses and
 * Messages (xlate_request): exact shapes, round trips, placeholders
 * carried through untouched, and requests that cannot be expressed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "config.h"
#include "wire/wire.h"
#include "tjson.h"

/* An upstream body placeholder stands for base64: xlate never looks inside. */
#define PH	"@@ubody:3:1048576@@"

static char	 err[256];

/* The max_tokens of mc, or of a model the configuration left alone. */
static int
max_tokens_of(const struct model_conf *mc)
{
	struct model_conf	 plain;

	if (mc != NULL)
		return mc->max_tokens;
	memset(&plain, 0, sizeof(plain));
	conf_model_init(&plain);
	return plain.max_tokens;
}

static struct json_object *
req(enum wire from, enum wire to, const char *in,
    const struct model_conf *mc)
{
	struct json_object	*o = J(in), *out;

	err[0] = '\0';
	out = xlate_request(from, to, o, max_tokens_of(mc), err,
	    sizeof(err));
	json_object_put(o);
	return out;
}

static void
req_is(enum wire from, enum wire to, const char *in, const char *want,
    const char *what)
{
	struct json_object	*out = req(from, to, in, NULL);

	same(out, want, err, what);
	json_object_put(out);
}

static void
req_fails(enum wire from, enum wire to, const char *in, const char *msg,
    const char *what)
{
	struct json_object	*out = req(from, to, in, NULL);

	T_OK(out == NULL && strstr(err, msg) != NULL, "%s (err \"%s\")",
	    what, err);
	json_object_put(out);
}

static void
test_msg_to_chat(void)
{
	req_is(WIRE_MESSAGES, WIRE_CHAT,
	    "{'model':'m','max_tokens':100,'system':'Be brief.',"
	    "'messages':[{'role':'user','content':'hi'}],'temperature':0.5,"
	    "'top_p':0.9,'top_k':5,'stop_sequences':['END'],'stream':true,"
	    "'metadata':{'user_id':'u1'},'thinking':{'type':'disabled'}}",
	    "{'model':'m','max_tokens':100,'messages':[{'role':'system',"
	    "'content':'Be brief.'},{'role':'user','content':'hi'}],"
	    "'temperature':0.5,'top_p':0.9,'stop':['END'],'user':'u1',"
	    "'stream':true,'stream_options':{'include_usage':true}}",
	    "messages->chat: system, sampling, stop, stream, user; top_k "
	    "and thinking dropped");
	req_is(WIRE_MESSAGES, WIRE_CHAT,
	    "{'model':'m','max_tokens':1,'system':[{'type':'text','text':"
	    "'A','cache_control':{'type':'ephemeral'}},{'type':'text',"
	    "'text':'B'}],'messages':[{'role':'user','content':"
	    "[{'type':'text','text':'x'}]}],'stream':false}",
	    "{'model':'m','max_tokens':1,'messages':[{'role':'system',"
	    "'content':'A\\nB'},{'role':'user','content':[{'type':'text',"
	    "'text':'x'}]}],'stream':false}",
	    "messages->chat: system blocks joined; no stream_options "
	    "unless streaming");
	req_is(WIRE_MESSAGES, WIRE_CHAT,
	    "{'model':'m','max_tokens':1,'messages':[{'role':'user',"
	    "'content':[{'type':'image','source':{'type':'base64',"
	    "'media_type':'image/png','data':'" PH "'}},"
	    "{'type':'image','source':{'type':'url','url':"
	    "'https://e.test/a.jpg'}},"
	    "{'type':'document','title':'r.pdf','cache_control':"
	    "{'type':'ephemeral'},'source':{'type':'base64','media_type':"
	    "'application/pdf','data':'" PH "'}},"
	    "{'type':'document','source':{'type':'base64','media_type':"
	    "'application/pdf','data':'JVBERi0='}},"
	    "{'type':'document','source':{'type':'text','media_type':"
	    "'text/plain','data':'plain words'}},"
	    "{'type':'document','source':{'type':'content','content':"
	    "[{'type':'text','text':'c1'}]}}]}]}",
	    "{'model':'m','max_tokens':1,'messages':[{'role':'user',"
	    "'content':[{'type':'image_url','image_url':{'url':"
	    "'data:image/png;base64," PH "'}},"
	    "{'type':'image_url','image_url':{'url':'https://e.test/a.jpg'}},"
	    "{'type':'file','file':{'filename':'r.pdf','file_data':"
	    "'data:application/pdf;base64," PH "'}},"
	    "{'type':'file','file':{'filename':'document.pdf','file_data':"
	    "'data:application/pdf;base64,JVBERi0='}},"
	    "{'type':'text','text':'plain words'},"
	    "{'type':'text','text':'c1'}]}]}",
	    "messages->chat: images and documents, placeholders kept");
}

static void
test_msg_to_chat_tools(void)
{
	req_is(WIRE_MESSAGES, WIRE_CHAT,
	    "{'model':'m','max_tokens':9,'messages':["
	    "{'role':'user','content':'weather?'},"
	    "{'role':'assistant','content':[{'type':'thinking','thinking':"
	    "'hmm','signature':'s'},{'type':'text','text':'Checking.'},"
	    "{'type':'tool_use','id':'toolu_1','name':'get','input':"
	    "{'city':'Oslo'}},{'type':'tool_use','id':'toolu_2','name':"
	    "'now','input':{}}]},"
	    "{'role':'user','content':[{'type':'tool_result','tool_use_id':"
	    "'toolu_1','content':'rain'},{'type':'tool_result',"
	    "'tool_use_id':'toolu_2','is_error':true,'content':[{'type':"
	    "'text','text':'no clock'},{'type':'image','source':{'type':"
	    "'base64','media_type':'image/gif','data':'R0l='}}]},"
	    "{'type':'text','text':'and?'}]}],"
	    "'tools':[{'name':'get','description':'Weather','input_schema':"
	    "{'type':'object','properties':{'city':{'type':'string'}}}},"
	    "{'name':'now','input_schema':{'type':'object'}}],"
	    "'tool_choice':{'type':'any','disable_parallel_tool_use':true}}",
	    "{'model':'m','max_tokens':9,'messages':["
	    "{'role':'user','content':'weather?'},"
	    "{'role':'assistant','content':'Checking.','tool_calls':["
	    "{'id':'toolu_1','type':'function','function':{'name':'get',"
	    "'arguments':'{\\'city\\':\\'Oslo\\'}'}},{'id':'toolu_2','type':"
	    "'function','function':{'name':'now','arguments':'{}'}}]},"
	    "{'role':'tool','tool_call_id':'toolu_1','content':'rain'},"
	    "{'role':'tool','tool_call_id':'toolu_2','content':"
	    "'[tool error] no clock'},"
	    "{'role':'user','content':[{'type':'image_url','image_url':"
	    "{'url':'data:image/gif;base64,R0l='}},{'type':'text','text':"
	    "'and?'}]}],"
	    "'tools':[{'type':'function','function':{'name':'get',"
	    "'description':'Weather','parameters':{'type':'object',"
	    "'properties':{'city':{'type':'string'}}}}},{'type':'function',"
	    "'function':{'name':'now','parameters':{'type':'object'}}}],"
	    "'tool_choice':'required','parallel_tool_calls':false}",
	    "messages->chat: tool use, results as role:tool, images after "
	    "them, thinking dropped, any->required");
	req_is(WIRE_MESSAGES, WIRE_CHAT,
	    "{'model':'m','max_tokens':1,'messages':[{'role':'user',"
	    "'content':'x'}],'tools':[{'type':'custom','name':'f',"
	    "'input_schema':{'type':'object'}}],'tool_choice':{'type':"
	    "'tool','name':'f'}}",
	    "{'model':'m','max_tokens':1,'messages':[{'role':'user',"
	    "'content':'x'}],'tools':[{'type':'function','function':{'name':"
	    "'f','parameters':{'type':'object'}}}],'tool_choice':{'type':"
	    "'function','function':{'name':'f'}}}",
	    "messages->chat: a named tool_choice");
	req_is(WIRE_MESSAGES, WIRE_CHAT,
	    "{'model':'m','max_tokens':1,'messages':[{'role':'user',"
	    "'content':'x'}],'tools':[{'name':'f','input_schema':{}}],"
	    "'tool_choice':{'type':'none'}}",
	    "{'model':'m','max_tokens':1,'messages':[{'role':'user',"
	    "'content':'x'}],'tools':[{'type':'function','function':{'name':"
	    "'f','parameters':{}}}],'tool_choice':'none'}",
	    "messages->chat: tool_choice none");
	req_is(WIRE_MESSAGES, WIRE_CHAT,
	    "{'model':'m','max_tokens':1,'messages':[{'role':'user',"
	    "'content':'x'}],'tools':[],'tool_choice':{'type':'any',"
	    "'disable_parallel_tool_use':true}}",
	    "{'model':'m','max_tokens':1,'messages':[{'role':'user',"
	    "'content':'x'}]}",
	    "messages->chat: no tools, no tool_choice, no "
	    "parallel_tool_calls (OpenAI refuses them alone)");
	req_is(WIRE_RESPONSES, WIRE_CHAT,
	    "{'model':'m','input':'x','tools':[],'tool_choice':'auto',"
	    "'parallel_tool_calls':false}",
	    "{'model':'m','messages':[{'role':'user','content':'x'}]}",
	    "responses->chat: the same without tools");
}

static void
test_chat_to_msg(void)
{
	struct model_conf	 mc;
	struct json_object	*out;

	req_is(WIRE_CHAT, WIRE_MESSAGES,
	    "{'model':'m','messages':[{'role':'system','content':'S1'},"
	    "{'role':'developer','content':[{'type':'text','text':'S2'}]},"
	    "{'role':'user','content':'hi'},{'role':'user','content':"
	    "[{'type':'text','text':'again'}]}],'temperature':1.7,"
	    "'top_p':0.5,'stop':'X','user':'u9','stream':true,"
	    "'stream_options':{'include_usage':true},'seed':3,'n':1,"
	    "'frequency_penalty':0.1,'metadata':{'a':'b'}}",
	    "{'model':'m','max_tokens':4096,'system':'S1\\nS2','messages':"
	    "[{'role':'user','content':[{'type':'text','text':'hi'},"
	    "{'type':'text','text':'again'}]}],'temperature':1.0,'top_p':0.5,"
	    "'stop_sequences':['X'],'metadata':{'user_id':'u9'},"
	    "'stream':true}",
	    "chat->messages: system and developer joined, users merged, "
	    "temperature capped, max_tokens defaulted, the rest dropped");

	memset(&mc, 0, sizeof(mc));
	mc.max_tokens = 1234;
	out = req(WIRE_CHAT, WIRE_MESSAGES, "{'model':'m','messages':"
	    "[{'role':'user','content':'q'}]}", &mc);
	same(out, "{'model':'m','max_tokens':1234,'messages':[{'role':"
	    "'user','content':'q'}]}", err,
	    "chat->messages: max_tokens from the model's max-tokens");
	json_object_put(out);
	out = req(WIRE_CHAT, WIRE_MESSAGES, "{'model':'m','max_tokens':5,"
	    "'max_completion_tokens':7,'messages':[{'role':'user',"
	    "'content':'q'}]}", &mc);
	same(out, "{'model':'m','max_tokens':7,'messages':[{'role':"
	    "'user','content':'q'}]}", err,
	    "chat->messages: max_completion_tokens wins, then max_tokens");
	json_object_put(out);

	req_is(WIRE_CHAT, WIRE_MESSAGES,
	    "{'model':'m','max_tokens':5,'messages':[{'role':'user',"
	    "'content':[{'type':'text','text':'look'},{'type':'image_url',"
	    "'image_url':{'url':'data:image/jpeg;base64," PH ",tail',"
	    "'detail':'high'}},{'type':'image_url','image_url':{'url':"
	    "'http://e.test/i.png'}},{'type':'file','file':{'filename':"
	    "'a.pdf','file_data':'data:application/pdf;base64," PH "'}},"
	    "{'type':'file','file':{'file_id':'file-abc'}},"
	    "{'type':'text','text':''}]}]}",
	    "{'model':'m','max_tokens':5,'messages':[{'role':'user',"
	    "'content':[{'type':'text','text':'look'},{'type':'image',"
	    "'source':{'type':'base64','media_type':'image/jpeg','data':"
	    "'" PH ",tail'}},{'type':'image','source':{'type':'url','url':"
	    "'http://e.test/i.png'}},{'type':'document','title':'a.pdf',"
	    "'source':{'type':'base64','media_type':'application/pdf',"
	    "'data':'" PH "'}},{'type':'document','source':{'type':'file',"
	    "'file_id':'file-abc'}}]}]}",
	    "chat->messages: data: URLs split at the first comma only, "
	    "files as documents, empty text dropped");
}

static void
test_data_urls(void)
{
	req_is(WIRE_CHAT, WIRE_MESSAGES,
	    "{'model':'m','max_tokens':5,'messages':[{'role':'user',"
	    "'content':[{'type':'image_url','image_url':{'url':"
	    "'data:image/svg+xml;charset=utf-8;base64,PHN2Zz4='}},"
	    "{'type':'image_url','image_url':'DATA:image/png;BASE64,,,'}]}]}",
	    "{'model':'m','max_tokens':5,'messages':[{'role':'user',"
	    "'content':[{'type':'image','source':{'type':'base64',"
	    "'media_type':'image/svg+xml','data':'PHN2Zz4='}},{'type':"
	    "'image','source':{'type':'base64','media_type':'image/png',"
	    "'data':',,'}}]}]}",
	    "data: URLs: parameters are not the media type; case; a string "
	    "image_url; data taken verbatim after the first comma");
	req_fails(WIRE_CHAT, WIRE_MESSAGES, "{'model':'m','messages':["
	    "{'role':'user','content':[{'type':'image_url','image_url':"
	    "{'url':'data:;base64,AAAA'}}]}]}", "image url",
	    "data: URLs: no media type");
	req_fails(WIRE_CHAT, WIRE_MESSAGES, "{'model':'m','messages':["
	    "{'role':'user','content':[{'type':'image_url','image_url':"
	    "{'url':'ftp://e.test/a.png'}}]}]}", "image url",
	    "data: URLs: other schemes");
}

static void
test_chat_to_msg_tools(void)
{
	req_is(WIRE_CHAT, WIRE_MESSAGES,
	    "{'model':'m','max_tokens':5,'messages':["
	    "{'role':'user','content':'go'},"
	    "{'role':'assistant','content':null,'tool_calls':[{'id':'c1',"
	    "'type':'function','function':{'name':'f','arguments':"
	    "'{\\'a\\':[1,2]}'}},{'id':'c2','type':'function','function':"
	    "{'name':'g','arguments':''}}]},"
	    "{'role':'tool','tool_call_id':'c1','content':'r1'},"
	    "{'role':'tool','tool_call_id':'c2','content':[{'type':'text',"
	    "'text':'r2'}]},"
	    "{'role':'user','content':'thanks'},"
	    "{'role':'assistant','content':''},"
	    "{'role':'assistant','content':'bye'}],"
	    "'tools':[{'type':'function','function':{'name':'f',"
	    "'description':'F','parameters':{'type':'object'},'strict':true}},"
	    "{'type':'function','function':{'name':'g'}}],"
	    "'tool_choice':'required','parallel_tool_calls':false}",
	    "{'model':'m','max_tokens':5,'messages':["
	    "{'role':'user','content':'go'},"
	    "{'role':'assistant','content':[{'type':'tool_use','id':'c1',"
	    "'name':'f','input':{'a':[1,2]}},{'type':'tool_use','id':'c2',"
	    "'name':'g','input':{}}]},"
	    "{'role':'user','content':[{'type':'tool_result','tool_use_id':"
	    "'c1','content':'r1'},{'type':'tool_result','tool_use_id':'c2',"
	    "'content':[{'type':'text','text':'r2'}]},{'type':'text','text':"
	    "'thanks'}]},"
	    "{'role':'assistant','content':[{'type':'text','text':'bye'}]}],"
	    "'tools':[{'name':'f','description':'F','input_schema':{'type':"
	    "'object'}},{'name':'g','input_schema':{'type':'object',"
	    "'properties':{}}}],"
	    "'tool_choice':{'type':'any','disable_parallel_tool_use':true}}",
	    "chat->messages: calls as tool_use, results merged into one "
	    "user turn, empty assistant dropped, schemas defaulted");
	req_is(WIRE_CHAT, WIRE_MESSAGES,
	    "{'model':'m','max_tokens':5,'messages':[{'role':'user',"
	    "'content':'x'}],'tools':[{'type':'function','function':{'name':"
	    "'f','parameters':{}}}],'tool_choice':{'type':'function',"
	    "'function':{'name':'f'}}}",
	    "{'model':'m','max_tokens':5,'messages':[{'role':'user',"
	    "'content':'x'}],'tools':[{'name':'f','input_schema':{'type':"
	    "'object'}}],'tool_choice':{'type':'tool','name':'f'}}",
	    "chat->messages: a named tool_choice");
	req_is(WIRE_CHAT, WIRE_MESSAGES,
	    "{'model':'m','max_tokens':5,'messages':[{'role':'user',"
	    "'content':'x'}],'tool_choice':'auto'}",
	    "{'model':'m','max_tokens':5,'messages':[{'role':'user',"
	    "'content':'x'}]}",
	    "chat->messages: tool_choice without tools dropped");
}

static void
test_resp_to_chat(void)
{
	req_is(WIRE_RESPONSES, WIRE_CHAT,
	    "{'model':'m','input':'hello','instructions':'Be kind.',"
	    "'max_output_tokens':50,'temperature':0.2,'store':false,"
	    "'metadata':{'k':'v'},'truncation':'auto','stream':true}",
	    "{'model':'m','messages':[{'role':'system','content':'Be kind.'},"
	    "{'role':'user','content':'hello'}],'max_tokens':50,"
	    "'temperature':0.2,'stream':true,'stream_options':"
	    "{'include_usage':true}}",
	    "responses->chat: string input, instructions, limits");
	req_is(WIRE_RESPONSES, WIRE_CHAT,
	    "{'model':'m','input':["
	    "{'role':'developer','content':'dev rules'},"
	    "{'type':'message','role':'user','content':[{'type':"
	    "'input_text','text':'see'},{'type':'input_image','image_url':"
	    "'data:image/png;base64," PH "','detail':'low'},{'type':"
	    "'input_file','filename':'f.pdf','file_data':"
	    "'data:application/pdf;base64," PH "'}]},"
	    "{'type':'input_file','filename':'g.pdf','file_data':"
	    "'data:application/pdf;base64," PH "'},"
	    "{'type':'reasoning','id':'rs_1','summary':[]},"
	    "{'type':'message','role':'assistant','id':'msg_1','status':"
	    "'completed','content':[{'type':'output_text','text':'calling',"
	    "'annotations':[]}]},"
	    "{'type':'function_call','id':'fc_1','call_id':'call_1','name':"
	    "'f','arguments':'{\\'x\\':1}'},"
	    "{'type':'function_call','call_id':'call_2','name':'g',"
	    "'arguments':'{}'},"
	    "{'type':'function_call_output','call_id':'call_1','output':"
	    "'one'},"
	    "{'type':'function_call_output','call_id':'call_2','output':"
	    "[{'type':'input_text','text':'two'},{'type':'input_image',"
	    "'image_url':'https://e.test/p.png'}]},"
	    "{'type':'input_text','text':'next'}]}",
	    "{'model':'m','messages':["
	    "{'role':'system','content':'dev rules'},"
	    "{'role':'user','content':[{'type':'text','text':'see'},"
	    "{'type':'image_url','image_url':{'url':'data:image/png;base64,"
	    PH "','detail':'low'}},{'type':'file','file':{'filename':"
	    "'f.pdf','file_data':'data:application/pdf;base64," PH "'}},"
	    "{'type':'file','file':{'filename':'g.pdf','file_data':"
	    "'data:application/pdf;base64," PH "'}}]},"
	    "{'role':'assistant','content':'calling','tool_calls':["
	    "{'id':'call_1','type':'function','function':{'name':'f',"
	    "'arguments':'{\\'x\\':1}'}},{'id':'call_2','type':'function',"
	    "'function':{'name':'g','arguments':'{}'}}]},"
	    "{'role':'tool','tool_call_id':'call_1','content':'one'},"
	    "{'role':'tool','tool_call_id':'call_2','content':'two'},"
	    "{'role':'user','content':[{'type':'image_url','image_url':"
	    "{'url':'https://e.test/p.png'}},{'type':'text','text':"
	    "'next'}]}]}",
	    "responses->chat: items, bare items joined to the user turn, "
	    "calls merged into the assistant turn, output images after");
	req_is(WIRE_RESPONSES, WIRE_CHAT,
	    "{'model':'m','input':[{'type':'input_file','filename':'a.txt',"
	    "'file_data':'data:text/plain;base64," PH "'}],"
	    "'tools':[{'type':'function','name':'f','description':'F',"
	    "'parameters':{'type':'object'},'strict':true}],"
	    "'tool_choice':{'type':'function','name':'f'},"
	    "'parallel_tool_calls':false,'user':'u',"
	    "'text':{'format':{'type':'json_schema','name':'out','schema':"
	    "{'type':'object'},'strict':true}}}",
	    "{'model':'m','messages':[{'role':'user','content':[{'type':"
	    "'file','file':{'filename':'a.txt','file_data':"
	    "'data:text/plain;base64," PH "'}}]}],"
	    "'tools':[{'type':'function','function':{'name':'f',"
	    "'description':'F','parameters':{'type':'object'},'strict':true}}],"
	    "'tool_choice':{'type':'function','function':{'name':'f'}},"
	    "'parallel_tool_calls':false,'user':'u',"
	    "'response_format':{'type':'json_schema','json_schema':{'name':"
	    "'out','schema':{'type':'object'},'strict':true}}}",
	    "responses->chat: a bare item alone, tools, format");
}

static void
test_resp_to_msg(void)
{
	req_is(WIRE_RESPONSES, WIRE_MESSAGES,
	    "{'model':'m','instructions':'I','input':["
	    "{'type':'input_file','filename':'r.pdf','file_data':"
	    "'data:application/pdf;base64," PH "'},"
	    "{'type':'input_text','text':'summarise'},"
	    "{'type':'function_call','call_id':'c1','name':'f','arguments':"
	    "'{\\'q\\':\\'z\\'}'},"
	    "{'type':'function_call_output','call_id':'c1','output':'done'}],"
	    "'tools':[{'type':'function','name':'f','parameters':{'type':"
	    "'object'}}],'tool_choice':'required','max_output_tokens':77}",
	    "{'model':'m','system':'I','max_tokens':77,'messages':["
	    "{'role':'user','content':[{'type':'document','title':'r.pdf',"
	    "'source':{'type':'base64','media_type':'application/pdf',"
	    "'data':'" PH "'}},{'type':'text','text':'summarise'}]},"
	    "{'role':'assistant','content':[{'type':'tool_use','id':'c1',"
	    "'name':'f','input':{'q':'z'}}]},"
	    "{'role':'user','content':[{'type':'tool_result','tool_use_id':"
	    "'c1','content':'done'}]}],"
	    "'tools':[{'name':'f','input_schema':{'type':'object'}}],"
	    "'tool_choice':{'type':'any'}}",
	    "responses->messages: through chat, a bare input_file as a "
	    "document");
	req_is(WIRE_RESPONSES, WIRE_MESSAGES, "{'model':'m','input':'q'}",
	    "{'model':'m','max_tokens':4096,'messages':[{'role':'user',"
	    "'content':'q'}]}", "responses->messages: max_tokens default");
}

static void
test_same(void)
{
	static const char *in = "{'model':'m','messages':[{'role':'user',"
	    "'content':[{'type':'image','x-extra':1,'source':{'type':"
	    "'base64','media_type':'image/png','data':'" PH "'}}]}],"
	    "'max_tokens':3,'future_field':{'a':[1,{'b':null}]},"
	    "'thinking':{'type':'enabled','budget_tokens':1024}}";
	struct json_object	*o = J(in), *out;
	enum wire		 w;

	for (w = WIRE_CHAT; w <= WIRE_MESSAGES; w++) {
		out = xlate_request(w, w, o, max_tokens_of(NULL), err,
		    sizeof(err));
		same(out, in, err, "same dialect: every field kept");
		T_OK(out != o, "same dialect: a copy, not the request");
		if (out != NULL)
			json_object_object_add(out, "max_tokens",
			    json_object_new_int(4));
		same(o, in, err, "same dialect: the request is untouched");
		json_object_put(out);
	}
	json_object_put(o);
}

/* a -> b -> a gives a back. */
static void
round_trip(enum wire a, enum wire b, const char *in, const char *what)
{
	struct json_object	*o = J(in), *mid, *back = NULL;

	mid = xlate_request(a, b, o, max_tokens_of(NULL), err, sizeof(err));
	if (mid != NULL)
		back = xlate_request(b, a, mid, max_tokens_of(NULL), err,
		    sizeof(err));
	same(back, in, err, what);
	json_object_put(o);
	json_object_put(mid);
	json_object_put(back);
}

static void
test_round_trips(void)
{
	round_trip(WIRE_MESSAGES, WIRE_CHAT,
	    "{'model':'m','max_tokens':10,'system':'sys','messages':["
	    "{'role':'user','content':[{'type':'text','text':'see'},"
	    "{'type':'image','source':{'type':'base64','media_type':"
	    "'image/webp','data':'" PH "'}},{'type':'document','title':"
	    "'d.pdf','source':{'type':'base64','media_type':"
	    "'application/pdf','data':'" PH "'}}]},"
	    "{'role':'assistant','content':[{'type':'text','text':'ok'},"
	    "{'type':'tool_use','id':'t1','name':'f','input':{'n':[1,"
	    "{'k':'v/w'}]}}]},"
	    "{'role':'user','content':[{'type':'tool_result','tool_use_id':"
	    "'t1','content':'res'}]}],"
	    "'tools':[{'name':'f','description':'D','input_schema':{'type':"
	    "'object','properties':{'n':{'type':'array'}}}}],"
	    "'tool_choice':{'type':'tool','name':'f'},'stop_sequences':"
	    "['a','b'],'temperature':0.3,'stream':false}",
	    "round trip messages -> chat -> messages");
	round_trip(WIRE_CHAT, WIRE_MESSAGES,
	    "{'model':'m','max_tokens':10,'messages':["
	    "{'role':'system','content':'sys'},"
	    "{'role':'user','content':[{'type':'text','text':'see'},"
	    "{'type':'image_url','image_url':{'url':'data:image/png;base64,"
	    PH "'}},{'type':'file','file':{'filename':'d.pdf','file_data':"
	    "'data:application/pdf;base64," PH "'}}]},"
	    "{'role':'assistant','content':'ok','tool_calls':[{'id':'c',"
	    "'type':'function','function':{'name':'f','arguments':"
	    "'{\\'n\\':1}'}}]},"
	    "{'role':'tool','tool_call_id':'c','content':'res'}],"
	    "'tools':[{'type':'function','function':{'name':'f',"
	    "'parameters':{'type':'object'}}}],'tool_choice':'required',"
	    "'stop':['x'],'top_p':0.1}",
	    "round trip chat -> messages -> chat");
}

static void
test_req_errors(void)
{
	req_fails(WIRE_RESPONSES, WIRE_CHAT, "{'model':'m','input':'x',"
	    "'previous_response_id':'resp_1'}", "previous_response_id",
	    "responses: stored state refused");
	req_fails(WIRE_RESPONSES, WIRE_CHAT, "{'model':'m','input':["
	    "{'role':'user','content':'a'},{'type':'item_reference','id':"
	    "'x'}]}", "input[1]: an input item of type item_reference",
	    "responses: an item that needs stored state");
	req_fails(WIRE_RESPONSES, WIRE_MESSAGES, "{'model':'m','input':"
	    "'x','tools':[{'type':'web_search'}]}", "web_search",
	    "responses: a hosted tool");
	req_fails(WIRE_RESPONSES, WIRE_CHAT, "{'model':'m','input':[{'type':"
	    "'input_file','file_url':'https://e.test/a.pdf'}]}", "file_url",
	    "responses: a file by URL");
	req_fails(WIRE_RESPONSES, WIRE_CHAT, "{'model':'m','input':7}",
	    "input must be", "responses: input of the wrong type");
	req_fails(WIRE_MESSAGES, WIRE_CHAT, "{'model':'m','max_tokens':1,"
	    "'messages':[{'role':'user','content':'a'},{'role':'user',"
	    "'content':[{'type':'document','source':{'type':'url','url':"
	    "'https://e.test/d.pdf'}}]}]}", "messages[1]: a document source "
	    "of type url", "messages: a document by URL, with its index");
	req_fails(WIRE_MESSAGES, WIRE_CHAT, "{'model':'m','max_tokens':1,"
	    "'messages':[{'role':'assistant','content':[{'type':"
	    "'server_tool_use','id':'s','name':'web_search','input':{}}]}]}",
	    "server_tool_use", "messages: a server tool block");
	req_fails(WIRE_MESSAGES, WIRE_CHAT, "{'model':'m','max_tokens':1,"
	    "'messages':[{'role':'user','content':'x'}],'tools':[{'type':"
	    "'bash_20250124','name':'bash'}]}", "bash_20250124",
	    "messages: an Anthropic-defined tool");
	req_fails(WIRE_MESSAGES, WIRE_CHAT, "{'model':'m','max_tokens':1,"
	    "'messages':[{'role':'system','content':'x'}]}", "role",
	    "messages: a system role in messages");
	req_fails(WIRE_MESSAGES, WIRE_CHAT, "{'model':'m','max_tokens':1,"
	    "'messages':{}}", "messages must be an array",
	    "messages: messages not an array");
	req_fails(WIRE_MESSAGES, WIRE_CHAT, "{'model':'m','max_tokens':1,"
	    "'messages':[{'role':'user','content':[{'type':'tool_result'}]}]}",
	    "tool_use_id", "messages: a tool_result without its id");
	req_fails(WIRE_CHAT, WIRE_MESSAGES, "{'model':'m','messages':["
	    "{'role':'assistant','tool_calls':[{'id':'c','type':'function',"
	    "'function':{'name':'f','arguments':'{bad'}}]}]}",
	    "not a JSON object", "chat: arguments that are not JSON");
	req_fails(WIRE_CHAT, WIRE_MESSAGES, "{'model':'m','messages':["
	    "{'role':'assistant','tool_calls':[{'id':'c','type':'function',"
	    "'function':{'name':'f','arguments':'[1] x'}}]}]}",
	    "not a JSON object", "chat: arguments with trailing garbage");
	req_fails(WIRE_CHAT, WIRE_MESSAGES, "{'model':'m','messages':["
	    "{'role':'assistant','tool_calls':[{'id':'c','type':'function',"
	    "'function':{'name':'f','arguments':'{\\'a\\':NaN}'}}]}]}",
	    "not a JSON object", "chat: arguments that are only JSON-ish");
	req_fails(WIRE_CHAT, WIRE_MESSAGES, "{'model':'m','messages':["
	    "{'role':'user','content':[{'type':'input_audio','input_audio':"
	    "{}}]}]}", "input_audio", "chat: audio");
	req_fails(WIRE_CHAT, WIRE_MESSAGES, "{'model':'m','n':3,'messages':"
	    "[{'role':'user','content':'x'}]}", "n other than 1",
	    "chat: several choices");
	req_fails(WIRE_CHAT, WIRE_MESSAGES, "{'model':'m','messages':["
	    "{'role':'user','content':[{'type':'file','file':{'file_data':"
	    "'JVBERi0='}}]}]}", "data: URL", "chat: file_data not a data URL");
	req_fails(WIRE_CHAT, WIRE_MESSAGES, "{'model':'m','messages':["
	    "{'role':'user','content':[{'type':'image_url','image_url':"
	    "{'url':'data:image/png,raw'}}]}]}", "image url",
	    "chat: a data: URL that is not base64 is not fetched either");
	req_fails(WIRE_CHAT, WIRE_MESSAGES, "{'model':'m','max_tokens':'9',"
	    "'messages':[]}", "max_tokens", "chat: max_tokens not a number");
	req_fails(WIRE_CHAT, WIRE_MESSAGES, "{'model':'m','messages':["
	    "{'role':'function','name':'f','content':'x'}]}", "function",
	    "chat: the legacy function role");
	req_fails(WIRE_CHAT, WIRE_RESPONSES, "{'model':'m','messages':[]}",
	    "cannot be sent", "chat to a Responses upstream is not a route");
	req_fails(WIRE_CHAT, WIRE_CHAT, "[1]", "not a JSON object",
	    "a request that is not an object");
}

int
main(void)
{
	test_msg_to_chat();
	test_msg_to_chat_tools();
	test_chat_to_msg();
	test_data_urls();
	test_chat_to_msg_tools();
	test_resp_to_chat();
	test_resp_to_msg();
	test_same();
	test_round_trips();
	test_req_errors();
	return t_done();
}
