"""blind11 chat engine: the model's chat template as transformers renders it, one bug per `--bug`.

A `cmd:` engine speaking tokparity's line protocol (docs/contracts.md, the `chat` op only; `encode` and the
decoding ops are answered with an error with no status: not tried). Without `--bug` it is the bug-free
twin: transformers' own `apply_chat_template` (jinja2's sandbox, `trim_blocks`, `lstrip_blocks`,
transformers' `tojson`, `raise_exception`, `strftime_now`) on the model's `tokenizer.json` /
`tokenizer_config.json` (loaded with `AutoTokenizer` from the folder of `{tokenizer_json}`), every
option of the request passed to the template, and the prompt encoded as transformers encodes it
(`add_special_tokens=False`, special-token text parsed); a template error is answered as
`{"raised": ...}`. Each bug below is the behaviour of a real engine, written from its public report
(and, where the report shows it, its code); everything else stays the twin's.

`--bug html-safe-tojson` (EricLBuehler/mistral.rs #2363, "Chat template output differs from
transformers on tool-calling prompts"): mistral.rs renders templates with minijinja and its own
`tojson`; "The part that still differs from transformers is that `tojson`, and it only shows up
once tools are in play":
`transformers: {"name": "get_weather", "description": "Compare if temp > 10 & humidity < 50
(user's choice)", ...}` / `mistral.rs  : {"description":"Compare if temp \\u003e 10 \\u0026
humidity \\u003c 50 (user\\u0027s choice)","name":"get_weather",...}` — "The keys come out
alphabetical instead of in insertion order. The workspace pins minijinja without `preserve_order`",
the output is compact, and `<`, `>`, `&`, `'` are written as `\\u003c`, `\\u003e`, `\\u0026`,
`\\u0027` (minijinja's HTML-safe JSON). Here: the template's `tojson` filter is replaced by that
serialization (keys sorted at every level, separators `,` and `:`, non-ASCII kept, those four
characters escaped; `indent` pretty-prints). Shows wherever a template serializes tools or tool-call
arguments with `tojson` (qwen3).

`--bug prefill-assistant` (ggml-org/llama.cpp PR #13174, "Prefilling assistant message in openai
compatible API"; made the default, with `--no-prefill-assistant` to opt out, by PR #13608): "the
default behavior is to prefill the response based on the `assistant` message if it's at the end of
the `messages` array". The server code: `prefill_assistant_message = ... inputs.messages.back().role
== "assistant"`; `last_message = inputs.messages.back(); inputs.messages.pop_back();` (throwing
"Cannot have 2 or more assistant messages at the end of the list." if another precedes it, and
"Cannot continue an assistant message that contains tool calls." for one with tool calls),
`inputs.add_generation_prompt = true;`, render, then `chat_params.prompt += last_message.content`
(the text parts' texts for a list, since PR #14360). Here: whenever the last message is the
assistant's, it is taken off, the rest rendered with `add_generation_prompt=True` (and no
`continue_final_message`), and its content appended as it is. Shows on qwen3 (its template writes
`<think>\\n\\n</think>\\n\\n` before the last assistant turn's content and closes it with
`<|im_end|>`) and on llama-bpe (a final assistant message is closed there).

`--bug string-parts-join` (vllm-project/vllm `_parse_chat_message_content_parts`; discussed in
PR #9358 and PR #7905): with the "string" chat-template content format (auto-detected for a
template that has no `for` loop over a message's content), vLLM flattens a list of content parts
into one string — `text_prompt = "\\n".join(texts)` — and a `None` content into `""` (`if content
is None: content = []`), before the template sees the message. DarkLight1337 on PR #7905: "by
default all mm placeholders are joined with "\\n" separator (see
`vllm.entrypoints.chat_utils._parse_chat_message_content_parts` for detailed implementation) ...
Since many HF chat templates do not specify how to combine ... we hardcode this to inserting
newlines for now"; on PR #9358: "Is the openai format chat template able to handle multiple
content parts". Here: the detection is a search of the template's source for `for ... in
message['content']` / `message.content`; where none is found, every list content becomes its text
parts joined by "\\n" and every null content "", other keys kept. Shows on llama-bpe and qwen3
(their templates read a content as a string) with list-of-parts conversations; gemma-3's template
loops over the parts and is left alone.
"""
import argparse
import json
import os
import re
import sys

BUGS = ["html-safe-tojson", "prefill-assistant", "string-parts-join"]


def minijinja_tojson(x, indent=None, **kwargs):
    if indent is not None:
        s = json.dumps(x, sort_keys=True, ensure_ascii=False, indent=indent)
    else:
        s = json.dumps(x, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return (s.replace("<", "\\u003c").replace(">", "\\u003e")
             .replace("&", "\\u0026").replace("'", "\\u0027"))


class Engine:
    def __init__(self, path, bug):
        import transformers
        transformers.logging.set_verbosity_error()
        from transformers import AutoTokenizer
        self.tok = AutoTokenizer.from_pretrained(os.path.dirname(os.path.abspath(path)))
        self.bug = bug
        self.template = self.tok.chat_template
        if isinstance(self.template, dict):
            self.template = self.template.get("default")
        if bug == "html-safe-tojson":
            from transformers.utils import chat_template_utils as ctu
            original = ctu._cached_compile_jinja_template
            cache = {}

            def compile_with_minijinja_tojson(source):
                if source not in cache:
                    env = original(source).environment
                    env.filters["tojson"] = minijinja_tojson
                    cache[source] = env.from_string(source)
                return cache[source]
            ctu._compile_jinja_template = compile_with_minijinja_tojson
        if bug == "string-parts-join":
            loop = re.compile(r"for\s+\w+\s+in\s+\w+\s*(\[\s*['\"]content['\"]\s*\]|\.content\b)")
            self.string_format = not loop.search(self.template or "")

    def render(self, messages, tools, options):
        return self.tok.apply_chat_template(messages, tools=tools, tokenize=False, **options)

    def chat(self, messages, tools, options):
        options = dict(options or {})
        try:
            if self.bug == "prefill-assistant" and messages and messages[-1].get("role") == "assistant":
                messages = list(messages)
                last = messages.pop()
                if messages and messages[-1].get("role") == "assistant":
                    raise ValueError("Cannot have 2 or more assistant messages at the end of the list.")
                if last.get("tool_calls"):
                    raise ValueError("Cannot continue an assistant message that contains tool calls.")
                options.pop("continue_final_message", None)
                options["add_generation_prompt"] = True
                text = self.render(messages, tools, options)
                content = last.get("content")
                if isinstance(content, list):
                    content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
                text += content or ""
            else:
                if self.bug == "string-parts-join" and self.string_format:
                    messages = [self.flatten(m) for m in messages]
                text = self.render(messages, tools, options)
        except Exception as e:  # the template (or the server's checks) refused the conversation
            return {"raised": f"{type(e).__name__}: {e}"}
        ids = self.tok(text, add_special_tokens=False)["input_ids"]
        return {"text": text, "ids": ids}

    @staticmethod
    def flatten(m):
        m = dict(m)
        c = m.get("content")
        if c is None:
            m["content"] = ""
        elif isinstance(c, list):
            m["content"] = "\n".join(p.get("text", "") for p in c if isinstance(p, dict) and p.get("type") == "text")
        return m

    def handle(self, req):
        op = req.get("op")
        if op == "chat":
            return self.chat(req["messages"], req.get("tools"), req.get("options"))
        return {"error": f"op {op} not supported"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tokenizer_json")
    ap.add_argument("--bug", choices=BUGS)
    args = ap.parse_args()
    eng = Engine(args.tokenizer_json, args.bug)
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
