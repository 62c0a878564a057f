"""blind13 encode engine on the real `tokenizers` library, one bug per `--bug`.

A `cmd:` engine speaking tokparity's line protocol (docs/contracts.md): it answers `encode` and
nothing else (`decode`, `stream`, `pieces` and `chat` get an error with no status: not tried).
Without `--bug` it is the bug-free twin: `tokenizers`' own `encode` on the model's `tokenizer.json`
(`encode_special_tokens = not parse_special`, `add_special_tokens = add_special`). Each bug below is
the behaviour of a real engine, written from its public report or fix; the rest of the pipeline
stays `tokenizers`' own, so that only the named mechanism differs. Written on 2026-11-30 by a
helper who read no tokparity diagnosis code and ran tokparity with `--no-diagnose` only.

`--bug truncate-512` (deepjavalibrary/djl PR #3068, "[tokenizer] set truncatation to default":
"Avoid crash when token exceed model max length"): DJL's `HuggingFaceTokenizer` wraps the Rust
`tokenizers` crate, and after that PR its builder turns truncation on unless told otherwise, with
its default `maxLength` of 512 — `builder.optTruncation(true)` / `optMaxLength(512)`, i.e.
`tokenizer.with_truncation(TruncationParams { max_length: 512, strategy: LongestFirst, .. })` in
the native code. A caller that only wanted ids gets the first 512 of them, silently (the same
class of wrapper: weaviate/t2v-transformers-models #122, "truncates on 500 tokens"). Here:
`Tokenizer.enable_truncation(max_length=512)` before every encode (the special tokens the
post-processor adds count inside the 512, as the crate counts them). Shows on any text of more
than 512 tokens (`blind13_texts.jsonl`'s `b13-long-*`).

`--bug nfkc-input` (sillsdev/silnlp PR #841, "Add NFKC normalization to tokenizer": "This PR changes
the tokenization process to add Unicode normalization to NFKC ... This PR adds code to explicitly
normalize the text before sending it to NLLB's tokenizer"): the wrapper runs
`unicodedata.normalize("NFKC", text)` on every input before the tokenizer sees it. Right for a
SentencePiece model trained on NFKC text that ships no normalizer; wrong for a model whose own
normalizer is something else or nothing (Llama 3's byte-level BPE has none, Qwen3's is NFC): fullwidth
letters, ligatures (`ﬁ`), superscripts, `½`, `Ⅻ`, NBSP, compatibility CJK, Hangul jamo ... are
rewritten before the split. Here: that call, then `tokenizers` as the twin does. Shows on llama-bpe
and qwen3 on such text (edge normalization cases, `blind13_texts.jsonl`).

`--bug eos-always` (ggml-org/llama.cpp #7484, "tokenization: double EOS tokens": "The llama.cpp
tokenizer currently adds an EOS token unconditionally"): with special tokens asked for, the
engine appends the vocabulary's EOS as well as the BOS, whatever the model says about adding an
EOS (`add_eos_token` false in Llama 2's tokenizer_config.json, no EOS in its post-processor). Here:
with `add_special`, the twin's ids plus the EOS id (tokenizer_config.json's `eos_token`) at the end;
without `add_special`, nothing changes. Shows with `--add-special` on lenml-llama2 (every case).
"""
import argparse
import json
import os
import sys
import unicodedata

BUGS = ["truncate-512", "nfkc-input", "eos-always"]


class Engine:
    def __init__(self, path, bug):
        from tokenizers import Tokenizer
        self.tok = Tokenizer.from_file(path)
        self.bug = bug
        self.eos_id = None
        cfg = os.path.join(os.path.dirname(path), "tokenizer_config.json")
        if os.path.exists(cfg):
            with open(cfg, encoding="utf-8") as f:
                config = json.load(f)
            eos = config.get("eos_token")
            if isinstance(eos, dict):
                eos = eos.get("content")
            if isinstance(eos, str):
                self.eos_id = self.tok.token_to_id(eos)
        if bug == "truncate-512":
            self.tok.enable_truncation(max_length=512)

    def encode(self, text, add_special, parse_special):
        if self.bug == "nfkc-input":
            text = unicodedata.normalize("NFKC", text)
        self.tok.encode_special_tokens = not parse_special
        ids = self.tok.encode(text, add_special_tokens=add_special).ids
        if self.bug == "eos-always" and add_special and self.eos_id is not None:
            ids = ids + [self.eos_id]
        return ids

    def handle(self, req):
        op = req.get("op")
        if op == "encode":
            return {"ids": self.encode(req["text"], req.get("add_special", False), req.get("parse_special", False))}
        return {"error": f"op {op} not supported"}


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
