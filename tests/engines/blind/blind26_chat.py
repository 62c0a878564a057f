"""Blind engines, round 26: the ``chat`` op, a model's chat template rendered as transformers does.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. Each ``--bug NAME`` adds one bug of
a prompt builder. The flag may be repeated. No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind26_chat.py {tokenizer_json} {tokenizer_config} [--bug NAME ...]

It was written on 2026-12-05, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md (its ``cmd:`` protocol), the README of this folder, the
docstrings and bug lists of the earlier blind engines, blind25_chat.py (its protocol and twin are
copied), corpora/chats.jsonl (the conversations' form) and public code and issue threads (through
the search tool: LlamaIndex, LiteLLM, vLLM, hermes-agent ...) were read. It was checked with small
scripts of its own (qwen3, gemma-3, llama-bpe) on corpora/chats.jsonl (35), blind25_chats.jsonl (5)
and blind26_chats.jsonl (12).

The twin
--------

The twin is blind25_chat.py's, unchanged (and so blind24's and blind23's): transformers'
``apply_chat_template(..., tokenize=False)`` rebuilt on jinja2's sandbox, then
``Tokenizer.encode(prompt, add_special_tokens=False)``; blind24_chat.py's docstring says the rest.
Checked: on the 52 conversations above its text equals transformers 5.25.0's
``apply_chat_template`` on all three models, refusals included (0 differ).

The bugs
--------

Each bug changes the messages before rendering; tools and options are passed as the twin passes
them. Given together they apply in this order: ``args-repr``, ``none-as-text``,
``systems-hoisted``, ``default-system-added``.

``none-as-text``: a message whose ``content`` is null reaches the template as the string
``"None"``, where transformers drops the null key. A builder that interpolates the content into a
string does this: run-llama/llama_index PR #23142 ("``messages_to_prompt`` injects the literal
string ``None`` into the generated ChatML prompt whenever a message has no text content", an
assistant tool-call turn coming out as ``<|im_start|>assistant\\nNone <|im_end|>``),
PrimeIntellect-ai/renderers PR #131 (``content: None`` rendered as "None" before each tool call),
vllm-project/vllm PR #54368 (from #54337: "templates that unconditionally render assistant content
emit ``None`` as text"). Shows where a conversation holds a null content, as every OpenAI-style
assistant tool-call turn does: blind26_chats.jsonl's ``b26-tool-null-content``,
``b26-tool-null-string-args``, ``b26-null-assistant`` on Qwen 3 and Llama 3 (3 of 52), Gemma 3 only
``b26-null-assistant`` (1; its template refuses the tool turns either way). On Qwen 3 the twin
raises ``UndefinedError: 'dict object' has no attribute 'content'`` on the tool-call turns, the bug
renders ``<|im_start|>assistant\\nNone\\n<tool_call>\\n{"name": "get_weather", ...``; Llama 3 writes
``<|start_header_id|>assistant<|end_header_id|>\\n\\nNone<|eot_id|>`` where the twin has an empty
turn; Gemma 3 ``<start_of_turn>model\\nNone<end_of_turn>``. The built-in conversations hold no
null content (0).

``default-system-added``: a conversation without a ``system`` message gets one first, ``You are a
helpful, respectful, and honest assistant.`` An engine or app that fills in a default system prompt
when the caller gives none does this: moly-ai/moly-ai #186 (that very text, sent "when the provided
one is empty"), filipw/strathweb-phi-engine PR #33 ("From now on, we will no longer inject a
default system prompt. Instead, if none is provided we will simply omit it."), mattn/tensai PR #209
("An empty -system used to fall through to the family default, so there was no way to send a
prompt without a system turn"). Shows on every conversation without a system message whose
template writes one: Qwen 3 32 of 52, Gemma 3 28, Llama 3 34 (``single-01``, ``multi-turn-01``,
``b26-no-system-plain`` ...). Qwen 3 ``single-01``: ``<|im_start|>system\\nYou are a helpful,
respectful, and honest assistant.<|im_end|>\\n<|im_start|>user\\nHello, who are you?...`` (30 ids),
the twin starts at ``<|im_start|>user`` (14 ids); Gemma 3 puts the text and a blank line before the
first user content.

``systems-hoisted``: where a system message is not first, or there are several, every system
message is taken out and their texts (a list content's text parts joined), in order and joined by
a blank line, become one system message put first (the first one's other keys kept). One system
message already first is left alone. Servers and proxies do this so that templates that refuse a
late system message ("System message must be at the beginning") render: BerriAI/litellm PR #40710
("Gather the system prompts into one leading message"), FB208/OpenBidKit_Yibiao PR #221 (all system
messages merged in their order into one at the front: ``user → system → user → system`` ⇒
``system → user → user``), vllm-project/vllm PR #44505 ("coalesces multiple system messages into the
leading system block"), FlashML-org/FreeToken PR #487. A template that writes a late system turn
where it stands (Qwen 3, Llama 3) then gets another prompt, and one that refuses it (Gemma 3) now
renders. Shows on blind26_chats.jsonl's ``b26-mid-system``, ``b26-two-systems``,
``b26-late-system-only``, ``b26-system-parts-late`` (4 of 52 on each model; the built-in
conversations have one system message at most, first). Qwen 3 ``b26-mid-system``:
``<|im_start|>system\\nYou are a friendly tutor.\\n\\nFrom now on, answer in French.<|im_end|>`` first
and no system turn before the last question, where the twin writes ``<|im_start|>system\\nFrom now
on, answer in French.<|im_end|>`` between the turns (64 ids, the twin 69); Gemma 3: the twin raises
``Conversation roles must alternate``, the bug renders.

``args-repr``: an assistant tool call whose ``function.arguments`` is an object reaches the
template as ``str(arguments)``, Python's repr (single quotes, ``True``/``False``/``None``). Agent
code that turns object arguments back into a string this way: NousResearch/hermes-agent PR #1087
and #1393 ("``_normalize_codex_response()`` converts non-string tool call arguments using
``str(dict)``, which produces Python repr with single quotes (e.g. ``{'key': 'val'}``)"),
microsoft/debug-gym PR #123 (``str(response[0].tool.arguments)`` replaced by ``json.dumps``).
Arguments given as a string are unchanged. A template that writes string arguments as they are and
objects through ``tojson`` shows it: Qwen 3, on ``tool-call-object-01``, ``tool-result-01``,
``b26-args-nested``, ``b26-args-apostrophe`` (4 of 52): ``{"name": "get_weather", "arguments":
{'city': 'Zürich', 'unit': 'celsius'}}``, the twin ``{"name": "get_weather", "arguments": {"city":
"Zürich", "unit": "celsius"}}``; ``b26-args-nested`` writes ``'open_now': True``. Gemma 3's and
Llama 3's templates write no tool calls: 0.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
from datetime import datetime

import jinja2
import jinja2.ext
import jinja2.nodes
import jinja2.utils
from jinja2.sandbox import ImmutableSandboxedEnvironment

BUGS = ("none-as-text", "default-system-added", "systems-hoisted", "args-repr")
DEFAULT_SYSTEM = "You are a helpful, respectful, and honest assistant."
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

def content_text(content) -> str:
    """A content's text: a string as it is, a list of parts as its text parts joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def hoist_systems(messages: list) -> list:
    """Every system message taken out, their texts joined by a blank line into one system message
    put first (the first system message's other keys kept). One system message that is already
    first is left as it is."""
    at = [i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "system"]
    if not at or at == [0]:
        return messages
    texts = [content_text(messages[i].get("content")) for i in at]
    merged = {**messages[at[0]], "content": "\n\n".join(t for t in texts if t)}
    rest = [m for i, m in enumerate(messages) if i not in set(at)]
    return [merged, *rest]


def repr_arguments(message: dict) -> dict:
    """An assistant message whose tool calls' arguments are objects: each object as ``str()``."""
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return message
    out = []
    for call in calls:
        fn = call.get("function") if isinstance(call, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("arguments"), (dict, list)):
            call = {**call, "function": {**fn, "arguments": str(fn["arguments"])}}
        out.append(call)
    return {**message, "tool_calls": out}


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
        if "args-repr" in bugs:
            # tool-call arguments given as objects written back with str(): Python's repr
            messages = [repr_arguments(m) if isinstance(m, dict) and m.get("role") == "assistant" else m
                        for m in messages]
        if "none-as-text" in bugs:
            # a null content interpolated as text: the string "None"
            messages = [{**m, "content": "None"} if isinstance(m, dict) and "content" in m and m["content"] is None
                        else m for m in messages]
        if "systems-hoisted" in bugs:
            messages = hoist_systems(messages)
        if "default-system-added" in bugs and not any(isinstance(m, dict) and m.get("role") == "system"
                                                      for m in messages):
            messages = [{"role": "system", "content": DEFAULT_SYSTEM}, *messages]
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
