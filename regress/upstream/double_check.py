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

# double_check.py: the upstream double's request validation, one
# function per dialect, rejecting what the real APIs reject (so that a
# translator bug in depotd shows as the 400 a real provider would give),
# and the text the answer templates read out of a request.

import base64
import binascii
import re


class Invalid(Exception):
    """A request the provider would refuse with a 400."""

    def __init__(self, message, param=None, code=None):
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code


DATA_URL = re.compile(r"data:([\w.+-]+/[\w.+-]+)((?:;[\w.+-]+=[^;,]*)*)"
    r";base64,(.*)", re.S)


def b64_ok(s):
    if not isinstance(s, str):
        return False
    try:
        base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def data_url_ok(url, kind=None):
    """A data: URL as OpenAI takes them: a media type, base64 only."""
    m = DATA_URL.fullmatch(url) if isinstance(url, str) else None
    if m is None or not b64_ok(m.group(3)):
        return False
    return kind is None or m.group(1).startswith(kind + "/")


def words(s):
    return len(s.split()) if isinstance(s, str) else 0


def supported(values):
    q = ["'%s'" % v for v in values]
    if len(q) == 1:
        return q[0]
    return ", ".join(q[:-1]) + ", and " + q[-1]


def bad_value(value, values, param):
    raise Invalid("Invalid value: '%s'. Supported values are: %s." %
        (value, supported(values)), param, "invalid_value")


def need_list(v, param):
    if not isinstance(v, list):
        raise Invalid("Invalid type for '%s': expected an array, but got "
            "%s instead." % (param, type(v).__name__), param, "invalid_type")
    if not v:
        raise Invalid("Invalid '%s': empty array. Expected an array with "
            "minimum length 1, but got an empty array instead." % param,
            param, "empty_array")


def missing(name):
    raise Invalid("Missing required parameter: '%s'." % name, name,
        "missing_required_parameter")


TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def tool_name(name, where, openai=True):
    if not isinstance(name, str):
        if openai:
            missing(where)
        field_required(where)
    if not TOOL_NAME.fullmatch(name):
        if openai:
            raise Invalid("Invalid '%s': string does not match pattern. "
                "Expected a string that matches the pattern "
                "'^[a-zA-Z0-9_-]+$'." % where, where, "invalid_value")
        raise Invalid("%s: String should match pattern "
            "'^[a-zA-Z0-9_-]{1,64}$'" % where)


def openai_tools(tools, nested):
    """Function tools: chat nests name and parameters in "function"."""
    if tools is None:
        return
    if not isinstance(tools, list):
        raise Invalid("Invalid type for 'tools': expected an array.",
            "tools", "invalid_type")
    for i, tool in enumerate(tools):
        where = "tools[%d]" % i
        if not isinstance(tool, dict) or not isinstance(tool.get("type"),
            str):
            missing(where + ".type")
        if tool["type"] != "function":
            if nested and tool["type"] != "custom":
                bad_value(tool["type"], ("function", "custom"),
                    where + ".type")
            continue
        fn = tool.get("function") if nested else tool
        where += ".function" if nested else ""
        if not isinstance(fn, dict):
            missing(where)
        tool_name(fn.get("name"), where + ".name")
        if fn.get("parameters") is not None and \
            not isinstance(fn["parameters"], dict):
            raise Invalid("Invalid type for '%s.parameters': expected an "
                "object." % where, where + ".parameters", "invalid_type")


def text_of(content, kinds=("text", "input_text", "output_text")):
    """A content's text: a string, or its text parts joined by a space."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return " ".join(p["text"] for p in content if isinstance(p, dict) and
        p.get("type") in kinds and isinstance(p.get("text"), str))


# --- OpenAI chat completions ---------------------------------------

CHAT_ROLES = ("system", "assistant", "user", "tool", "function",
    "developer")
CHAT_PARTS = {
    "user": ("text", "image_url", "input_audio", "file"),
    "system": ("text",),
    "developer": ("text",),
    "assistant": ("text", "refusal"),
    "tool": ("text",),
}


def part_type(p, allowed, where):
    """A content part's type, if the role allows it."""
    if not isinstance(p, dict) or not isinstance(p.get("type"), str):
        raise Invalid("Invalid type for '%s': expected an object." % where,
            where, "invalid_type")
    if p["type"] not in allowed:
        bad_value(p["type"], allowed, where + ".type")
    return p["type"]


def chat_part(p, role, where):
    t = part_type(p, CHAT_PARTS[role], where)
    if t in ("text", "refusal") and not isinstance(p.get(t), str):
        missing(where + "." + t)
    if t == "image_url":
        url = (p.get("image_url") or {}).get("url")
        if not isinstance(url, str):
            missing(where + ".image_url.url")
        if url.startswith("data:") and not data_url_ok(url, "image"):
            raise Invalid("Invalid '%s.image_url.url'. Expected a base64-"
                "encoded data URL with an image MIME type (e.g. 'data:"
                "image/png;base64,aW1nIGJ5dGVzIGhlcmU='), but got an "
                "invalid value." % where, where + ".image_url.url",
                "invalid_value")
    elif t == "file":
        f = p.get("file")
        if not isinstance(f, dict) or not (f.get("file_data") or
            f.get("file_id")):
            raise Invalid("Invalid '%s.file': one of 'file_data' or "
                "'file_id' is required." % where, where + ".file",
                "invalid_value")
        if "file_data" in f and not data_url_ok(f["file_data"]):
            raise Invalid("Invalid '%s.file.file_data'. Expected a base64-"
                "encoded data URL, but got an invalid value." % where,
                where + ".file.file_data", "invalid_value")
    elif t == "input_audio":
        a = p.get("input_audio") or {}
        if not b64_ok(a.get("data")):
            raise Invalid("Invalid '%s.input_audio.data'. Expected base64-"
                "encoded audio data." % where, where + ".input_audio.data",
                "invalid_value")


def chat_message(m, i, calls):
    where = "messages[%d]" % i
    if not isinstance(m, dict):
        raise Invalid("Invalid type for '%s': expected an object." % where,
            where, "invalid_type")
    role = m.get("role")
    if role not in CHAT_ROLES:
        if role is None:
            missing(where + ".role")
        bad_value(role, CHAT_ROLES, where + ".role")
    if role == "function":
        return
    content = m.get("content")
    if isinstance(content, list):
        for j, p in enumerate(content):
            chat_part(p, role, "%s.content[%d]" % (where, j))
    elif content is None:
        if role != "assistant" or not (m.get("tool_calls") or
            m.get("function_call")):
            missing(where + ".content")
    elif not isinstance(content, str):
        raise Invalid("Invalid type for '%s.content': expected one of a "
            "string or array of objects." % where, where + ".content",
            "invalid_type")
    if role == "assistant":
        for j, c in enumerate(m.get("tool_calls") or []):
            at = "%s.tool_calls[%d]" % (where, j)
            if not isinstance(c, dict) or not isinstance(c.get("id"), str):
                missing(at + ".id")
            fn = c.get("function")
            if not isinstance(fn, dict):
                missing(at + ".function")
            tool_name(fn.get("name"), at + ".function.name")
            if not isinstance(fn.get("arguments"), str):
                missing(at + ".function.arguments")
            calls.add(c["id"])
    if role == "tool" and m.get("tool_call_id") not in calls:
        raise Invalid("Invalid parameter: messages with role 'tool' must be "
            "a response to a preceeding message with 'tool_calls'.",
            "messages.[%d].role" % i)


def check_chat(body):
    if not body.get("model"):
        raise Invalid("you must provide a model parameter")
    if "messages" not in body:
        missing("messages")
    need_list(body["messages"], "messages")
    if body.get("stream_options") is not None and not body.get("stream"):
        raise Invalid("The 'stream_options' parameter is only allowed when "
            "'stream' is enabled.", "stream_options")
    openai_tools(body.get("tools"), True)
    calls = set()
    for i, m in enumerate(body["messages"]):
        chat_message(m, i, calls)
    chat_answered(body["messages"])


def chat_answered(messages):
    """Tool messages answer each call, right after the assistant's."""
    pending, asked = [], None
    for i, m in enumerate(messages + [{"role": None}]):
        if m.get("role") == "tool" and m.get("tool_call_id") in pending:
            pending.remove(m["tool_call_id"])
            continue
        if pending:
            raise Invalid("An assistant message with 'tool_calls' must be "
                "followed by tool messages responding to each "
                "'tool_call_id'. The following tool_call_ids did not have "
                "response messages: %s" % ", ".join(pending),
                "messages.[%d].role" % asked)
        if m.get("role") == "assistant" and m.get("tool_calls"):
            pending = [c["id"] for c in m["tool_calls"]]
            asked = i


def chat_texts(body):
    """(last user text, last tool result) of a chat request."""
    user = tool = ""
    for m in body.get("messages", []):
        if m.get("role") == "user":
            user = text_of(m.get("content")) or user
        elif m.get("role") == "tool":
            tool = text_of(m.get("content"))
    return user, tool


# --- OpenAI Responses ----------------------------------------------

RESP_ROLES = ("assistant", "system", "developer", "user")
RESP_PARTS = {
    "user": ("input_text", "input_image", "input_file"),
    "system": ("input_text", "input_image", "input_file"),
    "developer": ("input_text", "input_image", "input_file"),
    "assistant": ("output_text", "refusal"),
}
RESP_ITEMS = ("message", "function_call", "function_call_output",
    "reasoning", "item_reference")


def resp_part(p, role, where):
    t = part_type(p, RESP_PARTS[role], where)
    if t in ("input_text", "output_text") and \
        not isinstance(p.get("text"), str):
        missing(where + ".text")
    url = None
    if t == "input_image":
        url = p.get("image_url")
        if url is None and not p.get("file_id"):
            raise Invalid("Invalid '%s': one of 'image_url' or 'file_id' "
                "is required." % where, where, "invalid_value")
        if isinstance(url, str) and url.startswith("data:") and \
            not data_url_ok(url, "image"):
            raise Invalid("Invalid '%s.image_url'. Expected a base64-"
                "encoded data URL with an image MIME type, but got an "
                "invalid value." % where, where + ".image_url",
                "invalid_value")
    elif t == "input_file":
        if not (p.get("file_data") or p.get("file_id") or
            p.get("file_url")):
            raise Invalid("Invalid '%s': one of 'file_data', 'file_id' or "
                "'file_url' is required." % where, where, "invalid_value")
        if "file_data" in p and not data_url_ok(p["file_data"]):
            raise Invalid("Invalid '%s.file_data'. Expected a base64-"
                "encoded data URL, but got an invalid value." % where,
                where + ".file_data", "invalid_value")


def resp_item(item, i, calls):
    where = "input[%d]" % i
    if not isinstance(item, dict):
        raise Invalid("Invalid type for '%s': expected an object." % where,
            where, "invalid_type")
    t = item.get("type", "message" if "role" in item else None)
    if t not in RESP_ITEMS:
        bad_value(t, RESP_ITEMS, where + ".type")
    if t == "message":
        role = item.get("role")
        if role not in RESP_ROLES:
            bad_value(role, RESP_ROLES, where + ".role")
        content = item.get("content")
        if isinstance(content, list):
            for j, p in enumerate(content):
                resp_part(p, role, "%s.content[%d]" % (where, j))
        elif not isinstance(content, str):
            missing(where + ".content")
    elif t == "function_call":
        for k in ("call_id", "name", "arguments"):
            if not isinstance(item.get(k), str):
                missing("%s.%s" % (where, k))
        calls.add(item["call_id"])
    elif t == "function_call_output":
        if item.get("call_id") not in calls:
            raise Invalid("No tool call found for function call output "
                "with call_id %s." % item.get("call_id"), "input")


def check_responses(body, earlier_calls):
    """earlier_calls: the call ids of the previous_response_id, if any."""
    if not body.get("model"):
        missing("model")
    if "input" not in body:
        missing("input")
    openai_tools(body.get("tools"), False)
    items = body["input"]
    if isinstance(items, str):
        return
    need_list(items, "input")
    calls = set(earlier_calls)
    for i, item in enumerate(items):
        resp_item(item, i, calls)
    answered = {it.get("call_id") for it in items
        if it.get("type") == "function_call_output"}
    for it in items:
        if it.get("type") == "function_call" and \
            it["call_id"] not in answered:
            raise Invalid("No tool output found for function call %s." %
                it["call_id"], "input")


def responses_texts(body):
    items = body.get("input")
    if isinstance(items, str):
        return items, ""
    user = tool = ""
    for item in items or []:
        if item.get("role") == "user":
            user = text_of(item.get("content")) or user
        elif item.get("type") == "function_call_output":
            tool = text_of(item.get("output"))
    return user, tool


# --- Anthropic Messages --------------------------------------------

MSG_BLOCKS = ("text", "image", "document", "search_result", "thinking",
    "redacted_thinking", "tool_use", "tool_result", "server_tool_use",
    "web_search_tool_result", "container_upload")
SOURCES = {
    "image": ("base64", "url", "file"),
    "document": ("base64", "text", "content", "url", "file"),
}


def field_required(where):
    raise Invalid("%s: Field required" % where)


def msg_source(b, where):
    s = b.get("source")
    if not isinstance(s, dict):
        field_required(where + ".source")
    kinds = SOURCES[b["type"]]
    if s.get("type") not in kinds:
        raise Invalid("%s.source: Input tag '%s' found using 'type' does "
            "not match any of the expected tags: %s" % (where, s.get("type"),
            ", ".join("'%s'" % k for k in kinds)))
    if s["type"] == "base64":
        if not isinstance(s.get("media_type"), str):
            field_required(where + ".source.base64.media_type")
        if not b64_ok(s.get("data")) or not s["data"]:
            raise Invalid("%s.source.base64.data: invalid base64 data" %
                where)
    elif s["type"] == "text" and not isinstance(s.get("data"), str):
        field_required(where + ".source.text.data")
    elif s["type"] == "file" and not isinstance(s.get("file_id"), str):
        field_required(where + ".source.file.file_id")


def msg_block(b, role, where, ctx):
    """ctx: "prev", the tool_use ids of the message before; "uses" and
    "results", the ids this message holds."""
    if not isinstance(b, dict) or b.get("type") not in MSG_BLOCKS:
        tag = b.get("type") if isinstance(b, dict) else None
        raise Invalid("%s: Input tag '%s' found using 'type' does not match "
            "any of the expected tags: %s" % (where, tag,
            ", ".join("'%s'" % k for k in MSG_BLOCKS)))
    t = b["type"]
    if t == "text" and not isinstance(b.get("text"), str):
        field_required(where + ".text.text")
    elif t in SOURCES:
        msg_source(b, where)
    elif t == "tool_use":
        if role != "assistant":
            raise Invalid("%s: `tool_use` blocks can only be in `assistant` "
                "messages" % where)
        if not isinstance(b.get("id"), str):
            field_required(where + ".tool_use.id")
        tool_name(b.get("name"), where + ".tool_use.name", False)
        if not isinstance(b.get("input"), dict):
            raise Invalid("%s.tool_use.input: Input should be a valid "
                "dictionary" % where)
        ctx["uses"].add(b["id"])
    elif t == "tool_result":
        if role != "user":
            raise Invalid("%s: `tool_result` blocks can only be in `user` "
                "messages" % where)
        if b.get("tool_use_id") not in ctx["prev"]:
            raise Invalid("%s: unexpected `tool_use_id` found in "
                "`tool_result` blocks: %s. Each `tool_result` block must "
                "have a corresponding `tool_use` block in the previous "
                "message." % (where, b.get("tool_use_id")))
        ctx["results"].add(b["tool_use_id"])
        inner = b.get("content")
        if isinstance(inner, list):
            for k, c in enumerate(inner):
                if isinstance(c, dict) and c.get("type") in ("tool_use",
                    "tool_result"):
                    raise Invalid("%s.content.%d: Input tag '%s' is not "
                        "allowed here" % (where, k, c["type"]))
                msg_block(c, role, "%s.content.%d" % (where, k), ctx)


def check_messages(body):
    for k in ("model", "max_tokens", "messages"):
        if k not in body or body[k] is None:
            field_required(k)
    mt = body["max_tokens"]
    if not isinstance(mt, int) or isinstance(mt, bool) or mt < 1:
        raise Invalid("max_tokens: Input should be greater than or equal "
            "to 1")
    if not isinstance(body["messages"], list):
        raise Invalid("messages: Input should be a valid list")
    system = body.get("system")
    if isinstance(system, list):
        for j, b in enumerate(system):
            if not isinstance(b, dict) or b.get("type") != "text":
                raise Invalid("system.%d.type: Input should be 'text'" % j)
    anthropic_tools(body.get("tools"))
    prev = set()
    for i, m in enumerate(body["messages"]):
        prev = msg_message(m, "messages.%d" % i, prev)


def msg_message(m, where, prev):
    """Checks one message; gives the tool_use ids it holds."""
    role = m.get("role") if isinstance(m, dict) else None
    if role not in ("user", "assistant"):
        raise Invalid("%s.role: Input should be 'user' or 'assistant'" %
            where)
    ctx = {"prev": prev if role == "user" else set(), "uses": set(),
        "results": set()}
    content = m.get("content")
    if isinstance(content, list):
        for j, b in enumerate(content):
            msg_block(b, role, "%s.content.%d" % (where, j), ctx)
    elif not isinstance(content, str):
        field_required(where + ".content")
    if prev - ctx["results"]:
        raise Invalid("%s: `tool_use` ids were found without `tool_result` "
            "blocks immediately after: %s. Each `tool_use` block must have "
            "a corresponding `tool_result` block in the next message." %
            (where, ", ".join(sorted(prev - ctx["results"]))))
    return ctx["uses"]


def anthropic_tools(tools):
    """Client tools need a name and an input_schema; server tools (a
    dated "type") are the provider's own and pass."""
    if tools is None:
        return
    if not isinstance(tools, list):
        raise Invalid("tools: Input should be a valid list")
    for i, tool in enumerate(tools):
        where = "tools.%d" % i
        if not isinstance(tool, dict):
            raise Invalid("%s: Input should be a valid dictionary" % where)
        if tool.get("type", "custom") != "custom":
            continue
        tool_name(tool.get("name"), where + ".custom.name", False)
        schema = tool.get("input_schema")
        if not isinstance(schema, dict):
            field_required(where + ".custom.input_schema")
        if schema.get("type") != "object":
            raise Invalid("%s.custom.input_schema.type: Input should be "
                "'object'" % where)


def messages_texts(body):
    user = tool = ""
    for m in body.get("messages", []):
        content = m.get("content")
        if m.get("role") != "user":
            continue
        user = text_of(content) or user
        for b in content if isinstance(content, list) else []:
            if b.get("type") == "tool_result":
                tool = text_of(b.get("content"))
    return user, tool


def input_words(v):
    """The words of every text a request holds: the default usage.in."""
    if isinstance(v, dict):
        n = 0
        for k, x in v.items():
            if isinstance(x, str) and k in ("text", "content", "input",
                "instructions", "system", "output"):
                n += words(x)
            elif isinstance(x, (dict, list)):
                n += input_words(x)
        return n
    if isinstance(v, list):
        return sum(input_words(x) for x in v)
    return 0
