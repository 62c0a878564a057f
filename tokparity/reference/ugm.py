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

import struct
from dataclasses import dataclass, field

_F32 = struct.Struct("f")


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

    @classmethod
    def build(cls, tokens: list[str], types: list[int], scores: list[float], unk_id: int,
              options: UgmOptions) -> UgmModel:
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
        prefixes = set()
        for text in pieces:
            for k in range(1, len(text) + 1):
                prefixes.add(text[:k])
        unk_score = f32(min_score - 10.0)  # both compute min_score - kUnkPenalty in float
        return cls(pieces, unk_id, unk_score, options, prefixes, max((len(t) for t in pieces), default=0))

    def lattice(self, text: str) -> list[LatticeNode | None]:
        """best[j] for every position j of ``text`` (positions are code points)."""
        n = len(text)
        best: list[LatticeNode | None] = [None] * (n + 1)
        best[0] = LatticeNode(self.unk_id, 0, 0.0)
        float32 = self.options.float32
        threshold = self.options.rebase_threshold
        pieces, prefixes = self.pieces, self.prefixes
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
            j = i + 1
            while j <= n:
                prefix = text[i:j]
                if prefix not in prefixes:
                    break
                hit = pieces.get(prefix)
                if hit is not None:
                    token_id, score = hit
                    total = f32(base + score) if float32 else base + score
                    node = best[j]
                    if node is None or total > node.score:
                        best[j] = LatticeNode(token_id, i, total)
                    if j == i + 1:
                        single = True
                    frontier = max(frontier, j)
                j += 1
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
