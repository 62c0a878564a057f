"""blind9 encode engine on the real `tokenizers` library, one bug per `--bug`.

Written from docs/contracts.md and public bug reports; the author read no tokparity diagnosis
code and ran tokparity only with `--no-diagnose`. Without `--bug` it is the bug-free twin: the
model's tokenizer.json loaded as it is, `encode_special_tokens` set from `parse_special`.

Bugs:

byte-fallback-unk (encode; zml/zml #37): zml's tokenizer read the `<0xHH>` pieces but not the
vocabulary's `byte_fallback` flag, so a character missing from the vocabulary became `.unk`
instead of its byte pieces: "we're not recognizing the `\\n` and it's being encoded as `.unk`"
(OpenLLaMA's `Q: ...?\\nA:` gave id 0 where Python gave 13). The bug: the BPE model is loaded
with `byte_fallback` off and `fuse_unk` off, so each out-of-vocabulary character is one unk id.

marks-as-letters (encode; invergent-ai/surogate #105): surogate's hand-written splitter used the
Qwen3.5 word rule for every checkpoint of the family: the letter run took `[\\p{L}\\p{M}]+` and
the punctuation run excluded `\\p{M}`, where Qwen2/Qwen3 declare `\\p{L}+` and
` ?[^\\s\\p{L}\\p{N}]+`, so "every non-Qwen3.5 checkpoint mis-tokenizes combining marks". The
bug: in the Split regex `\\p{L}+` becomes `[\\p{L}\\p{M}]+` and `[^\\s\\p{L}\\p{N}]` becomes
`[^\\s\\p{L}\\p{M}\\p{N}]`.

metaspace-override (encode; huggingface/transformers #45488): DeepSeek V3's
tokenizer_config.json names `LlamaTokenizerFast`, and transformers v5's `LlamaTokenizer.__init__`
"unconditionally installs a `Metaspace` pre-tokenizer, overwriting whatever `tokenizer.json`
declared" (`Metaspace(replacement="▁", split=False)`); the byte-level vocabulary has no `▁`
pieces, so "hello world" round-trips as "helloworld". The bug: the pre-tokenizer is replaced by
`Metaspace(replacement="▁", prepend_scheme="first", split=False)`.
"""
from __future__ import annotations

import argparse
import json
import sys

from tokenizers import Tokenizer, pre_tokenizers

BUGS = ["byte-fallback-unk", "marks-as-letters", "metaspace-override"]


def _patch_regex(node):
    """Qwen3.5's word rule in every Split regex of the pre-tokenizer."""
    if isinstance(node, dict):
        if node.get("type") == "Split" and isinstance(node.get("pattern"), dict) and "Regex" in node["pattern"]:
            rx = node["pattern"]["Regex"]
            rx = rx.replace("\\p{L}+", "[\\p{L}\\p{M}]+").replace("[^\\s\\p{L}\\p{N}]", "[^\\s\\p{L}\\p{M}\\p{N}]")
            node["pattern"]["Regex"] = rx
        for v in node.values():
            _patch_regex(v)
    elif isinstance(node, list):
        for v in node:
            _patch_regex(v)


class Engine:
    def __init__(self, path: str, bug: str | None):
        self.bug = bug
        with open(path, encoding="utf-8") as f:
            j = json.load(f)
        if bug == "byte-fallback-unk":
            j["model"]["byte_fallback"] = False
            j["model"]["fuse_unk"] = False
        elif bug == "marks-as-letters":
            _patch_regex(j.get("pre_tokenizer"))
        if bug in ("byte-fallback-unk", "marks-as-letters"):
            self.tok = Tokenizer.from_str(json.dumps(j))
        else:
            self.tok = Tokenizer.from_file(path)
        if bug == "metaspace-override":
            self.tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first", split=False)

    def handle(self, req):
        if req.get("op", "encode") == "encode":
            self.tok.encode_special_tokens = not req.get("parse_special")
            enc = self.tok.encode(req["text"], add_special_tokens=bool(req.get("add_special")))
            return {"ids": enc.ids}
        return {"error": f"unsupported op {req.get('op')}"}


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
