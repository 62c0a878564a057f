"""What the run says of one mismatch, once diagnosed: ``decide`` is the one place that turns a
Judgement and its Diagnosis into the row's class, stage, cause and known divergence.

    >>> from tokparity.records import Judgement, Diagnosis
    >>> j = Judgement("llama-spm", "edge", "edge-0001", {}, "llama.cpp", "greedy", "merge-order", "…", "model",
    ...               0, "Hello", [15043], [379, 3952], ["▁Hello"], ["▁H", "ello"])
    >>> d = Diagnosis("model.greedy-longest-match", "reproduced", ("model.greedy-longest-match",),
    ...               decides_class=True, stage="model")
    >>> decide(j, d, None).cause
    'model.greedy-longest-match'
    >>> decide(j, None, None).cls      # nothing diagnosed: the symptom the rules gave
    'merge-order'
"""

from __future__ import annotations

from tokparity.diagnose.info import consistent_class
from tokparity.records import Decision, Diagnosis, Judgement, Mismatch
from tokparity.run.known import KnownList


def decide(judgement: Judgement, diagnosis: Diagnosis | None, known: KnownList | None) -> Decision:
    """The class: the symptom the rules gave, unless a proof names a cause it is not a symptom of
    (a class never contradicts a reproduced cause). The stage: the judge's, or where the cause puts
    it when the backend exposed no stages. The known divergence: the first entry of ``known``
    that matches the row as decided (its class included). A known divergence whose cause nothing
    reproduced (a crash, text dropped by a converter) carries the cause it was reviewed with."""
    j, d = judgement, diagnosis
    if d is None:
        decision = Decision(j.cls, j.stage)
    else:
        decision = Decision(consistent_class(j.cls, d.cause) if d.decides_class else j.cls,
                            d.stage if j.stage == "unknown" else j.stage, "", d.cause, d.evidence, d.variants,
                            d.alternatives)
    if known is None:
        return decision
    entry_id = known.match(Mismatch(j, decision))
    entry = known.entry(entry_id) if entry_id else None
    if entry is not None and entry.cause and not decision.cause:
        return Decision(decision.cls, decision.stage, entry_id, entry.cause,
                        f"reviewed, not reproduced: the known divergence {entry.id!r} says so ({entry.upstream})",
                        decision.variants, decision.alternatives)
    return Decision(decision.cls, decision.stage, entry_id, decision.cause, decision.cause_evidence,
                    decision.variants, decision.alternatives)
