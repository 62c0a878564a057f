"""Engines that answer ``chat`` with transformers' own prompt, in the shapes the protocol allows:
text alone, ids alone, both, or a malformed reply; or wrongly: refusing everything, giving no
ids, erring on tools, or editing the messages it is given (tests/chat/test_conversations.py). As a cmd:
engine: ``python engines.py TOKENIZER_JSON MODE``; as py: classes ``TextOnly``, ``IdsOnly``,
``Both``, ``Malformed``."""

from __future__ import annotations

import json
import sys
from pathlib import Path


class Both:
    mode = "both"

    def __init__(self, files: dict | str):
        import transformers

        folder = Path(files["tokenizer_json"] if isinstance(files, dict) else files).parent
        self.tok = transformers.AutoTokenizer.from_pretrained(str(folder))

    def encode(self, text, add_special=False, parse_special=False):
        raise NotImplementedError("chat only")

    def chat(self, messages, tools, options):
        asked = dict(options)
        try:
            text = self.tok.apply_chat_template(messages, tools=tools, tokenize=False, **asked)
        except Exception as e:
            return {"raised": f"{type(e).__name__}: {e}"}
        ids = list(self.tok.apply_chat_template(messages, tools=tools, tokenize=True, return_dict=False, **asked))
        reply = {"text": text, "ids": ids}
        if self.mode == "text-only":
            del reply["ids"]
        elif self.mode == "ids-only":
            del reply["text"]
        elif self.mode == "malformed":
            reply = {"ids": [str(i) for i in ids]}
        elif self.mode == "refuses":
            reply = {"raised": "I refuse"}
        elif self.mode == "empty-ids":
            reply["ids"] = []
        elif self.mode == "errs-on-tools" and tools:
            reply = {"error": "tools are not supported"}
        elif self.mode == "edits-messages":  # (as an engine that pops what it has formatted)
            messages.clear()
            options.clear()
        return reply


class TextOnly(Both):
    mode = "text-only"


class IdsOnly(Both):
    mode = "ids-only"


class Malformed(Both):
    mode = "malformed"


class Refuses(Both):
    mode = "refuses"


class EmptyIds(Both):
    mode = "empty-ids"


class ErrsOnTools(Both):
    mode = "errs-on-tools"


class EditsMessages(Both):
    mode = "edits-messages"


def main() -> None:
    engine = {c.mode: c for c in (Both, TextOnly, IdsOnly, Malformed, Refuses, EmptyIds, ErrsOnTools)}[sys.argv[2]](
        sys.argv[1])
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("op") == "chat":
            reply = engine.chat(request["messages"], request.get("tools"), request.get("options") or {})
        else:
            reply = {"error": "chat only"}
        print(json.dumps({"id": request["id"], **reply}), flush=True)


if __name__ == "__main__":
    main()
