"""Ties: two segmentations the model itself rates as equally good, so neither side is wrong.

``viterbi_tie``: a unigram model scores a segmentation by the sum of its pieces' scores; when
the backend's segmentation scores exactly what the oracle's does, the two picked different
optima of the same model. That is a tie (``model.viterbi-tie``), not a bug: Hugging Face's
``spm_parity_check.py`` reports such cases as "imperfect", apart from "wrong" ones.

``merge_tie``: BPE's tie. The merge loop takes the best candidate pair first, and where several
have the same priority (the same pair twice, as in "..." with the piece "..", or two SentencePiece
pieces of equal score) every library takes the leftmost. A backend that takes the rightmost
writes the same text as other pieces that the model's own priorities allow just as well: when the
reference with its ties broken rightmost first gives the backend's ids exactly, and every stretch
where the ids differ holds the same text on both sides, that is a tie too (``model.viterbi-tie``),
not a bug. (An engine whose heap pops equals in yet another order is a tie only where that order
agrees with the rightmost; elsewhere its cases stay ``model.other``.) A real bug can write a text
as such a tie would by coincidence; the run's proven root cause then claims the case
(tokparity.run.decide.as_verdict_says).

Each check returns its evidence (one sentence), or None: the symptom ``viterbi-tie``
(classify.py) and the cause ``model.viterbi-tie`` (tokparity.diagnose.search) are named on it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from tokparity.reference.llama import LlamaUgm
from tokparity.reference.sentencepiece import SentencePieceUnigram
from tokparity.vocab.model import TokenType, Vocab


def text_ids(vocab: Vocab, ids: Sequence[int]) -> list[int]:
    """``ids`` without control tokens (they stand for no text)."""
    return [i for i in ids if vocab.type_of(i) != TokenType.CONTROL]


def viterbi_tie(pipeline, vocab: Vocab, oracle: list[int], target: list[int]) -> str | None:
    """A tie when every stretch where the ids differ holds the same text on both sides, scored the
    same by the model (an ``<unk>`` elsewhere in the text changes nothing of that)."""
    if not isinstance(pipeline, (LlamaUgm, SentencePieceUnigram)):
        return None
    if not all(0 <= i < vocab.size for i in (*oracle, *target)):  # (an id out of the vocabulary: no tie)
        return None
    a, b = text_ids(vocab, oracle), text_ids(vocab, target)
    tokens = vocab.tokens
    model = pipeline.model

    def total(ids: list[int]) -> float | None:
        s = 0.0
        for i in ids:
            hit = model.pieces.get(tokens[i])
            if hit is None or i == model.unk_id:
                return None
            s += hit[1]
        return s

    # The stretches between the token boundaries both sides share: where they differ, each side
    # covers the same text (difflib would cut "00"+"0" against "0"+"00" into an insert and a delete).
    stretches = [(x, y) for x, y in common_cuts(a, b, tokens) if x != y]
    if not stretches:
        return None
    scores = []
    for x, y in stretches:
        sx, sy = total(x), total(y)
        # Sums in float32 (SentencePiece) round at about 1e-7 of their size per addition.
        if sx is None or sy is None or not math.isclose(sx, sy, rel_tol=1e-6 * max(len(x), len(y)), abs_tol=1e-6):
            return None
        scores.append(sx)
    shown = ", ".join(f"{sc:.7g}" for sc in scores[:3])
    return (f"where the ids differ, both segmentations hold the same text and score the same under the model "
            f"({shown}): a tie, not a bug")


def merge_tie(vocab: Vocab, oracle: list[int], target: list[int], flipped: list[int] | None) -> str | None:
    """A BPE tie: ``flipped`` (the reference's ids with equal-priority merges taken rightmost first)
    are the backend's ids exactly, and the two sides hold the same text where they differ."""
    if flipped is None or flipped != target or flipped == oracle:
        return None
    if not all(0 <= i < vocab.size for i in (*oracle, *target)):  # (an id out of the vocabulary: no tie)
        return None
    a, b = text_ids(vocab, oracle), text_ids(vocab, target)
    tokens = vocab.tokens
    stretches = [(x, y) for x, y in common_cuts(a, b, tokens) if x != y]
    if not stretches:
        return None
    x, y = stretches[0]
    shown = f"{'+'.join(repr(tokens[i]) for i in x)} vs {'+'.join(repr(tokens[i]) for i in y)}"
    return (f"the model's own merges with equal-priority candidates taken rightmost first (not leftmost) give the "
            f"backend's ids exactly, and where the ids differ both hold the same text (oracle {shown}): a tie, not a "
            f"bug")


def common_cuts(a: list[int], b: list[int], tokens: list[str]) -> list[tuple[list[int], list[int]]]:
    """``a`` and ``b`` cut at the text offsets where both have a token boundary ([] when the two
    do not spell the same text)."""
    if "".join(tokens[i] for i in a) != "".join(tokens[i] for i in b):
        return []

    def ends(ids: list[int]) -> list[int]:
        out, pos = [], 0
        for i in ids:
            pos += len(tokens[i])
            out.append(pos)
        return out

    ea, eb = ends(a), ends(b)
    shared = sorted(set(ea) & set(eb))
    out, ia, ib = [], 0, 0
    for cut in shared:
        ja, jb = ea.index(cut, ia) + 1, eb.index(cut, ib) + 1
        out.append((a[ia:ja], b[ib:jb]))
        ia, ib = ja, jb
    return out
