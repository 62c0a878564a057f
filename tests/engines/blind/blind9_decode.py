"""blind9 decode / stream / pieces engine on the real `tokenizers` library, one bug per `--bug`.

Written from docs/contracts.md, docs/guides/streaming.md and public bug reports; the author read
no tokparity diagnosis code and ran tokparity only with `--no-diagnose`. Without `--bug` it is
the bug-free twin: `decode` is tokenizers' decode; `stream` decodes the prompt and the ids so
far at each step, sends what grew and holds back a trailing U+FFFD until the ids finish the
character (the last step sends everything); `pieces` gives each id's bytes from the vocabulary
(byte-level map or SentencePiece `▁`/`<0xHH>`), added tokens as their text. Each bug touches
only its own op.

Bugs:

bytelevel-on-spm (decode; raullenchai/Rapid-MLX #964): Rapid-MLX's `repair_byte_level_decoder()`
looked for GPT-2 byte-level marks in the vocabulary, found Gemma 3's literal `ĉ` token and
"swapped the decoder to `ByteLevel()`, destroying the SentencePiece `Replace("▁"," ")` step for
the entire tokenizer": every space came out as `▁` (`The▁search▁results▁mention…`). The bug:
decode with the tokenizer's decoder replaced by `decoders.ByteLevel()`.

metaspace-first-all (decode; huggingface/tokenizers #2212): `Metaspace::decode_chain` was meant to
drop only the one `▁` the pre-tokenizer prepended, but for token 0 it "mapped every occurrence of
the replacement char to None", so `["▁in▁the", "▁house"]` decoded as `inthe house`. The bug: on
a SentencePiece vocabulary, every `▁` inside the first decoded token is dropped (its leading one
still stands for the prepended space), the other tokens decode as usual.

lstrip-output (decode; EricLBuehler/mistral.rs #2326): "Whenever the first generated token starts
with a space, the space is silently dropped, so the first word of the completion gets glued to the
last word of the prompt" (`'Once upon a time, therewere 3000'`; a 3-space indent lost). The bug:
the decoded text with its leading whitespace stripped.

ws-delta-dropped (stream; waybarrios/vllm-mlx #462): with a tool parser configured, the streaming
path ran `if not content.strip(): continue` on every chunk, meant for the blank between
`</think>` and the answer, so "newlines between list items, paragraphs, and other content are
silently dropped" (`1. London2. Paris3. Berlin`). The bug: a delta of whitespace only is sent as
"" (never sent).

cleanup-commit-drop (stream; drumih/turbo-fieldfare #118): the app re-decoded the whole token
list at every token with swift-transformers, whose `clean_up_tokenization_spaces` "defaults to
**on** because Gemma's `tokenizer_config.json` omits the key"; the cleanup "rewrites
already-decoded text, so appending a token could change the emitted prefix. `commitDelta` then
dropped the delta outright and silently" (`["▁▁▁▁", "."]`: batch `"   ."`, streamed `"    "`, the
period gone). The bug: at each step the text of all ids so far goes through transformers'
`clean_up_tokenization`; what extends the text already emitted is sent, and a step whose text
no longer starts with it sends nothing.

suffix-dedup (stream; bytedance/deer-flow #4085): `_merge_stream_text` had short-circuits
`chunk == existing` and `existing.endswith(chunk)` that "silently dropped legitimate delta chunks"
('谢谢' as ['谢','谢'] stays '谢'; 'hello' as ['hel','l','o'] drops 'l'), and replaced the buffer by
a chunk that started with it (a cumulative snapshot). The bug: each of the twin's deltas merged so
into what was sent; a delta the text sent so far ends with (or equals) is dropped.

prefix-guard (stream; elizaOS/eliza #28041, fixed by #28757): `mergeStreamingText`'s
regressive-snapshot guard (`existingNorm.startsWith(incomingNorm) → return existing`) fired before
the append, so "a single-character delta whose char equals the buffer's leading char was
dropped" (`"..."`→`".."`, `"aba"`→`"ab"`). The bug: a delta that the text sent so far starts with
is dropped.

first-meta-only (pieces; ggml-org/llama.cpp #2743): "Token 1678 gets decoded in to ' ▁▁' (U+0020
U+2581 U+2581). Other tokens with spaces also have the issue": the token's text had only its first
`▁` turned into a space. The bug: on a SentencePiece vocabulary each piece has only its first
`▁` replaced by a space.

unk-surface (pieces; google/sentencepiece #134): SentencePiece decodes the unknown id to its
`unk_surface`, " ⁇ " (U+2047 between spaces), not to `<unk>` ("If '^^' is unknown, why is it
decoded as \\u2047 and not unk token?"). The bug: the piece of the model's unk token is the bytes
of " ⁇ ".
"""
from __future__ import annotations

import argparse
import json
import re
import sys

from tokenizers import Tokenizer, decoders

BUGS = ["bytelevel-on-spm", "metaspace-first-all", "lstrip-output",
        "ws-delta-dropped", "cleanup-commit-drop", "suffix-dedup", "prefix-guard",
        "first-meta-only", "unk-surface"]
FFFD = "\ufffd"
META = "\u2581"
BYTE_TOKEN = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")


def bytes_to_unicode() -> dict[int, str]:
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def clean_up_tokenization(text: str) -> str:
    """transformers' clean_up_tokenization, in its order."""
    for a, b in ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
                 (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")):
        text = text.replace(a, b)
    return text


def _has_type(node, name) -> bool:
    if isinstance(node, dict):
        if node.get("type") == name:
            return True
        return any(_has_type(v, name) for v in node.values())
    if isinstance(node, list):
        return any(_has_type(v, name) for v in node)
    return False


class Engine:
    def __init__(self, path: str, bug: str | None):
        self.bug = bug
        self.tok = Tokenizer.from_file(path)
        with open(path, encoding="utf-8") as f:
            j = json.load(f)
        self.byte_level = _has_type(j.get("decoder"), "ByteLevel")
        self.byte_dec = {c: b for b, c in bytes_to_unicode().items()}
        self.added = {a["id"]: a for a in j.get("added_tokens", [])}
        self.special = {i for i, a in self.added.items() if a.get("special")}
        self.size = self.tok.get_vocab_size(with_added_tokens=True)
        unk = (j.get("model") or {}).get("unk_token")
        self.unk_id = self.tok.token_to_id(unk) if isinstance(unk, str) else None
        if bug == "bytelevel-on-spm":
            self.bad = Tokenizer.from_file(path)
            self.bad.decoder = decoders.ByteLevel()

    # ---- the vocabulary's bytes of one id
    def token_bytes(self, i: int):
        meta_one = self.bug == "first-meta-only"
        if i in self.added:
            a = self.added[i]
            if not self.byte_level and not a.get("special"):
                c = a["content"]
                return (c.replace(META, " ", 1) if meta_one else c.replace(META, " ")).encode("utf-8")
            return a["content"].encode("utf-8")
        t = self.tok.id_to_token(i)
        if t is None:
            return None
        if self.byte_level:
            try:
                return bytes(self.byte_dec[c] for c in t)
            except KeyError:
                return t.encode("utf-8")
        m = BYTE_TOKEN.match(t)
        if m:
            return bytes([int(m.group(1), 16)])
        return (t.replace(META, " ", 1) if meta_one else t.replace(META, " ")).encode("utf-8")

    def decode(self, ids, skip):
        return self.tok.decode(list(ids), skip_special_tokens=skip)

    # ---- ops
    def op_decode(self, ids, skip):
        bug = self.bug
        if bug == "bytelevel-on-spm":
            return self.bad.decode(list(ids), skip_special_tokens=skip)
        if bug == "metaspace-first-all" and not self.byte_level:
            kept = [i for i in ids if not (skip and i in self.special)]
            toks = [self.tok.id_to_token(i) for i in kept]
            if toks and toks[0] is not None and META in toks[0][1:]:
                t0 = toks[0]
                toks[0] = (META if t0.startswith(META) else "") + t0.replace(META, "")
                return self.tok.decoder.decode(toks)
        text = self.decode(ids, skip)
        if bug == "lstrip-output":
            text = text.lstrip()
        return text

    def op_stream(self, ids, prompt, skip, step):
        bug = self.bug
        pre = list(ids[:prompt])
        rest = list(ids[prompt:])
        steps = [rest[k:k + step] for k in range(0, len(rest), step)]
        deltas = []
        if bug == "cleanup-commit-drop":
            emitted = clean_up_tokenization(self.decode(pre, skip) if pre else "").rstrip(FFFD)
            seen = list(pre)
            for n, chunk in enumerate(steps):
                seen.extend(chunk)
                full = clean_up_tokenization(self.decode(seen, skip))
                if n != len(steps) - 1:
                    full = full.rstrip(FFFD)
                if full.startswith(emitted):
                    deltas.append(full[len(emitted):])
                    emitted = full
                else:
                    deltas.append("")
            return deltas
        base = self.decode(pre, skip) if pre else ""
        base = base.rstrip(FFFD)  # a character the prompt leaves unfinished is not the prompt's
        sent = ""
        seen = list(pre)
        for n, chunk in enumerate(steps):
            seen.extend(chunk)
            whole = self.decode(seen, skip)
            new = whole[len(base):] if whole.startswith(base) else whole
            last = n == len(steps) - 1
            if last:
                ready = new
            else:
                ready = new.rstrip(FFFD)
            if ready.startswith(sent) and len(ready) >= len(sent):
                deltas.append(ready[len(sent):])
                sent = ready
            else:
                deltas.append("")
        if bug == "ws-delta-dropped":
            deltas = [d if d.strip() else "" for d in deltas]
        elif bug == "suffix-dedup":
            existing = ""
            out = []
            for d in deltas:
                if not d or d == existing or existing.endswith(d):
                    out.append("")
                    continue
                merged = d if d.startswith(existing) else existing + d
                out.append(merged[len(existing):])
                existing = merged
            deltas = out
        elif bug == "prefix-guard":
            existing = ""
            out = []
            for d in deltas:
                if d and existing.startswith(d):
                    out.append("")
                    continue
                out.append(d)
                existing += d
            deltas = out
        return deltas

    def op_pieces(self):
        out = []
        for i in range(self.size):
            b = self.token_bytes(i)
            if self.bug == "unk-surface" and i == self.unk_id:
                b = " \u2047 ".encode("utf-8")
            out.append(None if b is None else b.hex())
        return out

    def handle(self, req):
        op = req.get("op")
        skip = bool(req.get("skip_special"))
        if op == "decode":
            if req.get("clean_up_spaces") or req.get("spaces_between_specials") or req.get("remove_special"):
                return {"error": "setting not supported"}
            return {"text": self.op_decode(req["ids"], skip)}
        if op == "stream":
            step = int(req.get("step") or 1)
            return {"deltas": self.op_stream(req["ids"], int(req.get("prompt") or 0), skip, step)}
        if op == "pieces":
            return {"pieces": self.op_pieces()}
        if op == "encode":
            self.tok.encode_special_tokens = not req.get("parse_special")
            return {"ids": self.tok.encode(req["text"], add_special_tokens=bool(req.get("add_special"))).ids}
        return {"error": f"unsupported op {op}"}


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
