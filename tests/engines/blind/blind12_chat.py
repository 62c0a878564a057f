"""blind12 chat engine: the model's chat template as transformers renders it, one bug per `--bug`.

A `cmd:` engine speaking tokparity's line protocol (docs/contracts.md, the `chat` op only; `encode` and
the decoding ops are answered with an error with no status: not tried). Without `--bug` it is the
bug-free twin of transformers' `apply_chat_template` (jinja2's sandbox, `trim_blocks`,
`lstrip_blocks`, transformers' `tojson`, `raise_exception`, `strftime_now`), every option of the
request passed to the template, a template error answered as `{"raised": ...}`:

- with `{tokenizer_json}`: the tokenizer loaded with `AutoTokenizer` from its folder, the prompt's
  text and its ids (encoded as transformers encodes it: `add_special_tokens=False`, special-token
  text parsed);
- with `{tokenizer_json} --template {chat_template}` (gpt-oss, whose template is a file of its own):
  the same, with that template;
- with `--template {chat_template} --tiktoken {tiktoken}` (a model whose template is a file of its own
  and whose vocabulary is a tiktoken / tekken file, as tekken): transformers' `render_jinja_template`
  on that template, `bos_token`, `eos_token` and `unk_token` being the texts of the vocabulary's
  `<s>`, `</s>`, `<unk>`; the prompt's text only (no ids).

Each bug below is the behaviour of a real engine, written from its public report or fix (and its
code); everything else stays the twin's.

`--bug developer-as-system` (ggml-org/llama.cpp PR #20215, "Map developer role to system": "This
adds the compatibility solution to map the developer role to system role in non-GPT-OSS models,
needed for some OpenAI tools"): llama-server's `common/chat.cpp` runs
`workaround::map_developer_role_to_system(messages)` — `for (auto & message : messages) { if
(message.contains("role") && message["role"] == "developer") { message["role"] = "system"; } }` —
before rendering any template but GPT-OSS's; transformers passes the role through as it is. Here:
every `developer` message becomes a `system` message unless the template is a Harmony one (it writes
`<|channel|>`). Shows on conversations with a `developer` message (blind12_chats.jsonl): qwen3 (its
template writes no other role than system/user/assistant/tool, so the developer turn disappears
in the twin), llama-bpe (the role name is written), gemma-3 (the twin raises "Conversation roles
must alternate").

`--bug merge-user-parts` (ROCm/FastFlowLM PR #207, "Merge multiple message with user role"): the
server's `normalize_messages` ("Normalize messages by merging consecutive user messages (like
Ollama does)") folds every run of consecutive `user` messages into one whose `content` is an array
of parts — a string content becomes `{"type": "text", "text": ...}` unless empty, an array's parts
are appended — and `openai_to_rest` then writes each message's content as
`merged_text += contentItem["text"]` over its text parts, with no separator. Here: each run of
`user` messages (a run of one too) becomes one `user` message whose content is the concatenation
of its text (empty strings dropped, other parts left out), its other keys those of the run's first
message; other messages unchanged. Shows on two user messages in a row (chats'
`alternation-broken-01`: qwen3 and llama-bpe write one turn where the twin writes two; gemma-3
renders where the twin raises) and on a user content given as a list of parts (qwen3's template
raises on a list in the twin).

`--bug tools-empty-list` (huggingface/trl #5379, fixed by PR #5380 "Pass tools as None to
`apply_chat_template` when it is an empty list"; the same in PR #5346: "`GRPOTrainer` initialises
`self.tools = tools or []` so it is always a list. When no tools are configured the value is `[]`
... forwarded to `tokenizer.apply_chat_template()` ... via `tools=self.tools`", and "Passing
`tools=[]` (non-None, but empty) incorrectly triggers the tool-rendering block with no tool
definitions"): here a conversation without tools is rendered with `tools=[]`. Shows where the
template tests `tools is not none`: tekken (Mistral NeMo's template writes `[AVAILABLE_TOOLS][` and
`[/AVAILABLE_TOOLS]` before the last user message, with no tool between); qwen3, gemma-3 and
gpt-oss test `if tools` and are unchanged.
"""
import argparse
import json
import os
import sys

BUGS = ["developer-as-system", "merge-user-parts", "tools-empty-list"]


class Engine:
    def __init__(self, path, bug, template_path=None, tiktoken_path=None):
        import transformers
        transformers.logging.set_verbosity_error()
        self.bug = bug
        self.tok = None
        self.specials = {}
        if path:
            from transformers import AutoTokenizer
            self.tok = AutoTokenizer.from_pretrained(os.path.dirname(os.path.abspath(path)))
            self.template = self.tok.chat_template
            if isinstance(self.template, dict):
                self.template = self.template.get("default")
        if template_path:  # a template file of its own comes first, as tokparity reads the model's files
            with open(template_path, encoding="utf-8") as f:
                self.template = f.read()
            if tiktoken_path:
                self.specials = tekken_specials(tiktoken_path)
        self.harmony = "<|channel|>" in (self.template or "")

    def render(self, messages, tools, options):
        if self.tok is not None:
            return self.tok.apply_chat_template(messages, tools=tools, tokenize=False, chat_template=self.template,
                                                **options)
        from transformers.utils.chat_template_utils import render_jinja_template
        rendered, _ = render_jinja_template([messages], tools=tools, chat_template=self.template,
                                            **options, **self.specials)
        return rendered[0]

    def chat(self, messages, tools, options):
        options = dict(options or {})
        messages = [dict(m) for m in messages]
        if self.bug == "developer-as-system" and not self.harmony:
            for m in messages:
                if m.get("role") == "developer":
                    m["role"] = "system"
        elif self.bug == "merge-user-parts":
            messages = merge_user_runs(messages)
        elif self.bug == "tools-empty-list" and tools is None:
            tools = []
        try:
            text = self.render(messages, tools, options)
        except Exception as e:  # the template refused the conversation
            return {"raised": f"{type(e).__name__}: {e}"}
        if self.tok is None:
            return {"text": text}
        ids = self.tok(text, add_special_tokens=False)["input_ids"]
        return {"text": text, "ids": ids}

    def handle(self, req):
        op = req.get("op")
        if op == "chat":
            return self.chat(req["messages"], req.get("tools"), req.get("options"))
        return {"error": f"op {op} not supported"}


def tekken_specials(path):
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    listed = data.get("special_tokens")
    if isinstance(listed, list):
        names = {t.get("token_str") for t in listed if isinstance(t, dict)}
    else:  # an older tekken file lists none: mistral-common's defaults (<unk>, <s>, </s>, [INST] ...)
        names = {"<unk>", "<s>", "</s>"}
    out = {}
    for key, text in (("bos_token", "<s>"), ("eos_token", "</s>"), ("unk_token", "<unk>")):
        if text in names:
            out[key] = text
    return out


def merge_user_runs(messages):
    """FastFlowLM normalize_messages + openai_to_rest's text concatenation, for user messages."""
    out = []
    i = 0
    while i < len(messages):
        m = messages[i]
        if m.get("role") != "user":
            out.append(m)
            i += 1
            continue
        merged = dict(m)
        text = ""
        while i < len(messages) and messages[i].get("role") == "user":
            content = messages[i].get("content")
            if isinstance(content, list):
                for part in content:
                    if isinstance(part, dict) and part.get("type") == "text":
                        text += part.get("text", "")
            elif isinstance(content, str):
                text += content
            i += 1
        merged["content"] = text
        out.append(merged)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tokenizer_json", nargs="?")
    ap.add_argument("--template", help="a chat template file of its own ({chat_template})")
    ap.add_argument("--tiktoken", help="the model's tiktoken / tekken file ({tiktoken}), for the special tokens' texts")
    ap.add_argument("--bug", choices=BUGS)
    args = ap.parse_args()
    if not args.tokenizer_json and not args.template:
        ap.error("give {tokenizer_json} or --template {chat_template}")
    eng = Engine(args.tokenizer_json, args.bug, args.template, args.tiktoken)
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
