"""blind15 chat engine: the model's chat template as transformers renders it, one bug per `--bug`.

A `cmd:` engine speaking tokparity's line protocol (docs/contracts.md, the `chat` op only; `encode` and
the decoding ops are answered with an error with no status: not tried). Without `--bug` it is the
bug-free twin of transformers' `apply_chat_template` (blind13_chat.py's: the tokenizer loaded with
`AutoTokenizer` from the `tokenizer.json`'s folder, jinja2's sandbox as transformers compiles it,
every option of the request passed to the template, a template error answered as `{"raised": ...}`;
the prompt's text and its ids, encoded with `add_special_tokens=False`). With `--template
{chat_template}` (gpt-oss, whose template is a file of its own) that template is used instead.
Written on 2026-11-30 by a helper who read no tokparity diagnosis code and ran tokparity with
`--no-diagnose` only, looking at mismatch counts. Each bug below is the behaviour of a real engine,
written from its public report or fix (and its code); everything else stays the twin's.

`--bug tool-fields-dropped` (huggingface/transformers PR #45418, "[serve] Forward
`tool_calls`/`tool_call_id` in processor inputs": "`get_processor_inputs_from_messages` builds a new
dict per message with only `role` and `content`, dropping `tool_calls` and `tool_call_id`. This means
`apply_chat_template` can't properly render multi-turn tool-use conversations"; before it, the
assistant tool call came out as `{'role': 'assistant', 'content': []}`): every message reaches the
template as `{role, content}` only (a message without content gets `[]`), so tool calls,
`tool_call_id`, `reasoning_content` and every other key are gone. Shows on the conversations with
tool calls and reasoning (chats' `tool-call-*`, `tool-result-01`, `reasoning-01`) on qwen3 and
gpt-oss.

`--bug no-gen-prompt` (stanford-crfm/helm #3698, "add_generation_prompt default breaks chat
generation": `prompt = tokenizer.apply_chat_template(request.messages, tokenize=False)` — "the
default value of `add_generation_prompt` in `apply_chat_template` is `False` ... If a caller forgets
to override this, `model.generate()` keeps writing as the user instead of beginning an assistant
turn"): the client never passes `add_generation_prompt`, so the template sees its default (false).
Here: `add_generation_prompt` taken out of the options (the others are passed). Shows on every
conversation that asks for a generation prompt, on every model whose template writes one (qwen3,
gemma-3, gpt-oss; llama-bpe's template writes it always).

`--bug empty-tool-calls` (vllm-project/vllm PR #30648, "[Bugfix] Drop empty tool_calls lists to keep
assistant replies in chat template": "`model_response.choices[0].message.model_dump(exclude_none=True)`
includes `tool_calls=[]`. If this empty list is passed back into the next payload's messages, the
chat template incorrectly routes logic to the tool-call branch. Consequently, the assistant's text
content is dropped/ignored"): every assistant message that carries no `tool_calls` reaches the
template with `tool_calls: []`, as an OpenAI message object dumped with its defaults. Shows on
gpt-oss (`{%- if "tool_calls" in message %}` then `message.tool_calls[0]`: the template refuses or
writes an empty call) on every conversation with an assistant turn; templates that test the list's
truth (qwen3) are unchanged.

`--bug tools-not-passed` (huggingface/text-generation-inference PR #2451, "fix(router): Fix tools not
following the chat template": "The current version of TGI does not use the proper chat template when
tools are provided and the chat template has a variable `tools`. This PR fixes this problem by
passing directly the tools to the jinja template"): the request's tools never reach the template
(`tools` is none), so the tool section it would write is missing. Shows on the conversations with
tools (chats' `tools-*`, `tool-call-*`, `tool-result-01`) on qwen3 and gpt-oss.

`--bug gen-prompt-tools-only` (huggingface/smolagents PR #1416, "Always pass add_generation_prompt=True
to apply_chat_template": "This PR passes `add_generation_prompt=True` to `apply_chat_template`,
regardless of whether `tools` are provided or not, specifically to: VLLMModel, TransformersModel";
before it those models asked for the generation prompt only together with tools): the generation
prompt follows the presence of tools, not the request. Here: `add_generation_prompt` set to whether
the request carries tools. Shows on the conversations without tools that ask for a generation
prompt, and on those with tools that do not (qwen3, gemma-3, gpt-oss).
"""
import argparse
import json
import os
import sys

BUGS = ["tool-fields-dropped", "no-gen-prompt", "empty-tool-calls", "tools-not-passed", "gen-prompt-tools-only"]


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

    def render(self, messages, tools, options):
        return self.tok.apply_chat_template(messages, tools=tools, tokenize=False, chat_template=self.template,
                                            **options)

    def chat(self, messages, tools, options):
        options = dict(options or {})
        messages = [dict(m) for m in messages]
        if self.bug == "tool-fields-dropped":
            messages = [{"role": m.get("role"), "content": m["content"] if "content" in m and m["content"] is not None else []}
                        for m in messages]
        elif self.bug == "no-gen-prompt":
            options.pop("add_generation_prompt", None)
        elif self.bug == "empty-tool-calls":
            for m in messages:
                if m.get("role") == "assistant" and "tool_calls" not in m:
                    m["tool_calls"] = []
        elif self.bug == "tools-not-passed":
            tools = None
        elif self.bug == "gen-prompt-tools-only":
            options["add_generation_prompt"] = bool(tools)
        try:
            text = self.render(messages, tools, options)
        except Exception as e:  # the template refused the conversation
            return {"raised": f"{type(e).__name__}: {e}"}
        ids = self.tok(text, add_special_tokens=False)["input_ids"]
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
