"""Token pieces as a reader reads them: the text each piece stands for, whitespace made visible.

A vocabulary stores pieces in its own spelling. SentencePiece writes a space as ``▁``; byte-level
BPE (GPT-2, Llama 3, Qwen) writes every byte through GPT-2's byte-to-unicode table, so the piece
for `` Việt`` is ``ĠViá»ĩt``. The write-up shows what the piece means instead:

    >>> readable("▁Việt", "spm"), readable("ĠViá»ĩt", "byte-level"), readable("<0x20>", "spm")
    ('␣Việt', '␣Việt', '<0x20>')

A byte-level piece that holds part of a character (``á»`` is two of the three bytes of ``ệ``)
shows those bytes as ``<0xE1><0xBB>``, the way SentencePiece's byte pieces are written; byte
pieces and special tokens stay as they are. The stored spelling is kept beside (a tooltip in
the HTML), since a reader debugging a vocabulary must see it too.

The reports do not have the vocabulary at hand (``tokparity explain`` reads a finished run
folder), so the spelling is recognised from the pieces themselves: ``piece_style``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from tokparity.textview import visible
from tokparity.vocab.token_bytes import SPACE_MARK, gpt2_unicode_to_byte

SPM, BYTE_LEVEL, PLAIN = "spm", "byte-level", "plain"
_ANGLED = re.compile(r"<[^<>]*>\Z")  # <0x20>, <unk>, <|endoftext|>: kept as they are
# GPT-2's table sends the 68 bytes that are not printable Latin-1 to U+0100 onwards (Ġ is the
# space, Ċ the newline): pieces holding one are byte-level, whatever else they hold.
_REMAPPED = frozenset(chr(c) for c in range(0x100, 0x144))


def piece_style(pieces: Iterable[str]) -> str:
    """``spm`` when a piece holds ``▁`` (SentencePiece, and the WordPiece vocabularies of
    llama.cpp's GGUFs, which mark a word's start with it); ``byte-level`` when every piece is spelled in GPT-2's
    byte alphabet and some piece holds a remapped byte (``Ġ``, ``Ċ``, …); else ``plain``
    (WordPiece, or too little to tell: shown as stored)."""
    table = gpt2_unicode_to_byte()
    remapped, in_table = False, True
    for piece in pieces:
        if SPACE_MARK in piece:
            return SPM
        if _ANGLED.match(piece):
            continue
        if in_table and not all(ch in table for ch in piece):
            in_table = False  # a character no byte maps to: not byte-level (still spm if a ▁ shows up)
        remapped = remapped or any(ch in _REMAPPED for ch in piece)
    return BYTE_LEVEL if remapped and in_table else PLAIN


def readable(piece: str, style: str) -> str:
    """The text ``piece`` stands for, whitespace and control characters made visible."""
    if _ANGLED.match(piece):
        return piece
    if style == SPM:
        return visible(piece.replace(SPACE_MARK, " "))
    if style == BYTE_LEVEL:
        table = gpt2_unicode_to_byte()
        try:
            raw = bytes(table[ch] for ch in piece)
        except KeyError:  # an added token spelled in plain text
            return visible(piece)
        return visible_bytes(raw)
    return visible(piece)


def visible_bytes(raw: bytes) -> str:
    """UTF-8 bytes as text; bytes that are not (all of) a character as ``<0xNN>``."""
    text = raw.decode("utf-8", "surrogateescape")
    return "".join(f"<0x{ord(ch) - 0xDC00:02X}>" if 0xDC80 <= ord(ch) <= 0xDCFF else visible(ch) for ch in text)
