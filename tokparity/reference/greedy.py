"""Greedy longest match: the segmentation of the Gemma 3 write-up's engine, kept as a reference,
and one Viterbi over the pieces' scores (``BestScore``), which some engines run on BPE models too.

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

from collections.abc import Callable, Iterable
from typing import Protocol


class Segmenter(Protocol):
    """A segmentation a pipeline's ``greedy`` switch runs in place of its model's: this module's
    longest match, or backtracking.Backtracking."""

    def split(self, text: str) -> list[str]:
        """``text`` as pieces; a character the segmentation cannot take is one of its own (for the
        pipeline's fallback: its bytes' pieces or the unknown token)."""


class Deferred:
    """A segmenter built at its first split. A candidate made for every mismatch's search may never
    encode a word: one whose build takes seconds should cost nothing until then."""

    def __init__(self, make: Callable[[], Segmenter]):
        self._make: Callable[[], Segmenter] | None = make
        self._built: Segmenter | None = None
        self._failed: Exception | None = None  # (a build that failed fails every split at once, not again)

    def split(self, text: str) -> list[str]:
        if self._failed is not None:
            raise self._failed.with_traceback(None)  # (each raise would add its frames to the last's)
        if self._built is None:
            assert self._make is not None
            try:
                self._built = self._make()
            except Exception as e:
                self._failed = e
                raise
            self._make = None
        return self._built.split(text)


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


class BestScore:
    """One Viterbi over the pieces' scores, as a unigram model segments: the pieces whose scores
    add up to the most. A character no piece covers scores the lowest score less 10, SentencePiece's
    penalty for an unknown piece. A run of such characters is one piece, as a unigram model gives one
    unknown id for it. Run on a BPE vocabulary, whose scores rank its merges, it is the segmentation
    of an engine that treats every model as a unigram one.

        >>> BestScore({"▁": -3.0, "a": -4.0, "b": -5.0, "▁a": -1.0, "ab": -6.0}).split("▁ab")
        ['▁a', 'b']
        >>> BestScore({"▁": -3.0, "a": -4.0, "b": -5.0, "▁a": -9.0, "ab": -6.0}).split("▁ab")
        ['▁', 'ab']
        >>> BestScore({"▁": -3.0, "a": -4.0}).split("▁xya")
        ['▁', 'xy', 'a']
    """

    def __init__(self, scores: dict[str, float]):
        self.scores = {p: s for p, s in scores.items() if p}
        self.max_len = max((len(p) for p in self.scores), default=1)
        self.unknown = min(self.scores.values(), default=0.0) - 10.0

    def split(self, text: str) -> list[str]:
        best = [0.0] + [float("-inf")] * len(text)  # the best score of text[:i]
        start = [0] * (len(text) + 1)  # where the last piece of that best segmentation starts
        for end in range(1, len(text) + 1):
            for begin in range(max(0, end - self.max_len), end):
                score = self.scores.get(text[begin:end])
                if score is None and begin == end - 1:
                    score = self.unknown
                # (of equal totals, the one found first: the longer last piece)
                if score is not None and best[begin] + score > best[end]:
                    best[end], start[end] = best[begin] + score, begin
        out: list[str] = []
        end = len(text)
        while end > 0:
            piece = text[start[end]:end]
            if out and piece not in self.scores and out[-1] not in self.scores:
                out[-1] = piece + out[-1]  # (a run of unknown characters is one unknown piece, as in a unigram model)
            else:
                out.append(piece)
            end = start[end]
        return out[::-1]
