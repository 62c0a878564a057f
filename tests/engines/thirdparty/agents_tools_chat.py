"""The tools as openai-agents 0.24.0 (PyPI) sends them to an OpenAI-compatible server, then the
model's chat template rendered by transformers, as a server does: a tokparity cmd: chat engine.

    -b 'agents=cmd:{python} tests/engines/thirdparty/agents_tools_chat.py {tokenizer_json} [--plain]'

Each tool of the request becomes openai-agents' ``FunctionTool`` with ``strict_json_schema=True``,
its default for a function tool. Its schema goes through ``ensure_strict_json_schema``, and
``ChatCmplConverter.tool_to_openai`` writes the tool a Chat Completions request holds (``strict``
true, a missing description as ""). The server renders that tool, not the one the request held.
With ``--plain`` the tools reach the template as the request holds them: the bug-free twin.
"""
import json
import sys
from pathlib import Path

import transformers
from agents import FunctionTool
from agents.models.chatcmpl_converter import Converter
from agents.strict_schema import ensure_strict_json_schema

tok = transformers.AutoTokenizer.from_pretrained(str(Path(sys.argv[1]).parent))
PLAIN = "--plain" in sys.argv[2:]


async def _never(context, arguments):  # (the tool is never called here)
    raise NotImplementedError


def sent(tool: dict) -> dict:
    """The tool as openai-agents writes it into a Chat Completions request."""
    function = tool.get("function", tool)
    schema = ensure_strict_json_schema(json.loads(json.dumps(function.get("parameters") or {})))
    made = FunctionTool(name=function["name"], description=function.get("description", ""),
                        params_json_schema=schema, on_invoke_tool=_never, strict_json_schema=True)
    return dict(Converter.tool_to_openai(made))


def chat(request: dict) -> dict:
    tools = request.get("tools")
    if tools and not PLAIN:
        tools = [sent(t) for t in tools]
    try:
        text = tok.apply_chat_template(request["messages"], tools=tools, tokenize=False, **(request.get("options") or {}))
    except Exception as e:
        return {"raised": f"{type(e).__name__}: {e}"}
    return {"text": text, "ids": tok(text, add_special_tokens=False)["input_ids"]}


for line in sys.stdin:
    if not line.strip():
        continue
    req = json.loads(line)
    reply = chat(req) if req.get("op") == "chat" else {"error": f"{req.get('op')} is not this engine's",
                                                         "status": "skipped"}
    print(json.dumps({"id": req.get("id"), **reply}), flush=True)
