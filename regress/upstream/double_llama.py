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

# double_llama.py: the upstream double as llama.cpp's llama-server
# answers (a turn with "server": "llama"; CONTRACT.md).  What sets it
# apart from the providers' own APIs, each a quirk depotd must absorb:
#   - every answer's id is its chat completion's, "chatcmpl-" and 32
#     letters, on the Messages (and Responses) endpoint too;
#   - a chat stream ends with a usage chunk (choices: []) when, and
#     only when, stream_options.include_usage asks, "timings" on the
#     last chunk;
#   - usage splits the prompt tokens read from its KV cache out
#     (prompt_tokens_details.cached_tokens, cache_read_input_tokens,
#     input_tokens_details.cached_tokens), the same plain and streamed;
#   - the Messages endpoint answers stop_reason "end_turn" beside the
#     stop_sequence that matched (turn "stop": the sequence).
# The turn's text is what the model said before the stop.

import json

import double_answer as ans

FINGERPRINT = "b6890-llama-double"


def llama_id():
    return ans.rid("chatcmpl-", 32)


def timings(a):
    return {"cache_n": a["cached"], "prompt_n": a["in"] - a["cached"],
        "prompt_ms": 12.5, "prompt_per_second": 800.0,
        "predicted_n": a["out"], "predicted_ms": 40.0,
        "predicted_per_second": 25.0}


def finish(a):
    if a["calls"]:
        return "tool_calls"
    return "stop"


# --- chat completions ----------------------------------------------

def chat_usage(a):
    return {"completion_tokens": a["out"], "prompt_tokens": a["in"],
        "total_tokens": a["in"] + a["out"],
        "prompt_tokens_details": {"cached_tokens": a["cached"]}}


def chat_head(a, obj):
    return {"created": a["created"], "id": a["llama_id"],
        "model": a["model"], "system_fingerprint": FINGERPRINT,
        "object": obj}


def chat_calls(a):
    return [{"type": "function", "function": {"name": c["name"],
        "arguments": c["arguments"]}, "id": c["id"]} for c in a["calls"]]


def chat_plain(a):
    msg = {"role": "assistant", "content": a["text"]}
    if a["calls"]:
        msg["tool_calls"] = chat_calls(a)
    out = {"choices": [{"finish_reason": finish(a), "index": 0,
        "message": msg}]}
    out.update(chat_head(a, "chat.completion"))
    out["usage"] = chat_usage(a)
    out["timings"] = timings(a)
    return out


def chat_events(a, include_usage):
    def chunk(delta, reason=None):
        c = {"choices": [{"finish_reason": reason, "index": 0,
            "delta": delta}]}
        c.update(chat_head(a, "chat.completion.chunk"))
        return c

    out = [chunk({"role": "assistant", "content": None})]
    for p in ans.pieces(a["text"] or ""):
        out.append(chunk({"content": p}))
    for i, c in enumerate(a["calls"]):
        out.append(chunk({"tool_calls": [{"index": i, "id": c["id"],
            "type": "function", "function": {"name": c["name"],
            "arguments": c["arguments"]}}]}))
    out.append(chunk({}, finish(a)))
    if include_usage:
        u = {"choices": []}
        u.update(chat_head(a, "chat.completion.chunk"))
        u["usage"] = chat_usage(a)
        out.append(u)
    out[-1]["timings"] = timings(a)
    return [ans.sse(None, c) for c in out] + [b"data: [DONE]\n\n"]


# --- Anthropic Messages --------------------------------------------

def msg_usage(a, out_tokens):
    return {"cache_read_input_tokens": a["cached"],
        "input_tokens": a["in"] - a["cached"], "output_tokens": out_tokens}


def msg_stop(a):
    return "tool_use" if a["calls"] else "end_turn"


def msg_plain(a):
    blocks = ans.msg_blocks(a)
    return {"id": a["llama_id"], "type": "message", "role": "assistant",
        "content": blocks, "model": a["model"], "stop_reason": msg_stop(a),
        "stop_sequence": a["stop_seq"], "usage": msg_usage(a, a["out"])}


def msg_events(a):
    start = dict(msg_plain(a), content=[], stop_reason=None,
        stop_sequence=None, usage=msg_usage(a, 0))
    out = [ans.sse("message_start", {"type": "message_start",
        "message": start})]
    for i, b in enumerate(ans.msg_blocks(a)):
        if b["type"] == "text":
            first = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p}
                for p in ans.pieces(b["text"])]
        else:
            first = dict(b, input={})
            deltas = [{"type": "input_json_delta",
                "partial_json": ans.dumps(b["input"])}]
        out.append(ans.sse("content_block_start",
            {"type": "content_block_start", "index": i,
            "content_block": first}))
        for d in deltas:
            out.append(ans.sse("content_block_delta",
                {"type": "content_block_delta", "index": i, "delta": d}))
        out.append(ans.sse("content_block_stop",
            {"type": "content_block_stop", "index": i}))
    out.append(ans.sse("message_delta", {"type": "message_delta",
        "delta": {"stop_reason": msg_stop(a),
        "stop_sequence": a["stop_seq"]},
        "usage": {"output_tokens": a["out"]}}))
    out.append(ans.sse("message_stop", {"type": "message_stop"}))
    return out


# --- OpenAI Responses ----------------------------------------------

def resp_usage(a):
    return {"input_tokens": a["in"],
        "input_tokens_details": {"cached_tokens": a["cached"]},
        "output_tokens": a["out"],
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": a["in"] + a["out"]}


def with_llama(a):
    """The answer as the generic Responses writer takes it, with the
    chat completion's id and the cached split."""
    return dict(a, resp_id=a["llama_id"])


def resp_fix(obj, a):
    if isinstance(obj, dict) and obj.get("object") == "response" and \
        obj.get("usage") is not None:
        obj["usage"] = resp_usage(a)
    return obj


def resp_plain(a, body):
    return resp_fix(ans.resp_plain(with_llama(a), body), a)


def resp_events(a, body):
    out = []
    for ev in ans.resp_events(with_llama(a), body):
        head, _, data = ev.partition(b"data: ")
        obj = json.loads(data)
        if "response" in obj:
            resp_fix(obj["response"], a)
        out.append(head + b"data: " + ans.dumps(obj).encode() + b"\n\n")
    return out


def parts(dialect, body, a, stream):
    """The answer's body (plain: an object) or its events."""
    a = dict(a, llama_id=llama_id())
    if dialect == "chat":
        usage = bool((body.get("stream_options") or {}).get(
            "include_usage"))
        return chat_events(a, usage) if stream else chat_plain(a)
    if dialect == "messages":
        return msg_events(a) if stream else msg_plain(a)
    return resp_events(a, body) if stream else resp_plain(a, body)
