"""blind11 encode engine on the real `tokenizers` library, one bug per `--bug`.

A `cmd:` engine speaking tokparity's line protocol (docs/contracts.md): it answers `encode` and
nothing else (`decode`, `stream`, `pieces` and `chat` get an error with no status: not tried).
Without `--bug` it is the bug-free twin: `tokenizers`' own `encode` on the model's
`tokenizer.json` (`encode_special_tokens = not parse_special`). Each bug below is the behaviour of a
real engine, written from its public report (and, where the report shows it, its code); the rest of
the pipeline (added tokens, normalizer, pre-tokenizer, post-processor) stays `tokenizers`' own, so
that only the named mechanism differs.

`--bug nul-truncate` (leehack/llamadart #608): the Dart binding hands `llama_tokenize` the C-string
length of the text (`toNativeUtf8().length`), so a U+0000 ends the text. The report:
"`LlamaEngine.tokenize('ab\\u0000cd', addSpecial: false)` returns the same ids as
`tokenize('ab')`: everything after the NUL is dropped silently. Cause: `llama_cpp_service.dart`
passes the C-string length (`textPtr.length` from `toNativeUtf8`) to `llama_tokenize` ... UTF-8 NUL
bytes end the count." Here: the text is cut at its first U+0000, then encoded as the twin does
(BOS/EOS as the post-processor adds them). Shows on any model (llama-bpe, qwen3).

`--bug grapheme-seed` (huggingface/swift-transformers #352, Bug 4; fixed by PR #355, "BPE merge by
Unicode scalar, not grapheme cluster"; the same code lives on in osaurus-ai/vmlx-swift, PR #487):
swift-transformers' `BPETokenizer.bpe(token:)` seeds the merge loop with `Array(token)`, i.e. Swift
`Character`s (extended grapheme clusters), and looks merges up by the two strings; a symbol that is
not in the vocabulary at the end falls back to the `<0xHH>` tokens of all its bytes. #352: "Llama-7B
BPE byte-fallback 6/67" lines of a multilingual corpus differ from HF Python; PR #355's regression
test says why: "Thai "สวัส" ... The Thai vowel U+0E31 is non-spacing and forms a single Swift `Character` with
the preceding `ว`. BPE's initial symbol decomposition `Array(token)` therefore saw three symbols
["ส", "ว ั", "ส"] instead of four — the merged "ว ั" wasn't in the merges table, so byte-fallback
fired on it even though both U+0E27 and U+0E31 are direct vocab entries"; vmlx-swift #487 adds
"The `\\n` of a CRLF can't be reached either ... every CRLF's `\\n` becomes a raw `<0x0A>` byte".
Here: each pre-token (after `tokenizers`' own added-token split, normalizer and pre-tokenizer) is
split into grapheme clusters (`regex` `\\X`), merged GPT-2 style by merge rank on the symbol
strings, and every final symbol not in the vocabulary becomes its UTF-8 bytes' `<0xHH>` ids. A text
with no cluster of more than one scalar is encoded by `tokenizers` itself (the loop gives the same
ids there: checked on edge + multilingual). Shows on SentencePiece-style BPE with byte fallback
(gemma-3, lenml-llama2); byte-level vocabularies map every byte to its own character first.

`--bug leftmost-merge` (ztxz16/fastllm PR #715, "Fix GGUF tokenization: BPE merges are applied
left-to-right instead of by merge rank"): fastllm's GGUF loader adds every vocabulary entry with
score 1.0 (`model->weight.AddTokenizerWord(it.string_value(), idx, 1.0f)`) and no merge list, and
its BPE pops pairs from a priority queue ordered by `a.score < b.score || (a.score == b.score &&
a.l > b.l)`: with all scores equal, the leftmost adjacent pair whose concatenation is a vocabulary
token is merged first. The report: "Models loaded from GGUF are tokenized with a valid but
**non-canonical** BPE split ... more than half of ordinary English words come out split
differently ... `brutalist` (qwen2) canonical `['br', 'ut', 'alist']`, fastllm before this PR
`['bru', 'tal', 'ist']`". Here, as the PR measures it (word by word): each pre-token of
`tokenizers`' pre-tokenizer (byte-level characters) is merged by "leftmost pair whose
concatenation is in the vocabulary, repeat"; added tokens and the post-processor are the twin's.
Shows on byte-level BPE (qwen3, llama-bpe).
"""
import argparse
import json
import sys

BUGS = ["nul-truncate", "grapheme-seed", "leftmost-merge"]


def byte_token(b):
    return f"<0x{b:02X}>"


class Engine:
    def __init__(self, path, bug):
        from tokenizers import Tokenizer
        self.tok = Tokenizer.from_file(path)
        self.bug = bug
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
        model = spec["model"]
        self.vocab = model.get("vocab") or {}
        self.byte_fallback = bool(model.get("byte_fallback"))
        self.unk = model.get("unk_token")
        merges = model.get("merges") or []
        self.ranks = {}
        for i, m in enumerate(merges):
            a, b = m.split(" ", 1) if isinstance(m, str) else m
            self.ranks.setdefault((a, b), i)
        self.added_ids = {a["id"] for a in spec.get("added_tokens", [])}
        if bug == "grapheme-seed":
            import regex
            self.cluster_re = regex.compile(r"\X")

    # the twin
    def hf_encode(self, text, add_special, parse_special):
        self.tok.encode_special_tokens = not parse_special
        return self.tok.encode(text, add_special_tokens=add_special).ids

    def encode(self, text, add_special, parse_special):
        if self.bug == "nul-truncate":
            text = text.split("\x00", 1)[0]
            return self.hf_encode(text, add_special, parse_special)
        if self.bug == "grapheme-seed":
            if not any(len(c) > 1 for c in self.cluster_re.findall(text)):
                return self.hf_encode(text, add_special, parse_special)
            return self.custom(text, add_special, parse_special, self.cluster_bpe)
        if self.bug == "leftmost-merge":
            return self.custom(text, add_special, parse_special, self.leftmost_bpe)
        return self.hf_encode(text, add_special, parse_special)

    # tokenizers' own added-token split, normalizer, pre-tokenizer and post-processor around a model
    def custom(self, text, add_special, parse_special, model_fn):
        self.tok.encode_special_tokens = not parse_special
        enc = self.tok.encode(text, add_special_tokens=False)
        spans = []  # (start, end, id) of the added tokens matched in the text
        for tid, (s, e) in zip(enc.ids, enc.offsets):
            if tid in self.added_ids:
                spans.append((s, e, tid))
        ids = []
        pos = 0
        for s, e, tid in spans + [(len(text), len(text), None)]:
            seg = text[pos:s]
            if seg:
                ids.extend(self.segment(seg, model_fn))
            if tid is not None:
                ids.append(tid)
            pos = e
        if add_special:
            plain = enc.ids
            full = self.tok.encode(text, add_special_tokens=True).ids
            k = 0
            while k <= len(full) - len(plain) and full[k:k + len(plain)] != plain:
                k += 1
            ids = full[:k] + ids + full[k + len(plain):]
        return ids

    def segment(self, seg, model_fn):
        norm = self.tok.normalizer.normalize_str(seg) if self.tok.normalizer else seg
        if self.tok.pre_tokenizer:
            words = [w for w, _ in self.tok.pre_tokenizer.pre_tokenize_str(norm)]
        else:
            words = [norm]
        out = []
        for w in words:
            if w:
                out.extend(model_fn(w))
        return out

    def to_ids(self, symbols):
        out = []
        for s in symbols:
            if s in self.vocab:
                out.append(self.vocab[s])
            elif self.byte_fallback:
                out.extend(self.vocab[byte_token(b)] for b in s.encode("utf-8"))
            elif self.unk is not None:
                out.append(self.vocab[self.unk])
        return out

    # swift-transformers' bpe(token:): Characters, GPT-2 style merge of every occurrence of the best pair
    def cluster_bpe(self, word):
        symbols = self.cluster_re.findall(word)
        while len(symbols) > 1:
            best, best_rank = None, None
            for a, b in zip(symbols, symbols[1:]):
                r = self.ranks.get((a, b))
                if r is not None and (best_rank is None or r < best_rank):
                    best, best_rank = (a, b), r
            if best is None:
                break
            merged, i = [], 0
            while i < len(symbols):
                if i < len(symbols) - 1 and (symbols[i], symbols[i + 1]) == best:
                    merged.append(symbols[i] + symbols[i + 1])
                    i += 2
                else:
                    merged.append(symbols[i])
                    i += 1
            symbols = merged
        return self.to_ids(symbols)

    # fastllm's GGUF BPE: every score 1.0, ties broken by the leftmost position
    def leftmost_bpe(self, word):
        if word in self.vocab and len(word) == 1:
            return [self.vocab[word]]
        symbols = list(word)
        while True:
            for i in range(len(symbols) - 1):
                if symbols[i] + symbols[i + 1] in self.vocab:
                    symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]
                    break
            else:
                break
        return self.to_ids(symbols)

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
