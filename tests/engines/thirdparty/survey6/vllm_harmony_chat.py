"""gpt-oss chat prompts as vLLM 0.33.0 makes them with openai-harmony 0.0.8 (PyPI ``openai-harmony``,
the Rust renderer of OpenAI's harmony format), as a tokparity ``cmd:`` chat engine.

    tokparity compare gpt-oss --ops chat -b 'harmony=cmd:/work/survey6/venv/bin/python .../vllm_harmony_chat.py'

For a ``gpt_oss`` model vLLM's chat endpoint does not render the Jinja template: it runs
``_make_request_with_harmony`` (``vllm/renderers/online_renderer.py``), which this engine repeats:
``extract_instructions_from_messages`` peels a first system/developer message,
``build_harmony_preamble`` makes harmony's system message (``SystemContent``: reasoning effort,
start date) and a developer message (instructions, function tools),
``parse_chat_inputs_to_harmony_messages`` the rest, and ``render_for_completion`` asks
openai-harmony's ``render_conversation_for_completion(conversation, Role.ASSISTANT)`` for the ids.
Those functions are vLLM's own file (``vllm/entrypoints/openai/parser/harmony_utils.py``, from the
unpacked wheel in ``VLLM_SRC``), loaded alone with stubs for its type-only imports (``import
vllm`` needs torch). The o200k_base rank file openai-harmony downloads is given by
``TIKTOKEN_ENCODINGS_BASE`` (default /work/survey6/tiktoken_base: a file made from gpt-oss's
tokenizer.json whose sha256 is the one openai-harmony checks). The start date is today, as vLLM
writes it without ``VLLM_SYSTEM_START_DATE`` (vLLM reads no ``date_string``; the template's
``strftime_now`` is today too); ``options.reasoning_effort`` is passed as the request's.
"""
from __future__ import annotations

import datetime
import importlib.util
import json
import logging
import os
import sys
import types
from pathlib import Path


class ChatCompletionToolsParam:  # the pydantic model's shape, as create_tool_definition reads it
    def __init__(self, tool: dict):
        self.type = tool.get("type", "function")
        fn = tool.get("function", {})
        self.function = types.SimpleNamespace(name=fn.get("name"), description=fn.get("description"),
                                              parameters=fn.get("parameters"))


class VLLMValidationError(ValueError):
    def __init__(self, message, parameter=None):
        super().__init__(message)


def _load(start_date: str | None):
    src = Path(os.environ.get("VLLM_SRC", "/work/survey6/pkgsrc"))
    stubs = {
        "openai": {}, "openai.types": {}, "openai.types.responses": {},
        "openai.types.responses.tool": {"Tool": type("Tool", (), {})},
        "vllm": {}, "vllm.entrypoints": {}, "vllm.entrypoints.openai": {},
        "vllm.entrypoints.openai.chat_completion": {},
        "vllm.entrypoints.openai.chat_completion.protocol": {"ChatCompletionToolsParam": ChatCompletionToolsParam},
        "vllm.exceptions": {"VLLMValidationError": VLLMValidationError},
        "vllm.logger": {"init_logger": logging.getLogger},
        "vllm.envs": {"VLLM_GPT_OSS_HARMONY_SYSTEM_INSTRUCTIONS": False, "VLLM_SYSTEM_START_DATE": start_date},
    }
    for name, attrs in stubs.items():
        mod = types.ModuleType(name)
        mod.__path__ = []
        mod.__dict__.update(attrs)
        sys.modules[name] = mod
    sys.modules["vllm"].envs = sys.modules["vllm.envs"]
    spec = importlib.util.spec_from_file_location("vllm_harmony_utils", src / "vllm/entrypoints/openai/parser/harmony_utils.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _date(options: dict) -> str:
    return datetime.datetime.now().strftime("%Y-%m-%d")


def main() -> int:
    os.environ.setdefault("TIKTOKEN_ENCODINGS_BASE", "/work/survey6/tiktoken_base")
    hu = _load(None)
    enc = hu.get_encoding()
    for line in sys.stdin:
        req = json.loads(line)
        reply = {"id": req.get("id")}
        try:
            if req["op"] != "chat":
                reply["error"] = f"op {req['op']} not supported"
            else:
                options = req.get("options") or {}
                sys.modules["vllm.envs"].VLLM_SYSTEM_START_DATE = _date(options)
                tools = [ChatCompletionToolsParam(t) for t in req["tools"]] if req.get("tools") else None
                instructions, chat_messages = hu.extract_instructions_from_messages(req["messages"])
                messages = hu.build_harmony_preamble(instructions=instructions, tools=tools,
                                                     reasoning_effort=options.get("reasoning_effort"),
                                                     with_custom_tools=True)
                messages.extend(hu.parse_chat_inputs_to_harmony_messages(chat_messages))
                ids = hu.render_for_completion(messages)
                reply["ids"] = ids
                reply["text"] = enc.decode(ids)
        except Exception as e:
            reply = {"id": req.get("id"), "raised": f"{type(e).__name__}: {e}"}
        print(json.dumps(reply), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
