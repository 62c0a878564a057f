"""blind10 chat engine: the model's chat template rendered with transformers' own
`render_jinja_template` (as `apply_chat_template` renders it) and tokenized with the real `tokenizers`
(no special tokens added, special-token text parsed), one bug per `--bug`. Each bug below is a
behaviour of a real engine, written from its public report (and, where the report quotes it, its
code); each touches only the chat op.

`--bug continue-rstrip` (huggingface/transformers #35433): `apply_chat_template(...,
continue_final_message=True)` before its fix rendered the conversation as it is and then cut the text
after the last occurrence of the final message's content and stripped it on the right:
`rendered_chat = rendered_chat[: rendered_chat.rindex(final_message) + len(final_message)].rstrip()`
with `final_message = chat[-1]["content"]`. A final message the template trims (or whose content is a
list of parts) is not found and the call raises; one that ends in whitespace loses it. The report:
"If the last `assistant` message has a trailing space ... and `continue_final_message` is True, it
throws a \"ValueError: substring not found\" ... `rendered_chat` ends with `\"some text<|eot_id|>\"`
while the `final_message` still has the trailing space".

`--bug foundation-tojson` (huggingface/swift-jinja #71): swift-jinja's `tojson` filter encodes with
Foundation's `JSONEncoder` (`.sortedKeys`, compact, `/` escaped as `\\/`, integral doubles without a
fraction) and escapes every non-ASCII UTF-16 unit as `\\uXXXX` (`ensure_ascii` defaults to true), where
transformers' filter is `json.dumps(x, ensure_ascii=False, indent=None, separators=None,
sort_keys=False)`. The report's table: `\"a/b\"` → `\"a\\/b\"`; `\"—\"` → `\"\\u2014\"`; `{\"b\": 1, \"a\": 2}` →
`{\"a\":2,\"b\":1}`; `[1, 2]` → `[1,2]` — \"so the same template renders a different prompt in Swift
than in Python\". Here the template's `tojson` filter is replaced by that encoder.

`--bug bos-doubled` (MakazhanAlpamys/Soup #890, on SGLang 0.5.9): the server renders the template to
text and hands the string to its `TokenizerManager`, which tokenizes it with
`self.tokenizer(tokenizer_input, **{})` — the default `add_special_tokens=True` — so the tokenizer's
post-processor adds its BOS in front of the one the template wrote. The report: \"reports
`prompt_token_ids[:2] == [128000, 128000]` over 37 ids: a doubled BOS.\"

`--bug gen-prompt-forced` (openvinotoolkit/model_server #3877): the servable applies the chat template
with `constexpr bool add_generation_prompt = true;` whatever the request says, and passes no
`continue_final_message`, so a conversation that ends with an assistant message (or asks for no
generation prompt) is closed and a new assistant turn is opened. The report: \"the model server
currently serializes the assistant message as a completed turn (`constexpr bool add_generation_prompt
= true;`) and then starts a new assistant turn\".
"""
from __future__ import annotations

import argparse
import copy
import json
import math
import sys

from tokenizers import Tokenizer

BUGS = ["continue-rstrip", "foundation-tojson", "bos-doubled", "gen-prompt-forced"]
SPECIAL_KEYS = ("bos_token", "eos_token", "unk_token", "pad_token")


def _foundation_string(s: str) -> str:
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "/":
            out.append("\\/")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\b":
            out.append("\\b")
        elif ch == "\f":
            out.append("\\f")
        elif o < 0x20:
            out.append(f"\\u{o:04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _foundation_json(v, indent: int | None, level: int = 0) -> str:
    """Foundation's JSONEncoder with .sortedKeys (and .prettyPrinted when indent > 0)."""
    if v is None or type(v).__name__ in ("Undefined", "StrictUndefined", "ChainableUndefined"):
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isfinite(v) and v.is_integer() and abs(v) < 1e16:
            return str(int(v))
        return repr(v)
    if isinstance(v, str):
        return _foundation_string(v)
    pretty = bool(indent) and indent > 0
    if isinstance(v, dict):
        items = sorted(((str(k), val) for k, val in v.items()), key=lambda kv: kv[0])
        if not items:
            return "{}"
        if pretty:
            pad = "  " * (level + 1)
            body = ",\n".join(f"{pad}{_foundation_string(k)} : {_foundation_json(val, indent, level + 1)}"
                              for k, val in items)
            return "{\n" + body + "\n" + "  " * level + "}"
        return "{" + ",".join(f"{_foundation_string(k)}:{_foundation_json(val, indent, level + 1)}"
                              for k, val in items) + "}"
    if isinstance(v, (list, tuple)):
        if not v:
            return "[]"
        if pretty:
            pad = "  " * (level + 1)
            body = ",\n".join(pad + _foundation_json(x, indent, level + 1) for x in v)
            return "[\n" + body + "\n" + "  " * level + "]"
        return "[" + ",".join(_foundation_json(x, indent, level + 1) for x in v) + "]"
    return _foundation_string(str(v))


def _escape_non_ascii(s: str) -> str:
    out = []
    for ch in s:
        if ord(ch) < 128:
            out.append(ch)
        else:
            units = ch.encode("utf-16-be")
            for k in range(0, len(units), 2):
                out.append(f"\\u{int.from_bytes(units[k:k + 2], 'big'):04x}")
    return "".join(out)


def foundation_tojson(value, indent=None, ensure_ascii=True, **_ignored):
    s = _foundation_json(value, indent if isinstance(indent, int) else None)
    return _escape_non_ascii(s) if ensure_ascii else s


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

    def template_for(self, tools):
        if not self.templates:
            return None
        if tools and "tool_use" in self.templates:
            return self.templates["tool_use"]
        return self.templates.get("default", next(iter(self.templates.values())))

    def render(self, messages, tools, options, template):
        from transformers.utils.chat_template_utils import _compile_jinja_template, render_jinja_template
        if self.bug == "foundation-tojson":
            _compile_jinja_template(template).environment.filters["tojson"] = foundation_tojson
        kwargs = dict(self.specials)
        kwargs.update(options)
        rendered, _ = render_jinja_template(conversations=[messages], tools=tools, chat_template=template, **kwargs)
        return rendered[0]

    def chat(self, req):
        messages = copy.deepcopy(req.get("messages") or [])
        tools = copy.deepcopy(req.get("tools"))
        options = dict(req.get("options") or {})
        template = self.template_for(tools)
        if template is None:
            return {"error": "no chat template"}
        messages = [{k: v for k, v in m.items() if v is not None} for m in messages]
        bug = self.bug
        if bug == "gen-prompt-forced":
            options["add_generation_prompt"] = True
            options.pop("continue_final_message", None)
        try:
            if bug == "continue-rstrip" and options.pop("continue_final_message", False):
                text = self.render(messages, tools, options, template)
                final_message = messages[-1]["content"]
                text = text[: text.rindex(final_message) + len(final_message)].rstrip()
            else:
                text = self.render(messages, tools, options, template)
        except Exception as e:  # the template (or the continuation) refused the conversation
            return {"raised": str(e) or type(e).__name__}
        ids = self.tok.encode(text, add_special_tokens=(bug == "bos-doubled")).ids
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
