"""A byte-buffer streaming detokenizer on the real tokenizers library, with a last-byte test for an unfinished character.

Written on 2026-12-05, blind: its author read no diagnosis code (nothing under
``tokparity/diagnose/``, ``tokparity/diff/``, ``tokparity/fuzz/``, ``tests/diagnose/``,
``tests/run/``, ``docs/catalogue/``) and ran no tokparity. What was read: docs/contracts.md (the
``cmd:`` protocol, its ``encode`` and ``stream`` ops), docs/guides/streaming.md,
tests/engines/blind/blind24_decode.py (the protocol handling and each id's bytes are copied from
it) and a one-paragraph description of the bug.

    cmd:{python} tests/engines/blind/blind25c_stream.py {tokenizer_json} [--bug lead-byte-only]

The ops
-------

``encode`` is ``Tokenizer.encode``, bug-free. ``add_special`` is passed as ``add_special_tokens``;
``parse_special`` off sets the library's ``encode_special_tokens`` switch.

``stream`` keeps a byte buffer. For each id it appends the id's bytes (special tokens left out
with ``skip_special``). It then decides how many bytes at the buffer's end to hold back. It decodes
the rest as UTF-8 and sends it as the delta. The prompt's bytes go through the same buffer first,
but what they would send is not sent. At the last id, whatever is still held is sent with the
delta, decoded with ``errors="replace"``. Only ``step`` 1 is answered. ``decode`` and ``pieces``
are not answered (an error with no status: not tried).

An id's bytes are blind24's pieces. A byte-level token's glyphs are mapped back to bytes. A
``<0xHH>`` token under ``ByteFallback`` is that byte. ``Replace`` steps apply (``▁`` as a space),
to added tokens too; an added token is its text. A decoder's ``Strip`` of leading spaces takes them
off the start of the buffer (Llama 2).

The twin (no flag)
------------------

It holds back every byte of a character the buffer leaves unfinished: the last lead byte and the
continuation bytes after it, when they are fewer than the length the lead byte announces (C0-DF 2,
E0-EF 3, F0 and above 4). It decodes what it sends with ``errors="replace"``. On the texts of the
check below its deltas add up to ``Tokenizer.decode`` of all the ids, less the prompt's text (the
character the prompt left unfinished is sent whole once complete).

The bug
-------

``lead-byte-only`` (stream): the writer's test of an unfinished character reads only the buffer's
last byte. It holds back that byte only if it is a lead byte (``b >= 0xC0``). A character whose
lead byte and some of its continuation bytes are in the buffer is not held: it is decoded at once,
with ``errors="replace"``, as U+FFFD. The continuation bytes that come later are lone ones: each
run of them is another U+FFFD. A character the prompt left unfinished is carried over only in the
same case (the prompt ended on its lead byte); otherwise its bytes are dropped with the prompt's
and the rest of it streams as U+FFFD.

Why a writer would have it: ``buf[-1] >= 0xC0`` is the shortest test there is for "the buffer
ends inside a character". It is right for two-byte characters (Latin accents, Cyrillic, Greek),
which a lead byte alone is the only way to leave unfinished, and so for the first texts a writer
tries. It fails only for three- and four-byte characters (CJK, emoji) cut after a continuation byte.

Where it shows (checked with a small script on the zoo models, not with tokparity: seven
multilingual and emoji texts, with and without special tokens, streamed after every prompt
length; the twin's deltas added up to ``Tokenizer.decode`` less the prompt's text in all 237
streams on Gemma 3 and 276 on Qwen 3; the bug's differed in 96 and 144 of them). It shows after an
id that leaves the buffer holding a lead byte and some, not all, of its continuation bytes:

- gemma-3 (``ByteFallback``): a character missing from the vocabulary comes as ``<0xHH>`` byte
  tokens, one byte an id. After its second byte the buffer ends in a continuation byte, so every
  three- or four-byte character spelt in byte tokens shows it. ``Hi🦩`` is ``Hi``, ``<0xF0>``,
  ``<0x9F>``, ``<0xA6>``, ``<0xA9>``. After the prompt ``Hi`` the twin streams
  ``["", "", "", "🦩"]``, the bug ``["", "\ufffd", "\ufffd", "\ufffd"]``. After the prompt
  ``Hi``, ``<0xF0>``, ``<0x9F>`` (the prompt ends after a continuation byte: not carried over) the
  bug streams ``["\ufffd", "\ufffd"]`` for ``<0xA6>``, ``<0xA9>``; the twin ``["", "🦩"]``.
- qwen3 (byte-level): an id whose bytes end after a lead byte and one or two of its continuation
  bytes (1,164 ids end so by themselves, as ``ĠðŁ``, 20 F0 9F, the start of most emoji), or an id that
  adds a continuation byte to a held lead byte without finishing the character (107 ids end in a
  lead byte alone, as ``Ġé``, 20 E9: ``Ġé``, ``±``, ``»`` is `` 鱻``). ``I like 🦩`` is ``I``,
  ``Ġlike``, ``ĠðŁ``, ``¦``, ``©`` (F0 9F A6 A9 split after its second byte). After the prompt
  ``I`` the twin streams ``[" like", " ", "", "🦩"]``, the bug
  ``[" like", " \ufffd", "\ufffd", "\ufffd"]``.

Common text in Latin script, and characters whose ids end on their last byte, stream the same
under both.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

from tokenizers import Tokenizer

BUGS = ("lead-byte-only",)
HEX_BYTE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


def _byte_level_alphabet() -> dict[str, int]:
    """GPT-2's byte-level glyphs, each to the byte it stands for."""
    shown = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    out = {chr(b): b for b in shown}
    n = 0
    for b in range(256):
        if b not in shown:
            out[chr(256 + n)] = b
            n += 1
    return out


ALPHABET = _byte_level_alphabet()


def _flat(spec: dict | None) -> list[dict]:
    if not spec:
        return []
    if spec.get("type") == "Sequence":
        return [s for sub in spec.get("decoders", []) for s in _flat(sub)]
    return [spec]


def _char_length(lead: int) -> int:
    """How many bytes a UTF-8 character that starts with this byte has (1: not a lead byte)."""
    if lead >= 0xF0:
        return 4
    if lead >= 0xE0:
        return 3
    if lead >= 0xC0:
        return 2
    return 1


def held_whole_character(buf: bytes | bytearray) -> int:
    """The twin: how many bytes at the end of buf are an unfinished character."""
    back = 0
    while back < len(buf) and back < 4 and 0x80 <= buf[-1 - back] < 0xC0:
        back += 1
    if back == len(buf) or back == 4:
        return 0
    need = _char_length(buf[-1 - back])
    return back + 1 if back + 1 < need else 0


def held_last_byte(buf: bytes | bytearray) -> int:
    """The bug: hold the last byte if it is a lead byte, nothing else."""
    return 1 if buf and buf[-1] >= 0xC0 else 0


class ByteStreamer:
    def __init__(self, path: str, bugs: set[str]):
        self.tok = Tokenizer.from_file(path)
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
        steps = _flat(spec.get("decoder"))
        kinds = {s.get("type") for s in steps}
        self.byte_level = "ByteLevel" in kinds
        self.byte_fallback = "ByteFallback" in kinds
        self.replaces: list[tuple[str, str]] = []
        for s in steps:
            if s.get("type") == "Replace" and "String" in (s.get("pattern") or {}):
                self.replaces.append((s["pattern"]["String"], s.get("content", "")))
            elif s.get("type") == "Metaspace":
                self.replaces.append((s.get("replacement", "\u2581"), " "))
        self.strip_start = sum(int(s.get("start", 0)) for s in steps
                               if s.get("type") == "Strip" and s.get("content") == " ")
        self.special = {a["id"] for a in spec.get("added_tokens", []) if a.get("special")}
        self.holds = held_last_byte if "lead-byte-only" in bugs else held_whole_character
        self._bytes: dict[int, bytes] = {}

    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        self.tok.encode_special_tokens = not parse_special
        return self.tok.encode(text, add_special_tokens=add_special).ids

    def id_bytes(self, i: int) -> bytes:
        if i in self._bytes:
            return self._bytes[i]
        token = self.tok.id_to_token(i)
        if token is None:
            out = b""
        elif self.byte_level:
            out = bytes(ALPHABET[c] for c in token) if all(c in ALPHABET for c in token) else token.encode()
        else:
            m = HEX_BYTE.fullmatch(token) if self.byte_fallback else None
            if m:
                out = bytes([int(m.group(1), 16)])
            else:
                for a, b in self.replaces:
                    token = token.replace(a, b)
                out = token.encode()
        self._bytes[i] = out
        return out

    def stream(self, ids: list[int], prompt: int, skip: bool) -> list[str]:
        buf = bytearray()
        strip = self.strip_start
        deltas: list[str] = []
        for k, i in enumerate(ids):
            if not (skip and i in self.special):
                data = self.id_bytes(i)
                while strip and not buf and data[:1] == b" ":
                    data, strip = data[1:], strip - 1
                if data:
                    strip = 0
                buf += data
            last = k == len(ids) - 1
            keep = 0 if last else self.holds(buf)
            out = bytes(buf[:len(buf) - keep])
            del buf[:len(buf) - keep]
            if k >= prompt:
                deltas.append(out.decode("utf-8", errors="replace"))
        return deltas


def answer(eng: ByteStreamer, req: dict) -> dict:
    op = req.get("op")
    if op == "encode":
        return {"ids": eng.encode(req["text"], bool(req.get("add_special")), bool(req.get("parse_special")))}
    if op == "stream":
        if req.get("step", 1) != 1:
            return {"error": "only step 1 is answered"}
        return {"deltas": eng.stream(list(req["ids"]), int(req.get("prompt", 0)), bool(req.get("skip_special")))}
    return {"error": f"unsupported op {op!r}"}


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("tokenizer_json")
    ap.add_argument("--bug", action="append", choices=BUGS, default=[])
    args = ap.parse_args()
    eng = ByteStreamer(os.path.abspath(args.tokenizer_json), set(args.bug))
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            reply = answer(eng, req)
        except Exception as e:  # noqa: BLE001 - a failure on one request is that request's
            reply = {"error": f"{type(e).__name__}: {e}", "status": "error"}
        sys.stdout.write(json.dumps({"id": req.get("id"), **reply}) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
