"""Unigram ("UGM"): the segmentation with the highest total score, found by Viterbi.

Every piece has a score (a log probability). Over the normalized text, the best segmentation
ending at position ``j`` is the best, over every piece ``p`` that ends at ``j`` and starts at
``i``, of ``best[i] + score(p)``. Walk the text left to right; from each start position try
every piece that starts there (a trie walk) and improve the best path at its end:

    best[0] = 0
    for i in positions:                 # one code point at a time
        for piece starting at i:        # shortest first
            if best[i] + score(piece) > best[i + len(piece)]: remember (piece, i) there
        if no piece covers exactly the code point at i:
            the unknown piece does, with score min(score) - 10 (the unknown penalty)
    backtrack from the end

Strict ``>`` keeps the first candidate on ties, which is what both originals do. Then
consecutive unknown pieces are reported as one ``<unk>``.

The two originals differ in the details (``UgmOptions``):

* SentencePiece (``unigram_model.cc``, ``EncodeOptimized``) sums in *float32*, rebases the sums
  when they pass 1e5, gives a user-defined piece the score ``0.1 * (bytes - 1)`` and skips
  UNUSED pieces;
* llama.cpp (``llm_tokenizer_ugm_session``) sums in *double*, gives user-defined pieces 0
  and keeps UNUSED pieces in its trie.

Worked example, pieces ``▁ab -3``, ``▁a -2``, ``b -2``, ``▁ -1``, ``a -1``::

    "▁ab": ends at 1: ▁ (-1); at 2: ▁a (-2) beats ▁+a (-2, not greater); at 3: ▁ab (-3)
           beats ▁a+b (-4)  ->  [▁ab]
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field

_F32 = struct.Struct("f")
SPACE_MARK = "\u2581"  # ▁
# An unknown stretch in the word cache: written as the model's unk_id when read (no piece has a
# negative id).
UNKNOWN = -1
_WORDS = re.compile(f"[^{SPACE_MARK}]+|{SPACE_MARK}[^{SPACE_MARK}]*")


def f32(x: float) -> float:
    """Round to the nearest float32 (float32 sums, as SentencePiece computes them)."""
    return _F32.unpack(_F32.pack(x))[0]


@dataclass
class UgmOptions:
    float32: bool  # SentencePiece: float32 path scores; llama.cpp: double
    user_defined_bonus: bool  # SentencePiece: 0.1 * (len - 1); llama.cpp: 0
    rebase_threshold: float | None  # SentencePiece rebases sums beyond +-1e5
    match_unused: bool  # llama.cpp keeps UNUSED pieces in its trie; SentencePiece skips them


SENTENCEPIECE = UgmOptions(float32=True, user_defined_bonus=True, rebase_threshold=100000.0, match_unused=False)
LLAMA_CPP = UgmOptions(float32=False, user_defined_bonus=False, rebase_threshold=None, match_unused=True)


@dataclass
class LatticeNode:
    """The best path ending at one position: its last piece and where that piece starts."""

    token_id: int
    start: int
    score: float


@dataclass
class UgmModel:
    pieces: dict[str, tuple[int, float]]  # matchable piece -> (id, score used in the lattice)
    unk_id: int
    unk_score: float
    options: UgmOptions
    prefixes: set[str] = field(default_factory=set)  # every prefix of every piece (the "trie")
    max_len: int = 0
    # The fast path (encode_by_words): word -> (its best segmentation, with UNKNOWN where an
    # unknown stretch stands, its smallest margin per code point, whether it holds UNKNOWN). None
    # when some piece holds a "▁" after its first character. A segmentation depends on the pieces
    # and their scores alone, not on the id an unknown stretch is written as: models that differ
    # in ``unk_id`` only may share it.
    word_cache: dict[str, tuple[list[tuple[int, str]], float, bool]] | None = None
    max_abs_score: float = 0.0

    @classmethod
    def build(cls, tokens: list[str], types: list[int], scores: list[float], unk_id: int,
              options: UgmOptions, cache_words: bool = True) -> UgmModel:
        from tokparity.vocab.model import TokenType

        matchable = {TokenType.NORMAL, TokenType.USER_DEFINED}
        if options.match_unused:
            matchable.add(TokenType.UNUSED)
        normal_scores = [s for s, t in zip(scores, types) if t == TokenType.NORMAL]
        min_score = f32(min(normal_scores)) if normal_scores else 0.0
        pieces: dict[str, tuple[int, float]] = {}
        for i, (text, ttype) in enumerate(zip(tokens, types)):
            if ttype not in matchable or not text:
                continue
            if ttype == TokenType.USER_DEFINED:
                score = 0.1 * (len(text.encode("utf-8", "surrogateescape")) - 1) if options.user_defined_bonus else 0.0
            else:
                score = scores[i]
            if options.float32:
                score = f32(score)
            pieces.setdefault(text, (i, score))  # the first id of a duplicated text
        prefixes = {text[:k] for text in pieces for k in range(1, len(text) + 1)}
        unk_score = f32(min_score - 10.0)  # both compute min_score - kUnkPenalty in float
        model = cls(pieces, unk_id, unk_score, options, prefixes, max((len(t) for t in pieces), default=0))
        if cache_words and all(SPACE_MARK not in text[1:] for text in pieces):
            model.word_cache = {}
        model.max_abs_score = max([abs(unk_score)] + [abs(score) for _, score in pieces.values()])
        return model

    def pieces_at(self, text: str, i: int) -> Iterator[tuple[int, int, float]]:
        """(end, id, score) of every piece that starts at position ``i``, shortest first: a walk
        down the trie of piece prefixes that stops where no piece goes on."""
        for j in range(i + 1, len(text) + 1):
            prefix = text[i:j]
            if prefix not in self.prefixes:
                return
            hit = self.pieces.get(prefix)
            if hit is not None:
                yield j, hit[0], hit[1]

    def lattice(self, text: str) -> list[LatticeNode | None]:
        """best[j] for every position j of ``text`` (positions are code points)."""
        n = len(text)
        best: list[LatticeNode | None] = [None] * (n + 1)
        best[0] = LatticeNode(self.unk_id, 0, 0.0)
        float32 = self.options.float32
        threshold = self.options.rebase_threshold
        frontier = 0
        for i in range(n):
            here = best[i]
            if here is None:  # unreachable: cannot happen, every code point has a path
                continue
            base = here.score
            if threshold is not None and (base < -threshold or base > threshold):
                # SentencePiece subtracts the current score from every stored path score so
                # float32 keeps its precision on long inputs.
                for k in range(i, frontier + 1):
                    node = best[k]
                    if node is not None and (k == i or node.start != -1):
                        node.score = f32(node.score - base) if float32 else node.score - base
                base = 0.0
            single = False
            for j, token_id, score in self.pieces_at(text, i):
                total = f32(base + score) if float32 else base + score
                node = best[j]
                if node is None or total > node.score:
                    best[j] = LatticeNode(token_id, i, total)
                single = single or j == i + 1
                frontier = max(frontier, j)
            if not single:
                total = f32(base + self.unk_score) if float32 else base + self.unk_score
                node = best[i + 1]
                if node is None or total > node.score:
                    best[i + 1] = LatticeNode(self.unk_id, i, total)
                frontier = max(frontier, i + 1)
        return best

    def encode(self, text: str) -> list[tuple[int, str]]:
        """(id, piece text) of the best segmentation; unknown runs stay one entry per code point
        here (the callers merge them, as each original does in its own place)."""
        fast = self.encode_by_words(text) if self.word_cache is not None else None
        return fast if fast is not None else self.encode_plain(text)

    def encode_plain(self, text: str) -> list[tuple[int, str]]:
        """The readable path: one lattice over the whole text, as both originals build it."""
        if not text:
            return []
        best = self.lattice(text)
        out = []
        j = len(text)
        while j > 0:
            node = best[j]
            assert node is not None  # every position ends some path (one piece per code point at worst)
            out.append((node.token_id, text[node.start:j]))
            j = node.start
        out.reverse()
        return out

    # -- the fast path ---------------------------------------------------------------------------
    #
    # When no piece holds a "▁" after its first character (SentencePiece's split_by_whitespace
    # vocabularies: T5, XLM-R, Botchan), every piece that covers a "▁" starts at it, so every
    # path through the lattice passes through each "▁" position: the text falls into words
    # ("▁the", "▁cat") whose best segmentations are found one word at a time, and can be
    # remembered. That is exact in real numbers. The originals add in float32 (SentencePiece) or
    # double (llama.cpp), where a sum's rounding depends on the score the word starts from, so a
    # word's segmentation is reused only when its every decision is won by more than rounding
    # could change: each best-vs-runner-up margin inside the word, computed exactly from the word's
    # start, must exceed one unit in the last place of the largest magnitude any path score can
    # reach (len(text) * the largest |score|) per addition on either side. Near-ties (equal
    # scores included) and texts long enough for SentencePiece to rebase its sums take the plain
    # path. Tests compare the two on the corpora and on generated texts.

    def encode_by_words(self, text: str) -> list[tuple[int, str]] | None:
        bound = len(text) * self.max_abs_score
        threshold = self.options.rebase_threshold
        if threshold is not None and bound >= threshold:
            return None
        ulp = math.ldexp(1.0, math.frexp(bound or 1.0)[1] - (24 if self.options.float32 else 53))
        cache = self.word_cache
        assert cache is not None
        out: list[tuple[int, str]] = []
        for word in _WORDS.findall(text):
            hit = cache.get(word)
            if hit is None:
                if len(cache) > 100_000:
                    cache.clear()
                hit = cache[word] = self._best_of_word(word)
            segments, margin, unknown = hit
            if margin <= 2.0 * ulp + 1e-12:
                return None  # a near-tie: rounding could decide it
            out += segments if not unknown else [(self.unk_id if i == UNKNOWN else i, s) for i, s in segments]
        return out

    def _best_of_word(self, word: str) -> tuple[list[tuple[int, str]], float, bool]:
        """The word's best segmentation in real numbers (from 0), UNKNOWN for an unknown stretch;
        its smallest decision margin divided by the number of additions a path inside the word can
        make (+1); whether it holds an unknown stretch."""
        n = len(word)
        best = [-math.inf] * (n + 1)
        runner_up = [-math.inf] * (n + 1)
        back: list[tuple[int, int]] = [(0, 0)] * (n + 1)
        best[0] = 0.0

        def offer(j: int, total: float, token_id: int, start: int) -> None:
            if total > best[j]:
                runner_up[j] = best[j]
                best[j] = total
                back[j] = (token_id, start)
            elif total > runner_up[j]:
                runner_up[j] = total

        for i in range(n):
            single = False
            for j, token_id, score in self.pieces_at(word, i):
                offer(j, best[i] + score, token_id, i)
                single = single or j == i + 1
            if not single:
                offer(i + 1, best[i] + self.unk_score, UNKNOWN, i)
        margin = min((best[j] - runner_up[j] for j in range(1, n + 1)), default=math.inf)
        out = []
        j = n
        while j > 0:
            token_id, start = back[j]
            out.append((token_id, word[start:j]))
            j = start
        out.reverse()
        return out, margin / (n + 1), any(token_id == UNKNOWN for token_id, _ in out)
