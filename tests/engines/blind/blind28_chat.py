r"""Blind engines, round 28: the ``chat`` op, a model's chat template rendered as transformers does.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. Each ``--bug NAME`` adds one bug of
a prompt builder. The flag may be repeated. No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind28_chat.py {tokenizer_json} {tokenizer_config} [--bug NAME ...]

It was written on 2026-12-06, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md (its ``cmd:`` protocol), docs/guides/chat.md and streaming.md,
the first table of this folder's README, the docstrings and bug lists of the earlier blind engines,
blind27_chat.py (its protocol and twin are copied), corpora/chats.jsonl (the conversations' form)
and public code and issue threads (through the search tool) were read. It was checked with small
scripts of its own (qwen3, gemma-3, llama-bpe) on corpora/chats.jsonl (35) and blind28_chats.jsonl
(12).

The twin
--------

The twin is blind27_chat.py's, unchanged (and so round 26's, 25's and 24's): transformers'
``apply_chat_template(..., tokenize=False)`` rebuilt on jinja2's sandbox, then
``Tokenizer.encode(prompt, add_special_tokens=False)``. Checked: on the 47 conversations above its
text equals transformers 5's ``apply_chat_template`` on all three models, refusals included, and
its answers equal blind27_chat.py's twin (0 differ), in process and through the protocol.

The bugs
--------

Each bug changes what the renderer is given; tools and the other options are passed as the twin
passes them. Given together they apply in this order: ``reasoning-inlined``,
``same-role-merged``, then ``continue-unless-gen-prompt``. Counts are of conversations whose
answer (text, ids or refusal) differs from the twin's: chats.jsonl (35) / blind28_chats.jsonl (12).

``same-role-merged``: a message whose role is the previous message's, both contents strings, is
merged into it: ``prev["content"] + "\n\n" + msg["content"]``, the later message's other keys lost.
Any role: two user turns, two assistant turns, two system messages, two tool results.
waybarrios/vllm-mlx ``vllm_mlx/server.py``, ``_normalize_messages`` (PR #240, "fix: normalize
messages before chat template application": "merges consecutive same-role messages with ``\n\n``
separator"; "OpenCode ``[system, system, user, user]`` format normalizes to ``[system, user]``"),
run on every request before ``apply_chat_template``: ``if role == prev["role"] and
isinstance(prev.get("content"), str) and isinstance(msg.get("content"), str): prev["content"] =
prev["content"] + "\n\n" + msg["content"]``. The same function maps ``developer`` to ``system``
(round 12's ``developer-as-system``); that part is left out here. The same blank-line join, for
user turns or for user and assistant turns only, in unslothai/unsloth PR #5980 and #9491 and
higress-group/higress PR #3598. Examples, checked: chats' ``alternation-broken-01`` gives Qwen 3
``<|im_start|>user\nFirst.\n\nSecond, right after.<|im_end|>`` (15 ids) where the twin writes two
user turns (20 ids); Gemma 3 renders it where the twin raises ``Conversation roles must
alternate``; blind28_chats' ``b28-parallel-tool-results`` gives Qwen 3 one ``<tool_response>``
holding ``18 C, cloudy\n\n27 C, sunny`` (232 ids) where the twin writes two (236 ids). Shows on every
model: Qwen 3 1 / 5, Gemma 3 1 / 4 (it refuses the tool conversation either way), Llama 3 1 / 5.

``reasoning-inlined``: an assistant message's reasoning (``reasoning_content``, ``reasoning`` or
``thinking``) is written into its content and no longer sent apart: the content becomes
``"\n<think>\n" + reasoning + "\n</think>\n" + "\n" + content``. UKGovernmentBEIS/inspect_ai
``src/inspect_ai/model/_openai.py``, ``openai_assistant_content``: ``content =
f"{content}\n{c_reasoning}\n"`` for a reasoning part, ``c_reasoning`` being
``reasoning_to_think_tag`` (``src/inspect_ai/model/_reasoning.py``: ``f"<think{attribs}>\n{inner}\n
</think>"``), then ``content = f"{content}\n{c.text}"`` for the text; RooCode PR #8934 does the same
with ``<thinking>`` ("reasoning is prepended to assistant messages in ``<think>`` XML tags, making it
available as context for subsequent model turns"), Kilo-Org/cloud PR #956 ("converting
reasoning_content to <think>"). Templates that ignore ``reasoning_content`` now see the reasoning
in the content: Gemma 3 and Llama 3 write ``<think>\nTry 7: 7 × 13 = 91.\n</think>\n\nNo: 91 = 7 ×
13.`` in chats' ``reasoning-01`` (Gemma 3 67 ids, the twin 43; Llama 3 59, the twin 40). Qwen 3's
template splits a content at ``</think>`` and writes what it wrote for ``reasoning_content``: 0 on
Qwen 3. Shows: Gemma 3 1 / 3, Llama 3 1 / 3.

``continue-unless-gen-prompt``: the final message is continued whenever no generation prompt is
asked: ``continue_final_message = not add_generation_prompt``, whatever the request says of
``continue_final_message``. EleutherAI/lm-evaluation-harness, ``apply_chat_template`` of
``lm_eval/models/huggingface.py``, ``vllm_causallms.py``, ``sglang_causallms.py``,
``trtllm_causallms.py``, ``api_models.py`` and ``hf_vlms.py``:
``self.tokenizer.apply_chat_template(chat_history, tokenize=False,
add_generation_prompt=add_generation_prompt, continue_final_message=not add_generation_prompt,
...)`` (copied into other evaluation wrappers found by the code search, an LLaDA-MoE model's and a
GGUF server client's). So a conversation asking for no generation prompt loses the end of its
last turn: ``single-02`` gives Qwen 3
``<|im_start|>user\nHello, who are you?`` (9 ids), the twin ``...you?<|im_end|>\n`` (11 ids); Llama
3's template, which always ends with the assistant header, is cut after the user's text (11 ids,
the twin 16). One asking for both (``b28-gen-and-continue``), which transformers refuses, renders
with the generation prompt. Shows on every model: 3 / 3 (``single-02``, ``system-02``,
``multi-turn-02``; ``b28-no-gen-user-last``, ``b28-no-gen-assistant-last``,
``b28-gen-and-continue``).
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

BUGS = ("same-role-merged", "reasoning-inlined", "continue-unless-gen-prompt")
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

def merge_same_role(messages: list) -> list:
    """vllm-mlx's ``_normalize_messages`` (vllm_mlx/server.py), its merge only: a message whose role
    is the previous message's, both contents strings, is appended to it with a blank line between
    (``prev["content"] + "\n\n" + msg["content"]``); the later message's other keys are lost. Any
    role, tool results included."""
    if not messages:
        return messages
    merged = [dict(messages[0]) if isinstance(messages[0], dict) else messages[0]]
    for msg in messages[1:]:
        prev = merged[-1]
        if (isinstance(msg, dict) and isinstance(prev, dict) and msg.get("role") == prev.get("role")
                and isinstance(prev.get("content"), str) and isinstance(msg.get("content"), str)):
            prev["content"] = prev["content"] + "\n\n" + msg["content"]
        else:
            merged.append(dict(msg) if isinstance(msg, dict) else msg)
    return merged


def inline_reasoning(message: dict) -> dict:
    """inspect_ai's ``openai_assistant_content`` (src/inspect_ai/model/_openai.py) on a message whose
    reasoning it holds apart: the content becomes ``"\n" + reasoning_to_think_tag(r) + "\n"`` followed by
    ``"\n" + text``, i.e. ``"\n<think>\nR\n</think>\n\nTEXT"``; the reasoning is no longer sent apart."""
    reasoning = next((message[k] for k in REASONING if isinstance(message.get(k), str)), None)
    if reasoning is None:
        return message
    out = {k: v for k, v in message.items() if k not in REASONING}
    content = f"\n<think>\n{reasoning}\n</think>\n"
    text = message.get("content")
    if isinstance(text, str):
        content = f"{content}\n{text}"
    out["content"] = content
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
        if "reasoning-inlined" in bugs:
            # past reasoning written back into the assistant's content as a <think> block
            messages = [inline_reasoning(m) if isinstance(m, dict) and m.get("role") == "assistant" else m
                        for m in messages]
        if "same-role-merged" in bugs:
            # consecutive messages of one role merged, so that strict templates see roles alternate
            messages = merge_same_role(messages)
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
        if "continue-unless-gen-prompt" in self.bugs:
            # lm-evaluation-harness' apply_chat_template: continue_final_message=not add_generation_prompt
            cont = not gen
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
