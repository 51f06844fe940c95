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

# double_server.py: the upstream double as a particular open-model
# server (issue 23), set with POST /__config {"server": {...}}:
#   {"kind": "llama.cpp", "vision": false, "n_ctx": 4096}
#       GET /props as llama-server answers it (default_generation_
#       settings.n_ctx, modalities.vision, chat_template), POST
#       /apply-template {messages} -> {prompt}, POST /tokenize {content}
#       -> {tokens}; and its quirks on the model routes: a Messages
#       "document" block is dropped unread, a chat "file" part is a 400
#       (unsupported content[].type), an image without vision a 400
#   {"kind": "vllm", "max_model_len": 8192}
#       GET /v1/models with max_model_len per model; POST /tokenize
#       {model, messages} -> {count, max_model_len, tokens}
#   {"kind": "ollama", "vision": false, "context_length": 32768}
#       POST /api/show {model} -> {capabilities, model_info, template}
#   {} (or none): none of these routes; today's double.
# The tokenizer is deterministic: a token is a run of word characters
# or one other non-space character; the template is ChatML.

import re

CONFIG = {}
TOKEN_RE = re.compile(r"\w+|[^\w\s]")
TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m.role }}\n"
    "{{ m.content }}<|im_end|>\n{% endfor %}<|im_start|>assistant\n")


def configure(arg):
    """From /__config: a dict (the mode) or None (back to none)."""
    CONFIG.clear()
    if isinstance(arg, dict):
        CONFIG.update(arg)


def kind():
    return CONFIG.get("kind")


def text_of(content):
    if isinstance(content, str):
        return content
    out = []
    for p in content or ():
        if isinstance(p, dict) and isinstance(p.get("text"), str):
            out.append(p["text"])
    return "\n".join(out)


def apply_template(messages):
    out = []
    for m in messages or ():
        out.append("<|im_start|>%s\n%s<|im_end|>\n" % (m.get("role"),
            text_of(m.get("content"))))
    out.append("<|im_start|>assistant\n")
    return "".join(out)


def tokenize(text):
    return [sum(ord(c) for c in t) % 32000 for t in TOKEN_RE.findall(text)]


def props():
    return {"default_generation_settings": {"id": 0, "id_task": -1,
        "n_ctx": CONFIG.get("n_ctx", 4096), "speculative": False,
        "is_processing": False, "params": {"n_predict": -1, "seed":
        4294967295, "temperature": 0.8, "top_k": 40, "top_p": 0.95}},
        "total_slots": 1, "model_path": "/models/double.gguf",
        "modalities": {"vision": bool(CONFIG.get("vision")), "audio":
        False}, "chat_template": TEMPLATE, "bos_token": "<s>",
        "eos_token": "</s>", "build_info": "b0000-double"}


def vllm_models(models, now):
    return {"object": "list", "data": [{"id": m, "object": "model",
        "created": now, "owned_by": "vllm", "root": m, "parent": None,
        "max_model_len": CONFIG.get("max_model_len", 8192),
        "permission": []} for m in models]}


def ollama_show(body):
    caps = ["completion"]
    if CONFIG.get("vision"):
        caps.append("vision")
    return {"modelfile": "FROM double\n", "parameters": "",
        "template": "{{ .Prompt }}", "details": {"format": "gguf",
        "family": "llama", "parameter_size": "1B",
        "quantization_level": "Q4_0"}, "model_info": {
        "general.architecture": "llama",
        "llama.context_length": CONFIG.get("context_length", 32768)},
        "capabilities": caps}


def route(method, path, body, models, now):
    """(status, obj) for a route the mode serves, or None."""
    k = kind()
    if k == "llama.cpp":
        if method == "GET" and path == "/props":
            return 200, props()
        if method == "POST" and path == "/apply-template":
            return 200, {"prompt": apply_template(
                (body or {}).get("messages"))}
        if method == "POST" and path == "/tokenize":
            content = (body or {}).get("content")
            if not isinstance(content, str):
                return 400, {"error": {"code": 400, "message":
                    "\"content\" must be provided", "type":
                    "invalid_request_error"}}
            return 200, {"tokens": tokenize(content)}
    elif k == "vllm":
        if method == "GET" and path == "/v1/models":
            return 200, vllm_models(models, now)
        if method == "POST" and path == "/tokenize":
            b = body or {}
            if "messages" in b:
                toks = tokenize(apply_template(b["messages"]))
            else:
                toks = tokenize(b.get("prompt") or "")
            return 200, {"count": len(toks), "max_model_len":
                CONFIG.get("max_model_len", 8192), "tokens": toks}
    elif k == "ollama":
        if method == "POST" and path == "/api/show":
            if not isinstance((body or {}).get("model"), str):
                return 400, {"error": "model is required"}
            return 200, ollama_show(body)
    return None


def quirks(dialect, body, invalid):
    """llama-server on the model routes: what it drops, what it 400s."""
    if kind() != "llama.cpp":
        return
    for i, m in enumerate(body.get("messages") or ()):
        c = m.get("content") if isinstance(m, dict) else None
        if not isinstance(c, list):
            continue
        if dialect == "messages":
            # Dropped without a word, as llama-server does.
            m["content"] = [p for p in c if not (isinstance(p, dict) and
                p.get("type") == "document")]
            c = m["content"]
        for p in c:
            t = p.get("type") if isinstance(p, dict) else None
            if dialect == "chat" and t == "file":
                raise invalid("unsupported content[].type", None, None)
            if t in ("image_url", "image") and not CONFIG.get("vision"):
                raise invalid("image input is not supported - hint: if "
                    "this is unexpected, you may need to provide the "
                    "mmproj", None, None)
