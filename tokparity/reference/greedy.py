"""Greedy longest match: the segmentation of the Gemma 3 write-up's engine, kept as a reference.

No tokenizer of the zoo segments this way (WordPiece aside, which has its own ``##`` rules in
wpm.py); engines that port a SentencePiece or BPE vocabulary in a hurry often do. It is here so
that a diagnosis can *reproduce* such an engine (``model.greedy-longest-match`` in
``tokparity.diagnose``): at every position take the longest vocabulary piece that starts
there; a position no piece starts at is one symbol of its own, which the caller spells out as
byte pieces or ``<unk>`` as its pipeline does for any symbol outside the vocabulary.

    >>> LongestMatch({"▁": 1, "▁a": 2, "ab": 3, "b": 4}).split("▁ab")
    ['▁a', 'b']

SentencePiece's merges would have given ``['▁', 'ab']`` for scores that favour ``ab``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol


class Segmenter(Protocol):
    """A segmentation a pipeline's ``greedy`` switch runs in place of its model's: this module's
    longest match, or backtracking.Backtracking."""

    def split(self, text: str) -> list[str]:
        """``text`` as pieces; a character the segmentation cannot take is one of its own (for the
        pipeline's fallback: its bytes' pieces or the unknown token)."""


class LongestMatch:
    """The pieces greedy matching may take, and the split."""

    def __init__(self, pieces: Iterable[str]):
        self.pieces = {p for p in pieces if p}
        self.max_len = max((len(p) for p in self.pieces), default=1)

    def length_at(self, text: str, pos: int, end: int | None = None) -> int:
        """The length of the longest piece that starts at ``pos`` of ``text`` and ends by ``end``
        (the text's end: None); 0: none does."""
        end = len(text) if end is None else end
        return next((n for n in range(min(self.max_len, end - pos), 0, -1) if text[pos:pos + n] in self.pieces), 0)

    def split(self, text: str) -> list[str]:
        out: list[str] = []
        pos = 0
        while pos < len(text):
            n = self.length_at(text, pos) or 1  # no piece starts here: one code point, for the caller's fallback
            out.append(text[pos:pos + n])
            pos += n
        return out
