"""Blind engines, round 25b: the ``chat`` op, a model's chat template rendered as transformers does.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. Each ``--bug NAME`` adds one bug of
a prompt builder. The flag may be repeated. No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind25b_chat.py {tokenizer_json} {tokenizer_config} [--bug NAME ...]

It was written on 2026-12-05, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md, the README of this folder, blind24_chat.py (its protocol
handling, template rendering and twin are copied), blind24_chats.jsonl (the conversations'
format) and the chat templates of qwen3's and gemma-3's tokenizer_config.json were read. It was
checked with small scripts of its own on qwen3 and gemma-3, on the 16 conversations of
blind25b_chats.jsonl.

The twin
--------

The twin is blind24_chat.py's without flags, unchanged. Its replies (text, ids, refusals) equal
blind24_chat.py's on all 16 conversations of both models.

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

Each bug edits the text of each message's content before the template is rendered: a string
content, or the ``text`` of each part of a list content. Other keys, tools and options are passed
as the twin passes them. Several bugs at once apply in this order: ``form-crlf``,
``ascii-folded``, ``markdown-escaped``, ``json-twice``.

On qwen3, ``z-parts`` (a user content given as a list of text parts) is refused by the template
itself, twin and bugs alike: Qwen 3's template calls ``message.content.startswith(...)`` and
``UndefinedError: 'list object' has no attribute 'startswith'`` is raised. So no bug shows there
on qwen3. Gemma 3's template joins the parts, each trimmed. Gemma 3 trims each content (Jinja's
``trim``: whitespace, CR included) but not the system message it puts before the first user
message. ``z-plain-capital``, ``z-plain-tutor`` and ``z-plain-joke`` hold none of the characters
the bugs touch and no bug changes them. Wherever a bug changes a prompt's text it changes its ids
too.

``form-crlf``: every line feed of a content becomes CR LF; a CR LF already there stays one CR LF
(``re.sub(r"\\r?\\n", "\\r\\n", text)``). All roles. A web front end posts a ``<textarea>``: the
browser's form submission sends its line breaks as CR LF, and the server hands the string on to
the template unchanged. The template's own line feeds stay LF. Shows wherever a content holds a
line feed the template keeps. Qwen 3: 6 of 16 (``z-shopping-list``, ``z-windows-path``,
``z-curly-quotes``, ``z-poet-system`` (the system message), ``z-table``, ``z-pasted-lines``).
Gemma 3: 6 of 16, the same but ``z-curly-quotes``, whose only line feed ends an assistant content
and goes with Gemma's ``trim``, and with ``z-parts``. Example, checked: ``z-pasted-lines``, the
user's ``"Count the lines:\\r\\nfirst line\\r\\nsecond line\\nthird line"`` gets a CR before its
last line feed only. Qwen 3: 30 ids either way, not the same ones; Gemma 3: 30 ids, 31 with the
bug.

``json-twice``: the content is JSON-encoded once too often, ``json.dumps(text,
ensure_ascii=False)[1:-1]``. A line feed becomes backslash and ``n``, a tab ``\\t``, a CR ``\\r``,
``"`` becomes ``\\"`` and a backslash two; non-ASCII stays as it is. All roles. A builder that
escapes the text to splice it into a hand-written JSON body, or reads a field an upstream encoded
twice, and passes that escaped string to the renderer does this. Shows wherever a content holds a
line feed, tab, CR, ``"`` or backslash, at any place (``\\n`` is not whitespace, so no ``trim``
removes it). Qwen 3: 7 of 16, those of ``form-crlf`` and ``z-quoted-word``. Gemma 3: 8 of 16,
``form-crlf``'s, ``z-curly-quotes`` (the assistant's trailing ``\\n`` is now kept) and
``z-quoted-word``. Example, checked: ``z-quoted-word``, ``What does "ubiquitous" mean`` becomes
``What does \\"ubiquitous\\" mean`` (and the assistant's quotes likewise). Qwen 3: 45 ids either
way, not the same ones; Gemma 3: 46 either way, not the same ones.

``markdown-escaped``: in ``user`` messages only, each of ``_ * [ ] ( ) ~ ` > # + - = | { } . !``
gets a backslash before it (Telegram's MarkdownV2 special characters; a backslash itself is left
alone). A chat bot escapes what users type so it can echo it with ``parse_mode=MarkdownV2`` and
sends the same escaped string to the model. Shows where a user content holds one of them; the
same characters in system and assistant messages (``z-plain-capital``, ``z-plain-tutor``,
``z-price``, ``z-hidden-space``) show nothing. Qwen 3: 4 of 16 (``z-shopping-list``,
``z-windows-path``, ``z-markdown``, ``z-arithmetic``). Gemma 3: 5, the same and ``z-parts``.
Example, checked: ``z-arithmetic``, ``Is 2+2=4 or 5`` becomes ``Is 2\\+2\\=4 or 5``. Qwen 3: 18
ids, 20 with the bug; Gemma 3: 19, 21.

``ascii-folded``: a "sanitizer" replaces typographic characters by ASCII ones: ``‘`` ``’`` by
``'``, ``“`` ``”`` ``«`` ``»`` by ``"``, ``–`` ``—`` by ``-``, ``…`` by ``...``, U+00A0 (no-break
space) by a space, and removes U+200B (zero-width space). All roles. A builder that cleans text
pasted from a word processor, or keeps a legacy ASCII-only path, does this. Shows wherever a
content holds one of them. Qwen 3: 4 of 16 (``z-curly-quotes``, ``z-price``, ``z-hidden-space``,
``z-guillemets``). Gemma 3: 5, the same and ``z-parts``. Example, checked: ``z-hidden-space``,
the user's ``long\\u200bword`` becomes ``longword`` and the assistant's ``“long”`` ``"long"``.
Qwen 3: 51 ids, 50 with the bug; Gemma 3: 49, 48.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import sys
from datetime import datetime

import jinja2
import jinja2.ext
import jinja2.nodes
import jinja2.utils
from jinja2.sandbox import ImmutableSandboxedEnvironment

BUGS = ("form-crlf", "json-twice", "markdown-escaped", "ascii-folded")
MARKDOWN_SPECIAL = "_*[]()~`>#+-=|{}.!"
ASCII_FOLD = {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-",
              "\u2026": "...", "\u00a0": " ", "\u200b": "", "\u00ab": '"', "\u00bb": '"'}
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


def form_crlf(text: str) -> str:
    """A textarea's line feeds as a browser submits them: every LF as CR LF (a CR LF stays one)."""
    return re.sub(r"\r?\n", "\r\n", text)


def json_twice(text: str) -> str:
    """Encoded as a JSON string once too often, the quotes cut off."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


def markdown_escaped(text: str) -> str:
    """Telegram MarkdownV2's special characters each behind a backslash."""
    return "".join("\\" + c if c in MARKDOWN_SPECIAL else c for c in text)


def ascii_folded(text: str) -> str:
    """Typographic characters replaced by ASCII ones."""
    return "".join(ASCII_FOLD.get(c, c) for c in text)


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

        def each(messages, fn, roles=None):
            return [{**m, "content": edit_text(m["content"], fn)}
                    if isinstance(m, dict) and "content" in m and (roles is None or m.get("role") in roles)
                    else m for m in messages]

        if "form-crlf" in bugs:
            messages = each(messages, form_crlf)
        if "ascii-folded" in bugs:
            messages = each(messages, ascii_folded)
        if "markdown-escaped" in bugs:
            messages = each(messages, markdown_escaped, roles=("user",))
        if "json-twice" in bugs:
            messages = each(messages, json_twice)
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
