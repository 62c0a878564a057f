"""blind8 decode / stream / pieces engine on the real `tokenizers` library, one bug per `--bug`.

Written on 2026-11-29 from docs/contracts.md, docs/guides/streaming.md and public bug reports
(the author read no tokparity diagnosis code and ran tokparity with `--no-diagnose`). Without
`--bug` it is the bug-free twin: `decode` is tokenizers' decode; `stream` decodes the prompt and
the ids so far at each id, sends what grew and holds back a trailing U+FFFD until the ids finish
the character (the last step sends everything); `pieces` gives each id's bytes from the
vocabulary (byte-level map or SentencePiece `▁`/`<0xHH>`), added tokens as their text.

Bugs:

lossy-concat (decode; antonellof/ferrox #125): ferrox decoded one token at a time and every
tokenizer arm ended in `String::from_utf8_lossy`, on both its streamed and its buffered
response: a character whose UTF-8 spans two tokens became one U+FFFD per fragment
(`Hello! ... ��` for an emoji). The bug: the text is the concatenation of each id's bytes, each
decoded alone with replacement (special tokens as their text).

special-empty (decode; keras-team/keras-hub #797): KerasNLP's SentencePiece-based tokenizers
(DeBERTa-v3, FNet, ALBERT) detokenized special tokens to the empty string, because SentencePiece
decodes control symbols to nothing. The bug: with skip_special false, every special added token
(special=true) is left out of the text anyway; the rest is decoded as usual.

user-defined-empty (pieces; ggml-org/llama.cpp #3760): `llama_token_to_piece` wrote nothing for
user-defined tokens (only normal, byte and unknown tokens had pieces), so MPT's whitespace
tokens vanished: `Once upon a time  there` came out `Once upon a timethere`. The bug: an added
token that is not special (Qwen3's `<think>`, `<tool_call>`, `<|fim_prefix|>`...) has empty
bytes.

per-token (stream; mlc-ai/tokenizers-cpp #58, also google/sentencepiece #1043): the app called
the tokenizer's decode on each new token alone; a SentencePiece decode strips the leading space
of its text, so Llama 2 streamed `Onceuponatime,therewas...`. The bug: each delta is
`decode([id])` (tokenizers' own decode of the id alone: space stripped by Llama 2's decoder, a
byte of a split character as U+FFFD).

lossy-per-token (stream; warpfront/hipfire #595): the arch-specific generate loops streamed
`decode(&[tok])` per token through `from_utf8_lossy`, so `🎉🔥🚀` reached the client as
`���������`. Unlike per-token it keeps each token's bytes as they are (no decoder stripping): the
delta is the id's vocabulary bytes decoded alone with replacement.

tag-held (stream; Blaizzy/mlx-vlm #1845): mlx-vlm's `ThinkingStreamState._split_partial` kept the
trailing characters back when they could begin `<think>` or `</think>`, and nothing sent them
once the stream ended: a response of exactly `<` streamed as ``, `cut off </thi` as `cut off `.
The bug: at each id the longest suffix of the text so far that is a proper prefix of `<think>`
or `</think>` is held, and never sent at the end.

reslice-incremental (stream; sgl-project/sglang #22549, after #21037): with
`--incremental-streaming-output` the tokenizer manager sent each step's new text
(`state.text[last_text_offset:]`) while `serving_chat.py` still sliced what it got by the length
of the text it had already streamed (`text[len(stream_buffer):]`, then appended that): Qwen2.5
streamed `['Hello', 'e', 'age', 's', 'g']`. The bug: the twin's delta, sliced again by the
length of everything sent so far.

trim-each-delta (stream; paiml/aprender #2367): `true_streaming_sse_response` was called with
`clean: true` on two of its three paths, which ran `clean_chat_output()` (a trim) on every SSE
chunk, so every space and newline at a delta's edge was deleted: `The quick brown fox` streamed
as `Thequickbrownfox`, three lines as `line1line2line3`. The bug: each of the twin's deltas
stripped of leading and trailing whitespace.
"""
from __future__ import annotations

import argparse
import json
import re
import sys

from tokenizers import Tokenizer

BUGS = ["lossy-concat", "special-empty", "user-defined-empty", "per-token", "lossy-per-token",
        "tag-held", "reslice-incremental",
        "trim-each-delta"]
FFFD = "\ufffd"
TAGS = ("<think>", "</think>")
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

    # ---- the vocabulary's bytes of one id
    def token_bytes(self, i: int):
        if i in self.added:
            a = self.added[i]
            if not self.byte_level and not a.get("special"):
                return a["content"].replace("\u2581", " ").encode("utf-8")
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
        return t.replace("\u2581", " ").encode("utf-8")

    def decode(self, ids, skip):
        return self.tok.decode(list(ids), skip_special_tokens=skip)

    # ---- ops
    def op_decode(self, ids, skip):
        if self.bug == "lossy-concat":
            out = []
            for i in ids:
                if skip and i in self.special:
                    continue
                b = self.token_bytes(i)
                out.append("" if b is None else b.decode("utf-8", "replace"))
            return "".join(out)
        if self.bug == "special-empty":
            ids = [i for i in ids if i not in self.special]
        return self.decode(ids, skip)

    def op_stream(self, ids, prompt, skip, step):
        bug = self.bug
        pre = list(ids[:prompt])
        rest = list(ids[prompt:])
        steps = [rest[k:k + step] for k in range(0, len(rest), step)]
        deltas = []
        if bug in ("per-token", "lossy-per-token"):
            for chunk in steps:
                d = ""
                for i in chunk:
                    if bug == "per-token":
                        d += self.decode([i], skip)
                    elif not (skip and i in self.special):
                        b = self.token_bytes(i)
                        d += "" if b is None else b.decode("utf-8", "replace")
                deltas.append(d)
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
            if bug == "tag-held":
                hold = 0
                for t in TAGS:
                    for k in range(min(len(t) - 1, len(ready)), 0, -1):
                        if ready.endswith(t[:k]):
                            hold = max(hold, k)
                            break
                if hold:
                    ready = ready[:-hold]
            if ready.startswith(sent) and len(ready) >= len(sent):
                deltas.append(ready[len(sent):])
                sent = ready
            else:
                deltas.append("")
        if bug == "reslice-incremental":
            buf = ""
            out = []
            for d in deltas:
                e = d[len(buf):]
                buf += e
                out.append(e)
            deltas = out
        elif bug == "trim-each-delta":
            deltas = [d.strip() for d in deltas]
        return deltas

    def op_pieces(self):
        out = []
        for i in range(self.size):
            b = self.token_bytes(i)
            if b is not None and self.bug == "user-defined-empty" and i in self.added and i not in self.special:
                b = b""
            out.append(None if b is None else b.hex())
        return out

    def handle(self, req):
        op = req.get("op")
        skip = bool(req.get("skip_special"))
        if op == "decode":
            if req.get("clean_up_spaces") or req.get("spaces_between_specials"):
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
