"""fschat 0.2.36 (PyPI, FastChat): its hand-written conversation templates as a tokparity cmd: chat
engine (text only). No fixes.

    -b 'fastchat=cmd:VENV/bin/python tests/engines/thirdparty/survey10/fastchat_chat.py qwen-7b-chat'   (qwen3)

The prompt is built as FastChat's OpenAI-compatible server builds it
(fastchat/serve/openai_api_server.py, get_gen_params, lines 286-333): a copy of the worker's
template (``get_conv_template(NAME)`` here: fastchat/conversation.py), then per message: system ->
``conv.set_system_message(content)``; user -> ``conv.append_message(roles[0], content)`` (a list of
parts -> ``("\\n".join(texts), image_urls)``); assistant -> ``conv.append_message(roles[1], content)``;
then always ``conv.append_message(roles[1], None)`` and ``conv.get_prompt()``.

Not answered (status "skipped"): a role FastChat's server rejects (``tool``: ValueError "Unknown
role"), a request with tools or assistant tool calls (its ChatCompletionRequest has no such
fields), continue_final_message (no such option). add_generation_prompt is not read: the server
always appends the assistant's empty turn.
"""
import json
import sys

from fastchat.conversation import get_conv_template

NAME = sys.argv[1]


def prompt(messages):
    conv = get_conv_template(NAME)
    for message in messages:
        role = message["role"]
        if role == "system":
            conv.set_system_message(message["content"])
        elif role == "user":
            if isinstance(message["content"], list):
                images = [p["image_url"]["url"] for p in message["content"] if p["type"] == "image_url"]
                texts = [p["text"] for p in message["content"] if p["type"] == "text"]
                conv.append_message(conv.roles[0], ("\n".join(texts), images))
            else:
                conv.append_message(conv.roles[0], message["content"])
        elif role == "assistant":
            conv.append_message(conv.roles[1], message["content"])
        else:
            raise ValueError(f"Unknown role: {role}")
    conv.append_message(conv.roles[1], None)
    return conv.get_prompt()


for line in sys.stdin:
    req = json.loads(line)
    reply = {"id": req["id"]}
    try:
        if req["op"] != "chat":
            reply.update(error=f"{req['op']} is not in the package", status="skipped")
        else:
            msgs, opts = req["messages"], req.get("options") or {}
            if req.get("tools") or any(m.get("tool_calls") for m in msgs):
                reply.update(error="FastChat's server takes no tools", status="skipped")
            elif opts.get("continue_final_message"):
                reply.update(error="FastChat has no continue_final_message", status="skipped")
            elif any(m["role"] not in ("system", "user", "assistant") for m in msgs):
                reply.update(error="FastChat's server: ValueError Unknown role", status="skipped")
            else:
                reply["text"] = prompt(msgs)
    except Exception as e:
        reply.update(error=repr(e), status="error")
    print(json.dumps(reply), flush=True)
