"""Make whitespace and control characters visible, as pytest does in its diffs.

    >>> visible("a b\\tc\\n")
    'a␣b→c↵'
    >>> visible("\\x00\\u200d")
    '<0x00><U+200D>'

``▁`` (SentencePiece's space mark) and ``Ġ`` (GPT-2's) are kept as they are: they are what the
vocabulary stores, and a reader of token pieces must see them.
"""

from __future__ import annotations

import unicodedata

_NAMED = {" ": "␣", "\t": "→", "\n": "↵", "\r": "␍", "\u00a0": "⍽", "\u3000": "<U+3000>"}


def visible_char(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    cat = unicodedata.category(ch)
    if cat == "Cc":
        return f"<0x{ord(ch):02X}>"
    if cat in ("Cf", "Zl", "Zp", "Zs", "Cs", "Co", "Cn"):
        return f"<U+{ord(ch):04X}>"
    return ch


def visible(text: str) -> str:
    """Spaces, tabs, newlines, control and format characters spelled out; the rest unchanged."""
    return "".join(visible_char(ch) for ch in text)
