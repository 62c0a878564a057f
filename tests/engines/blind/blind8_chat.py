"""blind8 chat engine: the model's chat template rendered as transformers renders it, one bug per `--bug`.

Written on 2026-11-29 from public bug reports only (the author read no tokparity diagnosis code
and ran tokparity with `--no-diagnose`). Without `--bug` it is the bug-free twin: transformers'
`render_jinja_template` (sandboxed jinja2, `trim_blocks` and `lstrip_blocks` on, transformers'
own `tojson`) with the tokenizer_config's special tokens as variables, the text encoded with the
real `tokenizers` without adding special tokens.

Bugs:

no-trim-blocks (smg-project/smg #685): smg's Rust tokenizer crate built its minijinja
`Environment` with the defaults, `trim_blocks` and `lstrip_blocks` off, where transformers' jinja2
environment has both on; templates that rely on them (GLM-5's `{% set` without `-`) rendered with
extra newlines and indentation. The bug: the template rendered by the same sandboxed jinja2 with
both options off.

jinja-tojson (abetlen/llama-cpp-python #1486): llama-cpp-python's Jinja2 chat formatter used
jinja2's built-in `tojson`, not transformers' override: jinja2's `htmlsafe_json_dumps` sorts keys,
writes non-ASCII as `\\uXXXX`, and escapes `<`, `>`, `&`, `'` as `\\u003c`, `\\u003e`, `\\u0026`,
`\\u0027`; it also takes no `ensure_ascii`/`separators` arguments. The bug: transformers' `tojson`
filter not installed, jinja2's own left in place.

no-special-vars (ngxson/wllama #127): after wllama switched to its own Jinja rendering, H2O Danube's
template gave `<|prompt|>...?<|answer|>` where Transformers.js gave `...?</s><|answer|>`: the
template's `eos_token` was not given to the template, so it rendered as empty. The bug: the
template rendered without `bos_token`, `eos_token`, `unk_token`, `pad_token` (undefined, empty).
"""
from __future__ import annotations

import argparse
import copy
import json
import sys

from tokenizers import Tokenizer

BUGS = ["no-trim-blocks", "jinja-tojson", "no-special-vars"]
SPECIAL_KEYS = ("bos_token", "eos_token", "unk_token", "pad_token")


def _patch_environment(bug: str) -> None:
    import transformers.utils.chat_template_utils as ctu

    base = ctu.ImmutableSandboxedEnvironment

    class _KeepJinjaFilters(dict):
        def __setitem__(self, key, value):
            if key == "tojson":  # transformers' override refused: jinja2's own tojson stays
                return
            super().__setitem__(key, value)

    class Env(base):
        def __init__(self, *a, **kw):
            if bug == "no-trim-blocks":
                kw["trim_blocks"] = False
                kw["lstrip_blocks"] = False
            super().__init__(*a, **kw)
            if bug == "jinja-tojson":
                self.filters = _KeepJinjaFilters(self.filters)

    ctu.ImmutableSandboxedEnvironment = Env
    ctu._compile_jinja_template.cache_clear()


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
        if bug in ("no-trim-blocks", "jinja-tojson"):
            _patch_environment(bug)

    def template_for(self, tools):
        if not self.templates:
            return None
        if tools and "tool_use" in self.templates:
            return self.templates["tool_use"]
        return self.templates.get("default", next(iter(self.templates.values())))

    def render(self, messages, tools, options, template):
        from transformers.utils.chat_template_utils import render_jinja_template
        kwargs = {} if self.bug == "no-special-vars" else dict(self.specials)
        kwargs.update(options)
        rendered, _ = render_jinja_template(conversations=[messages], tools=tools, chat_template=template, **kwargs)
        return rendered[0]

    def chat(self, req):
        messages = copy.deepcopy(req.get("messages") or [])
        tools = req.get("tools")
        options = dict(req.get("options") or {})
        template = self.template_for(tools)
        if template is None:
            return {"error": "no chat template"}
        messages = [{k: v for k, v in m.items() if v is not None} for m in messages]
        try:
            text = self.render(messages, tools, options, template)
        except Exception as e:  # the template refused the conversation
            return {"raised": str(e) or type(e).__name__}
        ids = self.tok.encode(text, add_special_tokens=False).ids
        return {"text": text, "ids": ids}

    def handle(self, req):
        if req.get("op") == "chat":
            return self.chat(req)
        if req.get("op") == "encode":
            self.tok.encode_special_tokens = not req.get("parse_special")
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
