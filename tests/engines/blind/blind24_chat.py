"""Blind engines, round 24: the ``chat`` op, a model's chat template rendered as transformers does.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. Each ``--bug NAME`` adds one bug of
a prompt builder. The flag may be repeated. No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind24_chat.py {tokenizer_json} {tokenizer_config} [--bug NAME ...]

It was written on 2026-12-05, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md, the README of this folder, blind23_chat.py (its protocol and
twin are copied), tokparity/backends/hf.py and transformers' own code were read. It was checked
with small scripts of its own against transformers 5.25.0 (qwen3, gemma-3, llama-bpe). They ran
corpora/chats.jsonl (35), blind23_chats.jsonl (8) and blind24_chats.jsonl (9).

The twin
--------

The twin is blind23_chat.py's, unchanged. It gave transformers' text and ids on all 52
conversations of the three models, refusals included.

It does what transformers' ``apply_chat_template(messages, tools=tools, tokenize=False, ...)``
does, without transformers. The template is ``chat_template`` of tokenizer_config.json (a named
list: ``tool_use`` where tools are given, else ``default``), else ``chat_template.jinja`` beside
it. It is compiled in jinja2's ``ImmutableSandboxedEnvironment`` with ``trim_blocks``,
``lstrip_blocks`` and the ``loopcontrols`` extension. ``tojson`` is ``json.dumps`` without HTML
escaping. The template has ``raise_exception``, ``strftime_now``, ``dict``, ``namespace`` and a
``{% generation %}`` tag.

Each message loses its keys whose value is null. ``reasoning_content`` is filled from
``thinking`` or ``reasoning``, and ``thinking`` from it. The template gets ``messages``,
``tools``, ``documents`` and ``add_generation_prompt``. It gets the config's named special tokens
and every other option (``enable_thinking``, ``date_string``). ``continue_final_message`` marks
the last message's content, renders, and cuts the prompt after it. An empty conversation, or both
``continue_final_message`` and ``add_generation_prompt``, is refused as transformers refuses it.
The ids are ``Tokenizer.encode(prompt, add_special_tokens=False)`` of ``tokenizers``, special
tokens parsed.

A template that raises, or a refusal, gets ``{"raised": ...}``. A model with no chat template gets
an error with no status. ``encode`` is answered too, bug-free.

The bugs
--------

Each bug changes the messages before rendering. Tools and options are passed as the twin passes
them.

``html-escaped-content``: each message's string content goes through ``html.escape(content)``
(``quote=True``). So do the text parts of a list content. All roles are escaped. A web server that
escapes user input early does this. ``<`` becomes ``&lt;``, ``&`` ``&amp;``, ``"`` ``&quot;``,
``'`` ``&#x27;``. A special token's text in a content (``<|im_end|>``) is escaped, so it is no
longer parsed as that token. Shows wherever a content holds one of ``< > & " '``. On Qwen 3: 11
conversations (``markup-01``, ``injection-01`` to ``-03``, ``non-ascii-02``, ``date-01``,
``tools-01``, the tool results' JSON, ``y-markup``). Gemma 3: 9, with ``y-parts``. Llama 3: 12.

``tabs-expanded``: every ``"\\t"`` of a string content, or of a text part, becomes four spaces.
All roles. A builder that normalises indentation does this. Shows where a content holds a tab the
template keeps. Qwen 3: ``whitespace-02`` (``"\\ttab\\t"``) and ``y-tabs``. Gemma 3 and Llama 3
trim each content, so ``whitespace-02``'s tabs go anyway. There ``y-tabs`` and ``y-parts`` show
it.

``history-cut-to-last-user``: only the ``system`` messages and the messages from the last ``user``
message on are kept. A stateless builder that sends the last turn only does this. With no ``user``
message nothing is cut. Shows on every conversation with a turn before its last user message: 16
of 52 on each model. They are ``multi-turn-01``, ``multi-turn-02``, ``long-history-01``,
``reasoning-01``, ``tool-result-01``, ``y-history`` and others. On Gemma 3 a refused
conversation may then render. ``alternation-broken-01`` (two user messages) keeps the second
only. The template no longer raises.

``assistant-content-stripped``: the string content of ``assistant`` messages goes through
``.strip()`` (Python's whitespace). Other roles are untouched. A builder that tidies the model's
past replies does this. Shows on Qwen 3 only: ``whitespace-02`` (``"trailing newline\\n"``),
``y-assistant-ws``, ``y-assistant-ws-last`` and ``y-continue-space``. The last continues
``"The quick brown fox "`` and loses its space. Gemma 3's and Llama 3's templates trim every
content themselves, so it shows nowhere there.

``name-field-dropped``: each message's ``name`` key is removed before rendering. A builder that
passes only ``role`` and ``content`` through does this. No template of the zoo reads a message's
``name``. That holds for Qwen 3, Gemma 3, Llama 3, DeepSeek V3 and Gemini (tokenizer_config.json).
It holds for gpt-oss and Mistral NeMo (template files) and the GGUF templates of llama.cpp's
vocabularies. gpt-oss takes a tool result's name from the last tool call. Gemma 4 reads ``name``
inside ``tool_responses`` only. So it changes no prompt on the zoo: 0 of 52 on each model, ``y-name``
included. A template that writes ``message.name`` shows it.
"""

from __future__ import annotations

import argparse
import copy
import html
import json
import os
import sys
from datetime import datetime

import jinja2
import jinja2.ext
import jinja2.nodes
import jinja2.utils
from jinja2.sandbox import ImmutableSandboxedEnvironment

BUGS = ("html-escaped-content", "tabs-expanded", "history-cut-to-last-user", "assistant-content-stripped",
        "name-field-dropped")
NAMED_SPECIALS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
REASONING = ("reasoning_content", "thinking", "reasoning")
CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "


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
        if "history-cut-to-last-user" in bugs:
            users = [k for k, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "user"]
            if users:
                messages = [m for k, m in enumerate(messages)
                            if k >= users[-1] or (isinstance(m, dict) and m.get("role") == "system")]
        if "name-field-dropped" in bugs:
            messages = [{k: v for k, v in m.items() if k != "name"} if isinstance(m, dict) else m for m in messages]
        if "assistant-content-stripped" in bugs:
            messages = [{**m, "content": m["content"].strip()}
                        if isinstance(m, dict) and m.get("role") == "assistant" and isinstance(m.get("content"), str)
                        else m for m in messages]
        if "tabs-expanded" in bugs:
            messages = [{**m, "content": edit_text(m["content"], lambda s: s.replace("\t", "    "))}
                        if isinstance(m, dict) and "content" in m else m for m in messages]
        if "html-escaped-content" in bugs:
            messages = [{**m, "content": edit_text(m["content"], html.escape)}
                        if isinstance(m, dict) and "content" in m else m for m in messages]
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
