"""blind15 encode engine on the real `tokenizers` library, one bug per `--bug`.

A `cmd:` engine speaking tokparity's line protocol (docs/contracts.md): it answers `encode` and
nothing else (`decode`, `stream`, `pieces` and `chat` get an error with no status: not tried).
Without `--bug` it is the bug-free twin: `tokenizers`' own `encode` on the model's `tokenizer.json`
(`encode_special_tokens = not parse_special`, `add_special_tokens = add_special`). Each bug below is
the behaviour of a real engine, written from its public report or fix; the rest of the pipeline
stays `tokenizers`' own, so that only the named mechanism differs. Written on 2026-11-30 by a
helper who read no tokparity diagnosis code and ran tokparity with `--no-diagnose` only, looking
at mismatch counts.

`--bug no-ignore-merges` (ggml-org/llama.cpp PR #7193, "fix : lookup word in vocab before doing BPE
merges": "For llama-3, I found there is an inconsistency between llama.cpp's tokenizer and
Huggingface's tokenizers. Example: ` Việt` llama.cpp: 11655 -> ' Vi', 26298 -> 'ệ', 83 -> 't';
Huggingface's tokenizers with tokenizer.json from llama-3: 101798 ... Huggingface's tokenizers will
try to lookup a split word in the vocabulary first ... In llama.cpp, we always do the byte-level
merge"; the same gap in robertknight/rten #453 / PR #1043, "Support `ignore_merges` option": "588
token IDs out of 128000 ... cannot be obtained by iteratively merging tokens"): the BPE model's
`ignore_merges: true` is not honoured, so a pre-token that is itself a vocabulary entry is still
merged pair by pair. Here: the `tokenizer.json` with `model.ignore_merges` set to false, loaded
with `Tokenizer.from_str`; nothing else changes. Shows on llama-bpe (and gpt-oss) where a word is
one of the tokens the merges cannot reach (`-c multilingual`: Czech, Turkish, Russian ...).

`--bug added-lowest-id` (invergent-ai/surogate #157, "[Serve] Added-token matching takes the
lowest-id match at a position, not the longest, so a prefixing added token wins": "The candidate
list added_token_candidates_[first byte] is filled in the order of added_tokens_, which
merge_added_tokens_decoder() sorts by ascending id. The scan loop `break`s on the first candidate
whose content matches at pos, so when two added tokens share a first byte and one is a proper prefix
of the other, the one with the smaller id wins regardless of length. HuggingFace's AddedVocabulary
is leftmost-LONGEST"): at each position the added token with the smallest id that matches is taken.
Here: `tokenizers`' ids, with every added token it matched re-scanned over its own content the
surogate way (the smallest-id added token matching at each position; a stretch no added token
matches goes to the vocabulary, as that engine's model would see it). Gemma 3's added tokens for
runs of newlines (`\\n` 107, `\\n\\n` 108, ...) and of spaces (`▁▁` 138, `▁▁▁` 139, ...) are in
ascending id by length, so `"\\n\\n"` becomes `[107, 107]` where `tokenizers` gives `[108]`. Shows on
gemma-3 on any text with two or more line breaks or three or more spaces in a row (`-c edge`).

`--bug bos-despite-off` (oobabooga/textgen #5429, "BOS token in tokenizer? Even with add BOS token
disabled?": "If I use the HF loaders, the BOS token still appears despite being disabled in
parameters. This is using the HF loaders. In llama.cpp or others I don't get a BOS token listed"):
the wrapper calls the Hugging Face tokenizer with its default `add_special_tokens=True` whatever the
request or the setting says. Here: `add_special_tokens=True` on every encode. Shows without
`--add-special` on models whose post-processor adds a BOS (lenml-llama2 `<s>`, gemma-3 `<bos>`):
every case; llama-bpe and qwen3 (nothing added by their post-processors) are unchanged.

`--bug space-prefix-fragments` (ggml-org/llama.cpp #8584, "Bug: Tokenization adds a space to the first
non-special token": `llama-tokenize --no-bos -m gemma-1.1-2b-it.Q6_K.gguf -p "<pad>text<eos>"` gives
`0 -> '<pad>'`, `2793 -> ' text'`, `1 -> '<eos>'` — "Token `2793 -> ' text'` should have been
`1082 -> 'text'`"; the code in llama.cpp's SentencePiece path: `bool is_prev_special = true; // prefix
with space if first token` ... `if (vocab.tokenizer_add_space_prefix && is_prev_special) { raw_text
= " " + raw_text; }`, with `add_space_prefix` true by default for an SPM vocabulary whose file does
not say otherwise): every stretch of plain text that starts the text or follows an added token
(special tokens when they are parsed, user-defined ones always) gets a space in front before it is
tokenized. Here: those spaces put into the text at those places (the added tokens found by
`tokenizers` itself), then `tokenizers` as the twin; only for a vocabulary whose normalizer
prepends nothing (Gemma 3's; Llama 2's `Prepend` already adds its `▁`, so the flag is refused
there). Shows on gemma-3 on every text (`-c edge`).
"""
import argparse
import json
import sys

BUGS = ["no-ignore-merges", "added-lowest-id", "bos-despite-off", "space-prefix-fragments"]


class Engine:
    def __init__(self, path, bug):
        from tokenizers import Tokenizer
        self.bug = bug
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
        if bug == "no-ignore-merges":
            spec["model"]["ignore_merges"] = False
            self.tok = Tokenizer.from_str(json.dumps(spec))
        else:
            self.tok = Tokenizer.from_file(path)
        self.added = {a["id"]: a for a in spec.get("added_tokens", [])}
        if bug == "space-prefix-fragments" and "Prepend" in json.dumps(spec.get("normalizer")):
            raise SystemExit("space-prefix-fragments: the normalizer already prepends a space marker")
        # the surogate candidate list: added tokens in ascending id
        self.by_id = sorted((a["id"], a["content"], bool(a.get("special"))) for a in spec.get("added_tokens", []))

    def lowest_id_rescan(self, content, parse_special):
        out, pos, pending = [], 0, ""
        while pos < len(content):
            hit = None
            for i, c, special in self.by_id:
                if special and not parse_special:
                    continue
                if c and content.startswith(c, pos):
                    hit = (i, c)
                    break
            if hit is None:
                pending += content[pos]
                pos += 1
                continue
            if pending:
                out.extend(self.plain(pending))
                pending = ""
            out.append(hit[0])
            pos += len(hit[1])
        if pending:
            out.extend(self.plain(pending))
        return out

    def plain(self, piece):
        i = self.tok.token_to_id(piece)
        if i is not None:
            return [i]
        return self.tok.encode(piece.replace("\u2581", " "), add_special_tokens=False).ids

    def encode(self, text, add_special, parse_special):
        self.tok.encode_special_tokens = not parse_special
        if self.bug == "bos-despite-off":
            add_special = True
        if self.bug == "space-prefix-fragments":
            enc = self.tok.encode(text, add_special_tokens=False)
            spans = [enc.offsets[k] for k, i in enumerate(enc.ids) if i in self.added]
            out, pos, prev_special = [], 0, True
            for a, b in spans:
                if a > pos:
                    out.append((" " if prev_special else "") + text[pos:a])
                out.append(text[a:b])
                pos, prev_special = b, True
            if pos < len(text):
                out.append((" " if prev_special else "") + text[pos:])
            text = "".join(out)
        ids = self.tok.encode(text, add_special_tokens=add_special).ids
        if self.bug == "added-lowest-id":
            out = []
            for k, i in enumerate(ids):
                a = self.added.get(i)
                # tokens the post-processor added (BOS) are not matched in the text
                if a is None or (add_special and a.get("special") and not parse_special):
                    out.append(i)
                    continue
                out.extend(self.lowest_id_rescan(a["content"], parse_special))
            ids = out
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
