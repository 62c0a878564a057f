r"""Blind engines, round 33: the ``chat`` op, a model's chat template rendered as transformers does.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. Each ``--bug NAME`` adds one bug of
a prompt builder, client, proxy or server in front of the template. The flag may be repeated. No
flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind33_chat.py {tokenizer_json} {tokenizer_config} [--bug NAME ...]

It was written on 2026-12-07, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md (its ``cmd:`` protocol), the first table of this folder's README
and the module docstrings of the earlier blind engines (their bug lists, to repeat none),
blind32_chat.py (its protocol and twin are copied), corpora/chats.jsonl and public code, issues
and pull requests (through the search tool) were read. It was checked with small scripts of its
own (qwen3, gemma-3, llama-bpe) on corpora/chats.jsonl (35) and blind33_chats.jsonl (9).

The twin
--------

The twin is blind32_chat.py's, unchanged: transformers' ``apply_chat_template(..., tokenize=False)``
rebuilt on jinja2's sandbox, then ``Tokenizer.encode(prompt, add_special_tokens=False)``. Checked:
on the 44 conversations above its text equals transformers 5.25's ``apply_chat_template`` (the
tokenizer loaded with ``AutoTokenizer``) and its ids equal that tokenizer's ids of the text, on
qwen3, gemma-3 and llama-bpe, refusals included (0 differ); its answers equal blind32_chat.py's
twin (0 differ); through the protocol, every reply of the twin and of each bug on 21 conversations
equals the engine's answer in process (0 differ).

The bugs
--------

Each bug changes the messages before the template sees them; tools and options are passed as the
twin passes them. Given together they apply in this order: ``empty-text-placeholder``,
``assistant-history-parsed``, ``assistant-text-dropped``, ``history-as-system-context``,
``system-as-user-tagged``, ``history-one-prompt``. Counts are of conversations whose answer (text,
ids or refusal) differs from the twin's: chats.jsonl (35) / blind33_chats.jsonl (9).

``empty-text-placeholder`` (empty contents filled): a ``user`` or ``assistant`` message whose
string content is empty or whitespace only gets the content ``[System: Empty message content
sanitised to satisfy protocol]``; in a list content, each such text part gets it; a null content
and other roles are left alone. BerriAI/litellm ``litellm/litellm_core_utils/prompt_templates/
factory.py``, ``_sanitize_empty_text_content`` (litellm 1.85 and later, run on every request):
BerriAI/litellm #24498 (the placeholder "leaks into the conversation and gets echoed back by the
model"), PR #29078 ("The `[System: Empty message content sanitised to satisfy protocol]`
placeholder was leaking into assistant turns that carried tool calls, getting rendered as visible
chat output"), PR #34822. Examples: ``empty-content-01`` gives Gemma 3
``<start_of_turn>user\n[System: Empty message content sanitised to satisfy protocol]<end_of_turn>``
where the twin writes an empty turn; the tool-call turns (``content: ""``) of ``tool-call-*``
write it before the ``<tool_call>`` on Qwen 3 and as the assistant turn on Llama 3. Shows: Qwen 3
5 / 2, Gemma 3 2 / 3 (it refuses the tool conversations either way), Llama 3 5 / 3.

``assistant-history-parsed`` (past replies as the web demo shows them): every assistant message's
string content goes through the web demo's ``_parse_text`` (copied): split at ``\n``, empty
lines dropped, each line after the first prefixed with ``<br>`` and all joined with nothing; a
line holding ```` ``` ```` opens or closes ``<pre><code class="language-...">`` /
``<br></code></pre>``, and inside it ``<``, ``>``, spaces, ``*``, ``_``, ``-``, ``.``, ``!``,
``(``, ``)``, ``$`` become HTML entities and a backtick ``\```. QwenLM/Qwen ``web_demo.py``
``predict``: ``full_response = _parse_text(response)`` then ``_task_history.append((_query,
full_response))``, so the HTML goes back to the model as history; QwenLM/Qwen PR #2297 ("The demo
passed rendered HTML back to the model on the next turn, which can corrupt context for code
blocks and special characters"); the same ``parse_text`` in THUDM/ChatGLM-6B's web demo and its
many copies. Single-line replies are unchanged. Example: ``b33-list-answer`` gives ``Here are
three tips:<br>1. Keep a regular schedule.<br>2. Avoid screens before bed.<br>3. ...`` on all
three models. Shows: Qwen 3 1 / 4 (``whitespace-02``'s ``"trailing newline\n"`` loses its line
feed, which Gemma 3 and Llama 3 trim anyway), Gemma 3 0 / 3, Llama 3 0 / 3.

``assistant-text-dropped`` (the assistant's text replies left out): every assistant message
without tool calls is removed; assistant messages with tool calls stay. HKUDS/nanobot #1236
("Assistant replies are missing from conversation history": "the assistant's **outgoing**
messages aren't being appended to the message array for subsequent requests ... I did notice that
tool calls are saved correctly, but standard text replies are dropped"). Example:
``multi-turn-01`` gives Qwen 3 ``<|im_start|>user\nHi<|im_end|>\n<|im_start|>user\nTell me a
joke.<|im_end|>`` and the generation prompt; Gemma 3 raises ``Conversation roles must alternate``
where the twin renders; a conversation to be continued (``continue-01``) continues the user's
message instead. Shows: Qwen 3 10 / 6, Gemma 3 9 / 5, Llama 3 10 / 6.

``history-as-system-context`` (past exchanges as system messages): after the leading system
messages, and before a final user message (the new input), each user message with a string
content and the assistant message right after it become one system message, ``"CONTEXT: USER
PROMPT: " + prompt + " AI RESPONSE: " + response`` (the response empty where no assistant message
follows); other messages stay where they are. gabrielhutu/perplexity-ext before PR #13 (issue #12,
"Fix Message History", whose log shows ``{role: 'system', content: 'CONTEXT: USER PROMPT: test AI
RESPONSE: ...'}``): ``webviewContent.ts`` ``sendContext(prompt, response)`` posts ``{role:
"system", content: "CONTEXT: USER PROMPT: " + prompt + " AI RESPONSE: " + response}``, and
``perplexity.ts`` sends ``[...context, {role: "user", content: message}]``. Examples:
``multi-turn-01`` gives Qwen 3 ``<|im_start|>system\nCONTEXT: USER PROMPT: Hi AI RESPONSE: Hello!
How can I help?<|im_end|>`` before the last question; Gemma 3 takes that first system message as
its system text: ``<start_of_turn>user\nCONTEXT: USER PROMPT: Hi AI RESPONSE: Hello! How can I
help?\n\nTell me a joke.<end_of_turn>``. Shows: Qwen 3 12 / 6, Gemma 3 9 / 5, Llama 3 12 / 6.

``system-as-user-tagged`` (system messages as tagged user messages): every system message becomes
``{"role": "user", "content": "[System]: " + content}`` (a content that is not a string
``JSON.stringify``'d; the message's other keys gone). An OpenAI-compatible gateway over VS Code's
language-model API, which has no system role: suhaibbinyounis/github-copilot-api-vscode
``src/CopilotApiGateway.ts``, ``case 'system':
lmMessages.push(vscode.LanguageModelChatMessage.User(`[System]: ${content}`))`` (the same line in
other Copilot gateway extensions found by the code search; its tool and tool-call arms are left
out here). Examples: ``system-01`` gives Llama 3
``<|start_header_id|>user<|end_header_id|>\n\n[System]: You are a helpful assistant.<|eot_id|>``
then the user's turn; Qwen 3 a user turn ``[System]: You are a helpful assistant.``; Gemma 3
raises ``Conversation roles must alternate`` where the twin renders. Shows on every model: 8 / 4.

``history-one-prompt`` (the conversation flattened into one prompt): all messages become one user
message, ``"\n".join`` of ``Human: {content}`` for user, ``AI: {content}`` for assistant, the bare
content for system and ``\n\n{Role}: {content}`` for any other role (Python f-strings: a null
content is ``None``, a list its repr; tool calls are lost). langchain-ai/langchain PR #9628 ("Adds
ChatOllama"), ``_format_message_as_text`` and ``_format_messages_as_text`` ("I'm just prefixing
lines"): the text is sent as the ``prompt`` of Ollama's ``/api/generate``, which renders the
model's template with it as the only user message. Examples: ``multi-turn-01`` gives Qwen 3
``<|im_start|>user\nHuman: Hi\nAI: Hello! How can I help?\nHuman: Tell me a joke.<|im_end|>\n
<|im_start|>assistant\n``; ``system-01`` gives Gemma 3 ``<start_of_turn>user\nYou are a helpful
assistant.\nHuman: What is 2 + 2?<end_of_turn>``. Shows on every conversation of every model:
35 / 9.
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

BUGS = ("empty-text-placeholder", "assistant-history-parsed", "assistant-text-dropped", "history-as-system-context",
        "system-as-user-tagged", "history-one-prompt")
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

# litellm/litellm_core_utils/prompt_templates/factory.py (litellm >= 1.85.0)
EMPTY_TEXT_PLACEHOLDER = "[System: Empty message content sanitised to satisfy protocol]"


def _blank(text) -> bool:
    return isinstance(text, str) and (not text or not text.strip())


def sanitize_empty_text_content(message):
    """LiteLLM's ``_sanitize_empty_text_content`` (case C of its message sanitiser): a ``user`` or ``assistant``
    message whose string content is empty or whitespace only gets the placeholder; in a list content, each such text
    block gets it (other blocks untouched)."""
    if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
        return message
    content = message.get("content")
    if isinstance(content, str):
        if _blank(content):
            message = dict(message)  # Make a copy
            message["content"] = EMPTY_TEXT_PLACEHOLDER
        return message
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text" and _blank(part.get("text")):
                part = {**part, "text": EMPTY_TEXT_PLACEHOLDER}
            parts.append(part)
        message = {**message, "content": parts}
    return message


def empty_text_placeholder(messages: list) -> list:
    return [sanitize_empty_text_content(m) for m in messages]


def parse_text(text: str) -> str:
    """QwenLM/Qwen web_demo.py ``_parse_text`` (THUDM/ChatGLM-6B web_demo.py ``parse_text``), copied: the text as the
    Gradio chatbot shows it, line breaks as ``<br>``, blank lines dropped, code blocks as HTML."""
    lines = text.split("\n")
    lines = [line for line in lines if line != ""]
    count = 0
    for i, line in enumerate(lines):
        if "```" in line:
            count += 1
            items = line.split("`")
            if count % 2 == 1:
                lines[i] = f'<pre><code class="language-{items[-1]}">'
            else:
                lines[i] = "<br></code></pre>"
        else:
            if i > 0:
                if count % 2 == 1:
                    line = line.replace("`", r"\`")
                    line = line.replace("<", "&lt;")
                    line = line.replace(">", "&gt;")
                    line = line.replace(" ", "&nbsp;")
                    line = line.replace("*", "&ast;")
                    line = line.replace("_", "&lowbar;")
                    line = line.replace("-", "&#45;")
                    line = line.replace(".", "&#46;")
                    line = line.replace("!", "&#33;")
                    line = line.replace("(", "&#40;")
                    line = line.replace(")", "&#41;")
                    line = line.replace("$", "&#36;")
                lines[i] = "<br>" + line
    text = "".join(lines)
    return text


def assistant_history_parsed(messages: list) -> list:
    """The demo keeps ``full_response = _parse_text(response)`` in its task history: every assistant message's string
    content reaches the template as ``_parse_text`` made it."""
    out = []
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "assistant" and isinstance(m.get("content"), str):
            m = {**m, "content": parse_text(m["content"])}
        out.append(m)
    return out


def assistant_text_dropped(messages: list) -> list:
    """HKUDS/nanobot #1236: the assistant's text replies are never saved back into the session history; its tool-call
    turns are. Every assistant message without tool calls is left out."""
    return [m for m in messages
            if not (isinstance(m, dict) and m.get("role") == "assistant" and not m.get("tool_calls"))]


def history_as_system_context(messages: list) -> list:
    """gabrielhutu/perplexity-ext before PR #13 (issue #12): each past exchange is kept as one system message,
    ``"CONTEXT: USER PROMPT: " + prompt + " AI RESPONSE: " + response`` (webviewContent.ts ``sendContext``), and the
    request is the context followed by the new user message. Here the messages after the leading system messages and
    before a final user message are the history: a user message with a string content and the assistant message
    right after it (its string content; the response is empty where none follows) become one such system message;
    other messages stay as they are."""
    n = 0
    while n < len(messages) and isinstance(messages[n], dict) and messages[n].get("role") == "system":
        n += 1
    head, rest = messages[:n], messages[n:]
    current = []
    if rest and isinstance(rest[-1], dict) and rest[-1].get("role") == "user":
        rest, current = rest[:-1], rest[-1:]
    out, i = [], 0
    while i < len(rest):
        m = rest[i]
        if isinstance(m, dict) and m.get("role") == "user" and isinstance(m.get("content"), str):
            response = ""
            nxt = rest[i + 1] if i + 1 < len(rest) else None
            if isinstance(nxt, dict) and nxt.get("role") == "assistant" and isinstance(nxt.get("content"), str):
                response = nxt["content"]
                i += 1
            out.append({"role": "system",
                        "content": "CONTEXT: USER PROMPT: " + m["content"] + " AI RESPONSE: " + response})
        else:
            out.append(m)
        i += 1
    return head + out + current


def js_stringify(value) -> str:
    """JavaScript's ``JSON.stringify`` of a parsed JSON value: compact, non-ASCII as it is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def system_as_user_tagged(messages: list) -> list:
    """An OpenAI-compatible gateway over VS Code's language-model API (suhaibbinyounis/github-copilot-api-vscode,
    ``CopilotApiGateway.ts``), which has no system role: ``case 'system':
    lmMessages.push(vscode.LanguageModelChatMessage.User(`[System]: ${content}`))``, a non-string content being
    ``JSON.stringify``'d first. Every system message becomes such a user message (its other keys gone)."""
    out = []
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "system":
            content = m.get("content")
            content = content if isinstance(content, str) else js_stringify(content)
            m = {"role": "user", "content": f"[System]: {content}"}
        out.append(m)
    return out


def format_message_as_text(message) -> str:
    """langchain-ai/langchain PR #9628 (``ChatOllama``), ``_format_message_as_text``, for the message classes a dict
    becomes: ``HumanMessage`` for user, ``AIMessage`` for assistant, ``SystemMessage`` for system, ``ChatMessage``
    (with its role) for any other; a content is written with Python's f-string (``None``, a list's repr)."""
    role = message.get("role")
    content = message.get("content")
    if role == "user":
        return f"Human: {content}"
    if role == "assistant":
        return f"AI: {content}"
    if role == "system":
        return f"{content}"
    return f"\n\n{str(role).capitalize()}: {content}"


def history_one_prompt(messages: list) -> list:
    """``ChatOllama._format_messages_as_text``: the messages joined by "\\n" into one prompt, sent to Ollama's
    ``/api/generate``, which renders the model's template with that prompt as the only user message."""
    prompt = "\n".join(format_message_as_text(m if isinstance(m, dict) else {}) for m in messages)
    return [{"role": "user", "content": prompt}]


class BadRequest(Exception):
    """The server refused the request before any template ran."""


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
        if "empty-text-placeholder" in bugs:
            messages = empty_text_placeholder(messages)
        if "assistant-history-parsed" in bugs:
            messages = assistant_history_parsed(messages)
        if "assistant-text-dropped" in bugs:
            messages = assistant_text_dropped(messages)
        if "history-as-system-context" in bugs:
            messages = history_as_system_context(messages)
        if "system-as-user-tagged" in bugs:
            messages = system_as_user_tagged(messages)
        if "history-one-prompt" in bugs:
            messages = history_one_prompt(messages)
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
