"""Blind engines, round 23: the ``chat`` op, a model's chat template rendered as transformers does.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. Each ``--bug NAME`` adds one bug of
a prompt builder. The flag may be repeated. No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind23_chat.py {tokenizer_json} {tokenizer_config} [--bug NAME ...]

It was written blind on 2026-12-05, from one line per bug. Its author read no diagnosis code and
ran no tokparity. Only docs/contracts.md, the README of this folder, blind22_chat.py (for the way
it speaks the protocol), tokparity/backends/hf.py (how the oracle calls transformers) and
transformers' own rendering code were read. It was checked against transformers 5.25.0 on
corpora/chats.jsonl and a few conversations of its own (qwen3, gemma-3, llama-bpe).

The twin
--------

It does what transformers' ``apply_chat_template(messages, tools=tools, tokenize=False, ...)``
does, without transformers. The template is ``chat_template`` of tokenizer_config.json (a named
list of templates: ``tool_use`` where tools are given, else ``default``), else
``chat_template.jinja`` beside it. It is compiled in jinja2's ``ImmutableSandboxedEnvironment``
with ``trim_blocks``, ``lstrip_blocks`` and the ``loopcontrols`` extension. As in transformers,
``tojson`` is ``json.dumps`` without HTML escaping (``ensure_ascii=False``), and the template has
``raise_exception``, ``strftime_now``, ``dict``, ``namespace`` and a ``{% generation %}`` tag.

Each message loses its keys whose value is null. ``reasoning_content`` is filled from
``thinking`` or ``reasoning``, and ``thinking`` from it. The template gets ``messages``,
``tools``, ``documents`` (an option, else null) and ``add_generation_prompt``. It gets the
named special tokens of the config (``bos_token``, ``eos_token``, ... and
``extra_special_tokens``) and every other option (``enable_thinking``, ``date_string``).
Class defaults transformers adds are not read (Gemma's ``mask_token``).
``continue_final_message`` marks the last message's content, renders, and cuts the prompt
after it, as transformers does. An empty conversation,
or both ``continue_final_message`` and ``add_generation_prompt``, is refused as transformers
refuses it. The prompt's ids are ``Tokenizer.encode(prompt, add_special_tokens=False)`` of the
``tokenizers`` library, special-token text parsed.

A template that raises, or a refusal, gets ``{"raised": ...}``. A model with no chat template
gets an error with no status: the engine does not apply templates there. ``encode`` is answered
too, bug-free.

The bugs
--------

``tools-in-first-user``: the tools are not passed to the template (it gets null). Instead
``"\\n\\nTools available:\\n" + json.dumps(tools, indent=2)`` is appended to the content of the
first ``user`` message. A builder for models whose template it thinks cannot take tools does
this, as some agent frameworks do. A list content gets it added to its last text part (or a new
text part). A missing content becomes that text alone. With no user message the tools are lost.
An empty list of tools is passed as null and adds nothing. Shows on every conversation with
tools.

``one-blank-line-max``: in every message's content (a string, or the text of each part), a run
of three or more ``"\\n"`` becomes ``"\\n\\n"``. A builder that tidies whitespace to save
tokens, or a Markdown cleaner, does this. ``"\\r\\n"`` runs and lines with spaces are not
touched. Shows where a content holds three line breaks in a row.

``empty-last-assistant-dropped``: a last message with role ``assistant`` whose content is
``""``, ``[]``, null or missing is left out before rendering. The builder takes it for the
placeholder of the reply to come. An assistant message with text stays. Shows where the
conversation ends in such a message (with or without tool calls).

``tool-result-wrapped``: each message with role ``tool`` gets ``json.dumps({"result": content})``
as its content, with json's defaults: ``"22 C"`` becomes ``{"result": "22 C"}``, non-ASCII as
``\\uXXXX``, a missing content as ``{"result": null}``. A builder that wraps every tool output in
a JSON envelope, as the OpenAI function examples suggest, does this. Shows on every
conversation with a tool message.

``content-nfkc``: every message's content that is a string goes through
``unicodedata.normalize("NFKC", ...)``. A server that normalises its input before templating
(to stop look-alike characters) does this. Lists of parts are untouched. Full-width letters
become ASCII, ``ﬁ`` becomes ``fi``, ``²`` becomes ``2``, ``…`` becomes ``...``, U+00A0 a space.
Shows where a content is not in NFKC.

``gen-prompt-when-tools``: ``add_generation_prompt`` is set true whenever the request gives a
non-empty list of tools, whatever it asks. A builder that assumes a tool request always wants a
reply does this. With ``continue_final_message`` too, transformers' refusal follows. Shows on
conversations with tools that ask for no generation prompt (``false`` or absent).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import sys
import unicodedata
from datetime import datetime

import jinja2
import jinja2.ext
import jinja2.nodes
import jinja2.utils
from jinja2.sandbox import ImmutableSandboxedEnvironment

BUGS = ("tools-in-first-user", "one-blank-line-max", "empty-last-assistant-dropped", "tool-result-wrapped",
        "content-nfkc", "gen-prompt-when-tools")
NAMED_SPECIALS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
REASONING = ("reasoning_content", "thinking", "reasoning")
CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "
NEWLINE_RUN = re.compile(r"\n{3,}")


class Refused(Exception):
    """transformers refuses the conversation before the template sees it."""


# --- the template environment, as transformers builds it ----------------------------------------

class GenerationTag(jinja2.ext.Extension):
    """``{% generation %}...{% endgeneration %}``: renders its body (transformers tracks it)."""
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

    def _body(self, caller):
        return caller()


class SafeNamespace(jinja2.utils.Namespace):
    def __init__(*args, **kwargs):  # noqa: N805 - jinja's own signature trick
        self, args = args[0], args[1:]
        attrs = dict(*args, **kwargs)
        for name in attrs:
            SafeNamespace._check(name)
        jinja2.utils.Namespace.__init__(self, attrs)

    def __setitem__(self, name, value):
        SafeNamespace._check(name)
        jinja2.utils.Namespace.__setitem__(self, name, value)

    @staticmethod
    def _check(name):
        if isinstance(name, str) and name.startswith("_"):
            raise jinja2.exceptions.SecurityError(f"no underscore-prefixed namespace attributes ({name!r})")


class SafeDict:
    def __call__(self, *args, **kwargs):
        return dict(*args, **kwargs)

    def fromkeys(self, *args, **kwargs):
        return dict.fromkeys(*args, **kwargs)


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def strftime_now(fmt):
    return datetime.now().strftime(fmt)


def environment() -> ImmutableSandboxedEnvironment:
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[GenerationTag, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    env.globals["dict"] = SafeDict()
    env.globals["namespace"] = SafeNamespace
    return env


# --- the builder's bugs ------------------------------------------------------------------------------

def edit_text(content, fn):
    """fn applied to a string content, or to the text of each part of a list content."""
    if isinstance(content, str):
        return fn(content)
    if isinstance(content, list):
        return [{**p, "text": fn(p["text"])} if isinstance(p, dict) and isinstance(p.get("text"), str) else p
                for p in content]
    return content


def append_text(content, block: str):
    if content is None:
        return block
    if isinstance(content, list):
        parts = list(content)
        for k in range(len(parts) - 1, -1, -1):
            p = parts[k]
            if isinstance(p, dict) and isinstance(p.get("text"), str):
                parts[k] = {**p, "text": p["text"] + block}
                return parts
        return parts + [{"type": "text", "text": block}]
    return f"{content}{block}"


def is_empty(content) -> bool:
    return content is None or content == "" or content == []


# --- the engine ----------------------------------------------------------------------------------------

class Engine:
    def __init__(self, tokenizer_json: str, tokenizer_config: str | None, bugs: set[str]):
        from tokenizers import Tokenizer

        self.bugs = bugs
        self.tok = Tokenizer.from_file(tokenizer_json)
        if tokenizer_config is None:
            tokenizer_config = os.path.join(os.path.dirname(os.path.abspath(tokenizer_json)),
                                            "tokenizer_config.json")
        config: dict = {}
        if os.path.exists(tokenizer_config):
            with open(tokenizer_config, encoding="utf-8") as f:
                config = json.load(f)
        template = config.get("chat_template")
        if isinstance(template, list):  # [{"name": ..., "template": ...}]
            template = {t["name"]: t["template"] for t in template}
        if not template:
            beside = os.path.join(os.path.dirname(os.path.abspath(tokenizer_config)), "chat_template.jinja")
            if os.path.exists(beside):
                with open(beside, encoding="utf-8") as f:
                    template = f.read()
        self.template = template or None
        self.specials: dict[str, str] = {}
        for name in NAMED_SPECIALS:
            value = config.get(name)
            if isinstance(value, dict):
                value = value.get("content")
            if isinstance(value, str):
                self.specials[name] = value
        extra = config.get("extra_special_tokens")
        if isinstance(extra, dict):
            for name, value in extra.items():
                if isinstance(value, dict):
                    value = value.get("content")
                if isinstance(value, str):
                    self.specials[name] = value
        self.env = environment()
        self._compiled: dict[str, jinja2.Template] = {}

    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        self.tok.encode_special_tokens = not parse_special
        return self.tok.encode(text, add_special_tokens=add_special).ids

    def pick_template(self, tools) -> str:
        if isinstance(self.template, dict):
            if tools is not None and "tool_use" in self.template:
                return self.template["tool_use"]
            if "default" in self.template:
                return self.template["default"]
            raise Refused("this model has several chat templates and no default")
        return self.template

    # the builder: what it hands to the renderer
    def prepare(self, messages: list, tools, gen):
        bugs = self.bugs
        if "gen-prompt-when-tools" in bugs and tools:
            gen = True
        if ("empty-last-assistant-dropped" in bugs and messages and isinstance(messages[-1], dict)
                and messages[-1].get("role") == "assistant" and is_empty(messages[-1].get("content"))):
            messages = messages[:-1]
        if "tool-result-wrapped" in bugs:
            messages = [{**m, "content": json.dumps({"result": m.get("content")})}
                        if isinstance(m, dict) and m.get("role") == "tool" else m for m in messages]
        if "one-blank-line-max" in bugs:
            messages = [{**m, "content": edit_text(m["content"], lambda s: NEWLINE_RUN.sub("\n\n", s))}
                        if isinstance(m, dict) and "content" in m else m for m in messages]
        if "content-nfkc" in bugs:
            messages = [{**m, "content": unicodedata.normalize("NFKC", m["content"])}
                        if isinstance(m, dict) and isinstance(m.get("content"), str) else m for m in messages]
        if "tools-in-first-user" in bugs and tools is not None:
            if tools:
                block = "\n\nTools available:\n" + json.dumps(tools, indent=2)
                for k, m in enumerate(messages):
                    if isinstance(m, dict) and m.get("role") == "user":
                        messages = messages[:k] + [{**m, "content": append_text(m.get("content"), block)}] \
                            + messages[k + 1:]
                        break
            tools = None
        return messages, tools, gen

    def render(self, messages: list, tools, documents, gen, cont, extra: dict) -> str:
        """apply_chat_template(..., tokenize=False), as transformers 5 does it."""
        source = self.pick_template(tools)
        if not messages:
            raise Refused("Cannot apply chat template to an empty conversation. Provide at least one message.")
        chat = []
        for m in messages:
            if not isinstance(m, dict):
                raise Refused(f"Chat messages should be dicts, but got {m!r}.")
            m = {k: v for k, v in m.items() if v is not None}
            reasoning = next((m[k] for k in REASONING if m.get(k) is not None), None)
            if reasoning is not None:
                m = {"thinking": reasoning, **m, "reasoning_content": reasoning}
            chat.append(m)
        for doc in documents or []:
            if not isinstance(doc, dict):
                raise Refused("Documents should be a list of dicts with 'title' and 'text' keys!")
        if cont and gen:
            raise Refused("continue_final_message and add_generation_prompt are not compatible.")
        final = None
        if cont:
            field = cont if isinstance(cont, str) else "content"
            final = chat[-1].get(field)
            if final is None:
                raise Refused(f'continue_final_message is set but the final message has no "{field}" to continue!')
            fields = [field]
            if field in REASONING:
                fields = [f for f in REASONING if chat[-1].get(f) == final]
            if not any(f in source for f in fields):
                raise Refused(f'continue_final_message is set to "{field}" but this is not an accepted field '
                              "in the chat_template")
            if isinstance(final, (list, tuple)):
                for part in reversed(final):
                    if "text" in part:
                        final = part["text"]
                        part["text"] = part["text"] + CONTINUE_TAG
                        break
                else:
                    raise Refused("continue_final_message is set but there is no text to continue "
                                  "in the final message!")
            else:
                for f in fields:
                    chat[-1][f] = chat[-1][f] + CONTINUE_TAG
        if source not in self._compiled:
            self._compiled[source] = self.env.from_string(source)
        text = self._compiled[source].render(messages=chat, tools=tools, documents=documents,
                                             add_generation_prompt=gen, **{**self.specials, **extra})
        if cont:
            if final.strip() not in text or CONTINUE_TAG.strip() not in text:
                raise Refused("continue_final_message is set but the final message does not appear in the chat "
                              "after applying the chat template!")
            at = text.rindex(CONTINUE_TAG.strip())
            text = text[:at] if text[at:at + len(CONTINUE_TAG)] == CONTINUE_TAG else text[:at].rstrip()
        return text

    def chat(self, req: dict) -> dict:
        if not self.template:
            return {"error": "this model has no chat template"}
        messages = copy.deepcopy(req.get("messages") or [])
        tools = copy.deepcopy(req.get("tools"))
        options = dict(req.get("options") or {})
        gen = options.pop("add_generation_prompt", False)
        cont = options.pop("continue_final_message", False)
        documents = options.pop("documents", None)
        messages, tools, gen = self.prepare(messages, tools, gen)
        try:
            text = self.render(messages, tools, documents, gen, cont, options)
        except Exception as e:  # noqa: BLE001 - the template (or the refusal) raised
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
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("tokenizer_json")
    ap.add_argument("tokenizer_config", nargs="?")
    ap.add_argument("--bug", action="append", choices=BUGS, default=[])
    args = ap.parse_args()
    eng = Engine(args.tokenizer_json, args.tokenizer_config, set(args.bug))
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            reply = answer(eng, req)
        except Exception as e:  # noqa: BLE001 - a failure on one request is that request's
            reply = {"error": f"{type(e).__name__}: {e}", "status": "error"}
        sys.stdout.write(json.dumps({"id": req.get("id"), **reply}) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
