"""blind8 encode engine: the real `tokenizers` library, one bug per `--bug`, written blind.

Written on 2026-11-29 from public bug reports only (the author read no tokparity diagnosis code
and ran tokparity with `--no-diagnose`). Without `--bug` it is the bug-free twin: the model's
tokenizer.json loaded as is. Each bug edits the tokenizer.json before loading it, so the engine
does what the buggy port did for every text, not for one example.

Bugs:

no-vocab-lookup (ggml-org/llama.cpp #7193): llama.cpp's BPE always ran the byte-level merges on a
pre-tokenized word; Hugging Face's BPE with `ignore_merges: true` (Llama 3) first looks the whole
word up in the vocabulary and takes it as one token when present. llama.cpp gave ` Việt` as
` Vi`, `ệ`, `t` where tokenizers gives one token. The bug: `ignore_merges` treated as false
(robertknight/rten #453 / #1043 had the same gap). Model: llama-bpe.

no-nfc (meta-pytorch/tokenizers #104): the C++ tokenizer of PyTorch (ExecuTorch) had no NFC
normalizer before #104 added one, so a tokenizer.json whose normalizer is NFC (Qwen2/Qwen3) was
run without normalization: decomposed text (`e` + U+0301) is tokenized as it comes instead of
as the composed character. The bug: the NFC normalizer dropped. Model: qwen3.

gpt2-fallback-split (kekzl/imp #660): imp had no Qwen2 pre-tokenizer and served `pre=qwen2` models
with its GPT-2 fallback split, which splits every punctuation character on its own (`->` as `-`,
`>`; `(x):\\n` as five pieces), groups digits in threes instead of Qwen's single digits, and never
glues a leading non-letter to a letter run (`[^\\r\\n\\p{L}\\p{N}]?\\p{L}+`). The bug: qwen3's split
regex replaced by that fallback: contractions, ` ?\\p{L}+`, `\\p{N}{1,3}`, ` ?[^\\s\\p{L}\\p{N}]`,
whitespace as GPT-2 (`\\s+(?!\\S)|\\s+`). Model: qwen3.
"""
from __future__ import annotations

import argparse
import json
import sys

from tokenizers import Tokenizer

BUGS = ["no-vocab-lookup", "no-nfc", "gpt2-fallback-split"]

GPT2_FALLBACK = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]|\s+(?!\S)|\s+"


def _splits(node):
    """Every Split pre-tokenizer node in a pre_tokenizer tree."""
    if isinstance(node, dict):
        if node.get("type") == "Split":
            yield node
        for v in node.values():
            yield from _splits(v)
    elif isinstance(node, list):
        for v in node:
            yield from _splits(v)


class Engine:
    def __init__(self, path: str, bug: str | None):
        with open(path, encoding="utf-8") as f:
            j = json.load(f)
        if bug == "no-vocab-lookup":
            if isinstance(j.get("model"), dict) and "ignore_merges" in j["model"]:
                j["model"]["ignore_merges"] = False
        elif bug == "no-nfc":
            n = j.get("normalizer")
            if isinstance(n, dict) and n.get("type") == "NFC":
                j["normalizer"] = None
            elif isinstance(n, dict) and n.get("type") == "Sequence":
                n["normalizers"] = [x for x in n.get("normalizers", []) if x.get("type") != "NFC"]
        elif bug == "gpt2-fallback-split":
            for s in _splits(j.get("pre_tokenizer")):
                s["pattern"] = {"Regex": GPT2_FALLBACK}
        self.tok = Tokenizer.from_str(json.dumps(j))

    def handle(self, req):
        if req.get("op", "encode") == "encode":
            # parse_special false: special tokens written in the text are ordinary text
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
