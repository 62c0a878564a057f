#!/usr/bin/env python3
"""Blind engine, round 6: the `chat` op, from public bug reports.

Written on 2026-11-29 from public bug reports only. Its author did not open tokparity's
diagnosis code (`tokparity/diagnose/`, `tokparity/diff/`, `tokparity/fuzz/`, `tests/diagnose/`,
`tests/run/`, `tests/chat/`, `docs/catalogue/`, `causes.toml`, `docs/findings.md`) and ran
tokparity only with `--no-diagnose`, looking at nothing but the number of mismatching cases.

    cmd:{python} tests/engines/blind/blind6_chat.py {tokenizer_json} {tokenizer_config} [--bug NAME]

With no `--bug` it is the bug-free twin: the model's chat template (tokenizer_config.json's
`chat_template`) is rendered by transformers' own `render_jinja_template` (jinja2's
ImmutableSandboxedEnvironment with `trim_blocks`, `lstrip_blocks`, transformers' `tojson`,
`raise_exception`, `strftime_now`, `namespace`), given the messages, the tools, every option and
the special tokens the config names; the text is then encoded with the real `tokenizers`
library (`add_special_tokens=False`, added tokens parsed). A template that raises gives
`{"raised": ...}`. `--bug NAME` turns on exactly one bug:

continue-unstripped-raises.
    huggingface/transformers PR #34214 (and vllm-project/vllm issue #9547, "continue_final_message
    doesn't support strings that end with '\\n', '\\t', ' '"): `apply_chat_template(...,
    continue_final_message=True)` rendered the conversation and cut it with
    `rendered[: rendered.rindex(final_message) + len(final_message)]`, the final message's
    content taken as given (a list of parts: its last part's text). A template that trims
    messages (Llama 3.1's `| trim`, Gemma's) no longer holds the text when it starts or ends with
    whitespace, and `rindex` raised `ValueError: substring not found` (vLLM answered 400). Here:
    the conversation is rendered without the generation prompt, then cut so; the ValueError is
    answered as `{"raised": "substring not found"}`.

continue-first-match.
    huggingface/transformers PR #36404 ("Fix edge case for continue_final_message", fixes
    #35433 and #36440): the code after #34214 tried `rindex(final_message)` on the content as
    given and only when that failed `rindex(final_message.strip())`. When the template trims the
    final message, its untrimmed text is not in the final turn, but it may be earlier in the
    prompt (a previous message, or the template's own spacing after one); `rindex` then finds
    that earlier copy and the prompt is cut there, dropping the rest of the conversation. Here:
    exactly that try-then-strip cut.

strip-args-ignored.
    huggingface/swift-jinja issue #64 ("`str.strip(chars)` / `lstrip` / `rstrip` silently ignore
    their argument and only trim whitespace"): the string methods accept a `chars` argument,
    drop it, and trim all whitespace (`trimmingCharacters(in: .whitespacesAndNewlines)`). Here:
    in the sandbox, a call of a string's `strip`, `lstrip` or `rstrip` method with arguments is
    made without them. Qwen 3's template strips reasoning and content with `.strip('\\n')`,
    `.lstrip('\\n')`, `.rstrip('\\n')`, so spaces and tabs at those ends are lost too.

tojson-compact.
    lablup/mlxcel issue #1309 ("make the chat-template tojson filter match Python json.dumps
    (kwargs and separators)"): rendering with minijinja's built-in `tojson`, which "always emits
    compact JSON (`{"a":1,"b":2}`)", so a bare `tool | tojson` produced other token ids than the
    model's own `json.dumps` with its `", "` and `": "` separators. Here: `tojson` is
    `json.dumps` with `separators=(",", ":")` (`(",", ": ")` with an indent), everything else as
    transformers' filter (no ASCII escaping, no HTML escaping, keys in order).

namespace-set-unsupported.
    huggingface/swift-transformers PR #343 ("Catch JinjaError during chat template
    compilation"): the Swift Jinja library did not support namespace dot-notation assignment
    (`{%- set ns.found_first = true -%}`); compiling such a template threw a `JinjaError`
    (before the PR a fatal crash; after it a `TokenizerError.chatTemplate` the caller gets).
    Here: a template holding `{% set NAME.ATTR = ... %}` is refused for every conversation
    (`{"raised": ...}`); others render as the twin. Qwen 3's and DeepSeek V3's templates hold one.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys

from tokenizers import Tokenizer

BUGS = ("continue-unstripped-raises", "continue-first-match", "strip-args-ignored", "tojson-compact",
        "namespace-set-unsupported")

SPECIAL_KEYS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")


def _patch_environment(bug: str) -> None:
    """Make transformers compile chat templates in an environment with this bug."""
    from transformers.utils import chat_template_utils as ctu

    original = ctu._compile_jinja_template

    @functools.lru_cache(maxsize=8)
    def compile_with_bug(chat_template):
        base = original(chat_template)
        env = base.environment.overlay()
        env.filters = dict(base.environment.filters)
        if bug == "tojson-compact":
            def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
                if separators is None:
                    separators = (",", ":") if indent is None else (",", ": ")
                return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                                  sort_keys=sort_keys)
            env.filters["tojson"] = tojson
        elif bug == "strip-args-ignored":
            sandbox_call = functools.partial(type(env).call, env)

            def call(context, obj, *args, **kwargs):
                if (args or kwargs) and isinstance(getattr(obj, "__self__", None), str) \
                        and getattr(obj, "__name__", "") in ("strip", "lstrip", "rstrip"):
                    return sandbox_call(context, obj)
                return sandbox_call(context, obj, *args, **kwargs)

            env.call = call
        return env.from_string(chat_template)

    ctu._compile_jinja_template = compile_with_bug


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
        if bug in ("tojson-compact", "strip-args-ignored"):
            _patch_environment(bug)

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

    def chat(self, req):
        messages = req.get("messages") or []
        tools = req.get("tools")
        options = dict(req.get("options") or {})
        template = self.template_for(tools)
        if template is None:
            return {"error": "no chat template"}
        bug = self.bug
        if bug == "namespace-set-unsupported" and re.search(r"\{%-?\s*set\s+\w+\.\w+\s*=", template):
            return {"raised": 'JinjaError.syntax("Unexpected token: set to an attribute of a namespace")'}
        try:
            if bug in ("continue-unstripped-raises", "continue-first-match") and options.get("continue_final_message"):
                opts = dict(options)
                opts["continue_final_message"] = False
                text = self.render(messages, tools, opts, template)
                final = messages[-1]["content"]
                if isinstance(final, (list, tuple)):
                    final = final[-1]["text"]
                if bug == "continue-unstripped-raises":
                    text = text[: text.rindex(final) + len(final)]
                else:
                    try:
                        text = text[: text.rindex(final) + len(final)]
                    except ValueError:
                        final = final.strip()
                        text = text[: text.rindex(final) + len(final)]
            else:
                text = self.render(messages, tools, options, template)
        except Exception as e:  # the template (or the cut) refused the conversation
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
