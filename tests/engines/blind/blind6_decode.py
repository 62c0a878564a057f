#!/usr/bin/env python3
"""Blind engine, round 6: decode, stream and pieces on the real `tokenizers` library.

Written on 2026-11-29 from public bug reports only. Its author did not open tokparity's
diagnosis code (`tokparity/diagnose/`, `tokparity/diff/`, `tokparity/fuzz/`, `tests/diagnose/`,
`tests/run/`, `tests/chat/`, `docs/catalogue/`, `causes.toml`, `docs/findings.md`) and ran
tokparity only with `--no-diagnose`, looking at nothing but the number of mismatching cases.

    cmd:{python} tests/engines/blind/blind6_decode.py {tokenizer_json} [--bug NAME]

With no `--bug` it is the bug-free twin: `decode` is `Tokenizer.decode` (clean-up of
tokenization spaces as asked, else as the `tokenizer_config.json` beside the file says),
`stream` re-decodes the ids from the start at each step and sends what grew, holding back a
character whose bytes are not all there yet (a character the prompt began is sent whole once
complete), `pieces` is each id's bytes as the decoder writes them. `--bug NAME` turns on exactly
one bug:

ad-glyph-literal (pieces, decode, stream; byte-level vocabularies).
    basecompute/baseRT issue #22 ("serve: deterministic HTTP 500 on specific short token
    sequences"): baseRT's inverse of GPT-2's byte map (`bytes_to_unicode`) misses exactly one
    entry, the glyph U+0143 `Ń` that stands for byte 0xAD (the soft hyphen, the one byte
    excluded from the printable Latin-1 range and so numbered last). `baseRT_decode_token` then
    writes an unmapped glyph as its own UTF-8, so every token whose bytes hold 0xAD (`季` E5 AD
    A3 came out E5 C5 83 A3; 7,052 tokens of that vocabulary, `í` C3 AD, Thai `อ` ...) decodes
    to other bytes; the report found it by diffing the per-token bytes against Hugging Face
    over the whole vocabulary. Here: each token's string is mapped back char by char through
    the GPT-2 inverse map without U+0143; a char not in the map is written as its UTF-8 (as
    tokenizers' ByteLevel decoder does for chars outside the map, e.g. in added tokens). The
    bytes are then decoded with `errors="replace"`. Used for the token table, decode and stream.
    Other vocabularies (Metaspace) are unaffected.

ollama-bpe-decode (decode, stream, pieces; byte-level vocabularies).
    ollama's `BytePairEncoding.Decode` (model/bytepairencoding.go, the versions before a
    `r > 0x0143` branch was added; the same function is in several stored versions): for every
    rune of every token's string, special tokens included, `r == 0x0100` (`Ā`, byte 0x00) is
    skipped with `continue` ("this produces 0x00 aka NULL"), `r == 0x0143` becomes 0xAD,
    0x0101-0x0120 become `r - 0x100`, 0x0121-0x0142 become `r - 0xA2`, and every rune is
    written with `sb.WriteByte(byte(r))`, i.e. its low 8 bits: a rune above U+00FF that is not
    one of GPT-2's glyphs (DeepSeek's `｜` U+FF5C and `▁` U+2581 in `<｜begin▁of▁sentence｜>`)
    is cut to one byte (0x5C, 0x81). No issue was found for this; it is ollama's code as
    stored (a related map bug of the same file is ollama/ollama #11966, PR #11973). The bytes
    are then decoded with `errors="replace"`.

named-specials-only (decode, stream; only with --skip-special).
    huggingface/transformers issue #24316 ("`skip_special_tokens` not working as expected"):
    the slow tokenizer's decode skips a token when `token in self.all_special_ids`, and
    `all_special_ids` holds only the named special tokens (bos, eos, unk, sep, pad, cls, mask and
    `additional_special_tokens`); a token added with `special=True` but not named there is not
    skipped and is written as its text. Here: with `skip_special`, only the ids of the tokens
    that `tokenizer_config.json` names are left out; every other special token is decoded as its
    text (Llama 3's `<|eot_id|>`, `<|start_header_id|>`, the reserved tokens; Gemma 3's
    `<start_of_turn>`, `<eos>`; DeepSeek V3's place-holders).

last-delta-per-step (stream; only with --stream-step K > 1).
    vllm-project/vllm PR #26027 ("Fixed stream generator for gpt-oss + spec-decoding"): with
    speculative decoding several tokens are accepted in one step, but
    `chat_completion_stream_generator` put only the most recent token's delta into the delta
    message. Here: the ids of a step are fed to the (correct) streaming decoder one by one,
    and the step's delta is the text of its last id only; the text of the step's other ids is
    lost. With a step of 1 it is the twin.

finish-batch-dropped (stream).
    ai-dynamo/dynamo PR #3531 ("Send last token batch when finish_reason is set"): the SGLang
    worker hard-coded the response that carries `finish_reason` to hold no tokens, so the last
    token (with `--stream-interval N`, the last batch of up to N tokens) never reached the
    client. Here: the ids of the last step are never decoded; its delta is "" and whatever the
    decoder still held (an unfinished character) is never flushed.

mlc-streamer (stream).
    mlc-ai/mlc-llm PR #2978 ("[Streamer] Fix UTF-8 handling in streamer", open): the C++
    `TextStreamerObj::Put` (cpp/tokenizers/streamer.cc) assumes a replacement character always
    corresponds to an entire token. This is that function ported line by line: each id is pushed
    to `pending`; `prefix_str = Decode(prefix)`, `full_str = Decode(prefix + pending)`; if
    `full_str` starts with `prefix_str`, the text past it is validated, and while it ends with
    U+FFFD (at most 3 times) the last pending token is popped back and the text decoded again;
    otherwise (prefix not a prefix) with fewer than 3 pending tokens nothing is sent, else up to
    3 tokens are popped until the prefix matches, and failing that `Decode(pending)` is sent
    alone. The remaining pending tokens become the new prefix. `Finish()` decodes what is left
    the same way; here its text is added to the last delta. MLC's streamer starts empty; so that
    only this logic differs, the prompt's ids are `Put` first and their text discarded.

tail-holdback (stream).
    osaurus-ai/vmlx-swift PR #148 ("SpecDec: flush the detokenizer's held-back tail at end of
    stream"): `NaiveStreamingDetokenizer.next()` withholds the trailing 24 characters while it
    waits for a stable boundary and returns nothing until the decoded segment is longer than
    that; only `flush()` releases them, and the speculative path never called it: the last 24
    characters of every answer were dropped, an answer shorter than that rendered as nothing.
    Here: after each id the twin's text so far (past the prompt) is sent up to its last 24
    characters; nothing is flushed at the end.

Decode settings: `skip_special` as asked; `clean_up_spaces` as asked (transformers'
replacements), absent: `clean_up_tokenization_spaces` of the tokenizer_config.json beside the
file; `spaces_between_specials` and `remove_special` are answered with an error (not tried).
Streams never clean up. `step` (stream) is honoured.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

from tokenizers import Tokenizer

BUGS = (
    "ad-glyph-literal",
    "ollama-bpe-decode",
    "named-specials-only",
    "last-delta-per-step",
    "finish-batch-dropped",
    "mlc-streamer",
    "tail-holdback",
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


BYTE_ENC = bytes_to_unicode()
BYTE_DEC = {c: b for b, c in BYTE_ENC.items()}
BYTE_DEC_NO_AD = {c: b for c, b in BYTE_DEC.items() if c != "\u0143"}


def clean_up(text: str) -> str:
    for a, b in ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
                 (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")):
        text = text.replace(a, b)
    return text


def incomplete_tail(b: bytes) -> bool:
    """True when b ends inside a UTF-8 character: a lead byte followed by fewer continuation
    bytes than it needs (and nothing invalid in between)."""
    n = len(b)
    for back in range(1, 4):
        if back > n:
            return False
        c = b[n - back]
        if 0x80 <= c <= 0xBF:
            continue
        need = 2 if 0xC2 <= c <= 0xDF else 3 if 0xE0 <= c <= 0xEF else 4 if 0xF0 <= c <= 0xF4 else 0
        if need == 0:
            return False
        if back >= need:
            return False
        # check the continuation bytes are in range for this lead (E0/ED/F0/F4 restrictions)
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
        dec = self.spec.get("decoder") or {}
        decs = dec.get("decoders", [dec]) if dec.get("type") == "Sequence" else [dec]
        self.byte_level = any(d.get("type") == "ByteLevel" for d in decs)
        self.byte_fallback = any(d.get("type") == "ByteFallback" for d in decs)
        self.replaces = [(d["pattern"]["String"], d["content"]) for d in decs
                         if d.get("type") == "Replace" and "String" in d.get("pattern", {})]
        self.specials = {a["id"] for a in self.spec.get("added_tokens", []) if a.get("special")}
        self.size = self.tok.get_vocab_size(with_added_tokens=True)
        named = []
        for key in ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"):
            v = self.cfg.get(key)
            if isinstance(v, dict):
                v = v.get("content")
            if v:
                named.append(v)
        for v in self.cfg.get("additional_special_tokens") or []:
            named.append(v["content"] if isinstance(v, dict) else v)
        self.named_ids = {i for i in (self.tok.token_to_id(t) for t in named) if i is not None}
        self.cfg_clean = bool(self.cfg.get("clean_up_tokenization_spaces", False))

    # ---- bytes of one token -------------------------------------------------------------------
    def token_bytes(self, i: int, mode: str = "ok") -> bytes | None:
        t = self.tok.id_to_token(i)
        if t is None:
            return None
        if self.byte_level:
            if mode == "ollama":
                out = bytearray()
                for ch in t:
                    r = ord(ch)
                    if r == 0x0100:
                        continue
                    if r == 0x0143:
                        r = 0xAD
                    elif 0x0100 < r <= 0x0120:
                        r -= 0x0100
                    elif 0x0120 < r <= 0x0142:
                        r -= 0x00A2
                    out.append(r & 0xFF)
                return bytes(out)
            table = BYTE_DEC_NO_AD if mode == "noad" else BYTE_DEC
            out = bytearray()
            for ch in t:
                b = table.get(ch)
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

    def mode(self) -> str:
        if self.bug == "ad-glyph-literal" and self.byte_level:
            return "noad"
        if self.bug == "ollama-bpe-decode" and self.byte_level:
            return "ollama"
        return "ok"

    # ---- whole decode -------------------------------------------------------------------------
    def kept(self, ids, skip):
        if not skip:
            return list(ids)
        if self.bug == "named-specials-only":
            return [i for i in ids if i not in self.named_ids]
        return [i for i in ids if i not in self.specials]

    def decode_raw(self, ids, skip: bool) -> str:
        """The decoder's text, no clean-up."""
        mode = self.mode()
        if mode != "ok":
            data = b"".join(self.token_bytes(i, mode) or b"" for i in self.kept(ids, skip))
            return data.decode("utf-8", errors="replace")
        if self.bug == "named-specials-only" and skip:
            return self.tok.decode(self.kept(ids, skip), skip_special_tokens=False)
        return self.tok.decode(list(ids), skip_special_tokens=skip)

    def bytes_of(self, ids, skip) -> bytes:
        mode = self.mode()
        return b"".join(self.token_bytes(i, mode) or b"" for i in self.kept(ids, skip))

    # ---- streaming ----------------------------------------------------------------------------
    def twin_stream_steps(self, ids, prompt, skip, steps):
        """Correct streamer: yields one delta per step (a list of consecutive id counts)."""
        sent = self.decode_raw(ids[:prompt], skip) if prompt else ""
        if prompt and incomplete_tail(self.bytes_of(ids[:prompt], skip)):
            sent = sent.rstrip(REPL)
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

    def stream(self, ids, prompt, skip, step):
        rest = len(ids) - prompt
        if rest <= 0:
            return []
        steps = [min(step, rest - s) for s in range(0, rest, step)]
        bug = self.bug
        if bug == "last-delta-per-step":
            per_id = self.twin_stream_steps(ids, prompt, skip, [1] * rest)
            out, pos = [], 0
            for k in steps:
                out.append(per_id[pos + k - 1])
                pos += k
            return out
        if bug == "finish-batch-dropped":
            out = self.twin_stream_steps(ids, prompt, skip, steps[:-1]) if len(steps) > 1 else []
            return out + [""]
        if bug == "mlc-streamer":
            return self.mlc_stream(ids, prompt, skip, steps)
        if bug == "tail-holdback":
            per = self.twin_stream_steps(ids, prompt, skip, steps)
            out, text, sent = [], "", 0
            for d in per:
                text += d
                upto = max(0, len(text) - 24)
                out.append(text[sent:upto] if upto > sent else "")
                sent = max(sent, upto)
            return out
        return self.twin_stream_steps(ids, prompt, skip, steps)

    def mlc_stream(self, ids, prompt, skip, steps):
        dec = lambda toks: self.decode_raw(toks, skip) if toks else ""
        st = {"prefix": [], "pending": []}

        def put(delta_tokens):
            ret = ""
            for t in delta_tokens:
                st["pending"].append(t)
                all_tokens = st["prefix"] + st["pending"]
                prefix_str = dec(st["prefix"]) if st["prefix"] else ""
                full_str = dec(all_tokens)
                new_pending = []
                if full_str.startswith(prefix_str):
                    validated = full_str[len(prefix_str):]
                    while st["pending"] and len(new_pending) < 3 and validated.endswith(REPL):
                        new_pending.append(st["pending"].pop())
                        all_tokens.pop()
                        validated = dec(all_tokens)[len(prefix_str):]
                else:
                    if len(st["pending"]) < 3:
                        continue
                    ok = False
                    while st["pending"] and len(new_pending) < 3:
                        new_pending.append(st["pending"].pop())
                        all_tokens.pop()
                        full_str = dec(all_tokens)
                        if full_str.startswith(prefix_str):
                            ok = True
                            break
                    validated = full_str[len(prefix_str):] if ok else dec(st["pending"])
                if st["pending"]:
                    st["prefix"] = list(st["pending"])
                new_pending.reverse()
                st["pending"] = new_pending
                ret += validated
            return ret

        def finish():
            all_tokens = st["prefix"] + st["pending"]
            prefix_str = dec(st["prefix"]) if st["prefix"] else ""
            full_str = dec(all_tokens) if all_tokens else ""
            if full_str.startswith(prefix_str):
                return full_str[len(prefix_str):]
            return dec(st["pending"])

        if prompt:
            put(list(ids[:prompt]))
        out, n = [], prompt
        for k in steps:
            out.append(put(list(ids[n:n + k])))
            n += k
        out[-1] += finish()
        return out

    # ---- ops ----------------------------------------------------------------------------------
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
            ids = list(req["ids"])
            return {"deltas": self.stream(ids, int(req.get("prompt", 0)), bool(req.get("skip_special")),
                                          int(req.get("step") or 1))}
        if op == "pieces":
            mode = self.mode()
            out = []
            for i in range(self.size):
                b = self.token_bytes(i, mode)
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
