"""Byte-level BPE as llama.cpp runs it (``llm_tokenizer_bpe_session``), and Gemma 4's variant.

One word at a time (the pre-tokenizer made the words):

1. The word is spelled as symbols, one per character. For byte-level BPE the word was first
   rewritten with GPT-2's byte-to-unicode map, so one character stands for one byte.
2. Every adjacent pair that the merge list knows is a candidate; the candidate with the
   lowest *rank* (position in the merge list) is merged first, the leftmost one on ties.
   The new symbol forms new pairs with its neighbours, and so on until no pair is known.
3. Each final symbol is looked up in the vocabulary. A symbol with no id (rare: the merge
   list and the vocabulary disagree) falls back to one token per byte.

Worked example, merges ``[("a", "b"), ("b", "c"), ("ab", "c")]``::

    "abc" -> [a, b, c]   pairs (a,b) rank 0, (b,c) rank 1 -> merge (a,b)
          -> [ab, c]     pair (ab,c) rank 2 -> merge
          -> [abc]

Options the model sets (``PreType`` in pretokenize.py):

* ``ignore_merges`` (Llama 3): a word that already is a token is emitted whole, merges or not.
* Gemma 4 (``byte_encode=False``): symbols are raw code points (spaces already turned into
  ``▁``), bytes fall back to ``<0xNN>`` pieces, and a word made only of newlines that is a
  token is kept whole.

Ties: two candidates of equal priority (the same pair twice, "aaa" with the merge ``(a, a)``;
in SentencePiece BPE, two pieces of equal score) are merged leftmost first by every library.
``RightmostFirst`` (a switch for tokparity.diagnose, never set by a model) breaks them the other
way, which is how a diagnosis proves that a backend's segmentation is a tie, not a bug.
"""

from __future__ import annotations

import heapq
from collections.abc import Collection
from dataclasses import dataclass, field


class RightmostFirst(dict):
    """Merge priorities (pair -> rank, or piece -> score for spm.py) whose equal-priority
    candidates are merged rightmost first instead of leftmost first. The priorities are the
    model's own; only the order among equals changes."""


class AnyJoin(dict):
    """Merge priorities with no merge list: every pair whose join is one of ``tokens`` ranks alike
    (0), so the leftmost such pair merges first. (fastllm read GGUF vocabularies so: every token of
    score 1.0, and no merges.)"""

    def __init__(self, tokens: Collection[str]):
        super().__init__()
        self.tokens = tokens

    def __contains__(self, pair: object) -> bool:
        return isinstance(pair, tuple) and len(pair) == 2 and pair[0] + pair[1] in self.tokens

    def __getitem__(self, pair: tuple[str, str]) -> int:
        if pair not in self:
            raise KeyError(pair)
        return 0

    def get(self, pair, default=None):  # type: ignore[override]
        return 0 if pair in self else default

    def __bool__(self) -> bool:
        return bool(self.tokens)


def _side(priorities: dict) -> int:
    """+1: ties to the leftmost candidate (every library); -1: to the rightmost."""
    return -1 if isinstance(priorities, RightmostFirst) else 1


# A trace shows the symbols after its first merges only: kept for each merge, they would need
# memory quadratic in a long word (a line of 100,000 characters).
TRACED_STEPS = 200
# A word traced takes the readable merge loop, whose time is quadratic: a longer word is encoded
# by the heap loop and its merges are not traced.
TRACED_WORD = 1_000  # characters


@dataclass
class MergeStep:
    """One merge of a trace: the pair, its rank and the symbols after it."""

    left: str
    right: str
    rank: int
    symbols: list[str]


@dataclass
class BpeResult:
    symbols: list[str]
    steps: list[MergeStep] = field(default_factory=list)


class Without(dict):
    """Merge priorities with some pairs left out, the others' ranks kept: an engine that lost lines
    of its merge list (a reader that skips a first ``#version`` line it never checks for).

        >>> merge_word(["a", "b", "c"], Without({("a", "b"): 0, ("b", "c"): 1}, [("a", "b")])).symbols
        ['a', 'bc']
    """

    def __init__(self, ranks: dict, left_out: Collection[tuple[str, str]]):
        super().__init__()
        self.ranks, self.left_out = ranks, frozenset(left_out)

    def __contains__(self, pair: object) -> bool:
        return pair not in self.left_out and pair in self.ranks

    def __getitem__(self, pair: tuple[str, str]) -> int:
        if pair in self.left_out:
            raise KeyError(pair)
        return self.ranks[pair]

    def get(self, pair, default=None):  # type: ignore[override]
        return default if pair in self.left_out else self.ranks.get(pair, default)

    def __iter__(self):
        return (pair for pair in self.ranks if pair not in self.left_out)

    def __len__(self) -> int:
        return len(self.ranks) - sum(pair in self.ranks for pair in self.left_out)

    def keys(self):  # type: ignore[override]  # (what dict() and a copy read: not the empty storage)
        return list(self)

    def items(self):  # type: ignore[override]
        return [(pair, self.ranks[pair]) for pair in self]

    def values(self):  # type: ignore[override]
        return [self.ranks[pair] for pair in self]


def merge_word(symbols: list[str], ranks: dict[tuple[str, str], int], trace: bool = False) -> BpeResult:
    """Merge one word's symbols by rank (the readable loop: O(n²), fine for words).

    ``merge_word(["a", "b", "c"], {("a", "b"): 0, ("ab", "c"): 1}).symbols == ["abc"]``
    """
    symbols = list(symbols)
    steps: list[MergeStep] = []
    side = _side(ranks)
    while len(symbols) > 1:
        # The known pair with the lowest rank; min() keeps the leftmost on ties (the rightmost
        # when the positions are negated).
        candidates = [(ranks[pair], side * i) for i, pair in enumerate(zip(symbols, symbols[1:])) if pair in ranks]
        if not candidates:
            break
        rank, at = min(candidates)
        i = side * at
        left, right = symbols[i], symbols[i + 1]
        symbols[i:i + 2] = [left + right]
        if trace:
            steps.append(MergeStep(left, right, rank, list(symbols) if len(steps) < TRACED_STEPS else []))
    return BpeResult(symbols, steps)


def merge_word_heap(symbols: list[str], ranks: dict[tuple[str, str], int]) -> list[str]:
    """The same merges with llama.cpp's data structures: a linked list of symbols and a
    priority queue of (rank, left position) pairs, stale entries skipped when popped.
    O(n log n), which matters for Gemma 4, whose words are whole lines.

    Equivalent to ``merge_word``: a queued pair is valid only while both its symbols still
    exist unchanged and are adjacent, so each pop is the lowest-rank, leftmost current pair.
    """
    n = len(symbols)
    if n < 2:
        return list(symbols)
    text = list(symbols)
    prev = list(range(-1, n - 1))
    nxt = list(range(1, n + 1))
    nxt[-1] = -1
    queue: list[tuple[int, int, int, str]] = []  # (rank, ±left, right, merged text)
    side = _side(ranks)

    def push(left: int, right: int) -> None:
        if left < 0 or right < 0:
            return
        rank = ranks.get((text[left], text[right]))
        if rank is not None:
            heapq.heappush(queue, (rank, side * left, right, text[left] + text[right]))

    for i in range(n - 1):
        push(i, i + 1)
    while queue:
        rank, at, right, merged = heapq.heappop(queue)
        left = side * at
        if not text[left] or not text[right] or nxt[left] != right or text[left] + text[right] != merged:
            continue  # stale: one side was merged into something else since
        text[left], text[right] = merged, ""
        nxt[left] = nxt[right]
        if nxt[right] >= 0:
            prev[nxt[right]] = left
        push(prev[left], left)
        push(left, nxt[left])
    return [t for t in text if t]
