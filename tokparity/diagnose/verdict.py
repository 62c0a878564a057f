"""The run-level root cause of one (model, backend): a claim a maintainer can check.

Each mismatch has its own cause, the smallest set of variants that reproduces it. The run's
verdict is one set of variants that reproduces the most of the backend's mismatches *and*
keeps the agreeing cases agreeing: the reference with that set applied gives the backend's ids
on the mismatches and still gives the oracle's on every case where the backend agreed.
"reproduces 1,340 of 1,340 mismatches and all 4,973 agreements" is the proof that the named
deviation is the engine's behaviour, not a coincidence of a few texts.

The candidates are the per-case sets that explained the most cases, and their union (two bugs
that each show on some cases are one engine with both). Agreements are re-read from the corpora
(the journal keeps only their verdicts), and the reference with no variant stands for the oracle
on them, which holds wherever ``ref`` agrees with the oracle (every zoo model).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from tokparity.diagnose.search import Diagnoser, join
from tokparity.results import Mismatch

CANDIDATES = 4  # sets whose explanations are counted over the mismatches
KEPT_CHECKED = 2  # of those, the best ones whose agreements are checked


def candidates(mismatches: Sequence[Mismatch]) -> list[tuple[str, ...]]:
    counts = Counter(tuple(m.variants) for m in mismatches if m.variants)
    top = [keys for keys, _ in counts.most_common(CANDIDATES)]
    union = tuple(dict.fromkeys(k for keys in top for k in keys))
    if len(top) > 1 and len(union) <= 4:
        top.append(union)
    return top


def root_cause(diagnoser: Diagnoser, mismatches: Sequence[Mismatch], agreeing: Iterable[str],
               base_of: dict[str, list[int] | None]) -> dict | None:
    """``{"cause", "variants", "explains", "mismatches", "keeps", "agreements"}`` of the best set,
    or None when no mismatch was reproduced. ``base_of`` caches the reference's own ids per text
    (shared by the backends of one model)."""
    sets = candidates(mismatches)
    if not sets:
        return None
    explains = {keys: sum(diagnoser.encode(keys, m.text) == m.backend_ids for m in mismatches) for keys in sets}
    ranked = sorted(sets, key=lambda k: (-explains[k], len(k)))[:KEPT_CHECKED]
    texts = list(agreeing)
    keeps = {}
    for keys in ranked:
        kept = 0
        for text in texts:
            if text not in base_of:
                base_of[text] = diagnoser.encode((), text)
            kept += diagnoser.encode(keys, text) == base_of[text]
        keeps[keys] = kept
    best = max(ranked, key=lambda k: (explains[k] + keeps[k], explains[k], -len(k)))
    names = [diagnoser.variants[k].cause for k in best if k in diagnoser.variants]
    return {"cause": join(names), "variants": list(best), "explains": explains[best], "mismatches": len(mismatches),
            "keeps": keeps[best], "agreements": len(texts)}


def sentence(model: str, backend: str, oracle: str, verdict: dict | None, mismatches: int) -> str:
    """The one-sentence summary a report opens with."""
    if not mismatches:
        return f"{backend} agrees with {oracle} on every case of {model}."
    if not verdict:
        return (f"{backend} differs from {oracle} on {mismatches:,} cases of {model}; no variant of the reference "
                "reproduces them, so the cause is not named.")
    every = "all " if verdict["keeps"] == verdict["agreements"] else ""
    return (f"{backend} differs from {oracle} on {mismatches:,} cases of {model} because of "
            f"{verdict['cause']}: the reference with that deviation reproduces {verdict['explains']:,} of "
            f"{verdict['mismatches']:,} mismatches exactly and keeps {every}{verdict['keeps']:,} of "
            f"{verdict['agreements']:,} agreements.")
