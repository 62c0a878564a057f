r"""Blind engines, round 29: the ``chat`` op, a model's chat template rendered as transformers does.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. Each ``--bug NAME`` adds one bug of
a prompt builder. The flag may be repeated. No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind29_chat.py {tokenizer_json} {tokenizer_config} [--bug NAME ...]

It was written on 2026-12-06, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md (its ``cmd:`` protocol), docs/guides/chat.md and streaming.md,
the first table of this folder's README, the docstrings and bug lists of the earlier blind engines,
blind28_chat.py (its protocol and twin are copied), corpora/chats.jsonl (the conversations' form)
and public code and issue threads (through the search tool) were read. It was checked with small
scripts of its own (qwen3, gemma-3, llama-bpe) on corpora/chats.jsonl (35) and blind29_chats.jsonl
(13).

The twin
--------

The twin is blind28_chat.py's, unchanged (and so round 27's to 24's): transformers'
``apply_chat_template(..., tokenize=False)`` rebuilt on jinja2's sandbox, then
``Tokenizer.encode(prompt, add_special_tokens=False)``. Checked: on the 48 conversations above its
text equals transformers' ``apply_chat_template`` on all three models, refusals included, and its
answers equal blind28_chat.py's twin (0 differ); through the protocol every reply of the twin and of
each bug equals the engine's answer in process.

The bugs
--------

Each bug changes what the renderer is given, or (``gen-prompt-twice``) what is done with its text;
tools and the other options are passed as the twin passes them. Given together they apply in this
order: ``current-user-twice``, ``truncation-drops-system``, ``tools-unwrapped``,
``gen-prompt-after-user-only``, then ``gen-prompt-twice``. Counts are of conversations whose answer
(text, ids or refusal) differs from the twin's: chats.jsonl (35) / blind29_chats.jsonl (13).

``current-user-twice``: a conversation that ends with a user message gets a copy of that message
at its end, so the current question is sent twice. openocta/openocta PR #70 ("fix/消息聊天中最后一个用户
消息重复": in every turn the message list sent to the model holds the current user message twice,
"which may make an instruction run twice"; the cause: the history read from the transcript file
already carries the current turn, and the agent SDK then appends the current user message again;
the fix cuts the transcript fallback in ``session_history.go`` at the last assistant message).
Example, checked: chats' ``single-01`` gives Qwen 3 ``<|im_start|>user\nHello, who are you?
<|im_end|>\n`` twice before ``<|im_start|>assistant\n`` (25 ids, the twin 14); Gemma 3, whose
template wants roles to alternate, raises ``Conversation roles must alternate ...`` where the twin
renders. Shows on every model: Qwen 3 28 / 9, Gemma 3 27 / 7, Llama 3 30 / 9.

``truncation-drops-system``: the history goes through Semantic Kernel's
``ChatHistoryTruncationReducer`` (``target_count`` 4, ``threshold_count`` 2, this builder's
setting) as it was before microsoft/semantic-kernel PR #13610 ("Python: Fix
ChatHistoryTruncationReducer deleting system prompt": "``reduce()`` silently deletes
system/developer messages when truncating chat history. This is because it calls
``extract_range()``, which unconditionally filters out system/developer messages", fixes #12612).
A history of at most 6 messages is kept; a longer one starts at ``locate_safe_reduction_index``
(``total - target_count``, moved back over tool calls and tool results so that none is cut from its
pair, then back to a user message if one lies within ``threshold_count`` more), and from there on
every system and developer message is left out. Example, checked: blind29_chats'
``b29-long-system`` (a system message and 9 messages after it) gives Qwen 3 only the last five,
from ``Question 3``, and the generation prompt (82 ids, the twin 153), without ``Answer with the
number only.``; ``b29-long-tool-at-cut`` keeps ``Paris?`` with the tool call and its result; chats'
``long-history-01`` (25 messages) keeps 5 and gives Llama 3 66 ids, the twin 326; on Gemma 3
``b29-long-developer`` (a developer message first, which its template refuses) renders. Shows on
every model: 1 / 5 (Gemma 3 1 / 4).

``tools-unwrapped``: the tools reach the template as their bare function specs (``{"name",
"description", "parameters"}``), not as the OpenAI objects ``{"type": "function", "function":
{...}}`` the request holds. thinking-machines-lab/tinker-cookbook PR #255 ("Fix Qwen3 tool
declaration format to match HuggingFace template: Wrap tools in OpenAI-style ``{"type": "function",
"function": {...}}`` format in ``create_conversation_prefix_with_tools``. This matches the HuggingFace
Qwen3 chat template which expects tools in this format"; the same wrapping later in its other
renderers, ``tools_payload = [{"type": "function", "function": tool} for tool in tools]``). Qwen
3's template writes each tool with ``tool | tojson``, so its ``<tools>`` block holds ``{"name":
"get_weather", "description": ...}`` where the twin writes ``{"type": "function", "function":
{"name": "get_weather", ...}}`` (chats' ``tools-01``: 181 ids, the twin 191). Gemma 3's and Llama
3's templates do not read tools: 0 there. Shows on Qwen 3: 5 / 4.

``gen-prompt-after-user-only``: the generation prompt asked for is given only when the last message
is a user (or developer) message; after an assistant or a tool message the prompt ends without it.
DeepSeek-V4's ``render_message`` as shipped in MiaAI-Lab/DeepSeek-v4-Flash-DSpark-2x-DGX-Spark
(issue #52, PR #53: "``render_message()`` appends the generation header (``ASSISTANT_SP_TOKEN`` +
thinking token) only when the trailing message is ``user`` / ``developer``. When a request's
``messages`` array ends with an **assistant** message that branch is skipped, so the prompt ends on
a bare EOS with no header"). Examples, checked: chats' ``tool-call-object-01`` gives Qwen 3 a prompt
ending in ``</tool_response><|im_end|>\n`` (239 ids, the twin 242 with ``<|im_start|>assistant\n``);
blind29_chats' ``b29-end-assistant-gen`` gives Gemma 3 no final ``<start_of_turn>model\n`` (38 ids,
the twin 41). Llama 3's template writes the assistant header whatever it is asked: 0 there. Shows:
Qwen 3 2 / 3, Gemma 3 0 / 2 (it refuses the tool conversations either way), Llama 3 0 / 0.

``gen-prompt-twice``: with a generation prompt asked for, what the template adds for it is written
once more after it: the builder renders with ``add_generation_prompt`` and then appends the
assistant prefix itself. a16z-infra/llama2-chatbot #29 ("It seems that, 'Assistant: ' will be
appended to the end of prompt twice?": ``string_dialogue + "Assistant: "`` in ``llama2_chatbot.py``
is passed on, and ``utils.py``'s ``replicate.run(llm, input={"prompt": prompt + "Assistant: ", ...})``
appends it again). Here the repeated text is the template's own: the prompt rendered with the
generation prompt, less the same conversation rendered without it. Examples, checked: chats'
``thinking-02`` (``enable_thinking`` false) gives Qwen 3 ``<|im_start|>assistant\n<think>\n\n
</think>\n\n`` twice (29 ids, the twin 22); ``single-01`` gives Gemma 3 ``<start_of_turn>model\n``
twice (18 ids, the twin 15). Llama 3's template writes its assistant header whatever it is asked, so
the difference is empty: 0 there. Shows: Qwen 3 28 / 11, Gemma 3 25 / 8, Llama 3 0 / 0.
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

BUGS = ("current-user-twice", "truncation-drops-system", "tools-unwrapped", "gen-prompt-after-user-only",
        "gen-prompt-twice")
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

def current_user_twice(messages: list) -> list:
    """openocta's session history (PR #70): the transcript it reads already holds the current turn's user
    message, and the agent SDK appends that message again: a conversation ending in a user message gets a
    copy of it at its end."""
    if messages and isinstance(messages[-1], dict) and messages[-1].get("role") == "user":
        return [*messages, copy.deepcopy(messages[-1])]
    return messages


# Semantic Kernel's ChatHistoryTruncationReducer, as this builder configures it
TARGET_COUNT = 4
THRESHOLD_COUNT = 2


def _function_related(message) -> bool:
    """A FunctionCallContent or FunctionResultContent item: an assistant tool call or a tool result."""
    return isinstance(message, dict) and (message.get("role") == "tool" or bool(message.get("tool_calls")))


def truncate_history(messages: list, target_count: int = TARGET_COUNT,
                     threshold_count: int = THRESHOLD_COUNT) -> list:
    """microsoft/semantic-kernel (python), ChatHistoryTruncationReducer.reduce before PR #13610: no
    reduction while ``len(history) <= target_count + threshold_count``; otherwise
    ``locate_safe_reduction_index`` (start at ``total - target_count``, step back over function calls and
    results, then look back as far as
    ``total - target_count - threshold_count`` for a user message) and ``extract_range(history,
    start=truncation_index)``, which leaves out every system and developer message."""
    total = len(messages)
    if total <= target_count + threshold_count:
        return messages
    threshold_index = total - threshold_count - target_count
    message_index = total - target_count
    while message_index >= 0 and _function_related(messages[message_index]):
        message_index -= 1
    index = message_index
    while message_index >= threshold_index:
        m = messages[message_index]
        if isinstance(m, dict) and m.get("role") == "user":
            index = message_index
            break
        message_index -= 1
    if index <= 0:
        return messages
    return [m for m in messages[index:] if not (isinstance(m, dict) and m.get("role") in ("system", "developer"))]


def tools_unwrapped(tools):
    """thinking-machines-lab/tinker-cookbook before PR #255: the tool specs handed on bare, ``{"name",
    "description", "parameters"}``, not in the OpenAI wrapper ``{"type": "function", "function": spec}``."""
    if not isinstance(tools, list):
        return tools
    return [t["function"] if isinstance(t, dict) and isinstance(t.get("function"), dict) else t for t in tools]


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
        if "current-user-twice" in bugs:
            messages = current_user_twice(messages)
        if "truncation-drops-system" in bugs:
            messages = truncate_history(messages)
        if "tools-unwrapped" in bugs:
            tools = tools_unwrapped(tools)
        if "gen-prompt-after-user-only" in bugs and gen:
            # DeepSeek-V4 encoding's render_message (MiaAI-Lab/DeepSeek-v4-Flash-DSpark-2x-DGX-Spark #52): the
            # generation header only after a trailing user or developer message
            last = messages[-1] if messages else None
            if not (isinstance(last, dict) and last.get("role") in ("user", "developer")):
                gen = False
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
        if "gen-prompt-twice" in self.bugs and gen and not cont:
            # the prompt asked with the generation prompt, and the builder appends the assistant header itself
            # too (a16z-infra/llama2-chatbot #29): what the template adds for it is written a second time
            try:
                base = self.render(messages, tools, documents, False, False, options)
            except Exception:  # noqa: BLE001 - no prompt without it: nothing to repeat
                base = None
            if base is not None and text.startswith(base):
                text += text[len(base):]
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
