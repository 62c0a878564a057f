"""Blind engines, round 22: the ``chat`` op, a model's chat template as transformers renders it.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. Each ``--bug NAME`` adds one bug of
a prompt builder. The flag may be repeated. No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind22_chat.py {tokenizer_json} [{tokenizer_config}] [--template FILE] [--bug NAME ...]

It was written blind on 2026-12-04, from descriptions of how real chat prompt builders behave.
Its author read no diagnosis code and ran no tokparity. Only docs/contracts.md and the README of
this folder were read, and blind5_chat.py for the way it renders.

The twin
--------

The tokenizer is loaded with transformers' ``AutoTokenizer`` from the folder of
``tokenizer_config.json``. That is the second argument, else the file beside ``tokenizer.json``.
``--template FILE`` gives a template file of the model's own instead of the config's.

The prompt is ``apply_chat_template(messages, tools=tools, tokenize=False, ...)``. It gets
``add_generation_prompt`` and ``continue_final_message`` as booleans. Every other option is
passed as a template variable (``enable_thinking``, ``date_string``). transformers renders with
a sandboxed jinja2. The prompt's ids are ``Tokenizer.encode(prompt, add_special_tokens=False)``
of the ``tokenizers`` library. Special-token text in the prompt is parsed.

A template or transformers that raises gets ``{"raised": ...}``. A model with no chat template
gets an error with no status: the engine does not apply templates there. ``encode`` is answered
too, bug-free.

The bugs
--------

``gen-prompt-string``: an ``add_generation_prompt`` the request gives is passed as the string
``"true"`` or ``"false"``. The builder read it from a text field and never turned it into a
boolean. Jinja and Python take any non-empty string as true. So ``false`` still adds the
generation prompt. With ``continue_final_message`` too, transformers refuses the conversation.
An absent option stays the boolean false.

``parts-dropped``: a message whose content is a list of parts is left out before rendering. The
builder handles only string contents and skips the rest. A conversation of such messages only
becomes empty, and transformers refuses it.

``tools-in-system``: the tools are not passed to the template (``tools`` is null). They are
written into the system message instead, as ``"You can call these tools:\\n"`` and one line of
``json.dumps(tools, ensure_ascii=False)``. That text is added after the first system message's
content, after a blank line. With no system message first, a new one holding that text is put
first. This is how builders for templates without tool support often do it.

``final-assistant-stripped``: a last message with role ``assistant`` is left out before
rendering. The builder takes it for a placeholder of the reply to come. With
``continue_final_message`` the prompt then continues the message before it.

``blank-lines-dropped``: in every string content and every text part, a run of line breaks with
only spaces or tabs between them becomes one line break. So ``"a\\n\\nb"`` becomes
``"a\\nb"``. A single line break is kept. A text sanitiser that removes empty lines does this.

``tool-result-quoted``: a message with role ``tool`` whose content is a string gets that string
through ``json.dumps`` with its defaults. The builder serialises every tool result, strings too.
So ``{"temp": 21}`` becomes ``"{\\"temp\\": 21}"``, quoted and escaped. Non-ASCII characters
become ``\\uXXXX`` escapes.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import sys

BUGS = ("gen-prompt-string", "parts-dropped", "tools-in-system", "final-assistant-stripped",
        "blank-lines-dropped", "tool-result-quoted")
OWN = ("add_generation_prompt", "continue_final_message")
BLANK_RUN = re.compile(r"\n(?:[ \t]*\n)+")


def tools_text(tools: list) -> str:
    return "You can call these tools:\n" + json.dumps(tools, ensure_ascii=False)


def drop_blank_lines(content):
    if isinstance(content, str):
        return BLANK_RUN.sub("\n", content)
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                part = {**part, "text": BLANK_RUN.sub("\n", part["text"])}
            out.append(part)
        return out
    return content


class Engine:
    def __init__(self, tokenizer_json: str, tokenizer_config: str | None, template: str | None,
                 bugs: set[str]):
        from tokenizers import Tokenizer
        from transformers import AutoTokenizer

        self.bugs = bugs
        self.tok = Tokenizer.from_file(tokenizer_json)
        if tokenizer_config is None:
            tokenizer_config = os.path.join(os.path.dirname(os.path.abspath(tokenizer_json)),
                                            "tokenizer_config.json")
        folder = os.path.dirname(os.path.abspath(tokenizer_config))
        self.hf = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        self.template = None
        if template:
            with open(template, encoding="utf-8") as f:
                self.template = f.read()
        self.has_template = bool(self.template or getattr(self.hf, "chat_template", None))

    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        self.tok.encode_special_tokens = not parse_special
        return self.tok.encode(text, add_special_tokens=add_special).ids

    def prepare(self, messages: list, tools, options: dict):
        """The builder's part: what it hands to apply_chat_template."""
        bugs = self.bugs
        gen = bool(options.get("add_generation_prompt"))
        if "gen-prompt-string" in bugs and "add_generation_prompt" in options:
            gen = "true" if options["add_generation_prompt"] else "false"
        if "parts-dropped" in bugs:
            messages = [m for m in messages if not isinstance(m.get("content"), list)]
        if "final-assistant-stripped" in bugs and messages and messages[-1].get("role") == "assistant":
            messages = messages[:-1]
        if "blank-lines-dropped" in bugs:
            messages = [{**m, "content": drop_blank_lines(m["content"])} if "content" in m else m
                        for m in messages]
        if "tool-result-quoted" in bugs:
            messages = [{**m, "content": json.dumps(m["content"])}
                        if m.get("role") == "tool" and isinstance(m.get("content"), str) else m
                        for m in messages]
        if "tools-in-system" in bugs and tools:
            block = tools_text(tools)
            first = messages[0] if messages else None
            if first is not None and first.get("role") == "system" and isinstance(first.get("content"), str):
                messages = [{**first, "content": first["content"] + "\n\n" + block}] + messages[1:]
            elif first is not None and first.get("role") == "system" and isinstance(first.get("content"), list):
                parts = first["content"] + [{"type": "text", "text": "\n\n" + block}]
                messages = [{**first, "content": parts}] + messages[1:]
            else:
                messages = [{"role": "system", "content": block}] + messages
            tools = None
        return messages, tools, gen

    def chat(self, req: dict) -> dict:
        if not self.has_template:
            return {"error": "this model has no chat template"}
        messages = copy.deepcopy(req.get("messages") or [])
        tools = copy.deepcopy(req.get("tools"))
        options = dict(req.get("options") or {})
        messages, tools, gen = self.prepare(messages, tools, options)
        extra = {k: v for k, v in options.items() if k not in OWN}
        if self.template is not None:
            extra["chat_template"] = self.template
        try:
            text = self.hf.apply_chat_template(
                messages, tools=tools, tokenize=False,
                add_generation_prompt=gen,
                continue_final_message=bool(options.get("continue_final_message")),
                **extra)
        except Exception as e:  # noqa: BLE001 - the template (or transformers) refused it
            return {"raised": f"{type(e).__name__}: {e}"}
        self.tok.encode_special_tokens = False
        ids = self.tok.encode(text, add_special_tokens=False).ids
        return {"text": text, "ids": ids}


def answer(eng: Engine, req: dict) -> dict:
    op = req.get("op")
    if op == "chat":
        return eng.chat(req)
    if op == "encode":
        return {"ids": eng.encode(req["text"], bool(req.get("add_special")), bool(req.get("parse_special")))}
    return {"error": f"unsupported op {op!r}"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tokenizer_json")
    ap.add_argument("tokenizer_config", nargs="?")
    ap.add_argument("--template", help="a chat template file of the model's own")
    ap.add_argument("--bug", action="append", choices=BUGS, default=[])
    args = ap.parse_args()
    eng = Engine(args.tokenizer_json, args.tokenizer_config, args.template, set(args.bug))
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            reply = answer(eng, req)
        except Exception as e:  # noqa: BLE001 - one bad request is its own error
            reply = {"error": f"{type(e).__name__}: {e}", "status": "error"}
        sys.stdout.write(json.dumps({"id": req.get("id"), **reply}) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
