"""A deliberately buggy BERT WordPiece engine: hand-written character tables.

Written for tokparity's test suite from bug descriptions only (see README.md beside it).

    python wpm_tables.py MODEL.gguf [--punct-table] [--control-table] [--space-table] [--cjk-narrow]

It speaks tokparity's ``cmd:`` protocol (one JSON request per line on stdin, one JSON reply per
line on stdout, in order, flushed after each). Only ``encode`` is answered; every other op gets
``{"error": ..., "status": "skipped"}``. The vocabulary is read with ``tokparity.vocab``; the
rest is the Python standard library (``unicodedata``).

With no flag it is the bug-free twin: uncased BERT as llama.cpp runs it (``llm_tokenizer_wpm``):

* each code point is replaced by the first code point of its canonical decomposition (NFD), then
  looked up: a whitespace character (llama.cpp's 25: ``\\t \\n \\v \\f \\r``, space, U+0085,
  U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000) ends the word; NUL,
  U+FFFD, a character of general category C (Cc, Cf, Cs, Co) and a combining mark (M) are
  dropped; a punctuation character (P), an ASCII symbol (S below U+007F) or a CJK ideograph is a
  word of its own; anything else is lower-cased (one code point: İ gives i) and kept in its word;
* each word gets a ``▁`` in front and is cut greedily, longest vocabulary token first; a word
  with a position no token matches is one ``[UNK]``;
* ``add_special`` puts ``[CLS]`` before and ``[SEP]`` after; with ``parse_special`` the text of a
  control token (``[CLS]``, ``[MASK]``, ...) is that token; a user-defined token's text always is.

``unicodedata`` is Unicode 14.0 on Python 3.11; llama.cpp's tables are newer. The characters that
Unicode 15.0 added with a category other than letter (Kawi's marks and digits, the Egyptian
hieroglyph format controls, a few symbols and marks) are listed in ``UNICODE_15`` so the twin
reads them as llama.cpp does.

The flags (each one a bug of its own; they combine)
---------------------------------------------------
``--punct-table``
    Punctuation is a hand-written list instead of general category P: ASCII punctuation
    (C's ``ispunct``), General Punctuation U+2010-U+2027 and U+2030-U+205E, and the CJK
    brackets and marks U+3001-U+3003, U+3008-U+3011. A C/C++ port without a Unicode library
    writes down the ranges it has seen in English and Chinese text (dashes, curly quotes, the
    ideographic comma and full stop, corner brackets) and stops there. Everything else that
    BERT splits off stays inside its word: « » ‹ › ¿ ¡ · § ¶, the Devanagari danda ।, the
    Arabic comma ، and question mark ؟, the Armenian and Ethiopic full stops, the full-width
    ！ ， ？ (U+FF01...), the Japanese 〜 and ・, and so on. The list
    also splits off the two math symbols inside U+2030-U+205E (⁄ U+2044, ⁒ U+2052), which
    BERT keeps in the word (non-ASCII symbols are not punctuation to it).
``--control-table``
    Control characters are a hand-written list instead of general category C: U+0000-U+001F
    (tab, newline and carriage return are spaces), U+007F-U+009F, the zero-width space, ZWNJ,
    ZWJ (U+200B-U+200D) and the byte-order mark U+FEFF: the "invisible characters" a port
    writer knows from HTML scraping. The other format characters (soft hyphen U+00AD, LRM/RLM
    U+200E/U+200F, word joiner and invisible operators U+2060-U+2064, the bidi embeddings
    U+202A-U+202E, isolates U+2066-U+2069, Arabic U+0600-U+0605, ...), private-use characters
    and surrogates are kept in their word as letters, so ``co\\u00adop`` is one word ``co­op``
    (usually ``[UNK]``) instead of ``coop``.
``--space-table``
    Whitespace is C's idea of it as the writer remembers it: ``' '``, ``'\\t'``, ``'\\n'``,
    ``'\\r'``. U+000B, U+000C and U+0085 fall through to the control test and are dropped
    (joining the words around them); U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F,
    U+205F and U+3000 are kept inside the word (``a\\u00a0b`` is one word, usually ``[UNK]``).
    The no-break space of HTML and the ideographic space of Japanese and Chinese text are the
    common victims.
``--cjk-narrow``
    The CJK ideograph test is only the URO block, U+4E00-U+9FFF, the range every CJK tutorial
    quotes. Extension A (U+3400-U+4DBF), the compatibility ideographs (U+F900-U+FAFF, U+2F800-
    U+2FA1F) and extensions B-F in plane 2 are not split off: a run of them stays one word
    (with its neighbours, if they are letters), which is then usually one ``[UNK]``.
"""

from __future__ import annotations

import argparse
import json
import string
import sys
import unicodedata

from tokparity.vocab import load_vocab
from tokparity.vocab.model import TokenType

SPACE_MARK = "\u2581"

# llama.cpp's whitespace (its ``unicode_set_whitespace``): 25 code points.
WHITESPACE = frozenset(map(chr, [
    0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B),
    0x2028, 0x2029, 0x202F, 0x205F, 0x3000]))

# Unicode 15.0 additions that are not letters (first, last, category), for Python's Unicode 14.
UNICODE_15 = [
    (0x0CF3, 0x0CF3, "Mc"), (0x0ECE, 0x0ECE, "Mn"), (0x10EFD, 0x10EFF, "Mn"),
    (0x11241, 0x11241, "Mn"), (0x11B00, 0x11B09, "Po"), (0x11F00, 0x11F01, "Mn"),
    (0x11F03, 0x11F03, "Mn"), (0x11F34, 0x11F35, "Mc"), (0x11F36, 0x11F3A, "Mn"),
    (0x11F3E, 0x11F3F, "Mc"), (0x11F40, 0x11F40, "Mn"), (0x11F41, 0x11F41, "Mc"),
    (0x11F42, 0x11F42, "Mn"), (0x11F43, 0x11F4F, "Po"), (0x11F50, 0x11F59, "Nd"),
    (0x13430, 0x1343F, "Cf"), (0x13440, 0x13440, "Mn"), (0x13447, 0x13455, "Mn"),
    (0x1D2C0, 0x1D2D3, "No"), (0x1E030, 0x1E06D, "Lm"), (0x1E08F, 0x1E08F, "Mn"),
    (0x1E4EC, 0x1E4EF, "Mn"), (0x1E4F0, 0x1E4F9, "Nd"), (0x1F6DC, 0x1F6DC, "So"),
    (0x1F774, 0x1F776, "So"), (0x1F77B, 0x1F77F, "So"), (0x1F7D9, 0x1F7D9, "So"),
    (0x1FA75, 0x1FA77, "So"), (0x1FA87, 0x1FA88, "So"), (0x1FAAD, 0x1FAAF, "So"),
    (0x1FABB, 0x1FABD, "So"), (0x1FABF, 0x1FABF, "So"), (0x1FACE, 0x1FACF, "So"),
    (0x1FADA, 0x1FADB, "So"), (0x1FAE8, 0x1FAE8, "So"), (0x1FAF7, 0x1FAF8, "So"),
    (0x2FFC, 0x2FFF, "So"), (0x31EF, 0x31EF, "So"),
]

# --- the hand-written tables of the flags ------------------------------------------------------

TABLE_PUNCT = frozenset(string.punctuation) | frozenset(
    chr(cp) for lo, hi in ((0x2010, 0x2027), (0x2030, 0x205E), (0x3001, 0x3003), (0x3008, 0x3011))
    for cp in range(lo, hi + 1))
TABLE_CONTROL = frozenset(chr(cp) for cp in [*range(0x00, 0x20), *range(0x7F, 0xA0),
                                             0x200B, 0x200C, 0x200D, 0xFEFF]) - frozenset("\t\n\r")
TABLE_SPACE = frozenset(" \t\n\r")

# kinds of a character
WORD, SPACE, DROP, ALONE = 0, 1, 2, 3


def category(cp: int) -> str:
    cat = unicodedata.category(chr(cp))
    if cat == "Cn":
        for lo, hi, new in UNICODE_15:
            if lo <= cp <= hi:
                return new
    return cat


def is_chinese_char(cp: int, narrow: bool) -> bool:
    if narrow:
        return 0x4E00 <= cp <= 0x9FFF
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B920 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


class Reader:
    """How each character is read: (kind, text to append)."""

    def __init__(self, punct_table: bool, control_table: bool, space_table: bool, cjk_narrow: bool):
        self.punct_table = punct_table
        self.control_table = control_table
        self.space_table = space_table
        self.cjk_narrow = cjk_narrow
        self.memo: dict[str, tuple[int, str]] = {}

    def read(self, ch: str) -> tuple[int, str]:
        got = self.memo.get(ch)
        if got is None:
            got = self.memo[ch] = self._read(ch)
        return got

    def _read(self, ch: str) -> tuple[int, str]:
        c = unicodedata.normalize("NFD", ch)[0] if not 0xD800 <= ord(ch) <= 0xDFFF else ch
        cp = ord(c)
        cat = category(cp)
        if c in TABLE_SPACE if self.space_table else c in WHITESPACE:
            return SPACE, ""
        if cp == 0 or cp == 0xFFFD:
            return DROP, ""
        if c in TABLE_CONTROL if self.control_table else cat[0] == "C" and cat != "Cn":
            return DROP, ""
        if cat[0] == "M":
            return DROP, ""
        low = c.lower()[0]  # İ (NFD: I) is i anyway; no other character lowers to two
        if self.punct_table:
            alone = c in TABLE_PUNCT
        else:
            alone = cat[0] == "P" or (cp < 0x7F and cat[0] == "S")
        if alone or is_chinese_char(cp, self.cjk_narrow):
            return ALONE, low
        return WORD, low

    def words(self, text: str) -> list[str]:
        words = [""]
        for ch in text:
            kind, s = self.read(ch)
            if kind == SPACE:
                if words[-1]:
                    words.append("")
            elif kind == ALONE:
                if words[-1]:
                    words.append("")
                words[-1] = s
                words.append("")
            elif kind == WORD:
                words[-1] += s
        return [w for w in words if w]


class Engine:
    def __init__(self, path: str, reader: Reader):
        vocab = load_vocab(path)
        self.reader = reader
        self.ids = {}
        for i, tok in enumerate(vocab.tokens):
            self.ids.setdefault(tok, i)
        self.max_len = max(len(t) for t in vocab.tokens)
        special = vocab.special_ids
        self.unk = special.get("unk", self.ids.get("[UNK]"))
        self.cls = special.get("cls", self.ids.get("[CLS]"))
        self.sep = special.get("sep", self.ids.get("[SEP]"))
        types = vocab.token_types or [TokenType.NORMAL] * len(vocab.tokens)
        self.control = {t: i for i, t in enumerate(vocab.tokens) if types[i] == TokenType.CONTROL and t}
        self.user = {t: i for i, t in enumerate(vocab.tokens) if types[i] == TokenType.USER_DEFINED and t}

    def wordpiece(self, word: str, out: list[int]) -> None:
        text = SPACE_MARK + word
        start = len(out)
        i = 0
        while i < len(text):
            for j in range(min(len(text), i + self.max_len), i, -1):
                tid = self.ids.get(text[i:j])
                if tid is not None:
                    out.append(tid)
                    i = j
                    break
            else:
                del out[start:]
                out.append(self.unk)
                return

    def fragments(self, text: str, parse_special: bool) -> list[str | int]:
        specials = dict(self.user)
        if parse_special:
            specials.update(self.control)
        frags: list[str | int] = [text]
        # longest special texts first, as llama.cpp's partition does
        for tok in sorted(specials, key=len, reverse=True):
            new: list[str | int] = []
            for f in frags:
                if isinstance(f, int) or tok not in f:
                    new.append(f)
                    continue
                parts = f.split(tok)
                for k, p in enumerate(parts):
                    if k:
                        new.append(specials[tok])
                    if p:
                        new.append(p)
            frags = new
        return frags

    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        out: list[int] = []
        if add_special and self.cls is not None:
            out.append(self.cls)
        for frag in self.fragments(text, parse_special):
            if isinstance(frag, int):
                out.append(frag)
                continue
            for word in self.reader.words(frag):
                self.wordpiece(word, out)
        if add_special and self.sep is not None:
            out.append(self.sep)
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("gguf")
    parser.add_argument("--punct-table", action="store_true")
    parser.add_argument("--control-table", action="store_true")
    parser.add_argument("--space-table", action="store_true")
    parser.add_argument("--cjk-narrow", action="store_true")
    args = parser.parse_args()
    engine = Engine(args.gguf, Reader(args.punct_table, args.control_table, args.space_table, args.cjk_narrow))
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        rid = req.get("id")
        if req.get("op") == "encode":
            try:
                ids = engine.encode(req["text"], bool(req.get("add_special")), bool(req.get("parse_special")))
                reply = {"id": rid, "ids": ids}
            except Exception as e:  # noqa: BLE001 - one case's failure is that case's crash
                reply = {"id": rid, "error": f"{type(e).__name__}: {e}", "status": "error"}
        else:
            reply = {"id": rid, "error": f"op {req.get('op')!r} not supported", "status": "skipped"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
