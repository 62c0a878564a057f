"""blind13 chat engine: the model's chat template as transformers renders it, one bug per `--bug`.

A `cmd:` engine speaking tokparity's line protocol (docs/contracts.md, the `chat` op only; `encode` and
the decoding ops are answered with an error with no status: not tried). Without `--bug` it is the
bug-free twin of transformers' `apply_chat_template` (the tokenizer loaded with `AutoTokenizer` from
the `tokenizer.json`'s folder; jinja2's sandbox, `trim_blocks`, `lstrip_blocks`, transformers'
`tojson`, `raise_exception`, `strftime_now`), every option of the request passed to the template, a
template error answered as `{"raised": ...}`; the prompt's text and its ids (encoded as transformers
encodes it: `add_special_tokens=False`, special-token text parsed). With `--template
{chat_template}` (gpt-oss, whose template is a file of its own) that template is used instead.
Written on 2026-11-30 by a helper who read no tokparity diagnosis code and ran tokparity with
`--no-diagnose` only, looking at mismatch counts. Each bug below is the behaviour of a real engine,
written from its public report or fix (and its code); everything else stays the twin's.

`--bug thinking-off-default` (ddalcu/mlx-serve #219, "Thinking is off by default; every other runner
lets the model's template decide": "mlx-serve always writes an explicit `enable_thinking` into the
chat-template render context ... `serializeExtraContext` always emits `"enable_thinking":true|false`,
so the template's own default branch never runs" and "`defaultEnableThinking` is `false` for every
arch except ..."; the same gap in Blaizzy/mlx-vlm PR #1316, "Fix thinking enabled by default for chat
templates"): a request that does not name `enable_thinking` is rendered with
`enable_thinking=False`. Here: exactly that (a request that names it is passed as it is). Shows on
qwen3 with a generation prompt (its template then writes `<think>\\n\\n</think>\\n\\n` after
`<|im_start|>assistant\\n`); templates that never read the variable are unchanged.

`--bug tool-as-user` (huggingface/smolagents #1232, "TOOL_RESPONSE in ActionStep.to_messages": "...
smolagents already has a mechanism (`tool_role_conversions` in src/smolagents/models.py) that often
converts the standard TOOL_RESPONSE role into USER. This is done because many LLM APIs don't actually
support a distinct TOOL_RESPONSE role"; the mapping is `tool_role_conversions = {MessageRole.TOOL_CALL:
MessageRole.ASSISTANT, MessageRole.TOOL_RESPONSE: MessageRole.USER}`, applied to every message before
the model's template sees it): each `tool` message reaches the template as a `user` message (its other
keys, content included, unchanged). Shows on the conversations with tool results (chats'
`tool-call-*`, `tool-result-01`): qwen3 writes a user turn instead of `<tool_response>`, llama-bpe
writes `user` for `tool` (`ipython` in some templates), gemma-3 raises on the alternation where the
twin renders or the reverse.

`--bug bos-eos-stripped` (ggml-org/llama.cpp PR #15086, "chat : only remove double bos/eos if added":
"Only remove potentially double BOS/EOS token from chat template if `add_bos_token` or `add_eos_token`
is set"): before it, `common/chat.cpp` cut them whatever the vocabulary said: `if
(string_starts_with(result, tmpl.bos_token())) { result = result.substr(tmpl.bos_token().size()); }`
and `if (string_ends_with(result, tmpl.eos_token())) { result = result.substr(0, result.size() -
tmpl.eos_token().size()); }` ("To avoid double BOS / EOS tokens, we're manually removing beginning /
trailing tokens"), and the server then tokenized the prompt with `add_special = true`. Here: the
rendered text loses a leading `bos_token` text and a trailing `eos_token` text (tokenizer_config.json's),
and its ids are that text encoded with `add_special_tokens=True` (so where the tokenizer's
post-processor adds a BOS, as gemma-3's, the ids get it back while the text does not). Shows on
llama-bpe (its template writes `<|begin_of_text|>`, its `tokenizer.json` adds nothing) and gemma-3
(text only); qwen3 (no BOS, prompts end in `<|im_end|>\\n`) is unchanged.

`--bug empty-dropped` (langchain-ai/langchain-google PR #775, "genai : filter out empty message
contents in ChatGoogleGenerativeAI": `messages = [message for message in messages if
message.content]`; the reviewer: "a message can have an empty content but `tool_calls`"): every
message whose `content` is empty or missing (`""`, `None`, `[]`) is left out before rendering,
assistant messages that only carry `tool_calls` included. Shows on chats' `empty-content-*` and the
tool-call conversations (an assistant turn with `content: null`), on every model.

`--bug no-strftime` (oobabooga/textgen #6675, "granite 2.1 w llama.cpp jinja error
jinja2.exceptions.UndefinedError: 'strftime_now' is undefined"; "This also happens with EXL2 and
Transformers ... it's a jinja2 template parsing issue", the same with Mistral-Small-24B): the engine's
Jinja environment defines `raise_exception` but not transformers' `strftime_now`, so a template that
calls it fails to render and one that tests `strftime_now is defined` takes its fallback date. Here:
transformers' compiled template with `strftime_now` taken out of its globals; the template's
`UndefinedError` is answered as a refusal (`raised`), as the twin answers a template's own error.
Shows on gpt-oss (`"Current date: " + strftime_now("%Y-%m-%d")` in every prompt: each conversation
raised where the twin renders); templates that do not use it are unchanged.
"""
import argparse
import json
import os
import sys

BUGS = ["thinking-off-default", "tool-as-user", "bos-eos-stripped", "empty-dropped", "no-strftime"]


def drop_strftime():
    """Patch transformers' template compiler so that templates see no `strftime_now` global."""
    from transformers.utils import chat_template_utils as ctu
    original = ctu._compile_jinja_template

    def compile_without(chat_template):
        compiled = original(chat_template)
        compiled.environment.globals.pop("strftime_now", None)
        try:
            compiled.globals.pop("strftime_now", None)
        except (AttributeError, TypeError):
            pass
        return compiled
    ctu._compile_jinja_template = compile_without


class Engine:
    def __init__(self, path, bug, template_path=None):
        import transformers
        transformers.logging.set_verbosity_error()
        from transformers import AutoTokenizer
        self.bug = bug
        self.tok = AutoTokenizer.from_pretrained(os.path.dirname(os.path.abspath(path)))
        self.template = self.tok.chat_template
        if isinstance(self.template, dict):
            self.template = self.template.get("default")
        if template_path:
            with open(template_path, encoding="utf-8") as f:
                self.template = f.read()
        if bug == "no-strftime":
            drop_strftime()

    def render(self, messages, tools, options):
        return self.tok.apply_chat_template(messages, tools=tools, tokenize=False, chat_template=self.template,
                                            **options)

    def chat(self, messages, tools, options):
        options = dict(options or {})
        messages = [dict(m) for m in messages]
        if self.bug == "thinking-off-default" and "enable_thinking" not in options:
            options["enable_thinking"] = False
        elif self.bug == "tool-as-user":
            for m in messages:
                if m.get("role") == "tool":
                    m["role"] = "user"
        elif self.bug == "empty-dropped":
            messages = [m for m in messages if m.get("content")]
        try:
            text = self.render(messages, tools, options)
        except Exception as e:  # the template refused the conversation
            return {"raised": f"{type(e).__name__}: {e}"}
        add_special = False
        if self.bug == "bos-eos-stripped":
            bos, eos = self.tok.bos_token, self.tok.eos_token
            if bos and text.startswith(bos):
                text = text[len(bos):]
            if eos and text.endswith(eos):
                text = text[:-len(eos)]
            add_special = True
        ids = self.tok(text, add_special_tokens=add_special)["input_ids"]
        return {"text": text, "ids": ids}

    def handle(self, req):
        op = req.get("op")
        if op == "chat":
            return self.chat(req["messages"], req.get("tools"), req.get("options"))
        return {"error": f"op {op} not supported"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tokenizer_json")
    ap.add_argument("--template", help="a chat template file of its own ({chat_template})")
    ap.add_argument("--bug", choices=BUGS)
    args = ap.parse_args()
    eng = Engine(args.tokenizer_json, args.bug, args.template)
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            rep = eng.handle(req)
        except Exception as e:
            rep = {"error": f"{type(e).__name__}: {e}", "status": "error"}
        rep["id"] = req.get("id")
        sys.stdout.write(json.dumps(rep) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
