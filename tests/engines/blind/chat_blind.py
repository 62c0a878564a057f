"""A ``cmd:`` engine that renders chat prompts with the model's Jinja chat template and tokenizes
them with Hugging Face ``tokenizers``, as an inference server would, with any number of
well-known bugs on request. Written from transformers' own source (``apply_chat_template`` in
``tokenization_utils_base.py``, ``_compile_jinja_template`` and ``render_jinja_template`` in
``utils/chat_template_utils.py``, transformers 5.24) and one line per bug; its author read no code
of tokparity's chat rendering, reference or diagnosis.

    python3 chat_blind.py TOKENIZER_JSON [--bug NAME ...]

``tokenizer_config.json`` beside ``TOKENIZER_JSON`` gives the chat template (``chat_template``: a
string, or a list of ``{"name", "template"}``, of which ``tool_use`` is taken when the request
has tools, else ``default``; a ``chat_template.jinja`` beside it wins) and the special-token texts
the template sees (``bos_token``, ``eos_token``, ``unk_token``, ``sep_token``, ``pad_token``,
``cls_token``, ``mask_token``, and the named tokens of an ``extra_special_tokens`` dict: each a
string or ``{"content": ...}``).

Ops (one JSON request per line on stdin, one reply per line on stdout, in order):

``chat``: ``{"messages": [...], "tools": [...] | null, "options": {...}}`` answered
``{"text": PROMPT, "ids": [...]}``, or ``{"raised": WHY}`` when rendering fails (the template's
``raise_exception``, an error inside the template, or one of the checks transformers makes:
an empty conversation, ``continue_final_message`` with ``add_generation_prompt``, ...). The options
``add_generation_prompt`` and ``continue_final_message`` are apply_chat_template's arguments;
every other option (``date_string``, ``enable_thinking``, ...) is passed to the template as a
variable, over the special-token texts, as apply_chat_template's ``**kwargs``.

With no ``--bug`` it does what ``tokenizer.apply_chat_template(messages, tools=tools,
add_generation_prompt=..., continue_final_message=..., **other_options)`` does, then what the
tokenizer does with the text: ``encode(text, add_special_tokens=False)``, special-token text
parsed to its id (unless the config says ``split_special_tokens: true``).

``encode`` is answered ``{"error": "no encode"}``; any other op ``{"error": "unsupported op"}``.

The bugs (``--bug NAME``, repeatable; each switches on one thing, nothing more):

``double-bos``            the prompt is tokenized with ``add_special_tokens=True``: the
                          tokenizer's post-processor adds its BOS in front of the one the
                          template already wrote (vLLM PR #16976, Llama 3.1). Changes nothing
                          where the post-processor adds nothing.
``no-trim-blocks``        the Jinja environment is built without ``trim_blocks``: the newline
                          after a block tag stays (swift-transformers #322, stray newlines).
``no-lstrip-blocks``      the environment is built without ``lstrip_blocks``: the spaces and tabs
                          before a block tag at the start of a line stay.
``jinja-tojson``          jinja2's own ``tojson`` filter is kept instead of transformers'
                          override (HTML-safe escapes of ``<>&'``, keys sorted, only ``indent``).
``ascii-json``            transformers' ``tojson`` override, but ``ensure_ascii`` defaults to True
                          (non-ASCII written as ``\\uXXXX``).
``drop-final-newline``    if the rendered prompt ends with ``"\\n"``, that last ``"\\n"`` is cut
                          off (transformers #34462-style: Jinja drops a template's final newline).
``no-generation-prompt``  ``add_generation_prompt`` is never passed on: the template always sees
                          False.
``text-specials``         the prompt is tokenized with special-token text not parsed as special
                          tokens (``Tokenizer.encode_special_tokens = True``): ``<|im_start|>``
                          the template wrote is split as ordinary text.
``empty-bos``             ``bos_token`` is passed to the template as ``""`` (an engine with no BOS
                          text to give).
``strip-content``         each message's string content is ``.strip()``ped before rendering (an
                          engine that "cleans up" user input).
``system-dropped``        the messages whose role is ``system`` are removed before rendering.
``tools-dropped``         the request's ``tools`` are never passed on: the template sees no tools
                          (the ``tool_use`` template is still picked when the request has tools).
``trim-ignored``          the environment's ``trim`` filter does nothing: it returns its input
                          unchanged (a Jinja port whose ``trim`` is a no-op).
``continue-ignored``      ``continue_final_message`` is dropped: the conversation is rendered as if
                          it were False (so never refused with ``add_generation_prompt`` either).
``raise-as-text``         the template's ``raise_exception(message)`` does not raise: it returns
                          ``message`` as a string, written into the prompt, and rendering goes on.
``empty-system``          a conversation with no ``system`` message gets ``{"role": "system",
                          "content": ""}`` put first before rendering.
``chatml-fallback``       the model's chat template is not used at all: the prompt is always
                          ChatML, as servers write it when they cannot run a model's template:
                          ``<|im_start|>{role}\n{content}<|im_end|>\n`` per message (a list of
                          parts: its text parts joined with nothing between; null content:
                          empty), then ``<|im_start|>assistant\n`` if ``add_generation_prompt``.
                          Tools, documents and the other options are ignored; the text is
                          tokenized as any prompt (special-token text parsed, no BOS added).
``merge-turns``           consecutive messages with the same role whose contents are both strings
                          are merged into one before rendering: the first message (its other keys
                          kept) with the contents joined by a blank line (``"\\n\\n"``).
``drop-empty``            messages whose content is ``""`` are left out before rendering, except an
                          assistant message carrying (non-empty) ``tool_calls``.
``default-system``        a conversation with no ``system`` message gets ``{"role": "system",
                          "content": "You are a helpful assistant."}`` put first before rendering.
``no-checks``             the template's ``raise_exception(message)`` never raises: it returns
                          ``""`` and rendering goes on (refused conversations still get a prompt).
``error-text``            the template's ``raise_exception(message)`` returns ``"Error: " +
                          message``, written into the prompt, and rendering goes on (a Jinja port
                          whose raise_exception returns an Error object that is then printed).
``always-continue``       when the last message's role is ``assistant`` and no generation prompt
                          is asked, ``continue_final_message`` is taken as True whatever the
                          request says: the final assistant turn is left open (refused, as
                          transformers does, when that turn has no content to continue).
``join-parts``            unless the chat template handles list-of-parts content, each list content
                          becomes the ``text`` of its ``type: text`` parts joined with ``"\\n"``,
                          other parts dropped (llama.cpp's server). Handling is probed: a lone user
                          message whose content is one text part with a unique marker is rendered
                          with the picked template; the marker must show, and not inside the part's
                          repr or JSON (``'text': '...'``, ``"text": "..."``); a failed probe counts
                          as not handling.
``join-parts-nothing``    each list content becomes the ``text`` of its ``type: text`` parts joined
                          with nothing between (``""``), other parts dropped, whatever the template
                          (a hand-written renderer's ``"".join(p["text"] for p in parts)``).
``join-parts-space``      each list content becomes the ``text`` of its ``type: text`` parts joined
                          with one space (``" "``), other parts dropped, whatever the template (a
                          hand-written renderer's ``" ".join(p["text"] for p in parts)``).
``fold-system``           unless the chat template uses a system message's content, a conversation
                          that starts with a system message whose content is a string loses it: its
                          content is put in front of the next message's string content, joined with
                          ``"\n"`` (a lone system message is simply removed; a next content that is
                          not a string leaves the conversation as it is) (llama.cpp's server). Use is
                          probed: a system message whose content is a unique marker, then a user
                          message, is rendered with the picked template; the marker must show; a
                          failed probe counts as not using it.
``system-joined``         a conversation that starts with a system message and then a user
                          message, both with string content, gets one user message in their place:
                          the user message (its other keys kept) with the content ``system +
                          "\\n\\n" + user``, whatever the template does with system messages (a
                          hand-written chat format that builds the first user turn itself, for every
                          model); the template sees no system message. A lone system message is
                          kept as it is.

Combined, they act where each one belongs: the conversation is edited (``system-dropped``, then
``drop-empty``, ``merge-turns``, ``default-system``, ``empty-system``, ``strip-content``, then
``join-parts-nothing``, ``join-parts-space``, ``join-parts`` (once one has made a list content a
string, the later ones find no list), then ``fold-system``, then ``system-joined``), rendered
(environment bugs, of which the last of ``no-checks``, ``error-text``, ``raise-as-text`` in that
order wins; ``empty-bos``, ``no-generation-prompt``, ``continue-ignored``, then
``always-continue``, ``tools-dropped``; with ``chatml-fallback`` written as ChatML instead, where
only ``no-generation-prompt`` still acts), the text cut (``drop-final-newline``), then tokenized
(``text-specials``, ``double-bos``).
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

BUGS = (
    "double-bos", "no-trim-blocks", "no-lstrip-blocks", "jinja-tojson", "ascii-json",
    "drop-final-newline", "no-generation-prompt", "text-specials", "empty-bos", "strip-content",
    "system-dropped", "tools-dropped", "trim-ignored", "continue-ignored", "raise-as-text", "empty-system",
    "chatml-fallback", "merge-turns", "drop-empty", "default-system", "no-checks", "error-text",
    "always-continue", "join-parts", "fold-system", "join-parts-nothing", "join-parts-space",
    "system-joined",
)

# The named special tokens transformers passes to a template (PreTrainedTokenizerBase.SPECIAL_TOKENS_ATTRIBUTES).
SPECIAL_NAMES = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
# Names a message's reasoning is passed under; the first is the one templates read (transformers' _REASONING_FIELDS).
REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")
CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "
MERGE_JOINER = "\n\n"                          # merge-turns: what goes between merged contents
DEFAULT_SYSTEM = "You are a helpful assistant."  # default-system: the persona put first
ERROR_PREFIX = "Error: "                        # error-text: what a printed Error object starts with
PARTS_JOINER = "\n"                             # join-parts: what goes between text parts
PARTS_JOINER_NOTHING = ""                       # join-parts-nothing: what goes between text parts
PARTS_JOINER_SPACE = " "                        # join-parts-space: what goes between text parts
PARTS_PROBE = "JOIN_PARTS_PROBE_5b1e9c"         # join-parts: the marker the probe conversation carries
SYSTEM_JOINER = "\n"                            # fold-system: what goes between system and next content
SYSTEM_PROBE = "FOLD_SYSTEM_PROBE_8c3d71"       # fold-system: the system content of the probe conversation
SYSTEM_USER_JOINER = "\n\n"                    # system-joined: what goes between system and first user text


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


def raise_as_text(message):
    return str(message)


def raise_nothing(message):
    return ""


def raise_as_error_text(message):
    return ERROR_PREFIX + str(message)


def trim_nothing(value, chars=None):
    return value


def strftime_now(format):
    return datetime.now().strftime(format)


def make_tojson(ensure_ascii_default: bool):
    def tojson(x, ensure_ascii=ensure_ascii_default, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)
    return tojson


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


def build_environment(bugs: frozenset[str]) -> ImmutableSandboxedEnvironment:
    env = ImmutableSandboxedEnvironment(
        trim_blocks="no-trim-blocks" not in bugs,          # bug: no-trim-blocks
        lstrip_blocks="no-lstrip-blocks" not in bugs,      # bug: no-lstrip-blocks
        extensions=[GenerationTag, jinja2.ext.loopcontrols],
    )
    if "jinja-tojson" not in bugs:                         # bug: jinja-tojson keeps jinja2's filter
        env.filters["tojson"] = make_tojson(ensure_ascii_default="ascii-json" in bugs)  # bug: ascii-json
    if "trim-ignored" in bugs:                             # bug: trim-ignored
        env.filters["trim"] = trim_nothing
    env.globals["raise_exception"] = raise_exception
    if "no-checks" in bugs:                                # bug: no-checks
        env.globals["raise_exception"] = raise_nothing
    if "error-text" in bugs:                               # bug: error-text
        env.globals["raise_exception"] = raise_as_error_text
    if "raise-as-text" in bugs:                            # bug: raise-as-text
        env.globals["raise_exception"] = raise_as_text
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


# --- the engine ----------------------------------------------------------------------------------

class ChatEngine:
    def __init__(self, tokenizer_json: str, bugs: frozenset[str]):
        self.bugs = bugs
        self.config, self.template = read_config(tokenizer_json)
        self.specials = special_tokens_map(self.config)
        self.tok = Tokenizer.from_file(tokenizer_json)
        # transformers sets encode_special_tokens from split_special_tokens (False unless the config says so).
        self.tok.encode_special_tokens = bool(self.config.get("split_special_tokens", False))
        if "text-specials" in bugs:              # bug: text-specials
            self.tok.encode_special_tokens = True
        self.env = build_environment(bugs)
        self.compile = lru_cache(maxsize=8)(self.env.from_string)
        self.parts_handled: dict[str, bool] = {}  # join-parts: probe result per template source
        self.system_used: dict[str, bool] = {}    # fold-system: probe result per template source

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

    def edit_conversation(self, messages: list) -> list:
        """What the buggy engine does to the conversation before handing it on."""
        if "system-dropped" in self.bugs:        # bug: system-dropped
            messages = [m for m in messages if not (isinstance(m, dict) and m.get("role") == "system")]
        if "drop-empty" in self.bugs:            # bug: drop-empty
            messages = [m for m in messages if not (isinstance(m, dict) and m.get("content") == "" and not (
                m.get("role") == "assistant" and m.get("tool_calls")))]
        if "merge-turns" in self.bugs:           # bug: merge-turns
            merged: list = []
            for m in messages:
                last = merged[-1] if merged else None
                if (isinstance(m, dict) and isinstance(last, dict) and "role" in m and m["role"] == last.get("role")
                        and isinstance(m.get("content"), str) and isinstance(last.get("content"), str)):
                    merged[-1] = {**last, "content": last["content"] + MERGE_JOINER + m["content"]}
                else:
                    merged.append(m)
            messages = merged
        if "default-system" in self.bugs:        # bug: default-system
            if not any(isinstance(m, dict) and m.get("role") == "system" for m in messages):
                messages = [{"role": "system", "content": DEFAULT_SYSTEM}, *messages]
        if "empty-system" in self.bugs:          # bug: empty-system
            if not any(isinstance(m, dict) and m.get("role") == "system" for m in messages):
                messages = [{"role": "system", "content": ""}, *messages]
        if "strip-content" in self.bugs:         # bug: strip-content
            messages = [
                {**m, "content": m["content"].strip()} if isinstance(m, dict) and isinstance(m.get("content"), str) else m
                for m in messages
            ]
        return messages

    def template_handles_parts(self, tools) -> bool:
        """join-parts: whether the template picked for ``tools`` renders a list-of-parts content's text
        (a probe: one user message whose content is one text part carrying PARTS_PROBE)."""
        try:
            chat_template = self.pick_template(tools)
        except Refused:
            return False
        if chat_template not in self.parts_handled:
            try:
                out = self.compile(chat_template).render(
                    messages=[{"role": "user", "content": [{"type": "text", "text": PARTS_PROBE}]}],
                    tools=None, documents=None, add_generation_prompt=False, **self.specials,
                )
                handled = (PARTS_PROBE in out and f"'text': '{PARTS_PROBE}'" not in out
                           and f'"text": "{PARTS_PROBE}"' not in out)
            except Exception:
                handled = False
            self.parts_handled[chat_template] = handled
        return self.parts_handled[chat_template]

    def join_parts(self, messages: list, tools) -> list:
        """bug: join-parts. Each list-of-parts content becomes its text parts joined with a newline,
        unless the template handles lists of parts."""
        if not any(isinstance(m, dict) and isinstance(m.get("content"), list) for m in messages):
            return messages
        if self.template_handles_parts(tools):
            return messages
        return join_text_parts(messages, PARTS_JOINER)

    def template_uses_system(self, tools) -> bool:
        """fold-system: whether the template picked for ``tools`` writes a system message's content
        (a probe: a system message carrying SYSTEM_PROBE, then a user message)."""
        try:
            chat_template = self.pick_template(tools)
        except Refused:
            return False
        if chat_template not in self.system_used:
            try:
                out = self.compile(chat_template).render(
                    messages=[{"role": "system", "content": SYSTEM_PROBE}, {"role": "user", "content": "Hello"}],
                    tools=None, documents=None, add_generation_prompt=False, **self.specials,
                )
                used = SYSTEM_PROBE in out
            except Exception:
                used = False
            self.system_used[chat_template] = used
        return self.system_used[chat_template]

    def fold_system(self, messages: list, tools) -> list:
        """bug: fold-system. A leading system message is folded into the next message's content (or
        removed when alone), unless the template uses system messages."""
        first = messages[0] if messages else None
        if not (isinstance(first, dict) and first.get("role") == "system" and isinstance(first.get("content"), str)):
            return messages
        if len(messages) > 1:
            nxt = messages[1]
            if not (isinstance(nxt, dict) and isinstance(nxt.get("content"), str)):
                return messages
        if self.template_uses_system(tools):
            return messages
        if len(messages) == 1:
            return []
        nxt = messages[1]
        return [{**nxt, "content": first["content"] + SYSTEM_JOINER + nxt["content"]}, *messages[2:]]

    def render(self, messages, tools, options: dict) -> str:
        """apply_chat_template(tokenize=False) and render_jinja_template, for one conversation."""
        options = dict(options or {})
        add_generation_prompt = bool(options.pop("add_generation_prompt", False))
        continue_final = options.pop("continue_final_message", False) or False
        if "no-generation-prompt" in self.bugs:  # bug: no-generation-prompt
            add_generation_prompt = False
        if "continue-ignored" in self.bugs:      # bug: continue-ignored
            continue_final = False
        if "always-continue" in self.bugs and not add_generation_prompt and not continue_final:  # bug: always-continue
            last = messages[-1] if isinstance(messages, list) and messages else None
            if isinstance(last, dict) and last.get("role") == "assistant":
                continue_final = True
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
        if "empty-bos" in self.bugs:             # bug: empty-bos
            template_kwargs["bos_token"] = ""

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

        if "tools-dropped" in self.bugs:         # bug: tools-dropped (after the template is picked)
            tools = None
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

    def render_chatml(self, messages, options: dict) -> str:
        """bug: chatml-fallback. ChatML whatever the model's template: each message as
        ``<|im_start|>{role}\n{content}<|im_end|>\n``, then ``<|im_start|>assistant\n`` if the
        generation prompt is asked; tools, documents and every other option ignored."""
        add_generation_prompt = bool((options or {}).get("add_generation_prompt", False))
        if "no-generation-prompt" in self.bugs:  # bug: no-generation-prompt
            add_generation_prompt = False
        if not isinstance(messages, list):
            raise Refused(f"Chat messages should be a list, but got {messages!r}.")
        text = ""
        for message in messages:
            if not isinstance(message, dict):
                raise Refused(f"Chat messages should be dicts, but got {message!r}.")
            role = message.get("role")
            text += f"<|im_start|>{'' if role is None else role}\n{chatml_content(message.get('content'))}<|im_end|>\n"
        if add_generation_prompt:
            text += "<|im_start|>assistant\n"
        return text

    def chat(self, req: dict) -> dict:
        messages = req.get("messages")
        if isinstance(messages, list):
            messages = self.edit_conversation(messages)
            if "join-parts-nothing" in self.bugs:  # bug: join-parts-nothing (no probe)
                messages = join_text_parts(messages, PARTS_JOINER_NOTHING)
            if "join-parts-space" in self.bugs:  # bug: join-parts-space (no probe)
                messages = join_text_parts(messages, PARTS_JOINER_SPACE)
            if "join-parts" in self.bugs:        # bug: join-parts
                messages = self.join_parts(messages, req.get("tools"))
            if "fold-system" in self.bugs:       # bug: fold-system
                messages = self.fold_system(messages, req.get("tools"))
            if "system-joined" in self.bugs:     # bug: system-joined (no probe)
                messages = join_system_user(messages)
        try:
            if "chatml-fallback" in self.bugs:   # bug: chatml-fallback (no template at all)
                text = self.render_chatml(messages, req.get("options") or {})
            else:
                text = self.render(messages, req.get("tools"), req.get("options") or {})
        except Exception as exc:                 # whatever apply_chat_template would raise
            return {"raised": f"{type(exc).__name__}: {exc}"}
        if "drop-final-newline" in self.bugs and text.endswith("\n"):  # bug: drop-final-newline
            text = text[:-1]
        add_special = "double-bos" in self.bugs   # bug: double-bos
        ids = self.tok.encode(text, add_special_tokens=add_special).ids
        return {"text": text, "ids": ids}

    def handle(self, req: dict) -> dict:
        op = req.get("op")
        if op == "chat":
            return self.chat(req)
        if op == "encode":
            return {"error": "no encode"}
        return {"error": "unsupported op"}


def join_text_parts(messages: list, joiner: str) -> list:
    """Each message whose content is a list of parts gets, as its content, the ``text`` of its
    ``type: text`` parts joined with ``joiner``; other parts are dropped (bugs: join-parts-nothing,
    join-parts-space; as join-parts does, without its probe)."""
    return [
        {**m, "content": joiner.join(
            part["text"] for part in m["content"]
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
        )} if isinstance(m, dict) and isinstance(m.get("content"), list) else m
        for m in messages
    ]


def join_system_user(messages: list) -> list:
    """bug: system-joined. A leading system message followed by a user message, both with string
    content, become one user message (the user message's other keys kept) whose content is the
    system text, a blank line, then the user text; whatever the template does with system messages
    (no probe). Anything else, a lone system message included, is left as it is."""
    if len(messages) < 2:
        return messages
    first, nxt = messages[0], messages[1]
    if not (isinstance(first, dict) and first.get("role") == "system" and isinstance(first.get("content"), str)
            and isinstance(nxt, dict) and nxt.get("role") == "user" and isinstance(nxt.get("content"), str)):
        return messages
    return [{**nxt, "content": first["content"] + SYSTEM_USER_JOINER + nxt["content"]}, *messages[2:]]


def chatml_content(content) -> str:
    """A message's content as the ChatML fallback writes it: a string as it is, a list of parts as
    its text parts joined with nothing between, None as empty."""
    if content is None:
        return ""
    if isinstance(content, list):
        return "".join(
            part["text"] for part in content
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
        )
    return content if isinstance(content, str) else str(content)


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
