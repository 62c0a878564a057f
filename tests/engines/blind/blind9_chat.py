"""blind9 chat engine: the model's chat template rendered as transformers' apply_chat_template
renders it (transformers' own `render_jinja_template`, sandboxed jinja2), the prompt tokenized
with the real `tokenizers` (no special tokens added, special-token text parsed); one bug per
`--bug`.

Written from docs/contracts.md, docs/guides/chat.md and public bug reports; the author read no
tokparity diagnosis code and ran tokparity only with `--no-diagnose`. Without `--bug` it is the
bug-free twin. Conversations that show the bugs are in `blind9_chats.jsonl`.

Bugs:

tool-nulls (chat; ai-dynamo/dynamo #12700): the frontend's `_filter_template_tools` serialized
each tool with pydantic's `model_dump()`, "which emits every declared field on `SglangTool` —
including bookkeeping the caller never sent, such as `defer_loading`"; templates that dump the
tools as JSON inline `"defer_loading":null` (and an unset `strict`) in every tool: 1,326 extra
tokens on a 264-tool request. The bug: every tool reaches the template as the model dump of an
OpenAI tool: `function` holds `name`, `description`, `parameters`, `strict` (null where the
caller gave none), and the tool gains `"defer_loading": null`.

last-text-part (chat; Blaizzy/mlx-vlm #1137): `/v1/chat/completions` flattened a content given as
a list of parts but "kept only the last text part, so earlier parts were silently dropped" (Claude
Code's `<system-reminder>` part lost before `Test!`). The bug: a list-of-parts content becomes the
string of its last text part ("" if it has none).

kwargs-stringified (chat; skye-harris/hass_local_openai_llm #118): "Chat Template Arguments
(chat_template_kwargs) configured from UI are cast as strings": `{'enable_thinking': 'false'}` was
sent instead of `false`, and servers that tolerate it hand the template a string. The bug: every
option but `add_generation_prompt` and `continue_final_message` that is a boolean reaches the
template as the string `"true"` or `"false"`.

system-into-first (chat; sigoden/aichat #244): "we merge system message into the first user
message": `build_body` removed a leading system message and set the next message's content to
`format!("{}\\n\\n{}", system, content)`. The bug: a leading system message is removed and its text
put before the next message's string content with a blank line between.
"""
from __future__ import annotations

import argparse
import copy
import json
import sys

from tokenizers import Tokenizer

BUGS = ["tool-nulls", "last-text-part", "kwargs-stringified", "system-into-first"]
SPECIAL_KEYS = ("bos_token", "eos_token", "unk_token", "pad_token")
FIXED_OPTIONS = ("add_generation_prompt", "continue_final_message")


def _dump_tool(tool):
    if not isinstance(tool, dict):
        return tool
    f = tool.get("function") if isinstance(tool.get("function"), dict) else {}
    fn = {"name": f.get("name"), "description": f.get("description"),
          "parameters": f.get("parameters"), "strict": f.get("strict")}
    for k, v in f.items():
        if k not in fn:
            fn[k] = v
    out = {"type": tool.get("type", "function"), "function": fn}
    for k, v in tool.items():
        if k not in out:
            out[k] = v
    out.setdefault("defer_loading", None)
    return out


def _last_text(content):
    text = ""
    for part in content:
        if isinstance(part, dict) and part.get("type") == "text":
            text = part.get("text") or ""
    return text


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
        from transformers.utils.chat_template_utils import render_jinja_template
        kwargs = dict(self.specials)
        kwargs.update(options)
        rendered, _ = render_jinja_template(conversations=[messages], tools=tools, chat_template=template, **kwargs)
        return rendered[0]

    def apply_bug(self, messages, tools, options):
        bug = self.bug
        if bug == "tool-nulls" and tools:
            tools = [_dump_tool(t) for t in tools]
        elif bug == "last-text-part":
            for m in messages:
                if isinstance(m.get("content"), list):
                    m["content"] = _last_text(m["content"])
        elif bug == "kwargs-stringified":
            for k, v in list(options.items()):
                if k not in FIXED_OPTIONS and isinstance(v, bool):
                    options[k] = "true" if v else "false"
        elif bug == "system-into-first" and messages and messages[0].get("role") == "system":
            system = messages.pop(0)
            if messages and isinstance(messages[0].get("content"), str) and isinstance(system.get("content"), str):
                messages[0]["content"] = f"{system['content']}\n\n{messages[0]['content']}"
        return messages, tools, options

    def chat(self, req):
        messages = copy.deepcopy(req.get("messages") or [])
        tools = copy.deepcopy(req.get("tools"))
        options = dict(req.get("options") or {})
        template = self.template_for(tools)
        if template is None:
            return {"error": "no chat template"}
        messages = [{k: v for k, v in m.items() if v is not None} for m in messages]
        messages, tools, options = self.apply_bug(messages, tools, options)
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
