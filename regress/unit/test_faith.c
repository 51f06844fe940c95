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
 * test_faith.c: issue 23's rules for streams and same-wire answers: a
 * chat caller's usage chunk only when asked (exactly one), streamed
 * usage equal to the plain answer's with its cached split, a stop
 * sequence the upstream names told as stop_sequence, ids in the
 * caller's dialect.  Events go straight into xstream_event.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "wire/xstream.h"
#include "tjson.h"

#define OUT_MAX	64

struct out {
	int			 n;
	struct json_object	*js[OUT_MAX];	/* NULL: [DONE] */
};

static void
out_emit(void *arg, const char *event, const char *data, size_t len)
{
	struct out	*o = arg;

	if (o->n >= OUT_MAX)
		abort();
	o->js[o->n++] = len == 6 && memcmp(data, "[DONE]", 6) == 0 ? NULL :
	    json_tokener_parse(data);
}

static void
out_free(struct out *o)
{
	int	 i;

	for (i = 0; i < o->n; i++)
		json_object_put(o->js[i]);
	memset(o, 0, sizeof(*o));
}

/* Events "name|json" (name may be empty), ' for ", through a stream. */
static int
feed(enum wire from, enum wire to, int asked, const char *const *ev,
    struct out *o)
{
	struct xstream	*xs;
	char		 buf[2048], *bar, *p;
	int		 rc = 0;

	memset(o, 0, sizeof(*o));
	if ((xs = xstream_new(from, to, "caller-m", out_emit, o)) == NULL)
		abort();
	xstream_caller_usage(xs, asked);
	for (; *ev != NULL && rc == 0; ev++) {
		snprintf(buf, sizeof(buf), "%s", *ev);
		for (p = buf; *p != '\0'; p++)
			if (*p == '\'')
				*p = '"';
		if ((bar = strchr(buf, '|')) == NULL)
			abort();
		*bar = '\0';
		rc = xstream_event(xs, buf, bar + 1, strlen(bar + 1));
	}
	if (rc == 0)
		rc = xstream_end(xs);
	xstream_free(xs);
	return rc;
}

/* Chunks with no choices; and how many chunks carry a usage member. */
static int
usage_chunks(struct out *o, int *with_member, int *last)
{
	struct json_object	*c;
	int			 i, n = 0;

	*with_member = 0;
	*last = -1;
	for (i = 0; i < o->n; i++) {
		if (o->js[i] == NULL)
			continue;
		if (json_object_object_get_ex(o->js[i], "usage", NULL))
			(*with_member)++;
		c = xstream_get(o->js[i], "choices");
		if (json_object_is_type(c, json_type_array) &&
		    json_object_array_length(c) == 0) {
			n++;
			*last = i;
		}
	}
	return n;
}

#define CHAT(d) "|{'id':'cmpl-up','object':'chat.completion.chunk'," \
	"'created':1,'model':'remote','choices':[{'index':0,'delta':" d "}]}"
#define CHAT_USAGE "|{'id':'cmpl-up','object':'chat.completion.chunk'," \
	"'created':1,'model':'remote','choices':[],'usage':{" \
	"'prompt_tokens':20,'completion_tokens':5,'total_tokens':25," \
	"'prompt_tokens_details':{'cached_tokens':8}}}"

static const char *const chat_up[] = {
	CHAT("{'role':'assistant','content':''},'finish_reason':null"),
	CHAT("{'content':'Hi'},'finish_reason':null"),
	CHAT("{},'finish_reason':'stop'"),
	CHAT_USAGE,
	"|[DONE]",
	NULL
};

/* Usage only on the finish chunk, as some servers send it. */
static const char *const chat_up_late[] = {
	CHAT("{'role':'assistant','content':'Hi'},'finish_reason':null"),
	"|{'id':'cmpl-up','object':'chat.completion.chunk','created':1,"
	    "'model':'remote','choices':[{'index':0,'delta':{},"
	    "'finish_reason':'stop'}],'usage':{'prompt_tokens':20,"
	    "'completion_tokens':5,'total_tokens':25}}",
	"|[DONE]",
	NULL
};

/* llama-server's Messages stream: a chat id, a stop sequence named. */
static const char *const msg_up[] = {
	"message_start|{'type':'message_start','message':{'id':"
	    "'chatcmpl-llama1','type':'message','role':'assistant',"
	    "'content':[],'model':'remote','stop_reason':null,"
	    "'stop_sequence':null,'usage':{'cache_read_input_tokens':8,"
	    "'input_tokens':12,'output_tokens':0}}}",
	"content_block_start|{'type':'content_block_start','index':0,"
	    "'content_block':{'type':'text','text':''}}",
	"content_block_delta|{'type':'content_block_delta','index':0,"
	    "'delta':{'type':'text_delta','text':'Hi'}}",
	"content_block_stop|{'type':'content_block_stop','index':0}",
	"message_delta|{'type':'message_delta','delta':{'stop_reason':"
	    "'end_turn','stop_sequence':'egr'},'usage':{'output_tokens':5}}",
	"message_stop|{'type':'message_stop'}",
	NULL
};

static void
test_usage_chunk(void)
{
	struct out	 o;
	int		 member, last;

	T_EQ_INT(feed(WIRE_MESSAGES, WIRE_CHAT, 0, msg_up, &o), 0,
	    "Messages to chat, not asked: the stream ends well");
	T_EQ_INT(usage_chunks(&o, &member, &last), 0,
	    "Messages to chat, not asked: no usage chunk");
	T_EQ_INT(member, 0, "and no chunk with a usage member");
	out_free(&o);
	feed(WIRE_MESSAGES, WIRE_CHAT, 1, msg_up, &o);
	T_EQ_INT(usage_chunks(&o, &member, &last), 1,
	    "Messages to chat, asked: one usage chunk");
	T_EQ_INT(member, o.n - 1, "every chunk has usage (null but one)");
	same(xstream_get(o.js[last], "usage"), "{'prompt_tokens':20,"
	    "'completion_tokens':5,'total_tokens':25,"
	    "'prompt_tokens_details':{'cached_tokens':8}}", "",
	    "its usage: the cached split as a plain answer has it");
	out_free(&o);

	feed(WIRE_CHAT, WIRE_CHAT, 0, chat_up, &o);
	T_EQ_INT(usage_chunks(&o, &member, &last), 0,
	    "chat passed through, not asked: the upstream's usage chunk "
	    "dropped");
	T_EQ_INT(member, 0, "and no usage member");
	T_OK(o.n == 4 && o.js[3] == NULL, "three chunks, then [DONE]");
	out_free(&o);
	feed(WIRE_CHAT, WIRE_CHAT, 1, chat_up, &o);
	T_EQ_INT(usage_chunks(&o, &member, &last), 1,
	    "chat passed through, asked: the usage chunk relayed");
	out_free(&o);
	feed(WIRE_CHAT, WIRE_CHAT, 1, chat_up_late, &o);
	T_EQ_INT(usage_chunks(&o, &member, &last), 1,
	    "asked, the upstream's usage on its finish chunk: one usage "
	    "chunk made before [DONE]");
	T_OK(last == o.n - 2 && o.js[o.n - 1] == NULL, "just before [DONE]");
	T_EQ_INT(xstream_int(o.js[last], "usage.prompt_tokens"), 20,
	    "with the upstream's counts");
	T_EQ_STR(xstream_str(o.js[last], "id"), xstream_str(o.js[0], "id"),
	    "and the stream's id");
	out_free(&o);
	feed(WIRE_CHAT, WIRE_CHAT, 0, chat_up_late, &o);
	T_EQ_INT(usage_chunks(&o, &member, &last) + member, 0,
	    "not asked: the usage member taken off the finish chunk");
	out_free(&o);
}

/* The plain answer's usage, translated, equals the stream's. */
static void
usage_equal(enum wire from, enum wire to, const char *plain,
    struct json_object *streamed, const char *what)
{
	struct json_object	*in, *out;
	char			 e[128];

	in = J(plain);
	out = xlate_response(from, to, in, "caller-m", e, sizeof(e));
	T_OK(out != NULL && json_object_equal(xstream_get(out, "usage"),
	    streamed), "%s", what);
	if (out == NULL || !json_object_equal(xstream_get(out, "usage"),
	    streamed))
		printf("# plain %s\n# streamed %s\n", S(xstream_get(out,
		    "usage")), S(streamed));
	json_object_put(out);
	json_object_put(in);
}

static const char chat_plain[] = "{'id':'cmpl-up','object':"
    "'chat.completion','created':1,'model':'remote','choices':[{'index':"
    "0,'message':{'role':'assistant','content':'Hi'},'finish_reason':"
    "'stop'}],'usage':{'prompt_tokens':20,'completion_tokens':5,"
    "'total_tokens':25,'prompt_tokens_details':{'cached_tokens':8}}}";
static const char msg_plain[] = "{'id':'chatcmpl-llama1','type':"
    "'message','role':'assistant','content':[{'type':'text','text':"
    "'Hi'}],'model':'remote','stop_reason':'end_turn','stop_sequence':"
    "'egr','usage':{'cache_read_input_tokens':8,'input_tokens':12,"
    "'output_tokens':5}}";

static void
test_usage_equal(void)
{
	struct out	 o;
	int		 member, last;

	feed(WIRE_CHAT, WIRE_MESSAGES, 0, chat_up, &o);
	usage_equal(WIRE_CHAT, WIRE_MESSAGES, chat_plain,
	    xstream_get(o.js[o.n - 2], "usage"),
	    "chat to Messages: message_delta's usage is the plain one");
	out_free(&o);
	feed(WIRE_CHAT, WIRE_RESPONSES, 0, chat_up, &o);
	usage_equal(WIRE_CHAT, WIRE_RESPONSES, chat_plain,
	    xstream_get(o.js[o.n - 1], "response.usage"),
	    "chat to Responses: response.completed's usage, cached 8");
	out_free(&o);
	feed(WIRE_MESSAGES, WIRE_CHAT, 1, msg_up, &o);
	usage_chunks(&o, &member, &last);
	usage_equal(WIRE_MESSAGES, WIRE_CHAT, msg_plain,
	    xstream_get(o.js[last], "usage"),
	    "Messages to chat: the usage chunk is the plain usage");
	out_free(&o);
	feed(WIRE_MESSAGES, WIRE_RESPONSES, 0, msg_up, &o);
	usage_equal(WIRE_MESSAGES, WIRE_RESPONSES, msg_plain,
	    xstream_get(o.js[o.n - 1], "response.usage"),
	    "Messages to Responses: response.completed's usage");
	out_free(&o);
}

static void
test_stop_sequence(void)
{
	static const char *const vllm[] = {
		CHAT("{'role':'assistant','content':'Hi'},"
		    "'finish_reason':null"),
		CHAT("{},'finish_reason':'stop','stop_reason':'egr'"),
		"|[DONE]",
		NULL
	};
	struct json_object	*in, *out;
	struct out		 o;
	char			 e[128];

	feed(WIRE_MESSAGES, WIRE_MESSAGES, 0, msg_up, &o);
	T_EQ_STR(xstream_str(o.js[4], "delta.stop_reason"), "stop_sequence",
	    "Messages passed through: end_turn with a sequence named is "
	    "stop_sequence");
	T_EQ_STR(xstream_str(o.js[4], "delta.stop_sequence"), "egr",
	    "the sequence kept");
	out_free(&o);
	feed(WIRE_MESSAGES, WIRE_CHAT, 0, msg_up, &o);
	T_EQ_STR(xstream_str(o.js[2], "choices.0.finish_reason"), "stop",
	    "Messages to chat: finish_reason stop");
	out_free(&o);
	feed(WIRE_CHAT, WIRE_MESSAGES, 0, vllm, &o);
	T_EQ_STR(xstream_str(o.js[o.n - 2], "delta.stop_reason"),
	    "stop_sequence", "chat naming its stop (vLLM) to Messages: "
	    "stop_sequence");
	T_EQ_STR(xstream_str(o.js[o.n - 2], "delta.stop_sequence"), "egr",
	    "with the sequence");
	out_free(&o);

	in = J(msg_plain);
	out = xlate_response(WIRE_MESSAGES, WIRE_MESSAGES, in, "caller-m", e,
	    sizeof(e));
	T_EQ_STR(xstream_str(out, "stop_reason"), "stop_sequence",
	    "plain Messages: end_turn with a sequence named is "
	    "stop_sequence");
	T_OK(strncmp(xstream_str(out, "id"), "msg_", 4) == 0,
	    "plain Messages: a chatcmpl- id becomes msg_");
	json_object_put(out);
	json_object_put(in);
}

static int
ids_alike(struct out *o, const char *path, const char *prefix)
{
	const char	*id, *first = NULL;
	int		 i, n = 0;

	for (i = 0; i < o->n; i++) {
		if ((id = xstream_str(o->js[i], path)) == NULL)
			continue;
		if (first == NULL)
			first = id;
		if (strcmp(id, first) != 0 ||
		    strncmp(id, prefix, strlen(prefix)) != 0)
			return 0;
		n++;
	}
	return n;
}

static void
test_ids(void)
{
	static const char *const resp_up[] = {
		"response.created|{'type':'response.created',"
		    "'sequence_number':0,'response':{'id':'chatcmpl-x',"
		    "'object':'response','status':'in_progress','model':"
		    "'remote','output':[],'usage':null}}",
		"response.completed|{'type':'response.completed',"
		    "'sequence_number':1,'response':{'id':'chatcmpl-x',"
		    "'object':'response','status':'completed','model':"
		    "'remote','output':[],'usage':{'input_tokens':20,"
		    "'input_tokens_details':{'cached_tokens':8},"
		    "'output_tokens':5,'total_tokens':25}}}",
		NULL
	};
	struct out	 o;

	feed(WIRE_CHAT, WIRE_CHAT, 1, chat_up, &o);
	T_EQ_INT(ids_alike(&o, "id", "chatcmpl-"), 4,
	    "chat passed through: a cmpl- id becomes one chatcmpl- id");
	out_free(&o);
	feed(WIRE_MESSAGES, WIRE_MESSAGES, 0, msg_up, &o);
	T_EQ_INT(ids_alike(&o, "message.id", "msg_"), 1,
	    "Messages passed through: a chatcmpl- id becomes msg_");
	out_free(&o);
	feed(WIRE_RESPONSES, WIRE_RESPONSES, 0, resp_up, &o);
	T_EQ_INT(ids_alike(&o, "response.id", "resp_"), 2,
	    "Responses passed through: one resp_ id in every event");
	out_free(&o);
}

static void
test_plain_ids(void)
{
	struct json_object	*in, *out;
	char			 e[128];

	in = J("{'id':'msg_01Abc','type':'message','model':'r'}");
	out = xlate_response(WIRE_MESSAGES, WIRE_MESSAGES, in, "m", e,
	    sizeof(e));
	T_EQ_STR(xstream_str(out, "id"), "msg_01Abc",
	    "an upstream id in the dialect is kept");
	json_object_put(out);
	json_object_put(in);
	in = J("{'id':'cmpl-7','object':'chat.completion','model':'r'}");
	out = xlate_response(WIRE_CHAT, WIRE_CHAT, in, "m", e, sizeof(e));
	T_OK(strncmp(xstream_str(out, "id"), "chatcmpl-", 9) == 0,
	    "chat: cmpl-7 becomes chatcmpl-");
	json_object_put(out);
	json_object_put(in);
	in = J("{'object':'response','model':'r'}");
	out = xlate_response(WIRE_RESPONSES, WIRE_RESPONSES, in, "m", e,
	    sizeof(e));
	T_OK(strncmp(xstream_str(out, "id"), "resp_", 5) == 0,
	    "Responses: no id at all gets a resp_ one");
	json_object_put(out);
	json_object_put(in);
}

int
main(void)
{
	test_usage_chunk();
	test_usage_equal();
	test_stop_sequence();
	test_ids();
	test_plain_ids();
	return t_done();
}
