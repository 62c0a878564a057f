"""Blind engine, round 7: decode, stream and pieces on the real `tokenizers` library.

Written on 2026-11-29 from docs/contracts.md, docs/guides/streaming.md and public bug reports; its
author read no diagnosis code and ran tokparity only with `--no-diagnose`. Without `--bug` it is a
bug-free twin (the `tokenizers` decoder; a stream that holds back an unfinished character and
resends nothing). `--bug NAME` turns on exactly one bug:

decode
------
- `lossy-once` (ohdearquant/lattice #993, Gemma BPE tokenizer): the decoder concatenated every
  token's bytes, `<0xXX>` byte-fallback tokens included, into one global byte buffer and ran
  `String::from_utf8_lossy` over it once at the end. Rust's lossy conversion writes one U+FFFD per
  maximal invalid subsequence, while `tokenizers`' `ByteFallback` decoder writes one U+FFFD *per
  byte* of a run of fallback bytes that is not valid UTF-8 (`<0xE5><0x8F>` gives two U+FFFD in HF,
  one in the buggy decoder). Only models with a `ByteFallback` decoder change.
- `ff-marker` (guidance-ai/llguidance #248, fixed by PR #359): `decode_ext` took any token whose
  bytes start with 0xFF (llguidance's SPECIAL_TOKEN_MARKER) for a special token and emitted
  `t[1..]`. The legitimate single-byte 0xFF token (`ÿ` in a byte-level vocabulary, `<0xFF>` in a
  byte-fallback one) therefore decodes to nothing: the byte is lost. Streams decode the same way.
- `metaspace-prefix` (huggingface/swift-transformers #329, fixed by PR #345): the Swift
  `MetaspaceDecoder` read only `add_prefix_space`, which newer `tokenizer.json` files no longer
  carry (they say `prepend_scheme`), so it defaulted to false and never stripped the `▁` that the
  pre-tokenizer prepended: `["▁How", "▁are"]` decodes to `" How are"` instead of `"How are"`. Only
  models whose decoder is a `Metaspace` with a prepend scheme change (botchan-unigram).

pieces
------
- `go-json-fffd` (ollama/ollama #13497, PR #14692): a token's text went from the C tokenizer
  through a Go string into JSON, and Go's JSON encoder replaces every invalid UTF-8 byte with
  U+FFFD, so a token holding part of a character reports the bytes [239, 191, 189] for each of its
  invalid bytes instead of its own bytes. The pieces op answers those bytes.

stream
------
- `prompt-leak` (vllm-project/vllm #48853): `FastIncrementalDetokenizer` seeds tokenizers'
  `DecodeStream(ids=prompt_token_ids)`, whose prefill sets its text prefix only when the decoded
  prompt does not end with U+FFFD. A prompt ending inside a character leaves the prefix empty, and
  the first complete step returns the whole prompt's text with the new text.
- `lookback6` (ai-dynamo/dynamo #12630; code of `SglangStreamingPostProcessor._incremental_decode`
  before PR #12688): each step decodes a fixed window of the LOOKBACK=6 previous generated ids,
  then that window plus the new ids, and sends `window_text[len(prefix_text):]`, both decoded with
  `skip_special_tokens=True` and with no holding back: a character still unfinished goes out as
  U+FFFD, and when a later id finishes it the slice by the prefix's length cuts the finished
  character off. The prompt's ids are not part of the window.
- `resend-full` (gittensor-ai-lab/sparkinfer PR #744): `ChatTokenizer::decode_delta` decoded the
  generated ids so far and assumed the previous decode was a prefix of the new one; when it was
  not (an incomplete character decoded to U+FFFD, then completed), it returned the *full* string,
  so the client received the whole text again.
- `per-token` (rustformers/llm #298, reported in huggingface/tokenizers #1141): each generated id
  was decoded alone with `Tokenizer::decode(&[id])`, which runs the whole decoder chain, Strip
  included, on one token: SentencePiece word spaces vanish ("Iamtestingout...") and a character
  split over byte tokens comes out as U+FFFD per piece.

Usage: blind7_decode.py TOKENIZER_JSON [--bug NAME]  (speaks tokparity's cmd: protocol)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

from tokenizers import Tokenizer

BUGS = (
    "lossy-once",
    "ff-marker",
    "metaspace-prefix",
    "go-json-fffd",
    "prompt-leak",
    "lookback6",
    "resend-full",
    "per-token",
)

REPL = "\ufffd"
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
    return {b: chr(c) for b, c in zip(bs, cs)}


BYTE_DEC = {c: b for b, c in bytes_to_unicode().items()}


def clean_up(text: str) -> str:
    for a, b in ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
                 (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")):
        text = text.replace(a, b)
    return text


def incomplete_tail(b: bytes) -> bool:
    """True when b ends inside a UTF-8 character (a valid lead byte and too few continuations)."""
    n = len(b)
    for back in range(1, 4):
        if back > n:
            return False
        c = b[n - back]
        if 0x80 <= c <= 0xBF:
            continue
        need = 2 if 0xC2 <= c <= 0xDF else 3 if 0xE0 <= c <= 0xEF else 4 if 0xF0 <= c <= 0xF4 else 0
        if need == 0 or back >= need:
            return False
        if back >= 2:
            second = b[n - back + 1]
            lo, hi = 0x80, 0xBF
            if c == 0xE0:
                lo = 0xA0
            elif c == 0xED:
                hi = 0x9F
            elif c == 0xF0:
                lo = 0x90
            elif c == 0xF4:
                hi = 0x8F
            if not lo <= second <= hi:
                return False
        return True
    return False


def go_string_bytes(b: bytes) -> bytes:
    """What Go's encoding/json makes of a byte string: each invalid byte becomes U+FFFD."""
    out = bytearray()
    i = 0
    n = len(b)
    while i < n:
        c = b[i]
        if c < 0x80:
            out.append(c)
            i += 1
            continue
        need = 2 if 0xC2 <= c <= 0xDF else 3 if 0xE0 <= c <= 0xEF else 4 if 0xF0 <= c <= 0xF4 else 0
        if need and i + need <= n:
            try:
                b[i:i + need].decode("utf-8")
                out += b[i:i + need]
                i += need
                continue
            except UnicodeDecodeError:
                pass
        out += REPL.encode("utf-8")
        i += 1
    return bytes(out)


class Engine:
    def __init__(self, path: str, bug: str | None):
        self.bug = bug
        self.tok = Tokenizer.from_file(path)
        with open(path, encoding="utf-8") as f:
            self.spec = json.load(f)
        cfg_path = os.path.join(os.path.dirname(path), "tokenizer_config.json")
        self.cfg = {}
        if os.path.exists(cfg_path):
            with open(cfg_path, encoding="utf-8") as f:
                self.cfg = json.load(f)
        self.cfg_clean = bool(self.cfg.get("clean_up_tokenization_spaces", False))
        dec = self.spec.get("decoder") or {}
        decs = dec.get("decoders", [dec]) if dec.get("type") == "Sequence" else [dec]
        self.byte_level = any(d.get("type") == "ByteLevel" for d in decs)
        self.byte_fallback = any(d.get("type") == "ByteFallback" for d in decs)
        self.replaces = [(d["pattern"]["String"], d["content"]) for d in decs
                         if d.get("type") == "Replace" and "String" in d.get("pattern", {})]
        self.strip_left = sum(int(d.get("start", 0)) for d in decs if d.get("type") == "Strip")
        self.specials = {a["id"] for a in self.spec.get("added_tokens", []) if a.get("special")}
        self.added = {a["id"] for a in self.spec.get("added_tokens", [])}
        self.size = self.tok.get_vocab_size(with_added_tokens=True)
        self.dec_tok = self.tok
        if bug == "metaspace-prefix":
            spec = json.loads(json.dumps(self.spec))
            changed = False
            d = spec.get("decoder") or {}
            for sub in (d.get("decoders", [d]) if d.get("type") == "Sequence" else [d]):
                if sub.get("type") == "Metaspace":
                    sub["prepend_scheme"] = "never"  # add_prefix_space absent -> false: never strip
                    changed = True
            if changed:
                self.dec_tok = Tokenizer.from_str(json.dumps(spec))

    # ---- bytes of one token -------------------------------------------------------------------
    def token_bytes(self, i: int) -> bytes | None:
        t = self.tok.id_to_token(i)
        if t is None:
            return None
        if self.byte_level:
            out = bytearray()
            for ch in t:
                b = BYTE_DEC.get(ch)
                if b is None:
                    out += ch.encode("utf-8")
                else:
                    out.append(b)
            return bytes(out)
        m = BYTE_TOKEN.match(t)
        if m and self.byte_fallback and i not in self.specials:
            return bytes([int(m.group(1), 16)])
        for a, b in self.replaces:
            t = t.replace(a, b)
        return t.encode("utf-8")

    def kept(self, ids, skip):
        return [i for i in ids if i not in self.specials] if skip else list(ids)

    # ---- whole decode -------------------------------------------------------------------------
    def decode_raw(self, ids, skip: bool) -> str:
        ids = list(ids)
        if self.bug == "ff-marker":
            ids = [i for i in ids if not ((self.token_bytes(i) or b"")[:1] == b"\xff")]
        if self.bug == "lossy-once" and self.byte_fallback and not self.byte_level:
            data = b"".join(self.token_bytes(i) or b"" for i in self.kept(ids, skip))
            text = data.decode("utf-8", errors="replace")
            for _ in range(self.strip_left):
                if text.startswith(" "):
                    text = text[1:]
            return text
        return self.dec_tok.decode(ids, skip_special_tokens=skip)

    def bytes_of(self, ids, skip) -> bytes:
        return b"".join(self.token_bytes(i) or b"" for i in self.kept(ids, skip))

    # ---- streaming ----------------------------------------------------------------------------
    def twin_stream_steps(self, ids, prompt, skip, steps, leak=False):
        sent = self.decode_raw(ids[:prompt], skip) if prompt else ""
        if prompt and incomplete_tail(self.bytes_of(ids[:prompt], skip)):
            # vLLM #48853: the prefix is never set when the prompt ends in U+FFFD
            sent = "" if leak else sent.rstrip(REPL)
        n = prompt
        deltas = []
        for k in steps:
            n += k
            last = n == len(ids)
            if not last and incomplete_tail(self.bytes_of(ids[:n], skip)):
                deltas.append("")
                continue
            full = self.decode_raw(ids[:n], skip)
            if full.startswith(sent):
                d = full[len(sent):]
            else:
                j = 0
                while j < min(len(full), len(sent)) and full[j] == sent[j]:
                    j += 1
                d = full[j:]
            sent = full
            deltas.append(d)
        return deltas

    def lookback_steps(self, ids, prompt, steps):
        lookback = 6
        all_ids: list[int] = []
        n = prompt
        out = []
        for k in steps:
            new = list(ids[n:n + k])
            n += k
            prev_count = len(all_ids)
            all_ids.extend(new)
            start = max(0, prev_count - lookback)
            if len(all_ids) > lookback * 16:
                all_ids = all_ids[-(lookback + len(new)):]
                prev_count = len(all_ids) - len(new)
                start = max(0, prev_count - lookback)
            prefix_tokens = all_ids[start:prev_count]
            prefix_text = self.tok.decode(prefix_tokens, skip_special_tokens=True) if prefix_tokens else ""
            window_text = self.tok.decode(all_ids[start:], skip_special_tokens=True)
            out.append(window_text[len(prefix_text):])
        return out

    def resend_full_steps(self, ids, prompt, skip, steps):
        prev = ""
        n = prompt
        out = []
        for k in steps:
            n += k
            full = self.decode_raw(ids[prompt:n], skip)
            if full.startswith(prev):
                out.append(full[len(prev):])
            else:
                out.append(full)
            prev = full
        return out

    def per_token_steps(self, ids, prompt, skip, steps):
        n = prompt
        out = []
        for k in steps:
            out.append(self.decode_raw(ids[n:n + k], skip))
            n += k
        return out

    def stream(self, ids, prompt, skip, step):
        rest = len(ids) - prompt
        steps = []
        while rest > 0:
            steps.append(min(step, rest))
            rest -= step
        if self.bug == "prompt-leak":
            return self.twin_stream_steps(ids, prompt, skip, steps, leak=True)
        if self.bug == "lookback6":
            return self.lookback_steps(ids, prompt, steps)
        if self.bug == "resend-full":
            return self.resend_full_steps(ids, prompt, skip, steps)
        if self.bug == "per-token":
            return self.per_token_steps(ids, prompt, skip, steps)
        return self.twin_stream_steps(ids, prompt, skip, steps)

    def handle(self, req):
        op = req.get("op")
        if op == "encode":
            enc = self.tok.encode(req["text"], add_special_tokens=bool(req.get("add_special")))
            return {"ids": enc.ids}
        if op == "decode":
            if req.get("spaces_between_specials") or req.get("remove_special"):
                return {"error": "setting not supported"}
            skip = bool(req.get("skip_special"))
            text = self.decode_raw(req["ids"], skip)
            clean = req.get("clean_up_spaces")
            if clean is None:
                clean = self.cfg_clean
            if clean:
                text = clean_up(text)
            return {"text": text}
        if op == "stream":
            return {"deltas": self.stream(list(req["ids"]), int(req.get("prompt", 0)),
                                          bool(req.get("skip_special")), int(req.get("step") or 1))}
        if op == "pieces":
            out = []
            for i in range(self.size):
                b = self.token_bytes(i)
                if b is not None and self.bug == "go-json-fffd":
                    b = go_string_bytes(b)
                out.append(None if b is None else b.hex())
            return {"pieces": out}
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
        except Exception as e:  # a failure of this case
            rep = {"error": f"{type(e).__name__}: {e}", "status": "error"}
        rep["id"] = req.get("id")
        sys.stdout.write(json.dumps(rep) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
