"""Blind engine, round 7: encode on the real `tokenizers` library, with a port's bug in the model.

Written on 2026-11-29 from docs/contracts.md and public bug reports; its author read no diagnosis
code and ran tokparity only with `--no-diagnose`. Without `--bug` it is a bug-free twin: the
model's `tokenizer.json` as it is, special-token text parsed only when `parse_special` asks it
(`encode_special_tokens`). `--bug NAME` rewrites one part of the model the way a port got it wrong,
then encodes with `tokenizers`:

- `re2-no-lookahead` (wangkuiyi/huggingface-tokenizer-in-cxx #10, "RE2 does not support
  look-ahead"; the same pattern makes sugarme/tokenizer #43 panic): a C++/Go port on RE2 cannot
  compile `\\s+(?!\\S)`, so its split pattern keeps only `\\s+`. A run of spaces before a word then
  stays one piece instead of leaving its last space to the word: the ids differ wherever the text
  holds two or more successive whitespace characters before a non-space. Byte-level BPE models
  whose split regex holds `\\s+(?!\\S)|\\s+` (llama-bpe, qwen3, deepseek-v3, gpt-oss).
- `re2-ascii-space` (golang/go #39405: RE2's `\\s` is `[\\t\\n\\f\\r ]`, so Go's regexp does not
  match U+200A and other Unicode spaces as Perl/Oniguruma do): the split pattern's `\\s` and `\\S`
  mean ASCII whitespace only (the lookahead itself is kept, as a port that emulates it does):
  U+00A0, U+3000, U+2002, U+0085, VT ... count as "not a space" in every alternative, e.g.
  ` ?[^\\s\\p{L}\\p{N}]+` now takes them as punctuation.
- `js-merge-split` (huggingface/transformers.js #199, "Tokenizing with Llama 2 model freezes"):
  transformers.js split each `merges` entry and each bigram key on any whitespace instead of on
  the one ASCII space that separates the pair, so every merge whose parts hold a whitespace
  character of JavaScript's `\\s` (CR, U+00A0, U+3000, U+2000-U+200A, U+FEFF ...) never matched;
  the Llama 2 vocabulary holds `\\xa0\\xa0` and many `\\r` merges. Those merges are removed here.
  SentencePiece-style BPE models whose merges hold raw whitespace (lenml-llama2, gemma-3).
- `fallback-dropped` (ollama/ollama #15229 and #15231, fixed by PR #15232 "tokenizer: add byte
  fallback for SentencePiece BPE encoding"): when BPE merging left a piece that is not in the
  vocabulary, ollama's SentencePiece encoder silently dropped the character instead of writing
  its UTF-8 bytes as `<0xHH>` tokens. Every byte-fallback id is left out (newlines in Llama 2,
  whose vocabulary has only `<0x0A>`, emoji, rare CJK ...).
- `unigram-unk` (huggingface/swift-transformers #387, fixed by PR #388): `UnigramTokenizer`
  never read `byte_fallback`, so a character missing from the vocabulary became `<unk>`, and
  consecutive unknown characters were fused into one `<unk>`. Unigram models with byte fallback
  (spm-unigram-byte-fallback).

Usage: blind7_encode.py TOKENIZER_JSON [--bug NAME]  (speaks tokparity's cmd: protocol)
"""

from __future__ import annotations

import argparse
import json
import re
import sys

from tokenizers import Tokenizer

BUGS = ("re2-no-lookahead", "re2-ascii-space", "js-merge-split", "fallback-dropped", "unigram-unk")

JS_SPACE = re.compile("[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]")
BYTE_TOKEN = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")
RE2_SPACE = r"\t\n\f\r "


def re2_ascii_space(pattern: str) -> str:
    """Rewrite \\s and \\S to RE2's ASCII meaning, inside and outside character classes."""
    out = []
    i = 0
    in_class = False
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            e = pattern[i + 1]
            if e == "s":
                out.append(RE2_SPACE if in_class else "[" + RE2_SPACE + "]")
            elif e == "S" and not in_class:
                out.append("[^" + RE2_SPACE + "]")
            else:
                out.append(pattern[i:i + 2])
            i += 2
            continue
        if c == "[" and not in_class:
            in_class = True
            out.append(c)
            if i + 1 < n and pattern[i + 1] == "^":
                out.append("^")
                i += 1
            i += 1
            continue
        if c == "]" and in_class:
            in_class = False
        out.append(c)
        i += 1
    return "".join(out)


def rewrite_splits(node, fn) -> bool:
    changed = False
    if not isinstance(node, dict):
        return False
    if node.get("type") == "Sequence":
        for sub in node.get("pretokenizers", []):
            changed |= rewrite_splits(sub, fn)
    elif node.get("type") == "Split" and "Regex" in node.get("pattern", {}):
        new = fn(node["pattern"]["Regex"])
        if new != node["pattern"]["Regex"]:
            node["pattern"]["Regex"] = new
            changed = True
    return changed


class Engine:
    def __init__(self, path: str, bug: str | None):
        self.bug = bug
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
        model = spec.get("model", {})
        if bug == "re2-no-lookahead":
            rewrite_splits(spec.get("pre_tokenizer"), lambda p: p.replace(r"\s+(?!\S)|\s+", r"\s+"))
        elif bug == "re2-ascii-space":
            rewrite_splits(spec.get("pre_tokenizer"), re2_ascii_space)
        elif bug == "js-merge-split" and model.get("type") == "BPE":
            kept = []
            for m in model.get("merges", []):
                parts = m.split(" ", 1) if isinstance(m, str) else list(m)
                if any(JS_SPACE.search(p) for p in parts):
                    continue
                kept.append(m)
            model["merges"] = kept
        elif bug == "unigram-unk" and model.get("type") == "Unigram":
            model["byte_fallback"] = False
        self.tok = Tokenizer.from_str(json.dumps(spec))
        self.fallback_ids = set()
        if bug == "fallback-dropped" and model.get("byte_fallback"):
            specials = {a["id"] for a in spec.get("added_tokens", [])}
            for tok, i in self.tok.get_vocab(with_added_tokens=False).items():
                if BYTE_TOKEN.match(tok) and i not in specials:
                    self.fallback_ids.add(i)

    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        self.tok.encode_special_tokens = not parse_special
        ids = self.tok.encode(text, add_special_tokens=add_special).ids
        if self.fallback_ids:
            ids = [i for i in ids if i not in self.fallback_ids]
        return ids

    def handle(self, req):
        if req.get("op") == "encode":
            return {"ids": self.encode(req["text"], bool(req.get("add_special")), bool(req.get("parse_special")))}
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
        except Exception as e:  # a failure of this case
            rep = {"error": f"{type(e).__name__}: {e}", "status": "error"}
        rep["id"] = req.get("id")
        sys.stdout.write(json.dumps(rep) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
