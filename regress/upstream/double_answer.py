# Copyright (c) 2026 The depotd authors
#
# Permission to use, copy, modify, and distribute this software for any
# purpose with or without fee is hereby granted, provided that the above
# copyright notice and this permission notice appear in all copies.
#
# THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
# WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
# MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR
# ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
# WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN
# ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF
# OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE.

# double_answer.py: the upstream double's answers in each provider's
# own wire format: the plain JSON object, and the same answer as the
# list of server-sent events the provider streams.  An answer is
#
#	{"model", "text": str or None, "calls": [{"id", "name",
#	 "arguments": JSON text}], "in": N, "out": M}
#
# and every writer here only reshapes it, so the plain and streamed
# forms of one answer always agree.

import json
import random
import re
import string
import time

ALNUM = string.ascii_letters + string.digits


def rid(prefix, n, alphabet=ALNUM):
    return prefix + "".join(random.choice(alphabet) for _ in range(n))


def hexid(prefix):
    return rid(prefix, 50, "0123456789abcdef")


def dumps(v):
    # Raw UTF-8, as the providers send it, so that a drip can split a
    # multi-byte sequence.
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def sse(event, data):
    head = "event: %s\n" % event if event else ""
    return (head + "data: " + dumps(data) + "\n\n").encode()


def pieces(text):
    """The text in word-sized deltas."""
    return re.findall(r"\S+\s*|\s+", text)


def thirds(s):
    n = max(1, (len(s) + 2) // 3)
    return [s[i:i + n] for i in range(0, len(s), n)] or [""]


# --- error envelopes -----------------------------------------------

OPENAI_TYPES = {400: "invalid_request_error", 401: "invalid_request_error",
    403: "permission_error", 404: "invalid_request_error",
    413: "invalid_request_error", 422: "invalid_request_error",
    429: "rate_limit_exceeded", 500: "server_error", 503: "server_error"}
ANTHROPIC_TYPES = {400: "invalid_request_error", 401: "authentication_error",
    403: "permission_error", 404: "not_found_error",
    413: "request_too_large", 422: "invalid_request_error",
    429: "rate_limit_error", 500: "api_error", 503: "overloaded_error",
    529: "overloaded_error"}


def openai_error(status, message, param=None, code=None):
    etype = OPENAI_TYPES.get(status, "server_error" if status >= 500 else
        "invalid_request_error")
    if status == 401 and code is None:
        code = "invalid_api_key"
    return {"error": {"message": message, "type": etype, "param": param,
        "code": code}}


def anthropic_error(status, message):
    etype = ANTHROPIC_TYPES.get(status, "api_error" if status >= 500 else
        "invalid_request_error")
    return {"type": "error", "error": {"type": etype, "message": message}}


def error_event(dialect, message, seq):
    """A provider's in-stream error, which ends a stream already begun."""
    if dialect == "chat":
        return sse(None, openai_error(500, message))
    if dialect == "messages":
        return sse("error", anthropic_error(529, message))
    return sse("error", {"type": "error", "code": "server_error",
        "message": message, "param": None, "sequence_number": seq})


# --- OpenAI chat completions ---------------------------------------

def chat_usage(a):
    return {"prompt_tokens": a["in"], "completion_tokens": a["out"],
        "total_tokens": a["in"] + a["out"],
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0,
        "audio_tokens": 0, "accepted_prediction_tokens": 0,
        "rejected_prediction_tokens": 0}}


def chat_head(a, obj):
    return {"id": a["chat_id"], "object": obj, "created": a["created"],
        "model": a["model"], "service_tier": "default",
        "system_fingerprint": None}


def chat_plain(a):
    msg = {"role": "assistant", "content": a["text"], "refusal": None,
        "annotations": []}
    if a["calls"]:
        msg["tool_calls"] = [{"id": c["id"], "type": "function",
            "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c in a["calls"]]
    out = chat_head(a, "chat.completion")
    out["choices"] = [{"index": 0, "message": msg, "logprobs": None,
        "finish_reason": "tool_calls" if a["calls"] else "stop"}]
    out["usage"] = chat_usage(a)
    return out


def chat_events(a, include_usage):
    def chunk(delta, finish=None):
        c = chat_head(a, "chat.completion.chunk")
        c["choices"] = [{"index": 0, "delta": delta, "logprobs": None,
            "finish_reason": finish}]
        if include_usage:
            c["usage"] = None
        return sse(None, c)

    text = a["text"]
    out = [chunk({"role": "assistant",
        "content": "" if text is not None else None, "refusal": None})]
    for p in pieces(text or ""):
        out.append(chunk({"content": p}))
    for i, c in enumerate(a["calls"]):
        out.append(chunk({"tool_calls": [{"index": i, "id": c["id"],
            "type": "function", "function": {"name": c["name"],
            "arguments": ""}}]}))
        for p in thirds(c["arguments"]):
            out.append(chunk({"tool_calls": [{"index": i,
                "function": {"arguments": p}}]}))
    out.append(chunk({}, "tool_calls" if a["calls"] else "stop"))
    if include_usage:
        u = chat_head(a, "chat.completion.chunk")
        u["choices"] = []
        u["usage"] = chat_usage(a)
        out.append(sse(None, u))
    out.append(b"data: [DONE]\n\n")
    return out


# --- Anthropic Messages --------------------------------------------

def msg_usage(a, out_tokens):
    return {"input_tokens": a["in"], "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0, "output_tokens": out_tokens,
        "service_tier": "standard"}


def msg_object(a, content, stop, out_tokens):
    return {"id": a["msg_id"], "type": "message", "role": "assistant",
        "model": a["model"], "content": content, "stop_reason": stop,
        "stop_sequence": None, "usage": msg_usage(a, out_tokens)}


def msg_blocks(a):
    blocks = []
    if a["text"] is not None:
        blocks.append({"type": "text", "text": a["text"]})
    for c in a["calls"]:
        blocks.append({"type": "tool_use", "id": c["id"], "name": c["name"],
            "input": json.loads(c["arguments"])})
    return blocks


def msg_stop(a):
    return "tool_use" if a["calls"] else "end_turn"


def msg_plain(a):
    return msg_object(a, msg_blocks(a), msg_stop(a), a["out"])


def msg_events(a):
    out = [sse("message_start", {"type": "message_start",
        "message": msg_object(a, [], None, 1)}),
        sse("ping", {"type": "ping"})]
    for i, b in enumerate(msg_blocks(a)):
        if b["type"] == "text":
            start = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p}
                for p in pieces(b["text"])]
        else:
            start = dict(b, input={})
            deltas = [{"type": "input_json_delta", "partial_json": p}
                for p in thirds(json.dumps(b["input"]))]
        out.append(sse("content_block_start", {"type": "content_block_start",
            "index": i, "content_block": start}))
        for d in deltas:
            out.append(sse("content_block_delta",
                {"type": "content_block_delta", "index": i, "delta": d}))
        out.append(sse("content_block_stop", {"type": "content_block_stop",
            "index": i}))
    out.append(sse("message_delta", {"type": "message_delta",
        "delta": {"stop_reason": msg_stop(a), "stop_sequence": None},
        "usage": {"output_tokens": a["out"]}}))
    out.append(sse("message_stop", {"type": "message_stop"}))
    return out


# --- OpenAI Responses ----------------------------------------------

ECHOED = {"instructions": None, "max_output_tokens": None,
    "metadata": {}, "parallel_tool_calls": True,
    "previous_response_id": None, "reasoning": {"effort": None,
    "summary": None}, "store": True, "temperature": 1.0,
    "text": {"format": {"type": "text"}}, "tool_choice": "auto",
    "tools": [], "top_p": 1.0, "truncation": "disabled", "user": None}


def resp_object(a, req, status, output, usage):
    out = {"id": a["resp_id"], "object": "response",
        "created_at": a["created"], "status": status, "background": False,
        "error": None, "incomplete_details": None, "model": a["model"],
        "output": output}
    for k, default in ECHOED.items():
        out[k] = req.get(k, default)
    out["usage"] = usage
    return out


def resp_usage(a):
    return {"input_tokens": a["in"],
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": a["out"],
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": a["in"] + a["out"]}


def resp_items(a):
    """The output items, complete; their ids are fixed per answer."""
    items = []
    if a["text"] is not None:
        items.append({"id": a["item_ids"][0], "type": "message",
            "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": a["text"],
            "annotations": [], "logprobs": []}]})
    for c, fid in zip(a["calls"], a["item_ids"][1:]):
        items.append({"id": fid, "type": "function_call",
            "status": "completed", "call_id": c["id"], "name": c["name"],
            "arguments": c["arguments"]})
    return items


def resp_plain(a, req):
    return resp_object(a, req, "completed", resp_items(a), resp_usage(a))


def resp_item_events(i, item, ev):
    iid = item["id"]
    if item["type"] == "message":
        text = item["content"][0]["text"]
        part = {"type": "output_text", "text": "", "annotations": [],
            "logprobs": []}
        ev("response.output_item.added", output_index=i,
            item=dict(item, status="in_progress", content=[]))
        ev("response.content_part.added", item_id=iid, output_index=i,
            content_index=0, part=part)
        for p in pieces(text):
            ev("response.output_text.delta", item_id=iid, output_index=i,
                content_index=0, delta=p, logprobs=[])
        ev("response.output_text.done", item_id=iid, output_index=i,
            content_index=0, text=text, logprobs=[])
        ev("response.content_part.done", item_id=iid, output_index=i,
            content_index=0, part=dict(part, text=text))
    else:
        ev("response.output_item.added", output_index=i,
            item=dict(item, status="in_progress", arguments=""))
        for p in thirds(item["arguments"]):
            ev("response.function_call_arguments.delta", item_id=iid,
                output_index=i, delta=p)
        ev("response.function_call_arguments.done", item_id=iid,
            output_index=i, arguments=item["arguments"])
    ev("response.output_item.done", output_index=i, item=item)


def resp_events(a, req):
    out = []

    def ev(kind, **fields):
        data = {"type": kind, "sequence_number": len(out)}
        data.update(fields)
        out.append(sse(kind, data))

    pending = resp_object(a, req, "in_progress", [], None)
    ev("response.created", response=pending)
    ev("response.in_progress", response=pending)
    for i, item in enumerate(resp_items(a)):
        resp_item_events(i, item, ev)
    ev("response.completed", response=resp_plain(a, req))
    return out


def new_answer(model, text, calls, usage_in, usage_out):
    """The ids every form of one answer shares."""
    return {"model": model, "text": text, "calls": calls, "in": usage_in,
        "out": usage_out, "created": int(time.time()),
        "chat_id": rid("chatcmpl-", 29), "msg_id": rid("msg_01", 22),
        "resp_id": hexid("resp_"),
        "item_ids": [hexid("msg_")] + [hexid("fc_") for _ in calls]}
