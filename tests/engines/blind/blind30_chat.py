r"""Blind engines, round 30: the ``chat`` op, a model's chat template rendered as transformers does.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. Each ``--bug NAME`` adds one bug of
a prompt builder or server in front of the template. The flag may be repeated. No flag gives the
bug-free twin.

    cmd:{python} tests/engines/blind/blind30_chat.py {tokenizer_json} {tokenizer_config} [--bug NAME ...]

It was written on 2026-12-06, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md (its ``cmd:`` protocol), docs/guides/chat.md and streaming.md,
the first table of this folder's README, the docstrings and bug lists of the earlier blind engines,
blind29_chat.py (its protocol and twin are copied), corpora/chats.jsonl and public code and issue
threads (through the search tool) were read. It was checked with small scripts of its own (qwen3,
gemma-3, llama-bpe) on corpora/chats.jsonl (35) and blind30_chats.jsonl (18).

The twin
--------

The twin is blind29_chat.py's, unchanged: transformers' ``apply_chat_template(..., tokenize=False)``
rebuilt on jinja2's sandbox, then ``Tokenizer.encode(prompt, add_special_tokens=False)``. Checked:
on the 53 conversations above its text equals transformers' (5.25) ``apply_chat_template`` on all
three models, refusals included, and its answers equal blind29_chat.py's twin (0 differ); through
the protocol a few requests of each bug give the answers of the engine in process.

The bugs
--------

Given together they apply in this order: ``kwargs-as-strings``, ``parts-as-messages``,
``system-into-next``, ``systems-merged-newline``. A server that refuses the request before any
template runs answers an ``error`` with status ``error``. Counts are of conversations whose answer
differs from the twin's: chats.jsonl (35) / blind30_chats.jsonl (18).

``systems-merged-newline``: every system message is taken out, and one system message holding
their contents joined by ``"\n"`` is put first (one system message already first is unchanged; a
lone one elsewhere is moved first). microsoft/autogen PR #7085, ``MergeSystemChatCompletionContext``
(``autogen_core/model_context``): "collapsing all system messages into a single ``SystemMessage``
at the beginning of the conversation", ``SystemMessage(content="\n".join(merged_system_content))``
inserted at 0, for models that "do not support multiple system prompts" (``Multiple and Not
continuous system messages are not supported``). Several list contents are joined by their text
parts. Unlike round 26's ``systems-hoisted`` (blank line) the joiner is one line feed. Example:
Qwen 3 ``b30-mid-system`` gives ``<|im_start|>system\nYou are terse.\nFrom now on, answer in
German.<|im_end|>`` first and no later system turn (44 ids, the twin 49); Gemma 3's template, which
refuses a late system turn, renders. Shows on every model: 0 / 4 (the built-in conversations have
one system message at most, first).

``system-into-next``: LiteLLM's ``map_system_message_pt`` (BerriAI/litellm
``litellm/litellm_core_utils/prompt_templates/factory.py``, run with
``supports_system_message=False``), copied as it is: a system message followed by a user or
assistant message is written into it, ``next_m["content"] = m["content"] + " " +
next_m["content"]``; one followed by a system message, or last, becomes a user message. A list
content meets ``+`` and raises ``TypeError`` (an ``error``, as LiteLLM's request fails). Example:
Qwen 3 ``system-01`` gives ``<|im_start|>user\nYou are a helpful assistant. What is 2 +
2?<|im_end|>`` (22 ids, the twin 27). Shows: Qwen 3 8 / 10, Gemma 3 8 / 8 (it folds the system
text into the first user turn itself, with a blank line), Llama 3 8 / 10.

``kwargs-as-strings``: every template variable the request passes besides the generation prompt
and the continuation (``enable_thinking``, ``date_string`` ...) reaches the template as a string,
``True``/``False`` as ``"true"``/``"false"``. skye-harris/hass_local_openai_llm #118 ("Chat Template
Arguments (chat_template_kwargs) configured from UI are cast as strings ... this is sent instead:
``{'preserve_thinking': 'false', 'enable_thinking': 'false'}``"; PR #40 and #78 tried to coerce them
back); a jinja2 renderer takes the string, and Qwen 3's ``enable_thinking is false`` is then not
true. Example: chats' ``thinking-02`` gives Qwen 3 no ``<think>\n\n</think>\n\n`` after the assistant
header (18 ids, the twin 22). Shows on Qwen 3 only: 1 / 3 (Gemma 3's and Llama 3's templates read
no boolean; ``date_string`` is a string already).

``parts-as-messages``: a content that is a list of parts becomes one message per text part, with
the same role and that text as a string (the message's other keys dropped; its tool calls and
reasoning go on the last one); an empty list gives no message. ollama/ollama ``openai/openai.go``,
``FromChatRequest``: ``case []any: for _, c := range content { ... case "text": ... messages =
append(messages, api.Message{Role: msg.Role, Content: text})``, tool calls added to
``messages[len(messages)-1]``; a part of another type than text is refused (``invalid message
format``). Example: Qwen 3 ``content-parts-02`` gives ``<|im_start|>user\nTwo<|im_end|>\n
<|im_start|>user\nparts.<|im_end|>``; Gemma 3 raises ``Conversation roles must alternate`` there.
Shows: Qwen 3 2 / 5, Gemma 3 1 / 4, Llama 3 2 / 5.
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

BUGS = ("systems-merged-newline", "system-into-next", "kwargs-as-strings", "parts-as-messages")
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

def merge_systems_newline(messages: list) -> list:
    """microsoft/autogen, MergeSystemChatCompletionContext.get_messages (PR #7085): every system message taken
    out, their contents joined by "\n" into one system message inserted first."""
    merged: list = []
    out: list = []
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "system":
            merged.append(m.get("content"))
        else:
            out.append(m)
    if merged:
        if len(merged) == 1:
            content = merged[0]
        else:
            content = "\n".join(c if isinstance(c, str) else
                                "".join(p.get("text", "") for p in c if isinstance(p, dict))
                                if isinstance(c, list) else str(c) for c in merged)
        out.insert(0, {"role": "system", "content": content})
    return out


def map_system_message_pt(messages: list) -> list:
    """BerriAI/litellm, litellm_core_utils/prompt_templates/factory.py, as it is (``supports_system_message=False``):
    a system message followed by a user or assistant message is written into it, ``m["content"] + " " +
    next_m["content"]``; one followed by a system message, or last, becomes a user message."""
    new_messages = []
    for i, m in enumerate(messages):
        if m["role"] == "system":
            if i < len(messages) - 1:
                next_m = messages[i + 1]
                next_role = next_m["role"]
                if next_role == "user" or next_role == "assistant":
                    next_m["content"] = m["content"] + " " + next_m["content"]
                elif next_role == "system":
                    new_messages.append({"role": "user", "content": m["content"]})
            else:
                new_messages.append({"role": "user", "content": m["content"]})
        else:
            new_messages.append(m)
    return new_messages


def kwarg_as_string(value):
    """hass_local_openai_llm's chat template arguments: each value a rendered template, so a string ("false")."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value, ensure_ascii=False)


class BadRequest(Exception):
    """Ollama's FromChatRequest refused the message (``invalid message format``)."""


def parts_as_messages(messages: list) -> list:
    """ollama/ollama, openai/openai.go, FromChatRequest: a string content is kept; a list content becomes one
    message per text part, ``api.Message{Role: msg.Role, Content: text}`` (the message's other fields dropped),
    and the tool calls (with the reasoning) go on the last of them; an empty list gives no message."""
    out: list = []
    for m in messages:
        content = m.get("content") if isinstance(m, dict) else None
        if not isinstance(content, list):
            out.append(m)
            continue
        made = 0
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "text" or not isinstance(part.get("text"), str):
                raise BadRequest("invalid message format")
            out.append({"role": m.get("role"), "content": part["text"]})
            made += 1
        if made and m.get("tool_calls"):
            out[-1]["tool_calls"] = m["tool_calls"]
            for key in ("reasoning_content", "reasoning", "thinking"):
                if m.get(key) is not None:
                    out[-1][key] = m[key]
    return out


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
        if "parts-as-messages" in bugs:
            messages = parts_as_messages(messages)
        if "system-into-next" in bugs:
            messages = map_system_message_pt(messages)
        if "systems-merged-newline" in bugs:
            messages = merge_systems_newline(messages)
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
        if "kwargs-as-strings" in self.bugs:
            options = {k: kwarg_as_string(v) for k, v in options.items()}
        try:
            messages, tools, gen = self.prepare(messages, tools, gen)
        except (BadRequest, TypeError, KeyError) as e:
            # the server refuses the request before any template runs (Ollama's 400, litellm's TypeError)
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
