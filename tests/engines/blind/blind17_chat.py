"""A ``cmd:`` engine for the ``chat`` op: the model's Jinja chat template rendered as transformers'
``apply_chat_template`` renders it (jinja2's immutable sandbox), the prompt tokenized with the
real ``tokenizers`` library, and one bug on request: a template language whose ``+`` reads a
missing value as the empty string next to a string.

Written on 2026-12-01 **blind**: its author read no code of tokparity's diagnosis
(``tokparity/diagnose/``, ``tokparity/diff/``, ``tokparity/fuzz/``, ``tests/diagnose/``,
``docs/catalogue/``), only docs/contracts.md, docs/guides/your-engine.md, docs/guides/chat.md and
``chat_blind.py`` (whose structure and rendering this file copies), and ran tokparity with
``--no-diagnose`` only, looking at nothing but mismatch counts.

    python blind17_chat.py TOKENIZER_JSON [--bug null-concat]

``tokenizer_config.json`` beside ``TOKENIZER_JSON`` gives the chat template (``chat_template``: a
string, or a list of ``{"name", "template"}``, of which ``tool_use`` is taken when the request has
tools, else ``default``; a ``chat_template.jinja`` beside it wins) and the special-token texts the
template sees (``bos_token``, ``eos_token``, ... and the named tokens of ``extra_special_tokens``).

``chat``: ``{"messages", "tools", "options"}`` answered ``{"text": PROMPT, "ids": [...]}``, or
``{"raised": WHY}`` where rendering fails (the template's ``raise_exception``, any error inside the
template, or one of apply_chat_template's own checks). ``add_generation_prompt`` and
``continue_final_message`` are apply_chat_template's arguments; every other option is passed to
the template as a variable, as its ``**kwargs``. The ids are ``encode(text,
add_special_tokens=False)`` with special-token text parsed (unless the config says
``split_special_tokens: true``). Any other op is answered ``{"error": ...}``.

With no ``--bug`` it is the bug-free twin: it does what transformers does.

The bug, ``--bug null-concat``: in the template language, ``+`` between a string and a missing
value (Jinja's undefined: a dict key or attribute that is not there, a variable never set) or None
(JSON null) gives the string alone, the missing side read as ``""``, on either side of the ``+``.
jinja2, and so transformers, refuses there: ``UndefinedError`` for an undefined, ``TypeError`` for
None. Taken from llama.cpp's own Jinja engine (``common/jinja/runtime.cpp``,
``binary_expression::execute_impl``: "Workaround: treating null/undefined as empty string for
string concatenation"). Nothing else in the language changes: ``undefined ~ "x"``, ``{{ undefined
}}``, ``is defined`` and ``+`` between two non-strings (``undefined + undefined``, ``None + 1``,
``"x" + 1``) behave as in jinja2. A template that writes ``'<tool>' + tool.name + '</tool>'`` for
OpenAI-style tools (whose name is under ``tool.function.name``) is refused by transformers and
makes a prompt here, with ``<tool></tool>``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import datetime
from functools import lru_cache

import jinja2
import jinja2.ext
import jinja2.nodes
import jinja2.utils
from jinja2.sandbox import ImmutableSandboxedEnvironment
from tokenizers import Tokenizer

BUGS = ("null-concat",)

# The named special tokens transformers passes to a template (PreTrainedTokenizerBase.SPECIAL_TOKENS_ATTRIBUTES).
SPECIAL_NAMES = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
# Names a message's reasoning is passed under; the first is the one templates read (transformers' _REASONING_FIELDS).
REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")
CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "


class Refused(Exception):
    """The conversation cannot be rendered (what apply_chat_template raises)."""


# --- the Jinja environment, as transformers' _cached_compile_jinja_template builds it -------------

class GenerationTag(jinja2.ext.Extension):
    """``{% generation %}...{% endgeneration %}`` renders its body (transformers' AssistantTracker,
    without the tracking, which only serves return_assistant_tokens_mask)."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render_body"), [], [], body).set_lineno(lineno)

    def _render_body(self, caller):
        return caller()


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def strftime_now(format):
    return datetime.now().strftime(format)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    """transformers' override of jinja2's ``tojson`` (no HTML escapes, keys in order)."""
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


class TemplateDict:
    """``dict(...)`` in a template, without the class itself (as transformers)."""

    def __call__(self, *args, **kwargs):
        return dict(*args, **kwargs)

    def fromkeys(self, *args, **kwargs):
        return dict.fromkeys(*args, **kwargs)


class TemplateNamespace(jinja2.utils.Namespace):
    """``namespace(...)`` refusing underscore-prefixed attributes (as transformers)."""

    def __init__(*args, **kwargs):
        self, args = args[0], args[1:]
        attrs = dict(*args, **kwargs)
        for name in attrs:
            TemplateNamespace._check_name(name)
        jinja2.utils.Namespace.__init__(self, attrs)

    def __setitem__(self, name, value):
        TemplateNamespace._check_name(name)
        jinja2.utils.Namespace.__setitem__(self, name, value)

    @staticmethod
    def _check_name(name):
        if isinstance(name, str) and name.startswith("_"):
            raise jinja2.exceptions.SecurityError(
                f"Chat templates cannot store underscore-prefixed attributes on a namespace, but got {name!r}."
            )


def is_missing(value) -> bool:
    """What llama.cpp's engine treats as empty in a concatenation: undefined or null."""
    return value is None or isinstance(value, jinja2.Undefined)


class NullConcatEnvironment(ImmutableSandboxedEnvironment):
    """bug: null-concat. The sandbox lets an environment take over a binary operator: with ``+``
    intercepted, every ``a + b`` in a template comes through ``call_binop`` (and is never folded at
    compile time). Only a string beside a missing value is changed; every other pair goes to
    jinja2's own ``+``, so it raises or adds exactly as before."""

    intercepted_binops = frozenset({"+"})

    def call_binop(self, context, operator, left, right):
        if operator == "+":
            if isinstance(left, str) and is_missing(right):
                return left
            if is_missing(left) and isinstance(right, str):
                return right
        return super().call_binop(context, operator, left, right)


def build_environment(bugs: frozenset[str]) -> ImmutableSandboxedEnvironment:
    # The twin uses the very class transformers uses; the bug only swaps in the subclass.
    cls = NullConcatEnvironment if "null-concat" in bugs else ImmutableSandboxedEnvironment
    env = cls(trim_blocks=True, lstrip_blocks=True, extensions=[GenerationTag, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    env.globals["dict"] = TemplateDict()
    env.globals["namespace"] = TemplateNamespace
    return env


# --- the model's files ---------------------------------------------------------------------------

def token_text(value) -> str | None:
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) else None


def read_config(tokenizer_json: str) -> tuple[dict, str | dict | None]:
    folder = os.path.dirname(os.path.abspath(tokenizer_json))
    config: dict = {}
    path = os.path.join(folder, "tokenizer_config.json")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            config = json.load(f)
    template = config.get("chat_template")
    if isinstance(template, list):
        template = {t["name"]: t["template"] for t in template}
    jinja_file = os.path.join(folder, "chat_template.jinja")
    if os.path.exists(jinja_file):
        with open(jinja_file, encoding="utf-8") as f:
            template = f.read()
    return config, template


def special_tokens_map(config: dict) -> dict[str, str]:
    named = {name: token_text(config.get(name)) for name in SPECIAL_NAMES}
    extra = config.get("extra_special_tokens")
    if isinstance(extra, dict):                  # transformers v5: named model-specific tokens
        named.update({name: token_text(value) for name, value in extra.items()})
    return {name: text for name, text in named.items() if text is not None}


def alias_reasoning_fields(chat: list[dict]) -> list[dict]:
    """transformers' _alias_reasoning_fields: ``thinking`` and ``reasoning_content`` both filled from
    whichever reasoning field the message has."""
    out = []
    for message in chat:
        reasoning = next((message[k] for k in REASONING_FIELDS if message.get(k) is not None), None)
        if reasoning is not None:
            message = {"thinking": reasoning, **message, "reasoning_content": reasoning}
        out.append(message)
    return out


# --- the engine ----------------------------------------------------------------------------------

class ChatEngine:
    def __init__(self, tokenizer_json: str, bugs: frozenset[str]):
        self.bugs = bugs
        self.config, self.template = read_config(tokenizer_json)
        self.specials = special_tokens_map(self.config)
        self.tok = Tokenizer.from_file(tokenizer_json)
        # transformers sets encode_special_tokens from split_special_tokens (False unless the config says so).
        self.tok.encode_special_tokens = bool(self.config.get("split_special_tokens", False))
        self.env = build_environment(bugs)
        self.compile = lru_cache(maxsize=8)(self.env.from_string)

    def pick_template(self, tools) -> str:
        """transformers' get_chat_template."""
        template = self.template
        if isinstance(template, dict):
            if tools is not None and "tool_use" in template:
                return template["tool_use"]
            if "default" in template:
                return template["default"]
            raise Refused(f"multiple chat templates with no default: {sorted(template)}")
        if template is None:
            raise Refused("tokenizer.chat_template is not set")
        return template

    def render(self, messages, tools, options: dict) -> str:
        """apply_chat_template(tokenize=False) and render_jinja_template, for one conversation."""
        options = dict(options or {})
        add_generation_prompt = bool(options.pop("add_generation_prompt", False))
        continue_final = options.pop("continue_final_message", False) or False
        kwargs = options                          # date_string, enable_thinking, ...

        chat_template = self.pick_template(tools)
        if not isinstance(messages, list) or not messages:
            raise Refused("Cannot apply chat template to an empty conversation. Provide at least one message.")
        chat = []
        for message in messages:                  # _normalize_chat_messages: keys whose value is None dropped
            if not isinstance(message, dict):
                raise Refused(f"Chat messages should be dicts, but got {message!r}.")
            chat.append({key: value for key, value in message.items() if value is not None})
        if continue_final and add_generation_prompt:
            raise Refused("continue_final_message and add_generation_prompt are not compatible.")

        template_kwargs = {**self.specials, **kwargs}
        if tools is not None and not all(isinstance(t, dict) for t in tools):
            raise Refused("Tools should be JSON schemas.")
        compiled = self.compile(chat_template)

        chat = alias_reasoning_fields(chat)
        final_message = None
        if continue_final:
            field = continue_final if isinstance(continue_final, str) else "content"
            if (final_message := chat[-1].get(field)) is None:
                raise Refused(f'continue_final_message is set but the final message has no "{field}" to continue!')
            fields = [field]
            if field in REASONING_FIELDS:
                fields = [f for f in REASONING_FIELDS if chat[-1].get(f) == final_message]
            if not any(f in chat_template for f in fields):
                raise Refused(f'continue_final_message is set to "{field}" but this is not an accepted field in the chat_template')
            elif isinstance(final_message, (list, tuple)):
                for block in reversed(final_message):
                    if "text" in block:
                        final_message = block["text"]
                        block["text"] = block["text"] + CONTINUE_TAG
                        break
                else:
                    raise Refused("continue_final_message is set but we could not find any text to continue in the final message!")
            else:
                for f in fields:
                    chat[-1][f] = chat[-1][f] + CONTINUE_TAG

        text = compiled.render(
            messages=chat, tools=tools, documents=None, add_generation_prompt=add_generation_prompt, **template_kwargs
        )

        if continue_final:
            if final_message.strip() not in text or CONTINUE_TAG.strip() not in text:
                raise Refused("continue_final_message is set but the final message does not appear in the chat after applying the chat template!")
            at = text.rindex(CONTINUE_TAG.strip())
            if text[at:at + len(CONTINUE_TAG)] == CONTINUE_TAG:
                text = text[:at]
            else:
                text = text[:at].rstrip()
        return text

    def chat(self, req: dict) -> dict:
        try:
            text = self.render(req.get("messages"), req.get("tools"), req.get("options") or {})
        except Exception as exc:                 # whatever apply_chat_template would raise
            return {"raised": f"{type(exc).__name__}: {exc}"}
        ids = self.tok.encode(text, add_special_tokens=False).ids
        return {"text": text, "ids": ids}

    def handle(self, req: dict) -> dict:
        if req.get("op") == "chat":
            return self.chat(req)
        return {"error": "unsupported op"}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("tokenizer_json")
    parser.add_argument("--bug", action="append", choices=BUGS, default=[])
    args = parser.parse_args()
    engine = ChatEngine(args.tokenizer_json, frozenset(args.bug))
    for line in sys.stdin:
        if not line.strip():
            continue
        req: dict = {}
        try:
            req = json.loads(line)
            reply = {"id": req.get("id"), **engine.handle(req)}
        except Exception as exc:               # one bad request must not end the engine
            reply = {"id": req.get("id") if isinstance(req, dict) else None, "error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
