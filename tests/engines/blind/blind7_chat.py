"""Blind engine, round 7: the `chat` op, a prompt builder with one bug at a time.

Written on 2026-11-29 from docs/contracts.md and public bug reports; its author read no diagnosis
code and ran tokparity only with `--no-diagnose`. Without `--bug` it is a bug-free twin: the
model's chat template rendered as transformers renders it (`render_jinja_template`, sandboxed
jinja2, the tokenizer_config.json's special tokens as variables, a message's None-valued keys left
out as transformers leaves them out), encoded with the real
`tokenizers` (no special tokens added, special-token text parsed). `--bug NAME`:

- `slice-step-chatml` (ggml-org/llama.cpp #13178, "Qwen3, failed to parse chat template"):
  llama.cpp's minja did not support the step of a slice, so `messages[::-1]` in Qwen3's template
  failed to parse and llama.cpp logged "failed to parse chat template (defaulting to chatml)". The
  prompt is then llama.cpp's built-in ChatML: `<|im_start|>ROLE\\nCONTENT<|im_end|>\\n` per message
  and `<|im_start|>assistant\\n` for the generation prompt; tools, tool calls, reasoning and
  `enable_thinking` are ignored. Only templates holding a slice with a step change (qwen3).
- `tojson-ascii` (theroyallab/tabbyAPI PR #459, "default tojson ensure_ascii=False to prevent token
  bloat"): the template environment's `tojson` filter defaulted to `ensure_ascii=True`, so every
  non-ASCII character of a tool schema or of tool-call arguments rendered by `| tojson` was written
  as a `\\uXXXX` escape (surrogate pairs for emoji). Templates that call `tojson` on tools (qwen3).
- `tool-content-empty` (vercel/ai #12389 and PR #12390; its effect on templates: ollama/ollama
  #14181): the OpenAI message converter sent `content: ""` instead of `null` for an assistant
  message holding only tool calls. Templates that test `content is none` then take the plain
  assistant branch (DeepSeek V3 writes `<｜Assistant｜><｜end▁of▁sentence｜>` and drops the calls).
- `drop-null-content` (cubist38/mlx-openai-server PR #205): the server's message preparation did
  `if content is None: continue`, silently dropping every message whose content is null (an
  assistant turn with only tool calls), so its tool calls vanish from the prompt or the template
  then refuses the following tool result.

Usage: blind7_chat.py TOKENIZER_JSON TOKENIZER_CONFIG [--bug NAME]  (tokparity's cmd: protocol)
"""

from __future__ import annotations

import argparse
import copy
import functools
import json
import re
import sys

from tokenizers import Tokenizer

BUGS = ("slice-step-chatml", "tojson-ascii", "tool-content-empty", "drop-null-content")

SPECIAL_KEYS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
STEP_SLICE = re.compile(r"\[[^\[\]{}]*:[^\[\]{}]*:[^\[\]{}]*\]")


def _patch_tojson_ascii() -> None:
    """Make transformers compile chat templates with a tojson that escapes non-ASCII."""
    from transformers.utils import chat_template_utils as ctu

    original = ctu._compile_jinja_template

    @functools.lru_cache(maxsize=8)
    def compile_with_bug(chat_template):
        base = original(chat_template)
        env = base.environment.overlay()
        env.filters = dict(base.environment.filters)

        def tojson(x, ensure_ascii=True, indent=None, separators=None, sort_keys=False):
            return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                              sort_keys=sort_keys)

        env.filters["tojson"] = tojson
        return env.from_string(chat_template)

    ctu._compile_jinja_template = compile_with_bug


def _text_of(content) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for p in content:
        if isinstance(p, dict) and p.get("type") == "text":
            parts.append(p.get("text", ""))
    return "\n".join(parts)


class ChatEngine:
    def __init__(self, tokenizer_json: str, tokenizer_config: str, bug: str | None):
        self.bug = bug
        self.tok = Tokenizer.from_file(tokenizer_json)
        with open(tokenizer_config, encoding="utf-8") as f:
            cfg = json.load(f)
        tpl = cfg.get("chat_template")
        self.templates = {}
        if isinstance(tpl, list):
            self.templates = {t["name"]: t["template"] for t in tpl}
        elif isinstance(tpl, str):
            self.templates = {"default": tpl}
        self.specials = {}
        for key in SPECIAL_KEYS:
            v = cfg.get(key)
            if isinstance(v, dict):
                v = v.get("content")
            if isinstance(v, str):
                self.specials[key] = v
        if bug == "tojson-ascii":
            _patch_tojson_ascii()

    def template_for(self, tools):
        if not self.templates:
            return None
        if tools and "tool_use" in self.templates:
            return self.templates["tool_use"]
        return self.templates.get("default", next(iter(self.templates.values())))

    def render(self, messages, tools, options, template):
        from transformers.utils.chat_template_utils import render_jinja_template
        kwargs = dict(self.specials)
        kwargs.update(options)
        rendered, _ = render_jinja_template(conversations=[messages], tools=tools, chat_template=template, **kwargs)
        return rendered[0]

    @staticmethod
    def chatml(messages, options) -> str:
        out = []
        for m in messages:
            out.append("<|im_start|>" + str(m.get("role", "")) + "\n" + _text_of(m.get("content")) + "<|im_end|>\n")
        if options.get("add_generation_prompt"):
            out.append("<|im_start|>assistant\n")
        return "".join(out)

    def chat(self, req):
        messages = copy.deepcopy(req.get("messages") or [])
        tools = req.get("tools")
        options = dict(req.get("options") or {})
        template = self.template_for(tools)
        if template is None:
            return {"error": "no chat template"}
        bug = self.bug
        if bug == "tool-content-empty":
            for m in messages:
                if m.get("role") == "assistant" and m.get("tool_calls") and m.get("content") is None:
                    m["content"] = ""
        elif bug == "drop-null-content":
            messages = [m for m in messages if m.get("content") is not None]
        # transformers passes a message without its None-valued keys (content: null is no content)
        messages = [{k: v for k, v in m.items() if v is not None} for m in messages]
        try:
            if bug == "slice-step-chatml" and STEP_SLICE.search(template):
                text = self.chatml(messages, options)
            else:
                text = self.render(messages, tools, options, template)
        except Exception as e:  # the template refused the conversation
            return {"raised": str(e) or type(e).__name__}
        ids = self.tok.encode(text, add_special_tokens=False).ids
        return {"text": text, "ids": ids}

    def handle(self, req):
        if req.get("op") == "chat":
            return self.chat(req)
        if req.get("op") == "encode":
            enc = self.tok.encode(req["text"], add_special_tokens=bool(req.get("add_special")))
            return {"ids": enc.ids}
        return {"error": f"unsupported op {req.get('op')}"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tokenizer_json")
    ap.add_argument("tokenizer_config")
    ap.add_argument("--bug", choices=BUGS)
    args = ap.parse_args()
    eng = ChatEngine(args.tokenizer_json, args.tokenizer_config, args.bug)
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            rep = eng.handle(req)
        except Exception as e:
            rep = {"error": f"{type(e).__name__}: {e}", "status": "error"}
        rep["id"] = req.get("id")
        sys.stdout.write(json.dumps(rep, ensure_ascii=False) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
