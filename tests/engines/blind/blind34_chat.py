r"""Blind engines, round 34: the ``chat`` op, a model's chat template rendered as transformers does.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. Each ``--bug NAME`` adds one bug of
a prompt builder, client, proxy or server in front of the template. The flag may be repeated. No
flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind34_chat.py {tokenizer_json} {tokenizer_config} [--bug NAME ...]

It was written on 2026-12-07, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md (its ``cmd:`` protocol), the first table of this folder's README
and the module docstrings of the earlier blind engines (their bug lists, to repeat none),
blind33_chat.py (its protocol and twin are copied), corpora/chats.jsonl and public code, issues
and pull requests (through the search tool) were read. It was checked with small scripts of its
own (qwen3, gemma-3, llama-bpe) on corpora/chats.jsonl (35) and blind34_chats.jsonl (10).

The twin
--------

The twin is blind33_chat.py's, unchanged (only ``prepare`` now also hands on the
``continue_final_message`` flag, which the twin passes through as it was): transformers'
``apply_chat_template(..., tokenize=False)`` rebuilt on jinja2's sandbox, then
``Tokenizer.encode(prompt, add_special_tokens=False)``. Checked: on the 45 conversations above its
text equals transformers 5.25's ``apply_chat_template`` (the tokenizer loaded with
``AutoTokenizer``) and its ids equal that tokenizer's ids of the text, on qwen3, gemma-3 and
llama-bpe, refusals included (0 differ); its answers equal blind33_chat.py's twin on those and on
blind33_chats.jsonl (54 conversations, 0 differ); through the protocol, every reply of the twin
and of each bug on 22 conversations equals the engine's answer in process (0 differ).

The bugs
--------

Each bug changes the messages (and, for ``continue-nudge-system``, the two prompt options) before
the template sees them; tools and the other options are passed as the twin passes them. Given
together they apply in this order: ``continue-nudge-system``, ``name-said-prefix``,
``trim-start-end``, ``first-system-only``, ``same-role-keep-first``, ``empty-opposite-inserted``. A
builder that refuses the request before any template runs answers an ``error`` with status
``error``. Counts are of conversations whose answer (text, ids or refusal) differs from the
twin's: chats.jsonl (35) / blind34_chats.jsonl (10).

``continue-nudge-system`` (continue becomes a new reply): a request that asks to continue the
final message is sent as an ordinary request: the final message stays where it is, a system
message ``[Continue your last message without repeating its original content.]`` is put after it,
and the generation prompt is added (``continue_final_message`` off, ``add_generation_prompt``
on). When the final message has no text, no system message is added. SillyTavern's "Continue" on a
chat-completion API with "Continue prefill" off (its default): SillyTavern/SillyTavern
``public/scripts/openai.js``, ``populateChatHistory``: ``if (type === 'continue' && cyclePrompt &&
!oai_settings.continue_prefill)`` it builds ``{identifier: 'continueNudge', role: 'system',
content: substituteParamsExtended(oai_settings.continue_nudge_prompt, {lastChatMessage: ...})}``
and puts it after the message being continued; ``default_continue_nudge_prompt`` is that text
(older releases: ``[Continue the following message. Do not include ANY parts of the original
message. ...: {{lastChatMessage}}]``). Examples: ``continue-02`` gives Llama 3 ``...assistant
<|end_header_id|>\n\n1, 2, 3,<|eot_id|><|start_header_id|>system<|end_header_id|>\n\n[Continue your
last message without repeating its original content.]<|eot_id|><|start_header_id|>assistant
<|end_header_id|>\n\n``, where the twin ends with ``1, 2, 3,``; Qwen 3 closes the assistant turn
without its empty think block; Gemma 3 raises ``Conversation roles must alternate`` where the twin
renders. Shows on every model: 2 / 1.

``name-said-prefix`` (user turns prefixed with their speaker): every user message's content starts
with ``{source} said:\n`` (a list content: its first text part), and the message gets ``name`` =
source. The source is the message's ``name``, else ``user``; a name that is not only ASCII letters,
digits, ``_`` and ``-`` is refused (``Invalid name: ... Only letters, numbers, '_' and '-' are
allowed.``), and so is one longer than 64 characters. microsoft/autogen
``python/packages/autogen-ext/src/autogen_ext/models/openai/_openai_client.py``,
``user_message_to_oai(message, prepend_name)``: ``content=(f"{message.source} said:\n" if
prepend_name else "") + message.content``, ``name=message.source``, after
``assert_valid_name(message.source)``; ``prepend_name`` is the client's ``add_name_prefixes=True``
("useful for models that do not support the name field in message"), and AgentChat gives a user's
message the source ``user``. Here the proxy maps an incoming message's ``name`` to ``source`` (an
assumption: autogen builds its ``UserMessage`` itself). No template of the three reads ``name``, so
only the prefix shows. Examples: ``multi-turn-01`` gives Llama 3
``<|start_header_id|>user<|end_header_id|>\n\nuser said:\nHi<|eot_id|>...user said:\nTell me a
joke.``; ``b34-named-turns`` gives Gemma 3 ``<start_of_turn>user\nCarol said:\nWhat is 12 × 12?``;
``b34-name-with-space`` (``name: "Dr Smith"``) is refused on every model. Shows: Qwen 3 33 / 10 (its
template raises on a list content either way), Gemma 3 30 / 3 (it refuses the others either way),
Llama 3 35 / 10.

``trim-start-end`` (history trimmed to start and end on a user turn): trailing messages that are
neither user nor tool messages are dropped; a first system message is kept aside; then, oldest
first, messages are dropped until the oldest is a user message (all of them when there is none);
the system message goes back in front. langchain-ai/langchain ``libs/core/langchain_core/
messages/utils.py``, ``trim_messages(messages, strategy="last", include_system=True,
start_on="human", end_on=("human", "tool"), ...)`` as LangGraph's "manage conversation history"
guide calls it before each model call (``_last_max_tokens``: ``while messages and not
_is_message_type(messages[-1], end_on): messages.pop()``, then ``_first_max_tokens`` of the
reversed list with ``end_on=start_on``); its token budget, which no conversation here reaches, is
left out, and the messages kept are passed on as they came. A conversation to be continued loses
the message to continue, so the user's message is continued instead. Examples: ``continue-02``
gives Qwen 3 ``<|im_start|>user\nCount to five.`` (7 ids, the twin 24); ``multi-turn-02`` loses
its final ``Goodbye.`` turn; ``alternation-broken-02`` loses its first assistant message, so Gemma
3 renders ``<start_of_turn>user\nHello.<end_of_turn>`` where the twin raises; ``b34-two-systems``
keeps only its first system message. Shows on every model: 4 / 4.

``first-system-only`` (only the first system message kept): the first system message is put
first and every other system message is left out. Arthur-Ficial/apfel #390: its OpenAI-compatible
server builds the session (``Sources/ContextManager.swift``, ``makeSession``) from the
non-system messages and takes the instructions from the first system message only, so later
system messages (a mid-conversation instruction, a second system prompt) never reach the model.
Examples: ``b34-late-system`` gives Qwen 3 ``<|im_start|>system\nFrom now on, answer in German.
<|im_end|>`` first and no later system turn; Gemma 3, which raises on that conversation, renders
it with the instruction in its first user turn; ``b34-two-systems`` loses ``Answer in French.``.
Shows on every model: 0 / 3 (the built-in conversations have one system message at most, first).

``same-role-keep-first`` (later messages of a same-role run dropped): a message whose role is the
role of the last message kept is left out, whatever the role (two users, two assistants, two
systems, two tool results). nodetool-ai/nodetool-core ``src/nodetool/api/message.py``,
``ensure_alternating_roles`` (copied: ``if message.role != last_role:
corrected_messages.append(message)``), run by its ``/api/messages/help`` endpoint on the request's
messages before the model is called. Examples: ``alternation-broken-01`` gives Llama 3 only
``First.`` (12 ids, the twin 22) and Gemma 3 ``<start_of_turn>user\nFirst.<end_of_turn>`` where
the twin raises; ``b34-parallel-tools`` loses the second tool result (Gemma 3 refuses it either
way); ``b34-two-assistants`` loses ``Fact two``. Shows: Qwen 3 1 / 4, Gemma 3 1 / 3, Llama 3 1 / 4.

``empty-opposite-inserted`` (empty turns between same-role messages): before a message whose role
is the previous message's, a message ``{"role": "assistant", "content": ""}`` is put when that
role is ``user``, else ``{"role": "user", "content": ""}`` (between two system messages, two
assistant messages, two tool results). Aider-AI/aider ``aider/sendchat.py``,
``ensure_alternating_roles`` (copied), which ``aider/models.py`` ``send_completion`` runs for
DeepSeek R1 models (``if self.is_deepseek_r1(): messages = ensure_alternating_roles(messages)``).
Examples: ``alternation-broken-01`` gives Qwen 3 ``<|im_start|>user\nFirst.<|im_end|>\n
<|im_start|>assistant\n<|im_end|>\n<|im_start|>user\nSecond, right after.<|im_end|>``;
``b34-two-systems`` an empty user turn between the two system turns; Gemma 3 renders
``alternation-broken-01`` and ``b34-two-assistants`` where the twin raises. Shows: Qwen 3 1 / 4,
Gemma 3 1 / 3, Llama 3 1 / 4.
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

BUGS = ("continue-nudge-system", "name-said-prefix", "trim-start-end", "first-system-only", "same-role-keep-first",
        "empty-opposite-inserted")
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

class BadRequest(Exception):
    """The server refused the request before any template ran."""


# SillyTavern public/scripts/openai.js, default_continue_nudge_prompt (the current default)
CONTINUE_NUDGE = "[Continue your last message without repeating its original content.]"


def content_text(content) -> str:
    """The text of a content: a string as it is, a list's text parts joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def continue_nudge_system(messages: list, gen, cont):
    """SillyTavern's "Continue" over a chat-completion API (``populateChatHistory`` in public/scripts/openai.js,
    ``continue_prefill`` off, its default): the message being continued stays last in the history and a system
    message with ``continue_nudge_prompt`` is put after it; the request is an ordinary one, so the server adds its
    generation prompt. No nudge when the message being continued has no text (``cyclePrompt`` empty)."""
    if not cont:
        return messages, gen, cont
    last = messages[-1] if messages else None
    if isinstance(last, dict) and content_text(last.get("content")):
        messages = messages + [{"role": "system", "content": CONTINUE_NUDGE}]
    return messages, True, False


AUTOGEN_NAME = re.compile(r"^[a-zA-Z0-9_-]+$")


def name_said_prefix(messages: list) -> list:
    """microsoft/autogen autogen-ext ``OpenAIChatCompletionClient(add_name_prefixes=True)``:
    ``user_message_to_oai(message, prepend_name=True)`` writes ``f"{message.source} said:\\n" + content`` (a list
    content: its first text part) and ``name=message.source``, after ``assert_valid_name(message.source)``. A user
    message's ``source`` is its ``name``, else ``user`` (AgentChat's default for a user's message)."""
    out = []
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "user":
            source = m.get("name") or "user"
            if not isinstance(source, str) or not AUTOGEN_NAME.match(source):
                raise BadRequest(f"Invalid name: {source}. Only letters, numbers, '_' and '-' are allowed.")
            if len(source) > 64:
                raise BadRequest(f"Invalid name: {source}. Name must be less than 64 characters.")
            content = m.get("content")
            m = {**m, "name": source}
            if isinstance(content, str):
                m["content"] = f"{source} said:\n" + content
            elif isinstance(content, list):
                parts, prepend = [], True
                for part in content:
                    if prepend and isinstance(part, dict) and part.get("type") == "text":
                        part = {"type": "text", "text": f"{source} said:\n" + str(part.get("text", ""))}
                        prepend = False
                    parts.append(part)
                m["content"] = parts
        out.append(m)
    return out


LANGCHAIN_TYPE = {"user": "human", "assistant": "ai", "system": "system", "tool": "tool"}


def trim_start_end(messages: list) -> list:
    """langchain-ai/langchain libs/core/langchain_core/messages/utils.py, ``trim_messages(strategy="last",
    include_system=True, start_on="human", end_on=("human", "tool"))`` (``_last_max_tokens``), with a budget no
    conversation here reaches: trailing messages that are not human or tool messages are popped; a first system
    message is kept aside; then, oldest first, messages are dropped until the oldest is a human message (all of them
    when there is none); the system message goes back in front."""
    def kind(m):
        return LANGCHAIN_TYPE.get(m.get("role")) if isinstance(m, dict) else None

    messages = list(messages)
    while messages and kind(messages[-1]) not in ("human", "tool"):
        messages.pop()
    system = None
    if messages and kind(messages[0]) == "system":
        system, messages = messages[0], messages[1:]
    while messages and kind(messages[0]) != "human":
        messages = messages[1:]
    return ([system] if system is not None else []) + messages


def first_system_only(messages: list) -> list:
    """Arthur-Ficial/apfel #390 (Sources/ContextManager.swift): the session is made from the non-system messages and
    the instructions from the first system message only; every later system message is lost. Here: the first system
    message goes first, every other system message is left out."""
    systems = [m for m in messages if isinstance(m, dict) and m.get("role") == "system"]
    rest = [m for m in messages if not (isinstance(m, dict) and m.get("role") == "system")]
    return systems[:1] + rest


def same_role_keep_first(messages: list) -> list:
    """nodetool-ai/nodetool-core src/nodetool/api/message.py ``ensure_alternating_roles``, copied: a message whose
    role is the last kept message's role is left out (``if message.role != last_role``)."""
    corrected, last_role = [], None
    for m in messages:
        role = m.get("role") if isinstance(m, dict) else None
        if role != last_role:
            corrected.append(m)
            last_role = role
    return corrected


def empty_opposite_inserted(messages: list) -> list:
    """Aider-AI/aider aider/sendchat.py ``ensure_alternating_roles``, copied: before a message whose role is the
    previous message's, an empty message of the opposite role is put (``assistant`` after a ``user``, else
    ``user``)."""
    if not messages:
        return messages
    fixed, prev_role = [], None
    for m in messages:
        role = m.get("role") if isinstance(m, dict) else None
        if role == prev_role:
            if role == "user":
                fixed.append({"role": "assistant", "content": ""})
            else:
                fixed.append({"role": "user", "content": ""})
        fixed.append(m)
        prev_role = role
    return fixed


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
    def prepare(self, messages: list, tools, gen, cont, options: dict):
        bugs = self.bugs
        if "continue-nudge-system" in bugs:
            messages, gen, cont = continue_nudge_system(messages, gen, cont)
        if "name-said-prefix" in bugs:
            messages = name_said_prefix(messages)
        if "trim-start-end" in bugs:
            messages = trim_start_end(messages)
        if "first-system-only" in bugs:
            messages = first_system_only(messages)
        if "same-role-keep-first" in bugs:
            messages = same_role_keep_first(messages)
        if "empty-opposite-inserted" in bugs:
            messages = empty_opposite_inserted(messages)
        return messages, tools, gen, cont, options

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
        try:
            messages, tools, gen, cont, options = self.prepare(messages, tools, gen, cont, options)
        except (BadRequest, TypeError, KeyError) as e:
            # the server refuses the request before any template runs (a 400)
            return {"error": f"{type(e).__name__}: {e}", "status": "error"}
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
