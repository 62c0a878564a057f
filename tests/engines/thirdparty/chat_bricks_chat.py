"""chat-bricks 0.1.5 (PyPI) as a tokparity cmd: chat engine (text only), called as its README says:
``Chat(template_name, messages=..., tools=...).prompt(add_generation_prompt=...)``.

    -b 'bricks=cmd:{python} tests/engines/thirdparty/chat_bricks_chat.py qwen3'

chat-bricks writes each model's format by hand (``registry/builtin.py``); the argument names it.
Template options other than the generation prompt (``enable_thinking``) are given as keywords, as
``prompt(**kwargs)`` passes them on. ``continue_final_message`` is not in the package: it is answered
"skipped". An exception of the package is answered "raised". No fixes.
"""
import json
import sys

from chat_bricks import Chat

NAME = sys.argv[1]


def chat(request: dict) -> dict:
    options = dict(request.get("options") or {})
    if options.pop("continue_final_message", False):
        return {"error": "continue_final_message is not in chat-bricks", "status": "skipped"}
    generation = bool(options.pop("add_generation_prompt", False))
    try:
        return {"text": Chat(NAME, messages=request["messages"], tools=request.get("tools"))
                .prompt(add_generation_prompt=generation, **options)}
    except Exception as e:
        return {"raised": f"{type(e).__name__}: {e}"}


for line in sys.stdin:
    if not line.strip():
        continue
    req = json.loads(line)
    reply = chat(req) if req.get("op") == "chat" else {"error": f"{req.get('op')} is not in chat-bricks",
                                                         "status": "skipped"}
    print(json.dumps({"id": req.get("id"), **reply}), flush=True)
