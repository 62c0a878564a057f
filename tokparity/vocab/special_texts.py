"""Where a vocabulary's special-token texts occur in a text.

A vocabulary may hold thousands of them (Gemma 3 has 6,252, nearly all starting with ``<``), and a
hostile file a million: looking for each in turn costs the text's length times their number, and
one alternation of them all costs as much in Python's ``re`` (it tries each branch at each
position). Here each position that holds a special text's first character looks its next ``L``
characters up in a set, for each length ``L`` some special text starting with that character has:
the cost is, at most, the text's length times the sum of those distinct lengths (each look-up
hashes ``L`` characters), bounded by the texts' total size and not by their number. A million
tokens ``<tok_N>`` have seven lengths; a file whose special texts have every length up to a
thousand makes each ``<`` of a text cost half a million characters hashed.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator


class SpecialTextFinder:
    """The special texts ``texts`` (empty ones left out), found in a text."""

    def __init__(self, texts: Iterable[str]):
        self.texts = frozenset(t for t in texts if t)
        lengths: dict[str, set[int]] = {}
        for text in self.texts:
            lengths.setdefault(text[0], set()).add(len(text))
        # by first character, the lengths longest first (so the first found at a position is the longest)
        self._lengths = {first: sorted(ls, reverse=True) for first, ls in lengths.items()}

    def __bool__(self) -> bool:
        return bool(self.texts)

    def _at(self, text: str) -> Iterator[tuple[int, str]]:
        """Every occurrence (overlapping ones too), by position, the longest first at each."""
        lengths, texts, n = self._lengths, self.texts, len(text)
        # (a few first characters are each looked for in the text; many, by the text's own set)
        starts = [c for c in lengths if c in text] if len(lengths) <= 64 else list(lengths.keys() & set(text))
        if not starts:
            return
        # (str.find runs in C: a long text is not walked a character at a time; merged lazily, so
        # ``holds`` stops at the first special text)
        for p in heapq.merge(*(_positions(text, first) for first in starts)):
            for length in lengths[text[p]]:
                if p + length <= n and text[p:p + length] in texts:
                    yield p, text[p:p + length]

    def holds(self, text: str) -> bool:
        """Whether ``text`` holds any of the special texts."""
        return next(self._at(text), None) is not None

    def present(self, text: str) -> list[str]:
        """The special texts ``text`` holds (each once, overlapping ones too), longest first."""
        return sorted({found for _, found in self._at(text)}, key=lambda t: (-len(t), t))

    def find(self, text: str) -> list[tuple[int, str]]:
        """Where ``text`` writes special texts, leftmost and longest first, none overlapping
        (as a tokenizer that parses special-token text finds them): ``[(position, text), …]``."""
        found: list[tuple[int, str]] = []
        end = 0
        for p, special in self._at(text):
            if p >= end:
                found.append((p, special))
                end = p + len(special)
        return found


def _positions(text: str, char: str) -> Iterator[int]:
    """Where ``char`` stands in ``text``, in order."""
    p = text.find(char)
    while p >= 0:
        yield p
        p = text.find(char, p + 1)
