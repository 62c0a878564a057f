"""Blind engines, fifth round: the ``chat`` op, with one bug taken from a real public bug report
(``--bug NAME``). No flag: the bug-free twin.

    cmd:{python} tests/engines/blind/blind5_chat.py {tokenizer_json} {tokenizer_config} [--bug NAME]

Written on 2026-11-29 from docs/contracts.md, docs/guides/chat.md and the public threads below;
its author read no diagnosis code and ran tokparity only with ``--no-diagnose``, looking at the
number of mismatching conversations.

The twin renders the model's own chat template with transformers' ``apply_chat_template``
(``tokenize=False``: jinja2's ``ImmutableSandboxedEnvironment`` with ``trim_blocks`` and
``lstrip_blocks``, transformers' ``tojson``, ``raise_exception`` and ``strftime_now``, the special
tokens' texts as variables), the tokenizer loaded from the folder of ``tokenizer_config.json``; then
encodes the prompt with the ``tokenizers`` library (``Tokenizer.encode(text,
add_special_tokens=False)``, special-token text parsed). ``options`` are passed as
``add_generation_prompt``, ``continue_final_message`` and every other variable. A template (or
transformers) that raises answers ``{"raised": ...}``.

Bugs (one at a time); each changes what the template is given, or the environment it runs in:

- ``args-parsed`` (vLLM's ``_postprocess_messages``, as described in mudler/vllm.cpp #526 and
  mudler/LocalAI #10256, and mlx-lm's ``process_message_content``, ml-explore/mlx-lm #1065 /
  pull request #1371): the ``function.arguments`` of every assistant ``tool_calls`` entry that is a
  JSON string is replaced by ``json.loads`` of it before rendering (an empty or ``null`` string, or
  one that is not a JSON object, becomes ``{}``). A template that writes a string as it is and an
  object through ``tojson`` then writes the object re-serialized (``{"city":"Zürich"}`` becomes
  ``{"city": "Zürich"}``); mlx-lm #1065 is the template that ``json.loads`` them itself and then
  gets a dict.
- ``reasoning-dropped`` (vllm-project/vllm, pull request #21655, "Keep reasoning content before
  applying chat template"): the assistant messages' ``reasoning_content`` (and ``reasoning``,
  ``thinking``) are not passed to the template: "The second prompt should keep the reasoning
  content from the result of the first prompt, but it didn't". Templates that write past reasoning
  (Qwen 3 after the last user message) lose it.
- ``sorted-keys`` (nobodywho-ooo/nobodywho, pull request #519, "engine fixes for tool-calling key
  order + template rendering"): ``serde_json::Map`` (a ``BTreeMap``) re-sorts every object's keys
  alphabetically, and minijinja's ``Value::from_serialize`` round-trips through it, so the tool
  schemas reach the template as ``{"function": ..., "type": "function"}`` and every nested object
  (``parameters``, ``properties``, tool-call arguments) in key order. Here every mapping the
  template is given (messages and tools) is rebuilt with its keys sorted, recursively; lists keep
  their order.
- ``autoescape`` (topoteretes/cognee, pull request #4115, "stop HTML-escaping .txt prompt
  templates"): the Jinja environment is created with autoescaping on
  (``select_autoescape([... "txt"])``), so every ``{{ ... }}`` output, variables and expressions
  alike, is HTML-escaped: ``&`` ``<`` ``>`` ``"`` ``'`` become ``&amp;`` ``&lt;`` ``&gt;``
  ``&#34;`` ``&#39;`` (the user's question as ``What is Zara&#39;s plan?``). Template text outside
  ``{{ }}`` is unchanged; a special token a template writes through an expression
  (``{{ '<|im_start|>' + role }}``, ``{{ bos_token }}``) is escaped too.
- ``kwargs-dropped`` (raullenchai/Rapid-MLX #387, fixed by pull request #389, "honor
  chat_template_kwargs.enable_thinking": ``ChatCompletionRequest`` did not declare
  ``chat_template_kwargs``, "Pydantic accepted the payload but dropped the unknown field on parse,
  so the chat template ran with thinking enabled by default"): every option but
  ``add_generation_prompt`` and ``continue_final_message`` (``enable_thinking``, ``date_string``)
  is dropped before rendering.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

BUGS = ("args-parsed", "reasoning-dropped", "sorted-keys", "autoescape", "kwargs-dropped")
OWN = ("add_generation_prompt", "continue_final_message")
REASONING = ("reasoning_content", "reasoning", "thinking")


def _sorted(value):
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def _parse_args(messages: list[dict]) -> list[dict]:
    out = []
    for m in messages:
        m = dict(m)
        if m.get("role") == "assistant" and isinstance(m.get("tool_calls"), list):
            calls = []
            for tc in m["tool_calls"]:
                tc = json.loads(json.dumps(tc))
                fn = tc.get("function") if isinstance(tc.get("function"), dict) else tc
                args = fn.get("arguments")
                if args is None or isinstance(args, str):
                    try:
                        parsed = json.loads(args) if args else {}
                    except json.JSONDecodeError:
                        parsed = {}
                    fn["arguments"] = parsed if isinstance(parsed, dict) else {}
                calls.append(tc)
            m["tool_calls"] = calls
        out.append(m)
    return out


class Engine:
    def __init__(self, tokenizer_json: str, tokenizer_config: str, bug: str | None):
        self.bug = bug
        if bug == "autoescape":
            import jinja2.sandbox
            from transformers.utils import chat_template_utils

            class Escaping(jinja2.sandbox.ImmutableSandboxedEnvironment):
                def __init__(self, *a, **kw):
                    kw["autoescape"] = True
                    super().__init__(*a, **kw)

            chat_template_utils.ImmutableSandboxedEnvironment = Escaping
        from tokenizers import Tokenizer
        from transformers import AutoTokenizer

        self.tok = Tokenizer.from_file(tokenizer_json)
        folder = os.path.dirname(os.path.abspath(tokenizer_config))
        self.hf = AutoTokenizer.from_pretrained(folder, local_files_only=True)

    def chat(self, req: dict) -> dict:
        messages = json.loads(json.dumps(req.get("messages") or []))
        tools = req.get("tools")
        options = dict(req.get("options") or {})
        bug = self.bug
        if bug == "args-parsed":
            messages = _parse_args(messages)
        elif bug == "reasoning-dropped":
            messages = [{k: v for k, v in m.items() if k not in REASONING} for m in messages]
        elif bug == "sorted-keys":
            messages = _sorted(messages)
            tools = _sorted(tools)
        elif bug == "kwargs-dropped":
            options = {k: v for k, v in options.items() if k in OWN}
        extra = {k: v for k, v in options.items() if k not in OWN}
        try:
            text = self.hf.apply_chat_template(
                messages, tools=tools, tokenize=False,
                add_generation_prompt=bool(options.get("add_generation_prompt")),
                continue_final_message=bool(options.get("continue_final_message")),
                **extra)
        except Exception as e:  # noqa: BLE001 - the template (or transformers) refused the conversation
            return {"raised": f"{type(e).__name__}: {e}"}
        ids = self.tok.encode(text, add_special_tokens=False).ids
        return {"text": text, "ids": ids}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("tokenizer_json")
    ap.add_argument("tokenizer_config")
    ap.add_argument("--bug", choices=BUGS)
    args = ap.parse_args()
    eng = Engine(args.tokenizer_json, args.tokenizer_config, args.bug)
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        if req.get("op") == "chat":
            reply = eng.chat(req)
        elif req.get("op") == "encode":
            reply = {"ids": eng.tok.encode(req["text"], add_special_tokens=bool(req.get("add_special"))).ids}
        else:
            reply = {"error": f"unsupported op {req.get('op')!r}"}
        sys.stdout.write(json.dumps({"id": req.get("id"), **reply}) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
