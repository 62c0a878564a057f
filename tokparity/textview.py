"""Make whitespace and control characters visible, as pytest does in its diffs.

    >>> visible("a b\\tc\\n")
    'a␣b→c↵'
    >>> visible("\\x00\\u200d")
    '<0x00><U+200D>'

``▁`` (SentencePiece's space mark) and ``Ġ`` (GPT-2's) are kept as they are: they are what the
vocabulary stores, and a reader of token pieces must see them.
"""

from __future__ import annotations

import os
import re
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


# What could end or rewrite a line where one line of text is printed or rendered: C0 controls
# (CR makes a Markdown heading of what follows, ESC drives a terminal), DEL, C1 controls (NEL
# is a newline to some readers), the line and paragraph separators, the bidirectional controls
# (they reorder what a terminal shows of the rest of the line), and lone surrogates (which no
# UTF-8 file or terminal can take). Tab and newline become a space there.
_LINE_BREAKERS = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")


def single_line(text: object) -> str:
    """``text`` safe for one line of a terminal, a log or a Markdown cell: tab and newline
    become a space, every other character that could break or rewrite the line is spelled
    out (``\\r`` → ``␍``, ESC → ``<0x1B>``, U+2028 → ``<U+2028>``); the rest is unchanged."""
    text = str(text)
    if not _LINE_BREAKERS.search(text):
        return text
    return _LINE_BREAKERS.sub(lambda m: " " if m.group() in "\t\n" else visible_char(m.group()), text)


class _VisibleTable(dict):
    """``visible_char`` of each code point, made the first time ``str.translate`` asks for it."""

    def __missing__(self, point: int) -> str:
        if len(self) >= 65_536:  # (a bound on what a long fuzz run of random code points keeps)
            self.clear()
        self[point] = shown = visible_char(chr(point))
        return shown


_VISIBLE = _VisibleTable()


def visible(text: str) -> str:
    """Spaces, tabs, newlines, control and format characters spelled out; the rest unchanged."""
    return text.translate(_VISIBLE)


def shown_path(path: str | os.PathLike) -> str:
    """A path as a message, a label or a UTF-8 file can hold it: a file name that is not UTF-8
    (kept by Python as lone surrogates) is shown with its bytes escaped, e.g. ``\\xff.jsonl``, and
    a character that could break or rewrite the line is spelled out (a newline in a file name would
    forge a second line of a message)."""
    text = os.fsencode(path).decode("utf-8", "backslashreplace")
    return _LINE_BREAKERS.sub(lambda m: visible_char(m.group()), text) if _LINE_BREAKERS.search(text) else text


def clipped(value: object, limit: int = 80) -> str:
    """A value for a one-line message: its ``repr`` (which escapes what could break the line), cut
    after about ``limit`` characters; a long list or dict only counted; a ``__repr__`` that fails
    (a user's object) as its type."""
    if isinstance(value, (list, dict)) and len(value) > 8:
        return f"a {type(value).__name__} of {len(value)} items"
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[:limit] + "…"


def without_surrogates(text: str) -> str:
    """``text`` with each lone surrogate written out as its escape (``"\\udc80"``): an engine's
    JSON, or an exception's message, can hold one, and UTF-8 (the journal, the reports) cannot."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def message_of(e: BaseException) -> str:
    """An exception's message. An engine's exception whose ``__str__`` raises still gets one."""
    try:
        return str(e)
    except Exception:
        return "(its message could not be read: its __str__ raised)"
