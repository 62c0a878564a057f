"""blind15 decode / stream / pieces engine on the real `tokenizers` library, one bug per `--bug`.

A `cmd:` engine speaking tokparity's line protocol (docs/contracts.md). Without `--bug` it is the
bug-free twin (blind13_decode.py's): `decode` is `tokenizers`' decode (`skip_special_tokens` as asked,
clean-up as the model's tokenizer_config.json says or as asked); `stream` decodes the growing window
of all ids (prompt included) and sends what grew past the prompt's text, holding back a trailing
U+FFFD (an unfinished character) and sending everything at the last id; `pieces` gives every id's
bytes from the vocabulary (byte-level characters mapped back to bytes, `<0xHH>` to its byte, `▁` to a
space, added tokens as their text). `encode` is answered too, `chat` is not. Written on 2026-11-30
by a helper who read no tokparity diagnosis code and ran tokparity with `--no-diagnose` only,
looking at mismatch counts. Each bug below is the behaviour of a real engine, written from its
public report (and its code where the report shows it); each touches only its own op.

Decode:

`--bug cut-at-eos` (EleutherAI/lm-evaluation-harness PR #2512, "Added small fix to split by
eos_token_id before decoding"; the same step in 0cc4m/KoboldAI PR #62, "Strip the eos token from
exllama generations"): the ids are cut at the first EOS id (tokenizer_config.json's `eos_token`) and
only what comes before it is decoded, so the EOS and every id after it are gone from the text, even
with `skip_special` off. Here: `ids[:ids.index(eos)]` decoded by `tokenizers` where the EOS occurs.
Shows on `-c ids` sequences that hold the EOS (qwen3 `<|im_end|>`, lenml-llama2 `</s>`).

`--bug trailing-eos-hidden` (NVIDIA/TensorRT-LLM PR #14336, "Hide trailing EOS from generated text":
"vLLM does not exhibit this because it always slices the trailing stop token from the detokenized
text"): a last id that is the EOS is sliced off before decoding, whatever `skip_special` says (an
EOS elsewhere stays). Here: `ids[:-1]` decoded when `ids[-1]` is the EOS. Shows with
`skip_special` off on `-c ids` sequences that end with the EOS.

Stream:

`--bug spm-detok-on-bytelevel` (ml-explore/mlx-lm #1041, "Devstral (tekken v13 tokenizer) produces `Ġ`
characters instead of spaces in output": `Hello!ĠHowĠcanĠIĠassistĠyouĠtoday?`; the cause, from PR
#1329 "Fix detokenizer for byte-level tokenizers with an SPM-style decoder": "`tokenizer_utils.load()`
selects the streaming detokenizer by inspecting only the `decoder` field of `tokenizer.json` ...
`SPMStreamingDetokenizer` only strips the `▁` marker, so the `Ġ` markers pass through untouched"):
a byte-level vocabulary streamed by the SentencePiece streaming detokenizer, which writes each
token's vocabulary string with `▁` as a space and `<0xHH>` as its byte, and nothing else undone. Here:
each generated id's delta is that (added tokens as their text, special ones left out with
`skip_special`; `<0xHH>` bytes held until they make characters), whatever the model's decoder is.
Shows on every stream of qwen3 and llama-bpe (`Ġ`, `Ċ` and the other byte glyphs); SentencePiece
vocabularies (lenml-llama2) stream almost right.

`--bug naive-suffix` (ml-explore/mlx-swift-examples #252, "detokenizer.next() Characters that
produce garbled text when the response is in Chinese": `Swift 社区非常活跃` streams as `Swift �区非常活跃`;
the code, `let newSegment = tokenizer.decode(tokens: segmentTokens)` / `let new =
newSegment.suffix(newSegment.count - segment.count)`, fixed by PR #261 "if the tokenizer produces an
incomplete character do not consume"): each step decodes all ids and sends the characters past the
count already sent, with no holding back, so an unfinished character goes out as U+FFFD and the
character that completes it, having the same count, is never sent. Here: that rule from the
prompt's text as decoded (a U+FFFD the prompt ends with counts as sent). Shows on `-c ids`
(qwen3, lenml-llama2) where a character is split over ids.

Pieces:

`--bug g-only` (bojieli/ai-agent-book #258, "attention_visualization: duplicated byte-identical Ġ
replace — SentencePiece ▁ never handled": `label = label.replace("Ġ", " ").replace("Ġ", " ")`; the
same partial map in paiml/aprender #3677, whose byte-level path "converts only space→`Ġ`, `\\n`→`Ċ`
and `\\r`, and passes every other character through raw"): a token's text is its vocabulary string
with the byte-level glyphs for space and newline turned back (`Ġ`→space, `Ċ`→newline) and every
other glyph left as the character it is drawn with, written in UTF-8. Here: every ordinary token of
a byte-level vocabulary so; added tokens, and other vocabularies, as the twin. Shows on qwen3 and
llama-bpe (every token holding a byte other than space and newline outside printable ASCII:
non-ASCII text, tabs).
"""
import argparse
import json
import os
import sys

BUGS = ["cut-at-eos", "trailing-eos-hidden",
        "spm-detok-on-bytelevel", "naive-suffix",
        "g-only"]
FFFD = "\ufffd"


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


class Engine:
    def __init__(self, path, bug):
        from tokenizers import Tokenizer
        self.tok = Tokenizer.from_file(path)
        self.bug = bug
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
        self.added = {a["id"]: a for a in spec.get("added_tokens", [])}
        self.special_ids = {i for i, a in self.added.items() if a.get("special")}
        dec_text = json.dumps(spec.get("decoder"), ensure_ascii=False)
        self.byte_level = '"ByteLevel"' in dec_text
        self.replace_meta = '"Replace"' in dec_text and "\u2581" in dec_text
        self.spm_strip = self.replace_meta and '"Strip"' in dec_text
        self.byte_decoder = {c: b for b, c in bytes_to_unicode().items()}
        self.n = self.tok.get_vocab_size(with_added_tokens=True)
        self.cleanup_default = False
        cfg = os.path.join(os.path.dirname(path), "tokenizer_config.json")
        if os.path.exists(cfg):
            with open(cfg, encoding="utf-8") as f:
                self.cleanup_default = bool(json.load(f).get("clean_up_tokenization_spaces", False))
        self.cleanup = self.cleanup_default
        self.eos_id = None
        if os.path.exists(cfg):
            with open(cfg, encoding="utf-8") as f:
                eos = json.load(f).get("eos_token")
            if isinstance(eos, dict):
                eos = eos.get("content")
            if isinstance(eos, str):
                self.eos_id = self.tok.token_to_id(eos)

    # ---------------------------------------------------------------- pieces (the twin's table)
    def piece_bytes(self, i, skip=False):
        if i in self.added:
            if skip and i in self.special_ids:
                return b""
            content = self.added[i]["content"]
            if self.replace_meta:
                content = content.replace("\u2581", " ")
            return content.encode("utf-8")
        s = self.tok.id_to_token(i)
        if s is None:
            return None
        if self.byte_level:
            try:
                return bytes(self.byte_decoder[c] for c in s)
            except KeyError:
                return s.encode("utf-8")
        if len(s) == 6 and s.startswith("<0x") and s.endswith(">"):
            try:
                return bytes([int(s[3:5], 16)])
            except ValueError:
                pass
        return s.replace("\u2581", " ").encode("utf-8")

    def is_byte_token(self, s):
        return s is not None and len(s) == 6 and s.startswith("<0x") and s.endswith(">")

    def pieces(self):
        table = [self.piece_bytes(i) for i in range(self.n)]
        if self.bug == "g-only" and self.byte_level:
            for i in range(self.n):
                t = self.tok.id_to_token(i)
                if t is None or i in self.added:
                    continue
                table[i] = t.replace("\u0120", " ").replace("\u010a", "\n").encode("utf-8")
        return table

    # ---------------------------------------------------------------- decode
    def cleaned(self, text):
        if not self.cleanup:
            return text
        for a, b in ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
                     (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")):
            text = text.replace(a, b)
        return text

    def hf_decode(self, ids, skip):
        return self.tok.decode(ids, skip_special_tokens=skip)

    def decode(self, ids, skip):
        ids = list(ids)
        if self.bug == "cut-at-eos" and self.eos_id is not None and self.eos_id in ids:
            ids = ids[:ids.index(self.eos_id)]
        elif self.bug == "trailing-eos-hidden" and self.eos_id is not None and ids and ids[-1] == self.eos_id:
            ids = ids[:-1]
        return self.cleaned(self.hf_decode(ids, skip))

    # ---------------------------------------------------------------- stream
    def twin_stream(self, ids, prompt, skip):
        base = self.hf_decode(ids[:prompt], skip) if prompt else ""
        while base.endswith(FFFD):
            base = base[:-1]
        sent = base
        deltas = []
        last = len(ids) - 1
        for k in range(prompt, len(ids)):
            text = self.hf_decode(ids[:k + 1], skip)
            if text.endswith(FFFD) and k < last:
                deltas.append("")
                continue
            if text.startswith(sent):
                deltas.append(text[len(sent):])
            else:
                common = os.path.commonprefix([text, sent])
                deltas.append(text[len(common):])
            sent = text
        return deltas

    def stream(self, ids, prompt, skip):
        if self.bug == "spm-detok-on-bytelevel":
            return self.spm_detok(ids, prompt, skip)
        if self.bug == "naive-suffix":
            sent = self.hf_decode(ids[:prompt], skip) if prompt else ""
            deltas = []
            for k in range(prompt, len(ids)):
                text = self.hf_decode(ids[:k + 1], skip)
                deltas.append(text[len(sent):] if len(text) > len(sent) else "")
                sent = text
            return deltas
        return self.twin_stream(ids, prompt, skip)

    def spm_detok(self, ids, prompt, skip):
        """mlx-lm's SPMStreamingDetokenizer token map: `▁` to a space, `<0xHH>` to its byte."""
        deltas, pending = [], b""
        for i in ids[prompt:]:
            if i in self.added:
                raw = b"" if (skip and i in self.special_ids) else self.added[i]["content"].encode("utf-8")
            else:
                s = self.tok.id_to_token(i) or ""
                raw = bytes([int(s[3:5], 16)]) if self.is_byte_token(s) else s.replace("\u2581", " ").encode("utf-8")
            pending += raw
            try:
                deltas.append(pending.decode("utf-8"))
                pending = b""
            except UnicodeDecodeError:
                deltas.append("")
        if pending and deltas:
            deltas[-1] += pending.decode("utf-8", "replace")
        return deltas

    # ---------------------------------------------------------------- protocol
    def handle(self, req):
        op = req.get("op")
        for key in ("spaces_between_specials", "remove_special"):
            if req.get(key):
                return {"error": f"{key} not supported"}
        self.cleanup = req["clean_up_spaces"] if "clean_up_spaces" in req else self.cleanup_default
        if req.get("step", 1) != 1:
            return {"error": "step not supported"}
        skip = bool(req.get("skip_special", False))
        if op == "encode":
            self.tok.encode_special_tokens = not req.get("parse_special", False)
            return {"ids": self.tok.encode(req["text"], add_special_tokens=req.get("add_special", False)).ids}
        if op == "decode":
            return {"text": self.decode(req["ids"], skip)}
        if op == "stream":
            return {"deltas": self.stream(req["ids"], req["prompt"], skip)}
        if op == "pieces":
            return {"pieces": [None if b is None else b.hex() for b in self.pieces()]}
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
