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

CANDIDATES = 4  # the per-case sets that explained the most cases
RANKED_ON = 1000  # mismatches and agreements (each, evenly spread) on which candidates are ranked


def candidates(mismatches: Sequence[Mismatch]) -> list[tuple[str, ...]]:
    """The most frequent per-case sets, their union (an engine with two bugs shows one on some
    texts, the other on others, both on a few), and the union less each of its members."""
    counts = Counter(tuple(m.variants) for m in mismatches if m.variants)
    # A set that reproduced a case as well as the one chosen for it counts too: on "Hello" a
    # dummy prefix toggled and one added "unless the text starts with a space" are the same.
    counts.update(tuple(keys) for m in mismatches for keys in m.alternatives)
    top = [keys for keys, _ in counts.most_common(CANDIDATES)]
    top += _token_families(counts)
    union = tuple(dict.fromkeys(k for keys in top for k in keys))
    out = list(top)
    if len(top) > 1 and len(union) <= 5:
        out.append(union)
        out += [tuple(k for k in union if k != drop) for drop in union if len(union) > 2]
    return list(dict.fromkeys(out))


def _token_families(counts: Counter) -> list[tuple[str, ...]]:
    """Variants made for one token stand for a rule about all of them: the sets with every
    ``user-defined.atomic:-N`` as the catalogue's ``user-defined.atomic`` (no piece matched whole),
    and with every ``:+N`` of the run together (these pieces all matched whole)."""
    out = []
    for keys in list(counts)[:CANDIDATES * 4]:
        if any(k.startswith("user-defined.atomic:-") for k in keys):
            rest = tuple(k for k in keys if not k.startswith("user-defined.atomic:-"))
            out.append(tuple(dict.fromkeys(rest + ("user-defined.atomic",))))
    plus = tuple(dict.fromkeys(k for keys in counts for k in keys if k.startswith("user-defined.atomic:+")))[:16]
    if len(plus) > 1:
        out.append(plus)
    return list(dict.fromkeys(out))


def _spread(items: list, n: int) -> list:
    if len(items) <= n:
        return items
    step = len(items) / n
    return [items[int(k * step)] for k in range(n)]


def root_cause(diagnoser: Diagnoser, mismatches: Sequence[Mismatch], agreeing: Iterable[str],
               base_of: dict[str, list[int] | None]) -> dict | None:
    """``{"cause", "variants", "explains", "mismatches", "keeps", "agreements"}`` of the best set,
    or None when no mismatch was reproduced. The best set is the one under which the reference
    predicts the backend on the most cases, mismatches and agreements alike (ranked on an even
    sample of each when there are many, then counted on all). ``base_of`` caches the reference's
    own ids per text (shared by the backends of one model)."""
    sets = candidates(mismatches)
    if not sets:
        return None
    texts = list(agreeing)

    def explains(keys: tuple[str, ...], among: Sequence[Mismatch]) -> int:
        return sum(diagnoser.encode_remembered(keys, m.text) == m.backend_ids for m in among)

    def keeps(keys: tuple[str, ...], among: Sequence[str]) -> int:
        kept = 0
        for text in among:
            if text not in base_of:
                base_of[text] = diagnoser.encode_remembered((), text)
            kept += diagnoser.encode_remembered(keys, text) == base_of[text]
        return kept

    some_m, some_t = _spread(list(mismatches), RANKED_ON), _spread(texts, RANKED_ON)
    rate_m, rate_t = len(mismatches) / max(1, len(some_m)), len(texts) / max(1, len(some_t))
    best = max(sets, key=lambda k: (explains(k, some_m) * rate_m + keeps(k, some_t) * rate_t, -len(k)))
    names = [diagnoser.variants[k].cause for k in best if k in diagnoser.variants]
    return {"cause": join(names), "variants": list(best), "explains": explains(best, mismatches),
            "mismatches": len(mismatches), "keeps": keeps(best, texts), "agreements": len(texts)}


def relabel(diagnoser: Diagnoser, mismatches: Sequence[Mismatch], verdict: dict) -> dict[str, int]:
    """One engine, one cause: a mismatch that the run's set reproduces, and whose own cause is no
    smaller, carries the run's cause (when its class is a symptom of that cause too). Returns the
    run's ``causes`` counted again."""
    from tokparity.diagnose.info import consistent_class

    keys = tuple(verdict["variants"])
    for m in mismatches:
        if not m.variants or tuple(m.variants) == keys or len(m.variants) < len(keys):
            continue
        if consistent_class(m.cls, verdict["cause"]) != m.cls:
            continue
        if diagnoser.encode_remembered(keys, m.text) == m.backend_ids:
            m.cause, m.variants = verdict["cause"], list(keys)
            m.cause_evidence = (f"the run's root cause reproduces these ids exactly ({', '.join(keys)}); "
                                f"{m.cause_evidence}")
    counts = Counter(m.cause for m in mismatches if m.cause)
    return dict(counts.most_common())


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
