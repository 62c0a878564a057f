"""blind10 encode engine on the real `tokenizers` library, one bug per `--bug`.

Without `--bug` it encodes exactly as `tokenizers` does with the model's own `tokenizer.json`
(`add_special` and `parse_special` honoured). Each bug below is a behaviour of a real engine, written
from its public report and, where the report quotes it, its code; it touches the encode op only.

`--bug added-not-matched` (lablup/mlxcel #1758): the engine registers for encoding only the added
tokens flagged `"special": true`; the others (Qwen3's `<think>`, `</think>`, `<tool_call>`,
`<tool_response>`, the FIM tokens) are kept for decoding but never folded back into their id on
encode, so their text goes through the ordinary BPE. The report: "Entries with `"special": true` go
into `special_tokens` and are registered for encoding; entries with `"special": false` go into
`added_token_contents`, which is consulted on decode only. So a non-special added token decodes back
to its own spelling but does not fold back into its reserved id on encode." (`<think>` → `[66580,
30272, 66604]` in its table.) Here: the `tokenizer.json` is loaded with its non-special added tokens
taken out of `added_tokens`, everything else unchanged.

`--bug gpt2-pretokenizer` (huggingface/transformers #45920): transformers 5 resolves the tokenizer to
`GPT2Tokenizer`, whose constructor builds a fresh `Tokenizer(BPE(vocab, merges))` and sets
`pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)` unconditionally, so the model's
own `Split` regex (Llama 3's `\\p{N}{1,3}` digit groups, its newline rules) is replaced by GPT-2's
byte-level regex and `ignore_merges` falls back to its default (off). The report: "AutoTokenizer
produces wrong token IDs for OLMo2, HyperClovaX, DeepSeek-R1-Distill-Llama, Yi, and others (v5
regression)": `tok_v5.encode("2023", add_special_tokens=False)  # [508, 1419] <- wrong` against
`[2366, 18] <- correct`. Here: pre-tokenizer `ByteLevel(add_prefix_space=False, trim_offsets=True,
use_regex=True)`, `ignore_merges` false, post-processor `ByteLevel` (no BOS), as that class has them.

`--bug olmo-base-specials` (allenai/OLMo #644): the OLMo `Tokenizer` wrapper calls
`self.base_tokenizer.encode_batch(inputs)` with the library's defaults, so the `tokenizer.json`
post-processor's special tokens (a BOS) are added and special-token text is parsed whatever the
caller asked, and then, when `add_special_tokens` is set, its own `add_special_tokens()` appends the
EOS id unless the ids already end with it. The report: "the call to the base_tokenizer encode function
will add bos tokens even when add_special_tokens=False. The issue is that the default here is for
base_tokenizer to have add_special_tokens=True." The EOS is the model's `eos_token`.

`--bug default-pretokenizer` (ollama/ollama #17698): ollama's converter identifies a model's
pre-tokenizer by hashing its `Split` regexes against a fixed list; an unknown hash is written as
`tokenizer.ggml.pre = "default"`, and llama.cpp then splits the text with its default regex list (each
applied to the pieces of the previous, matches and the text between them kept):
`[\\p{P}\\$\\+<=>\\^~\\|]+`, GPT-2's `'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)`,
`\\p{N}+`, `[0-9][0-9][0-9]`, then bytes as GPT-2 bytes. The report: "With `default`, llama.cpp uses its
GPT-2 fallback pre-tokenizer regex instead of the Llama 4 one. Same vocabulary and merges, but the text
gets split differently, so the token IDs don't match." Here the model's pre-tokenizer is replaced by
that sequence of four isolating splits and a regex-free `ByteLevel`.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from tokenizers import Tokenizer

BUGS = ["added-not-matched", "gpt2-pretokenizer", "olmo-base-specials", "default-pretokenizer"]

LLAMA_CPP_DEFAULT = [
    "[\\p{P}\\$\\+<=>\\^~\\|]+",
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    "\\p{N}+",
    "[0-9][0-9][0-9]",
]
EOS_NAMES = ("</s>", "<eos>", "<|endoftext|>", "<|end_of_text|>", "<｜end▁of▁sentence｜>")


def _eos_id(tok: Tokenizer, path: str):
    cfg = os.environ.get("TOKPARITY_TOKENIZER_CONFIG") or os.path.join(os.path.dirname(path), "tokenizer_config.json")
    try:
        with open(cfg, encoding="utf-8") as f:
            eos = json.load(f).get("eos_token")
        if isinstance(eos, dict):
            eos = eos.get("content")
        if isinstance(eos, str) and tok.token_to_id(eos) is not None:
            return tok.token_to_id(eos)
    except (OSError, ValueError):
        pass
    for name in EOS_NAMES:
        if tok.token_to_id(name) is not None:
            return tok.token_to_id(name)
    return tok.get_vocab_size(with_added_tokens=True) - 1


class Engine:
    def __init__(self, path: str, bug: str | None):
        self.bug = bug
        with open(path, encoding="utf-8") as f:
            j = json.load(f)
        if bug == "added-not-matched":
            j["added_tokens"] = [a for a in j.get("added_tokens", []) if a.get("special")]
        elif bug == "gpt2-pretokenizer":
            j["pre_tokenizer"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                                  "use_regex": True}
            j["post_processor"] = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False,
                                   "use_regex": True}
            if isinstance(j.get("model"), dict):
                j["model"]["ignore_merges"] = False
        elif bug == "default-pretokenizer":
            splits = [{"type": "Split", "pattern": {"Regex": rx}, "behavior": "Isolated", "invert": False}
                      for rx in LLAMA_CPP_DEFAULT]
            splits.append({"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                           "use_regex": False})
            j["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": splits}
        self.tok = Tokenizer.from_str(json.dumps(j)) if bug else Tokenizer.from_file(path)
        self.eos_id = _eos_id(self.tok, path) if bug == "olmo-base-specials" else None

    def handle(self, req):
        if req.get("op", "encode") != "encode":
            return {"error": f"unsupported op {req.get('op')}"}
        add_special = bool(req.get("add_special"))
        if self.bug == "olmo-base-specials":
            # base_tokenizer.encode_batch(inputs): the library's defaults, whatever the caller asked
            self.tok.encode_special_tokens = False
            ids = list(self.tok.encode_batch([req["text"]])[0].ids)
            if add_special and (not ids or ids[-1] != self.eos_id):
                ids.append(self.eos_id)
            return {"ids": ids}
        self.tok.encode_special_tokens = not req.get("parse_special")
        return {"ids": self.tok.encode(req["text"], add_special_tokens=add_special).ids}


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
