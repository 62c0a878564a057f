"""Blind engines, round 23: decode, stream and pieces on the real ``tokenizers`` library.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. It answers ``encode`` too,
bug-free, so a run can compare ids. Each ``--bug NAME`` adds one bug. The flag may be repeated.
No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind23_decode.py {tokenizer_json} [--bug NAME ...]

It was written blind on 2026-12-05, from one line per bug. Its author read no diagnosis code and
ran no tokparity. Only docs/contracts.md, docs/guides/streaming.md, the README of this folder,
blind22_decode.py (for the way it speaks the protocol) and tokparity/backends/hf.py (how the
oracle decodes) were read.

The twin
--------

``encode`` is ``Tokenizer.encode``. ``add_special`` is passed as ``add_special_tokens``.
``parse_special`` off sets the library's ``encode_special_tokens`` switch.

``decode`` is ``Tokenizer.decode(ids, skip_special_tokens=skip_special)``. It cleans up spaces
as transformers does only when the request asks (``clean_up_spaces`` true). Absent or false, it
does not: the ``tokenizers`` library never does. ``spaces_between_specials`` and
``remove_special`` get an error with no status: not tried.

``stream`` decodes all the ids up to each step and sends what the text grew by. While that text
ends in U+FFFD it holds back (sends ``""``), but not at the last id. The prompt's text is not
sent. Where the prompt's bytes end inside a character, the text the prompt shares with the
first text that completes it counts as sent. So that character is sent whole once complete.
Only ``step`` 1 is answered.

``pieces`` gives each id's bytes as the file's decoder makes them of that token alone. A
byte-level token's glyphs are mapped back to bytes; a token with a character outside that
alphabet is its UTF-8. A ``<0xHH>`` token under ``ByteFallback`` is that byte. ``Replace`` steps
apply (``▁`` as a space). Added tokens go through the same steps. An id with no token is null.

The bugs
--------

``rstrip-newlines`` (decode): the decoded text goes through ``.rstrip("\\r\\n")``. Every CR and
LF at its end is lost; nothing else changes. Spaces and tabs at the end stay. A wrapper that
reads the reply as a line (``readline`` and strip the line ending) does this, as does a
server that tidies a reply before sending it. Shows wherever the ids end in line breaks.

``unmarked-added-dropped`` (decode): added tokens that are not marked ``special`` in
tokenizer.json's ``added_tokens`` are left out of the ids before decoding, whatever
``skip_special`` says. Special ones are written or skipped as ``skip_special`` asks. A port
that takes the model's vocabulary, sets the added tokens apart, and keeps back only the list
of special ones has this bug. Shows on Qwen 3 (``<think>``, ``</think>``, ``<tool_call>``,
``<tool_response>``, the FIM tokens). On Gemma 3 the 6,406 unmarked added tokens (runs of
``▁``, runs of line breaks, HTML tags, ``<unusedN>``, ``<mask>``) go. Llama 3 has none.

``nfc-output`` (decode): the decoded text goes through ``unicodedata.normalize("NFC", ...)``
before it is sent. A server that normalises every string it returns, or a UI layer on top of
the decoder, does this. A letter and a combining mark after it become one character
(``e`` + U+0301 → ``é``); Hangul jamo become syllables; singletons change (U+212B ANGSTROM
SIGN → ``Å``, U+2126 OHM SIGN → ``Ω``, U+2000 → U+2002, CJK compatibility ideographs). Shows
wherever the decoded text is not in NFC: on Llama 3 and Gemma 3 for such texts. Qwen 3
normalises its input to NFC, so its encodings decode to NFC text; there only ids put together
otherwise show it (``e`` then the id of U+0301).

``flush-at-4-bytes`` (stream): the streamer becomes a byte buffer. It appends each id's bytes
(its piece; a special token skipped with ``skip_special`` adds none) to a buffer. When the
buffer then holds 4 bytes or more, it sends the whole buffer decoded with
``errors="replace"`` and empties it, even when the buffer ends inside a character. The bytes
that complete that character come later and decode apart, as U+FFFD too. With fewer than 4
bytes it sends the valid UTF-8 prefix and keeps the unfinished tail, as it should. At the last
id it sends what is left. A writer who thinks "no UTF-8 character is longer than 4 bytes, so a
buffer of 4 must hold a whole one" has it. It begins with the unfinished tail of the prompt's
bytes. Shows on byte-level vocabularies where one id, or an unfinished tail and the next id,
make 4 bytes or more and stop inside a character: Devanagari, CJK, emoji (Qwen 3 ``नमस्ते``
after its first id streams ``्�``, ``�`` where the twin sends ``्त``). On Gemma 3 it hardly
shows: its byte tokens are one byte each, so the buffer reaches 4 bytes only as a 4-byte
character completes. Apart from the bug, this streamer sends a valid prefix sooner than the
twin (the text adds up the same), and shows a bad byte run as Python does (one U+FFFD per
maximal bad part), not as ByteFallback does (one per byte token).

``last-delta-twice`` (stream): the last non-empty piece of text the stream sent is appended
again to its last delta. A streamer whose final flush sends its "last text" variable without
having cleared it after sending does this. ``["Hello", " world", "!"]`` becomes
``["Hello", " world", "!!"]``. Shows on every stream that sends any text.

``invalid-alone-null`` (pieces): a token whose bytes are not valid UTF-8 on their own gets null
instead of its bytes. A table built by decoding each token's bytes with ``bytes.decode("utf-8")``
and catching the error as "no text" does this. Shows on byte-level vocabularies (tokens that
hold part of a character, each lone byte 0x80-0xFF) and on Gemma 3 (its byte tokens
``<0x80>`` to ``<0xFF>``).
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import re
import sys
import unicodedata

from tokenizers import Tokenizer

BUGS = ("rstrip-newlines", "unmarked-added-dropped", "nfc-output", "flush-at-4-bytes", "last-delta-twice",
        "invalid-alone-null")
HEX_BYTE = re.compile(r"<0x([0-9A-Fa-f]{2})>")
CLEAN_UP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
            (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))


def glyph_bytes() -> dict[str, int]:
    """The byte-level alphabet (GPT-2's): each of its 256 glyphs to the byte it stands for."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = {chr(b): b for b in printable}
    extra = 0
    for b in range(256):
        if b not in printable:
            table[chr(256 + extra)] = b
            extra += 1
    return table


GLYPHS = glyph_bytes()


def decoder_steps(spec: dict | None) -> list[dict]:
    """The decoder of tokenizer.json as a flat list of steps."""
    if not spec:
        return []
    if spec.get("type") == "Sequence":
        out: list[dict] = []
        for sub in spec.get("decoders", []):
            out.extend(decoder_steps(sub))
        return out
    return [spec]


def unfinished_tail(raw: bytes) -> int:
    """How many bytes at the end of raw begin a character they do not finish."""
    dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
    dec.decode(raw, final=False)
    return len(dec.getstate()[0])


def common_prefix(a: str, b: str) -> str:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return a[:n]


class Engine:
    def __init__(self, path: str, bugs: set[str]):
        self.bugs = bugs
        self.tok = Tokenizer.from_file(path)
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
        steps = decoder_steps(spec.get("decoder"))
        kinds = {s.get("type") for s in steps}
        self.byte_level = "ByteLevel" in kinds
        self.byte_fallback = "ByteFallback" in kinds
        self.replaces: list[tuple[str, str]] = []
        for s in steps:
            if s.get("type") == "Replace" and "String" in (s.get("pattern") or {}):
                self.replaces.append((s["pattern"]["String"], s.get("content", "")))
            elif s.get("type") == "Metaspace":
                self.replaces.append((s.get("replacement", "\u2581"), " "))
        self.special: set[int] = set()
        self.unmarked: set[int] = set()
        top = self.tok.get_vocab_size(with_added_tokens=True)
        for a in spec.get("added_tokens", []):
            (self.special if a.get("special") else self.unmarked).add(a["id"])
            top = max(top, a["id"] + 1)
        self.size = top
        self._pieces: dict[int, bytes | None] = {}

    # --- encode ------------------------------------------------------------------------------
    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        self.tok.encode_special_tokens = not parse_special
        return self.tok.encode(text, add_special_tokens=add_special).ids

    # --- decode ------------------------------------------------------------------------------
    def decode(self, ids: list[int], skip: bool, clean_up: bool | None) -> str:
        if "unmarked-added-dropped" in self.bugs:
            ids = [i for i in ids if i not in self.unmarked]
        text = self.tok.decode(ids, skip_special_tokens=skip)
        if clean_up:
            for a, b in CLEAN_UP:
                text = text.replace(a, b)
        if "nfc-output" in self.bugs:
            text = unicodedata.normalize("NFC", text)
        if "rstrip-newlines" in self.bugs:
            text = text.rstrip("\r\n")
        return text

    # --- stream ------------------------------------------------------------------------------
    def _text(self, ids: list[int], skip: bool) -> str:
        return self.tok.decode(ids, skip_special_tokens=skip)

    def _bytes(self, ids: list[int], skip: bool) -> bytes:
        return b"".join(self.piece(i) or b"" for i in ids if not (skip and i in self.special))

    def stream(self, ids: list[int], prompt: int, skip: bool) -> list[str]:
        if "flush-at-4-bytes" in self.bugs:
            deltas = self._stream_bytes(ids, prompt, skip)
        else:
            deltas = self._stream_text(ids, prompt, skip)
        if "last-delta-twice" in self.bugs and deltas:
            last = next((d for d in reversed(deltas) if d), "")
            deltas[-1] += last
        return deltas

    def _sent_of_prompt(self, ids: list[int], prompt: int, skip: bool) -> str:
        """The text of the prompt that counts as sent: all of it, less a character it began."""
        if not prompt:
            return ""
        text = self._text(ids[:prompt], skip)
        if not unfinished_tail(self._bytes(ids[:prompt], skip)):
            return text
        later = text
        for k in range(prompt + 1, len(ids) + 1):
            later = self._text(ids[:k], skip)
            if not later.endswith("\ufffd"):
                return common_prefix(text, later)
        # never completed: drop the replacement characters the unfinished character made
        drop = 1
        if self.byte_fallback and not self.byte_level:
            drop = unfinished_tail(self._bytes(ids[:prompt], skip))
        while drop and text.endswith("\ufffd"):
            text, drop = text[:-1], drop - 1
        return text

    def _stream_text(self, ids: list[int], prompt: int, skip: bool) -> list[str]:
        sent = self._sent_of_prompt(ids, prompt, skip)
        deltas: list[str] = []
        for k in range(prompt, len(ids)):
            full = self._text(ids[:k + 1], skip)
            last = k == len(ids) - 1
            if (full.endswith("\ufffd") and not last) or not full.startswith(sent):
                deltas.append("")
                continue
            deltas.append(full[len(sent):])
            sent = full
        return deltas

    def _stream_bytes(self, ids: list[int], prompt: int, skip: bool) -> list[str]:
        """flush-at-4-bytes: a byte buffer that flushes at 4 bytes, whole character or not."""
        head = self._bytes(ids[:prompt], skip)
        tail = unfinished_tail(head)
        buf = head[len(head) - tail:] if tail else b""
        deltas: list[str] = []
        for k in range(prompt, len(ids)):
            if not (skip and ids[k] in self.special):
                buf += self.piece(ids[k]) or b""
            if k == len(ids) - 1 or len(buf) >= 4:
                deltas.append(buf.decode("utf-8", errors="replace"))
                buf = b""
                continue
            cut = len(buf) - unfinished_tail(buf)
            deltas.append(buf[:cut].decode("utf-8", errors="replace"))
            buf = buf[cut:]
        return deltas

    # --- pieces ------------------------------------------------------------------------------
    def piece(self, i: int) -> bytes | None:
        if i in self._pieces:
            return self._pieces[i]
        token = self.tok.id_to_token(i)
        if token is None:
            out = None
        elif self.byte_level:
            if all(c in GLYPHS for c in token):
                out = bytes(GLYPHS[c] for c in token)
            else:
                out = token.encode("utf-8")
        else:
            m = HEX_BYTE.fullmatch(token) if self.byte_fallback else None
            if m:
                out = bytes([int(m.group(1), 16)])
            else:
                for a, b in self.replaces:
                    token = token.replace(a, b)
                out = token.encode("utf-8")
        self._pieces[i] = out
        return out

    def pieces(self) -> list[str | None]:
        out: list[str | None] = []
        for i in range(self.size):
            b = self.piece(i)
            if b is not None and "invalid-alone-null" in self.bugs:
                try:
                    b.decode("utf-8")
                except UnicodeDecodeError:
                    b = None
            out.append(None if b is None else b.hex())
        return out


def answer(eng: Engine, req: dict) -> dict:
    op = req.get("op")
    if op == "encode":
        return {"ids": eng.encode(req["text"], bool(req.get("add_special")), bool(req.get("parse_special")))}
    if op == "decode":
        if req.get("spaces_between_specials") or req.get("remove_special"):
            return {"error": "this engine has no such decode setting"}
        return {"text": eng.decode(list(req["ids"]), bool(req.get("skip_special")), req.get("clean_up_spaces"))}
    if op == "stream":
        if req.get("step", 1) != 1:
            return {"error": "only step 1 is answered"}
        return {"deltas": eng.stream(list(req["ids"]), int(req.get("prompt", 0)), bool(req.get("skip_special")))}
    if op == "pieces":
        return {"pieces": eng.pieces()}
    return {"error": f"unsupported op {op!r}"}


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("tokenizer_json")
    ap.add_argument("--bug", action="append", choices=BUGS, default=[])
    args = ap.parse_args()
    eng = Engine(os.path.abspath(args.tokenizer_json), set(args.bug))
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
