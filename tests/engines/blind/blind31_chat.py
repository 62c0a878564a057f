r"""Blind engines, round 31: the ``chat`` op, a model's chat template rendered as transformers does.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. Each ``--bug NAME`` adds one bug of
a prompt builder or server in front of the template. The flag may be repeated. No flag gives the
bug-free twin.

    cmd:{python} tests/engines/blind/blind31_chat.py {tokenizer_json} {tokenizer_config} [--bug NAME ...]

It was written on 2026-12-06, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md (its ``cmd:`` protocol), the first table of this folder's README
(and the bug lists of the earlier blind engines, to repeat none), blind30_chat.py (its protocol
and twin are copied), corpora/chats.jsonl and public code and issue threads (through the search
tool) were read. It was checked with small scripts of its own (qwen3, gemma-3) on
corpora/chats.jsonl (35) and blind31_chats.jsonl (13).

The twin
--------

The twin is blind30_chat.py's, unchanged: transformers' ``apply_chat_template(..., tokenize=False)``
rebuilt on jinja2's sandbox, then ``Tokenizer.encode(prompt, add_special_tokens=False)``. Checked:
on the 48 conversations above its text equals transformers' ``apply_chat_template`` on qwen3 and
gemma-3, refusals included (0 differ); through the protocol a few requests of each bug give the
answers of the engine in process.

The bugs
--------

Given together they apply in this order: ``parts-joined-bare``, ``no-think-suffix``,
``user-continue-inserted``, ``strict-tool-schema``. A server that refuses the request before any
template runs answers an ``error`` with status ``error``. Counts are of conversations whose answer
differs from the twin's: chats.jsonl (35) / blind31_chats.jsonl (13).

``parts-joined-bare``: a content that is a list of parts becomes one string: the text of each
text part and ``![](URL)`` for each ``image_url`` part, joined with nothing between them; a part
of another kind is refused (an ``error``, as the server's JSON deserializer answers 422).
huggingface/text-generation-inference ``router/src/lib.rs``, ``impl From<Message> for
TextMessage``: ``MessageContent::MultipleChunks(chunks) => chunks.into_iter().map(|chunk| match
chunk { MessageChunk::Text { text } => text, MessageChunk::ImageUrl { image_url } =>
format!("![]({})", image_url.url) }).collect::<Vec<_>>().join("")``. Unlike round 30's
``parts-as-messages`` (a message per part) and vLLM's ``"\n".join`` of earlier rounds, the parts
run together with no separator. Example: ``content-parts-02``'s user parts ``Two`` and ``parts.``
become ``Twoparts.``: Qwen 3 renders ``<|im_start|>user\nTwoparts.<|im_end|>`` where its template
refuses the list (``'list object' has no attribute 'startswith'``); Gemma 3 joins text parts
itself, so only the image part (``b31-parts-image``) and a system list (``b31-parts-lines``) change. Shows: Qwen 3 2 / 3, Gemma 3 0 / 2.

``no-think-suffix``: the builder does not pass ``enable_thinking`` to the template; when it is
false it writes Qwen 3's soft switch instead, `` /no_think`` at the end of the last user message
(the last text part of a list). Qwen 3's model card documents the switch ("add ``/think`` and
``/no_think`` to user prompts or system messages"); front ends wire a "no think" setting to it
rather than to the template variable: weibaohui/k8m #141 ("在AI参数设置，增加no_think 开关，启用后，
会增加/no_think 指令"), open-webui/open-webui #13314 (a filter that adds ``/no_think`` to the user's
prompt). The template then opens the assistant turn without ``<think>\n\n</think>\n\n``. Example:
``thinking-02`` gives Qwen 3 ``<|im_start|>user\nThink about 17 × 23. /no_think<|im_end|>\n
<|im_start|>assistant\n``. Shows on both models (Gemma 3's prompt gets the suffix): 1 / 2.

``user-continue-inserted``: LiteLLM's ``_insert_user_continue_message`` (BerriAI/litellm,
``litellm_core_utils/prompt_templates``, with ``litellm.modify_params`` and
``ensure_alternating_roles``), copied: a user message ``Please continue.``
(``DEFAULT_USER_CONTINUE_MESSAGE``, "similar to autogen") goes before a first assistant message,
between two assistant turns (tool messages and assistant tool calls skipped in the count), and
after a final assistant message. So a conversation that ends with the assistant, to be continued
or scored as it is, ends with a user turn. Example: ``alternation-broken-02`` gives Qwen 3
``<|im_start|>user\nPlease continue.<|im_end|>\n<|im_start|>assistant\nI speak first.<|im_end|>...``;
``continue-01`` continues the ``Please continue.`` turn. Shows on both models: 4 / 4.

``strict-tool-schema``: each tool's ``parameters`` goes through the OpenAI Agents SDK's
``ensure_strict_json_schema`` (openai/openai-agents-python ``src/agents/strict_schema.py``, the
same as openai-python's ``to_strict_json_schema``), recursively: an object gets
``"additionalProperties": false`` after its keys, ``required`` lists every property (optional ones
too), nested objects and array items alike. A function tool is strict by default there
(``strict_json_schema=True``), and the schema so made reaches an OpenAI-compatible local server
whose template writes the tools as JSON. Example: ``tools-01``'s ``get_weather`` reaches Qwen 3's
``<tools>`` block with ``"required": ["city", "unit"]`` and ``"additionalProperties": false``.
Shows on Qwen 3 only: 5 / 3 (Gemma 3's template writes no tools).
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

BUGS = ("parts-joined-bare", "no-think-suffix", "user-continue-inserted", "strict-tool-schema")
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

def parts_joined_bare(messages: list) -> list:
    """huggingface/text-generation-inference, router/src/lib.rs, ``impl From<Message> for TextMessage``: a list content
    becomes one string, each text part's text and each image part as ``![](url)``, joined with nothing between."""
    out: list = []
    for m in messages:
        content = m.get("content") if isinstance(m, dict) else None
        if isinstance(content, list):
            pieces = []
            for part in content:
                if isinstance(part, dict) and part.get("type") == "image_url":
                    url = part.get("image_url")
                    pieces.append("![](" + str(url.get("url") if isinstance(url, dict) else url) + ")")
                elif isinstance(part, dict) and isinstance(part.get("text"), str):
                    pieces.append(part["text"])
                else:
                    raise BadRequest("Failed to deserialize the JSON body into the target type")
            m = {**m, "content": "".join(pieces)}
        out.append(m)
    return out


def no_think_suffix(messages: list, options: dict) -> tuple[list, dict]:
    """Qwen 3's soft switch in place of the template variable: with ``enable_thinking`` false the variable is not
    passed and `` /no_think`` is written at the end of the last user message (a string content, or its last text
    part); ``enable_thinking`` true is not passed either (thinking is the template's default)."""
    if "enable_thinking" not in options:
        return messages, options
    options = dict(options)
    think = options.pop("enable_thinking")
    if think is False:
        for m in reversed(messages):
            if isinstance(m, dict) and m.get("role") == "user":
                content = m.get("content")
                if isinstance(content, str):
                    m["content"] = content + " /no_think"
                elif isinstance(content, list):
                    for part in reversed(content):
                        if isinstance(part, dict) and isinstance(part.get("text"), str):
                            part["text"] = part["text"] + " /no_think"
                            break
                break
    return messages, options


DEFAULT_USER_CONTINUE_MESSAGE = {"role": "user", "content": "Please continue."}


def counts_for_alternation(m: dict) -> bool:
    """LiteLLM's ``_counts_for_alternation``: tool messages and assistant messages with tool calls are skipped."""
    if m.get("role") == "tool":
        return False
    if m.get("role") == "assistant" and m.get("tool_calls"):
        return False
    return True


def insert_user_continue_message(messages: list) -> list:
    """BerriAI/litellm ``_insert_user_continue_message`` (``ensure_alternating_roles=True``, as with
    ``litellm.modify_params``): "Please continue." as a user message before a first assistant message, between two
    assistant turns and after a final assistant message."""
    if not messages:
        return messages
    result = list(messages)
    cont = DEFAULT_USER_CONTINUE_MESSAGE
    if result[0].get("role") == "assistant":
        result.insert(0, dict(cont))
    i = 1
    while i < len(result):
        cur = result[i]
        inserted = False
        if counts_for_alternation(cur) and cur.get("role") == "assistant":
            if result[i - 1].get("role") == "assistant":
                result.insert(i, dict(cont))
                i += 2
                inserted = True
            else:
                j = i - 1
                while j >= 0:
                    prev = result[j]
                    if counts_for_alternation(prev):
                        if prev.get("role") == "assistant":
                            result.insert(i, dict(cont))
                            i += 2
                            inserted = True
                        break
                    j -= 1
        if not inserted:
            i += 1
    if result[-1].get("role") == "assistant":
        result.append(dict(cont))
    return result


def ensure_strict_json_schema(schema):
    """openai/openai-agents-python ``strict_schema.py`` (and openai-python's ``to_strict_json_schema``): every object
    gets ``additionalProperties: false`` and all its properties required, recursively."""
    if not isinstance(schema, dict):
        return schema
    for key in ("$defs", "definitions"):
        if isinstance(schema.get(key), dict):
            for name, sub in schema[key].items():
                ensure_strict_json_schema(sub)
    if schema.get("type") == "object" and "additionalProperties" not in schema:
        schema["additionalProperties"] = False
    props = schema.get("properties")
    if isinstance(props, dict):
        schema["required"] = list(props.keys())
        schema["properties"] = {k: ensure_strict_json_schema(v) for k, v in props.items()}
    if isinstance(schema.get("items"), dict):
        schema["items"] = ensure_strict_json_schema(schema["items"])
    for key in ("anyOf", "allOf"):
        if isinstance(schema.get(key), list):
            schema[key] = [ensure_strict_json_schema(v) for v in schema[key]]
    return schema


def strict_tools(tools):
    if not isinstance(tools, list):
        return tools
    for t in tools:
        fn = t.get("function") if isinstance(t, dict) and isinstance(t.get("function"), dict) else t
        if isinstance(fn, dict) and isinstance(fn.get("parameters"), dict):
            ensure_strict_json_schema(fn["parameters"])
    return tools


class BadRequest(Exception):
    """The server refused the request before any template ran (a 422 from TGI's deserializer)."""


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
        if "parts-joined-bare" in bugs:
            messages = parts_joined_bare(messages)
        if "no-think-suffix" in bugs:
            messages, options = no_think_suffix(messages, options)
        if "user-continue-inserted" in bugs:
            messages = insert_user_continue_message(messages)
        if "strict-tool-schema" in bugs:
            tools = strict_tools(tools)
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
            # the server refuses the request before any template runs (TGI's 422)
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
