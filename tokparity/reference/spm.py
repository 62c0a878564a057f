"""SentencePiece BPE ("SPM"): merging by the *score* of the merged piece.

Unlike byte-level BPE there is no merge list: any two adjacent symbols may merge if their
concatenation is a piece of the vocabulary, and the pair whose merged piece has the highest
score goes first (the leftmost on ties). This is llama.cpp's ``llm_tokenizer_spm_session``,
a port of SentencePiece's ``bpe_model.cc``.

1. The text (spaces already escaped to ``▁``) is split into symbols, one per code point,
   kept as a linked list.
2. Every adjacent pair whose concatenation is a piece goes into a priority queue keyed by
   that piece's score.
3. Pop the best pair; skip it if either symbol changed since; else merge the right symbol
   into the left one and queue the two new pairs the merged symbol forms with its neighbours.
4. Each final symbol is a piece -> its id. A symbol that is not a piece (a lone character
   outside the vocabulary) becomes one ``<0xNN>`` piece per UTF-8 byte (byte fallback).

Worked example, vocabulary ``▁ a b ▁a ab ▁ab`` with scores ``-1 -1 -1 -2 -1.5 -3``::

    "▁ab" -> [▁, a, b]    pairs: ▁a (-2), ab (-1.5)  -> merge ab (higher score)
          -> [▁, ab]      pairs: ▁ab (-3)            -> merge
          -> [▁ab]

SentencePiece itself adds two things llama.cpp does not (``flavour="sentencepiece"``):
user-defined pieces are matched whole first and never merged ("frozen"), and an UNUSED piece
formed by merging is split back into the two symbols it came from ("resegmentation").

Pieces of equal score are merged leftmost first (both libraries); ``score_of`` given as a
``bpe.RightmostFirst`` merges them rightmost first (a switch for tokparity.diagnose: ties).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from tokparity.reference.bpe import TRACED_STEPS, RightmostFirst


@dataclass
class SpmStep:
    left: str
    right: str
    score: float
    symbols: list[str]


@dataclass
class SpmMerge:
    """The outcome of the merge loop: final symbols, and how UNUSED pieces were formed."""

    symbols: list[str]
    rev_merge: dict[str, tuple[str, str]] = field(default_factory=dict)
    steps: list[SpmStep] = field(default_factory=list)


def spm_merge(symbols: list[str], score_of: dict[str, float], frozen: set[int] | None = None,
              trace: bool = False) -> SpmMerge:
    """Merge ``symbols`` (normally one per code point) by the score of the merged piece.

    ``score_of`` holds every piece that may be formed by a merge. ``frozen`` are positions
    of symbols that never merge (SentencePiece's user-defined pieces).
    """
    n = len(symbols)
    text = list(symbols)
    prev = list(range(-1, n - 1))
    nxt = list(range(1, n + 1))
    if n:
        nxt[-1] = -1
    frozen = frozen or set()
    rev_merge: dict[str, tuple[str, str]] = {}
    steps: list[SpmStep] = []
    # Max-heap on score, then min on the left position: store (-score, left, ...); the left
    # position negated for RightmostFirst (ties then go to the rightmost pair).
    queue: list[tuple[float, int, int, int]] = []
    side = -1 if isinstance(score_of, RightmostFirst) else 1

    def try_add(left: int, right: int) -> None:
        if left < 0 or right < 0 or left in frozen or right in frozen:
            return
        merged = text[left] + text[right]
        score = score_of.get(merged)
        if score is None:
            return
        heapq.heappush(queue, (-score, side * left, right, len(merged)))
        rev_merge[merged] = (text[left], text[right])  # the last way a piece was formed wins

    for i in range(1, n):
        try_add(i - 1, i)
    while queue:
        neg_score, at, right, size = heapq.heappop(queue)
        left = side * at
        # Stale if a side was merged away or grew since the pair was queued.
        if not text[left] or not text[right] or len(text[left]) + len(text[right]) != size:
            continue
        if trace:
            steps.append(SpmStep(text[left], text[right], -neg_score, []))
        text[left] += text[right]
        text[right] = ""
        nxt[left] = nxt[right]
        if nxt[right] >= 0:
            prev[nxt[right]] = left
        if trace and len(steps) <= TRACED_STEPS:
            steps[-1].symbols = [t for t in text if t]
        try_add(prev[left], left)
        try_add(left, nxt[left])
    return SpmMerge([t for t in text if t], rev_merge, steps)


def byte_piece(b: int) -> str:
    """``10 -> "<0x0A>"``: SentencePiece's spelling of a byte piece."""
    return f"<0x{b:02X}>"
