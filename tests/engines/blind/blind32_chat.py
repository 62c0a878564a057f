r"""Blind engines, round 32: the ``chat`` op, a model's chat template rendered as transformers does.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. Each ``--bug NAME`` adds one bug of
a prompt builder, client, proxy or server in front of the template. The flag may be repeated. No
flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind32_chat.py {tokenizer_json} {tokenizer_config} [--bug NAME ...]

It was written on 2026-12-06, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md (its ``cmd:`` protocol), the first table of this folder's README
(and the bug lists of the earlier blind engines, to repeat none), blind31_chat.py (its protocol
and twin are copied), corpora/chats.jsonl and public code and issue threads (through the search
tool) were read. It was checked with small scripts of its own (qwen3, gemma-3) on
corpora/chats.jsonl (35) and blind32_chats.jsonl (12).

The twin
--------

The twin is blind31_chat.py's, unchanged: transformers' ``apply_chat_template(..., tokenize=False)``
rebuilt on jinja2's sandbox, then ``Tokenizer.encode(prompt, add_special_tokens=False)``. Checked:
on the 47 conversations above its text equals transformers 5.25's ``apply_chat_template`` on qwen3
and gemma-3, refusals included (0 differ).

The bugs
--------

Given together they apply in this order: ``char-macros-replaced``, ``tool-output-last-2000``,
``tool-calls-as-text``, ``system-prompt-doubled``, ``history-reversed``, ``system-as-developer``,
``ollama-tool-struct``, ``server-thinking-wins``. A server that refuses the request before any
template runs answers an ``error`` with status ``error``. Counts are of conversations whose answer
differs from the twin's: chats.jsonl (35) / blind32_chats.jsonl (12). Gemma 3's template refuses
every conversation with a ``tool`` message and writes no tools, so the tool bugs show on Qwen 3 only.

``char-macros-replaced`` (message contents rewritten): in every string content and text part,
``{{user}}`` and ``<USER>`` become ``You``, ``{{char}}`` and ``<BOT>`` become ``AI``.
oobabooga/text-generation-webui ``modules/chat.py``, ``replace_character_names(text, name1,
name2)``: ``text.replace('{{user}}', name1).replace('{{char}}', name2)``, then ``<USER>`` and
``<BOT>`` (its docs, Custom-chat-characters.md: "``{{char}}`` or ``<BOT>``: are replaced with the
character's name"). A front end that runs it over every message (SillyTavern's macros work so)
rewrites a user who writes the macros as text. Example: ``b32-macros-system`` gives Qwen 3
``<|im_start|>system\nYou are AI, a friendly guide. Call the user You.<|im_end|>``. Shows on
both models: 0 / 3 (``b32-macros-system``, ``b32-macros-user``, ``b32-macros-template-question``).

``tool-output-last-2000`` (tool results cut): each ``tool`` message's string content goes
through Open Interpreter's ``truncate_output`` (OpenInterpreter/open-interpreter
``interpreter/core/utils/truncate_output.py``, copied): longer than 2,000 characters, it becomes
``Output truncated. Showing the last 2000 characters.\n\n`` and its last 2,000 characters.
Example: ``b32-tool-long-output`` (a log of 2,965 characters) gives Qwen 3 1,313 ids, the twin
1,824; its ``<tool_response>`` starts with the notice and then mid-line. Shows on Qwen 3 only:
0 / 1.

``tool-calls-as-text`` (tool calls): an assistant message with a ``tool_calls`` key becomes
``{"role": "assistant", "content": content + "\n" + json.dumps(tool_calls)}``: the calls are
written into its text as raw OpenAI JSON (Python's defaults, so ``Z\u00fcrich``), and the message
has no ``tool_calls`` left. mozilla-ai/any-llm ``providers/ollama/ollama.py`` before PR #1278
("assistant tool calls are flattened into the assistant's text as raw OpenAI JSON ... a few-shot
demonstration of the wrong output format"); the same code's tool branch (tool results sent as
user messages) is left out, as earlier rounds have it. A null content is refused (``TypeError``,
an ``error``). Example: ``tool-call-object-01`` gives Qwen 3 ``<|im_start|>assistant\n\n[{"id":
"call00001", "type": "function", "function": {"name": "get_weather", "arguments": {"city":
"Z\u00fcrich", "unit": "celsius"}}}]<|im_end|>`` (265 ids, the twin 242). Shows on Qwen 3 only:
3 / 2.

``system-prompt-doubled`` (the system message): a conversation whose first message is a system
message gets that prompt added once more by Open WebUI 0.3.15's ``add_or_update_system_message``
(open-webui/open-webui #4922, "Cluttered system message", fixed by PR #4924): ``messages[0]["content"]
+= f"{content}\n{messages[0]['content']}"``. The chat's system prompt is also the model's
(``params.system``), so the content becomes S + S + ``\n`` + S. A list content is extended by
the string's characters, as Python's ``+=`` does (Qwen 3's template then raises, as it already
does on a list). Example: ``system-01`` gives Qwen 3 ``<|im_start|>system\nYou are a helpful
assistant.You are a helpful assistant.\nYou are a helpful assistant.<|im_end|>``. Shows on both
models: 7 / 3.

``history-reversed`` (the order of messages): the messages between the leading system messages
and the last one come in reverse order; the last message (the current input) stays last. A
memory store that gives the history newest first, not turned round: langchain-ai/langchain PR
#3835 ("Motorhead Memory messages come in reversed order", getmetal/motorhead #51),
langflow-ai/langflow #7607 ("newest n messages are fetched but they are given to llm in newest ->
oldest order"), The-Vibe-Company/quivr #2995. Example: ``multi-turn-01`` gives Qwen 3
``<|im_start|>assistant\nHello! How can I help?<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n
<|im_start|>user\nTell me a joke.<|im_end|>``; Gemma 3 refuses it (roles no longer alternate).
Shows: Qwen 3 9 / 4, Gemma 3 6 / 2.

``system-as-developer`` (roles): every ``system`` message is sent as ``developer``, the role
OpenAI asks for with its reasoning models. pi's ``openai-completions`` client (``const role =
model.reasoning && compat.supportsDeveloperRole ? "developer" : "system"``) pointed at a local
server: cloudflare/cloudflare-os #36, fgrehm/pi-ollama-cloud PR #10 ("Some models ... ignore the
``developer`` role"); ggml-org/llama.cpp PR #20079 ("permissive templates silently lost the system
prompt"). Qwen 3's template writes no ``developer`` turn, so the system prompt is gone (``system-01``
gives 16 ids, the twin 27); Gemma 3's refuses a first message that is not the user's. Shows on
both models: 8 / 4.

``ollama-tool-struct`` (tools, their schema edited): each tool is read into Ollama's Go
``api.Tool`` struct and written back before the template sees it: ``type``, ``function.name``,
``function.description`` and ``parameters`` with ``type``, ``required``, ``properties`` in that
order (``required`` now before ``properties``); properties in sorted order, each with ``type``,
``description`` (``""`` when absent) and ``enum`` (when not empty) only; every other field
(``items``, nested ``properties``, ``default``, ``minimum``, ``pattern``, ``additionalProperties``)
dropped; an absent ``required`` or ``properties`` is null; a field that is not a string (a ``type``
list) is refused (an ``error``, Ollama's 400). ollama/ollama #6377 ("``parameters`` in tool
definition is a very limited subset of a JSON Schema", "Any extra nested properties or keys
beyond are truncated"), #13472 ("Nested objects properties silently removed from tooling
requests"). Example: ``tools-01`` reaches Qwen 3's ``<tools>`` as ``"parameters": {"type":
"object", "required": ["city"], "properties": {..., "unit": {"type": "string", "description": "",
"enum": [...]}}}``. Shows on Qwen 3 only: 5 / 5.

``server-thinking-wins`` (options): ``enable_thinking`` reaches the template true whatever the
request says. llama-server started with ``--reasoning on`` adds ``enable_thinking`` to its own
template kwargs, "applied after the ``enable_thinking`` boolean that will be set" from the
request (ggml-org/llama.cpp PR #27221; #22717, "``--chat-template-kwargs`` ... not work"). A request
with ``enable_thinking`` false loses it: ``thinking-02`` gives Qwen 3 ``<|im_start|>assistant\n``
without ``<think>\n\n</think>\n\n`` (18 ids, the twin 22). Shows on Qwen 3 only: 1 / 2 (Gemma 3's
template reads no ``enable_thinking``).
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

BUGS = ("char-macros-replaced", "tool-output-last-2000", "tool-calls-as-text", "system-prompt-doubled",
        "history-reversed", "system-as-developer", "ollama-tool-struct", "server-thinking-wins")
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

# the names text-generation-webui's replace_character_names puts in (its user name and character name)
NAME1 = "You"
NAME2 = "AI"


def replace_character_names(text: str, name1: str, name2: str) -> str:
    """oobabooga/text-generation-webui, modules/chat.py, copied."""
    text = text.replace('{{user}}', name1).replace('{{char}}', name2)
    return text.replace('<USER>', name1).replace('<BOT>', name2)


def char_macros_replaced(messages: list) -> list:
    """``{{user}}``/``<USER>`` and ``{{char}}``/``<BOT>`` in every string content and text part become the names."""
    for m in messages:
        if not isinstance(m, dict):
            continue
        content = m.get("content")
        if isinstance(content, str):
            m["content"] = replace_character_names(content, NAME1, NAME2)
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    part["text"] = replace_character_names(part["text"], NAME1, NAME2)
    return messages


def truncate_output(data: str, max_output_chars: int = 2000) -> str:
    """OpenInterpreter/open-interpreter, interpreter/core/utils/truncate_output.py, copied."""
    needs_truncation = False
    message = f"Output truncated. Showing the last {max_output_chars} characters.\n\n"
    # Remove previous truncation message if it exists
    if data.startswith(message):
        data = data[len(message):]
        needs_truncation = True
    # If data exceeds max length, truncate it and add message
    if len(data) > max_output_chars or needs_truncation:
        data = message + data[-max_output_chars:]
    return data


def tool_output_last_2000(messages: list) -> list:
    """Every ``tool`` message's string content goes through ``truncate_output``."""
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "tool" and isinstance(m.get("content"), str):
            m["content"] = truncate_output(m["content"])
    return messages


def tool_calls_as_text(messages: list) -> list:
    """mozilla-ai/any-llm, providers/ollama/ollama.py (before PR #1278): an assistant message that has a
    ``tool_calls`` key becomes ``{"role": "assistant", "content": content + "\\n" + json.dumps(tool_calls)}``."""
    out = []
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "assistant" and "tool_calls" in m:
            m = {"role": "assistant", "content": m["content"] + "\n" + json.dumps(m["tool_calls"])}
        out.append(m)
    return out


def system_text(content) -> str:
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


def add_or_update_system_message(content: str, messages: list) -> list:
    """open-webui/open-webui 0.3.15, backend/utils/misc.py, copied (issue #4922)."""
    if messages and messages[0].get("role") == "system":
        messages[0]["content"] += f"{content}\n{messages[0]['content']}"
    else:
        # Insert at the beginning
        messages.insert(0, {"role": "system", "content": content})
    return messages


def system_prompt_doubled(messages: list) -> list:
    """The chat's system prompt is also the model's (``params.system``): a first system message gets it added once
    more through ``add_or_update_system_message``; a conversation without one has no system prompt to add."""
    if messages and isinstance(messages[0], dict) and messages[0].get("role") == "system":
        return add_or_update_system_message(system_text(messages[0].get("content")), messages)
    return messages


def history_reversed(messages: list) -> list:
    """The stored history comes back newest first and is not turned round: every message between the leading system
    messages and the last one is in reverse order; the last (the current input) stays last."""
    n = 0
    while n < len(messages) and isinstance(messages[n], dict) and messages[n].get("role") == "system":
        n += 1
    head, rest = messages[:n], messages[n:]
    return head + rest[:-1][::-1] + rest[-1:]


def system_as_developer(messages: list) -> list:
    """The system prompt goes out as ``role: "developer"`` (a client that takes the model for a reasoning one)."""
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "system":
            m["role"] = "developer"
    return messages


def go_string(value, where: str) -> str:
    """A Go ``string`` field: absent is ``""``, anything but a JSON string fails to unmarshal (HTTP 400)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BadRequest(f"json: cannot unmarshal {type(value).__name__} into Go struct field {where} of type string")
    return value


def ollama_tool(tool) -> dict:
    """A tool read into Ollama's ``api.Tool`` struct and written back: only the fields the struct has, in its order,
    maps with sorted keys, absent strings as ``""`` and absent slices and maps as null."""
    if not isinstance(tool, dict):
        raise BadRequest("json: cannot unmarshal into Go value of type api.Tool")
    fn = tool.get("function") if isinstance(tool.get("function"), dict) else {}
    params = fn.get("parameters") if isinstance(fn.get("parameters"), dict) else {}
    props = params.get("properties")
    out_props = None
    if isinstance(props, dict):
        out_props = {}
        for name in sorted(props):
            p = props[name] if isinstance(props[name], dict) else {}
            prop = {"type": go_string(p.get("type"), "properties.type"),
                    "description": go_string(p.get("description"), "properties.description")}
            if p.get("enum"):
                prop["enum"] = [go_string(e, "properties.enum") for e in p["enum"]]
            out_props[name] = prop
    required = params.get("required")
    if required is not None:
        required = [go_string(r, "parameters.required") for r in required]
    return {"type": go_string(tool.get("type"), "Tool.type"),
            "function": {"name": go_string(fn.get("name"), "function.name"),
                         "description": go_string(fn.get("description"), "function.description"),
                         "parameters": {"type": go_string(params.get("type"), "parameters.type"),
                                        "required": required,
                                        "properties": out_props}}}


def ollama_tool_struct(tools):
    if not isinstance(tools, list):
        return tools
    return [ollama_tool(t) for t in tools]


def server_thinking_wins(options: dict) -> dict:
    """llama-server started with ``--reasoning on``: its template kwargs (``enable_thinking: true``) are applied after
    the request's, so the request's ``enable_thinking`` is overwritten."""
    options = dict(options)
    options["enable_thinking"] = True
    return options


class BadRequest(Exception):
    """The server refused the request before any template ran (Ollama's 400 when a tool does not fit its struct)."""


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
    def prepare(self, messages: list, tools, gen, options: dict):
        bugs = self.bugs
        if "char-macros-replaced" in bugs:
            messages = char_macros_replaced(messages)
        if "tool-output-last-2000" in bugs:
            messages = tool_output_last_2000(messages)
        if "tool-calls-as-text" in bugs:
            messages = tool_calls_as_text(messages)
        if "system-prompt-doubled" in bugs:
            messages = system_prompt_doubled(messages)
        if "history-reversed" in bugs:
            messages = history_reversed(messages)
        if "system-as-developer" in bugs:
            messages = system_as_developer(messages)
        if "ollama-tool-struct" in bugs:
            tools = ollama_tool_struct(tools)
        if "server-thinking-wins" in bugs:
            options = server_thinking_wins(options)
        return messages, tools, gen, options

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
            messages, tools, gen, options = self.prepare(messages, tools, gen, options)
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
