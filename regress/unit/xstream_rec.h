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
 * xstream_rec.h: upstream streams as the real APIs frame them, for
 * test_xstream.c and fuzz_sse.c.  Model "remote-m" is the remote name
 * the route sent; usage is 12 tokens in, 7 out.
 */
#ifndef XSTREAM_REC_H
#define XSTREAM_REC_H

#define CHUNK(d) "data: {\"id\":\"chatcmpl-up1\",\"object\":"		\
	"\"chat.completion.chunk\",\"created\":1764590000,\"model\":"	\
	"\"remote-m\",\"choices\":[{\"index\":0,\"delta\":" d "}]}\n\n"
#define USAGE_CHUNK "data: {\"id\":\"chatcmpl-up1\",\"object\":"	\
	"\"chat.completion.chunk\",\"created\":1764590000,\"model\":"	\
	"\"remote-m\",\"choices\":[],\"usage\":{\"prompt_tokens\":12,"	\
	"\"completion_tokens\":7,\"total_tokens\":19}}\n\n"

/* vLLM's shape: role first, content, finish, usage, [DONE]. */
static const char rec_chat_text[] =
	CHUNK("{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,"
	    "\"finish_reason\":null")
	CHUNK("{\"content\":\"Hello\"},\"logprobs\":null,"
	    "\"finish_reason\":null")
	CHUNK("{\"content\":\", w\xc3\xb6rld \\\"q\\\"\\n\"},"
	    "\"logprobs\":null,\"finish_reason\":null")
	CHUNK("{},\"logprobs\":null,\"finish_reason\":\"stop\"")
	USAGE_CHUNK
	"data: [DONE]\n\n";

/* Text, then two calls, the first's arguments in three fragments. */
static const char rec_chat_tools[] =
	CHUNK("{\"role\":\"assistant\",\"content\":null},"
	    "\"finish_reason\":null")
	CHUNK("{\"content\":\"Checking.\"},\"finish_reason\":null")
	CHUNK("{\"tool_calls\":[{\"index\":0,\"id\":\"call_a1\",\"type\":"
	    "\"function\",\"function\":{\"name\":\"get_weather\","
	    "\"arguments\":\"\"}}]},\"finish_reason\":null")
	CHUNK("{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":"
	    "\"{\\\"city\\\":\"}}]},\"finish_reason\":null")
	CHUNK("{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":"
	    "\" \\\"Paris\\\"\"}}]},\"finish_reason\":null")
	CHUNK("{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":"
	    "\"}\"}}]},\"finish_reason\":null")
	CHUNK("{\"tool_calls\":[{\"index\":1,\"id\":\"call_b2\",\"type\":"
	    "\"function\",\"function\":{\"name\":\"get_time\","
	    "\"arguments\":\"{}\"}}]},\"finish_reason\":null")
	CHUNK("{},\"finish_reason\":\"tool_calls\"")
	USAGE_CHUNK
	"data: [DONE]\n\n";

#define EV(e, d) "event: " e "\ndata: " d "\n\n"
#define MSG_START EV("message_start", "{\"type\":\"message_start\","	\
	"\"message\":{\"id\":\"msg_up1\",\"type\":\"message\",\"role\":" \
	"\"assistant\",\"model\":\"remote-m\",\"content\":[],"		\
	"\"stop_reason\":null,\"stop_sequence\":null,\"usage\":"	\
	"{\"input_tokens\":10,\"cache_read_input_tokens\":2,"		\
	"\"output_tokens\":1}}}")
#define MSG_END(stop) EV("message_delta", "{\"type\":\"message_delta\"," \
	"\"delta\":{\"stop_reason\":\"" stop "\",\"stop_sequence\":null}," \
	"\"usage\":{\"output_tokens\":7}}")				\
	EV("message_stop", "{\"type\":\"message_stop\"}")
#define BLOCK_DELTA(i, d) EV("content_block_delta",			\
	"{\"type\":\"content_block_delta\",\"index\":" #i ",\"delta\":" d "}")
#define BLOCK_STOP(i) EV("content_block_stop",				\
	"{\"type\":\"content_block_stop\",\"index\":" #i "}")

static const char rec_msg_text[] =
	MSG_START
	EV("content_block_start", "{\"type\":\"content_block_start\","
	    "\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}")
	EV("ping", "{\"type\": \"ping\"}")
	BLOCK_DELTA(0, "{\"type\":\"text_delta\",\"text\":\"Hello\"}")
	BLOCK_DELTA(0, "{\"type\":\"text_delta\",\"text\":"
	    "\", w\xc3\xb6rld \\\"q\\\"\\n\"}")
	BLOCK_STOP(0)
	MSG_END("end_turn");

/* Thinking (not passed on), text, two tool_use blocks. */
static const char rec_msg_tools[] =
	MSG_START
	EV("content_block_start", "{\"type\":\"content_block_start\","
	    "\"index\":0,\"content_block\":{\"type\":\"thinking\","
	    "\"thinking\":\"\"}}")
	BLOCK_DELTA(0, "{\"type\":\"thinking_delta\",\"thinking\":\"hmm\"}")
	BLOCK_DELTA(0, "{\"type\":\"signature_delta\",\"signature\":\"c2ln\"}")
	BLOCK_STOP(0)
	EV("content_block_start", "{\"type\":\"content_block_start\","
	    "\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}")
	BLOCK_DELTA(1, "{\"type\":\"text_delta\",\"text\":\"Checking.\"}")
	BLOCK_STOP(1)
	EV("content_block_start", "{\"type\":\"content_block_start\","
	    "\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":"
	    "\"toolu_a1\",\"name\":\"get_weather\",\"input\":{}}}")
	BLOCK_DELTA(2, "{\"type\":\"input_json_delta\",\"partial_json\":\"\"}")
	BLOCK_DELTA(2, "{\"type\":\"input_json_delta\",\"partial_json\":"
	    "\"{\\\"city\\\":\"}")
	BLOCK_DELTA(2, "{\"type\":\"input_json_delta\",\"partial_json\":"
	    "\" \\\"Paris\\\"}\"}")
	BLOCK_STOP(2)
	EV("content_block_start", "{\"type\":\"content_block_start\","
	    "\"index\":3,\"content_block\":{\"type\":\"tool_use\",\"id\":"
	    "\"toolu_b2\",\"name\":\"get_time\",\"input\":{}}}")
	BLOCK_DELTA(3, "{\"type\":\"input_json_delta\",\"partial_json\":"
	    "\"{}\"}")
	BLOCK_STOP(3)
	MSG_END("tool_use");

static const char rec_msg_error[] =
	MSG_START
	EV("content_block_start", "{\"type\":\"content_block_start\","
	    "\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}")
	BLOCK_DELTA(0, "{\"type\":\"text_delta\",\"text\":\"Hel\"}")
	EV("error", "{\"type\":\"error\",\"error\":{\"type\":"
	    "\"overloaded_error\",\"message\":\"Overloaded\"}}");

#define RESP(t, n, rest) EV(t, "{\"type\":\"" t "\",\"sequence_number\":" \
	#n "," rest "}")
#define RESP_OBJ(status, output, usage) "\"response\":{\"id\":"	\
	"\"resp_up1\",\"object\":\"response\",\"created_at\":1764590000," \
	"\"status\":\"" status "\",\"model\":\"remote-m\",\"output\":["	\
	output "],\"usage\":" usage "}"
#define RESP_ITEM(status, text) "{\"id\":\"msg_up1\",\"type\":"	\
	"\"message\",\"status\":\"" status "\",\"role\":\"assistant\","	\
	"\"content\":[" text "]}"
#define RESP_PART(text) "{\"type\":\"output_text\",\"text\":\"" text	\
	"\",\"annotations\":[]}"

static const char rec_resp_text[] =
	RESP("response.created", 0, RESP_OBJ("in_progress", "", "null"))
	RESP("response.in_progress", 1, RESP_OBJ("in_progress", "", "null"))
	RESP("response.output_item.added", 2, "\"output_index\":0,\"item\":"
	    RESP_ITEM("in_progress", ""))
	RESP("response.content_part.added", 3, "\"item_id\":\"msg_up1\","
	    "\"output_index\":0,\"content_index\":0,\"part\":" RESP_PART(""))
	RESP("response.output_text.delta", 4, "\"item_id\":\"msg_up1\","
	    "\"output_index\":0,\"content_index\":0,\"delta\":\"Hi\"")
	RESP("response.output_text.done", 5, "\"item_id\":\"msg_up1\","
	    "\"output_index\":0,\"content_index\":0,\"text\":\"Hi\"")
	RESP("response.content_part.done", 6, "\"item_id\":\"msg_up1\","
	    "\"output_index\":0,\"content_index\":0,\"part\":"
	    RESP_PART("Hi"))
	RESP("response.output_item.done", 7, "\"output_index\":0,\"item\":"
	    RESP_ITEM("completed", RESP_PART("Hi")))
	RESP("response.completed", 8, RESP_OBJ("completed",
	    RESP_ITEM("completed", RESP_PART("Hi")),
	    "{\"input_tokens\":12,\"output_tokens\":7,\"total_tokens\":19}"));

#endif
