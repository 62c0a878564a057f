"""What the run says of one mismatch, once diagnosed: ``decide`` is the one place that turns a
Judgement, its Diagnosis and its backend's run-level RootCause into the row's class, stage, cause
and known divergence.

    >>> from tokparity.records import Judgement, Diagnosis
    >>> j = Judgement("llama-spm", "edge", "edge-0001", {}, "llama.cpp", "greedy", "merge-order", "…", "model",
    ...               0, "Hello", [15043], [379, 3952], ["▁Hello"], ["▁H", "ello"])
    >>> d = Diagnosis("model.greedy-longest-match", "reproduced", ("model.greedy-longest-match",),
    ...               decides_class=True, stage="model")
    >>> decide(j, d, None, None).cause
    'model.greedy-longest-match'
    >>> decide(j, None, None, None).cls      # nothing diagnosed: the symptom the rules gave
    'merge-order'
"""

from __future__ import annotations

from dataclasses import replace

from tokparity.diagnose.info import consistent_class, fits, stage_of_cause
from tokparity.diagnose.learnt import is_learnt, said_of
from tokparity.diagnose.search import join
from tokparity.diagnose.variants import cause_of
from tokparity.diagnose.wrong_bytes import CLAIMED_BY_A_VERDICT
from tokparity.records import TIE, CaseRecord, Decision, Diagnosis, Judgement, Mismatch, RootCause, Verdict, gives_too
from tokparity.run.known import KnownList


def decide(judgement: Judgement, diagnosis: Diagnosis | None, root: RootCause | None,
           known: KnownList | None) -> Decision:
    """The cause: the case's own, or the part of the run's root cause ``root`` that gives its ids
    too (``as_verdict_says``). The class: the symptom the rules gave, unless a proof names a cause
    it is not a symptom of (a class never contradicts a reproduced cause). The stage: the judge's,
    or where the cause puts it when the backend exposed no stages. The known divergence: the first
    entry of ``known`` that matches the row as decided (its class included), or one of the library
    of the engine's own file where it gave the engine's ids (``known_of``). A known divergence
    whose cause nothing reproduced (a crash, text dropped by a converter) carries the cause it was
    reviewed with."""
    j = judgement
    d = as_verdict_says(j, diagnosis, root) if diagnosis is not None else None
    if d is not None and j.cls == "crash" and d.variants and root is not None and \
            not (root.proven and set(d.variants) <= set(root.variants)):
        # A crash is one outcome whatever its reason: an engine that fails on every text fails on
        # one that holds 'toString' too. Where the run has a verdict, a failure's cause is the
        # row's only if that verdict, which counts every crash of the backend, proves it.
        d = None
    if d is not None and j.cls == "crash" and root is None and set(d.variants) & set(CLAIMED_BY_A_VERDICT):
        d = None  # (one failure on a long text fits some buffer: no verdict here to say the engine's does)
    if d is None:
        decision = Decision(j.cls, j.stage)
    else:
        decision = Decision(consistent_class(j.cls, d.cause) if d.decides_class else j.cls,
                            d.stage if j.stage == "unknown" else j.stage, "", d.cause, d.evidence, d.variants,
                            d.alternatives)
    if known is None:
        return decision
    entry_id, library = known_of(known, Mismatch(j, decision), count=True)
    entry = known.entry(entry_id) if entry_id else None
    said = f"{gives_too(library, j.op)}: " if library else ""
    if entry is not None and entry.cause and not decision.cause:
        return Decision(decision.cls, decision.stage, entry_id, entry.cause,
                        f"{said}reviewed, not reproduced: the known divergence {entry.id!r} says so ({entry.upstream})",
                        decision.variants, decision.alternatives)
    evidence = (f"{said}the known divergence {entry_id!r}; {decision.cause_evidence}".rstrip("; ")
                if library else decision.cause_evidence)
    return Decision(decision.cls, decision.stage, entry_id, decision.cause, evidence,
                    decision.variants, decision.alternatives)


def known_of(known: KnownList, m: Mismatch, count: bool = False) -> tuple[str, str]:
    """The known divergence that explains ``m`` (its id, or ""), and the library it belongs to (""
    where it is the backend's own). A library of the engine's own file that gave the engine's very
    ids (the judge's tag ``witness``) makes its own reviewed differences the engine's too.
    ``count``: the entry's hits count it (a decision does; a journal line does not)."""
    look = known.match if count else known.find
    found = look(m)
    if found:
        return found, ""
    for library in m.given_too_by:
        own = replace(m.judgement, backend=library)
        if "witness_class" in m.tags:  # (chat: the library's own row, which may show more than the engine gave)
            own = replace(own, cls=str(m.tags["witness_class"]), evidence=str(m.tags.get("witness_evidence", "")))
            found = look(Mismatch(own, Decision.as_judged(own)))
        else:
            found = look(Mismatch(own, m.decision))
        if found:
            return found, library
    return "", ""


def as_judged(record: CaseRecord, known: KnownList | None) -> CaseRecord:
    """``record`` with the known divergence each of its mismatches matches as judged, before any
    diagnosis: what the journal notes of a case. A run decides each again once diagnosed
    (``decide``); a hit is counted only then."""
    if known is None or not record.judgements:
        return record
    found = {j.backend: _known_as_judged(known, j) for j in record.judgements}
    if all(v.mismatch and v.known == found[name] for name, v in record.verdicts.items() if name in found):
        return record  # (most mismatches match no entry: the record as judged says so already)
    verdicts = {name: Verdict.differs(v.cls, found[name]) if name in found else v for name, v in record.verdicts.items()}
    return replace(record, verdicts=verdicts)


def _known_as_judged(known: KnownList, j: Judgement) -> str:
    """``known_of`` a judgement as judged. Without a witness it is matched as it is: a Judgement
    reads as its own row, with the class the rules gave it."""
    if "witness" in j.tags:
        return known_of(known, Mismatch(j, Decision.as_judged(j)))[0]
    return known.find(j)


def as_verdict_says(j: Judgement, d: Diagnosis, root: RootCause | None) -> Diagnosis:
    """One engine, one cause: a mismatch that a part of the run's root cause also reproduces
    carries that part (``d.verdict_parts``, smallest first).

    A case takes a part larger than its own cause only when the verdict is proven. Then the
    engine has those bugs, and a smaller set that gives the same ids is the coincidence. So a case
    whose own search reproduced nothing takes a part of a proven verdict only.
    A case takes only a part whose catalogue names the row's class as a symptom, or a part that
    changes the same stage as the case's own cause, or, in a proven verdict, one its own search
    found too. Example: a case that both the greedy match and
    the engine's real merge order reproduce is the merge order's. Another: JavaScript's ``\\s``
    reproduces ``" \\ufeffa"`` as well as another split regex does, whatever the rules called it.
    A tie that the proven root cause reproduces is that cause's: the engine's bug is established on
    its other cases, and the tie is the coincidence."""
    if root is None or not d.verdict_parts:
        return d
    if d.cause == TIE:
        if not root.proven:
            return d
        part = d.verdict_parts[0]
        return replace(d, cause=_names(part), variants=part, decides_class=True, evidence=(
            f"the run's root cause reproduces these ids exactly ({_shown(part)}), and so does another choice "
            f"among merges of equal priority: the engine's proven deviation, not a tie; {d.evidence}"))
    for part in d.verdict_parts:
        if len(part) > len(d.variants) and not root.proven:
            break  # (smallest first)
        names = _names(part)
        if j.cls == "crash":  # (a failure: no ids to reproduce, and the class stays a crash)
            return replace(d, cause=names, variants=part, evidence=(
                f"the run's root cause ({_shown(part)}) fails on this text too, as the engine did; {d.evidence}"))
        if fits(j.cls, names) or stage_of_cause(names) == stage_of_cause(d.cause) or \
                root.proven and part in d.alternatives:
            return replace(d, cause=names, variants=part, decides_class=True, evidence=(
                f"the run's root cause reproduces these ids exactly ({_shown(part)}); {d.evidence}"))
    return d


def _shown(part: tuple[str, ...]) -> str:
    """The variants' keys as a reader reads them: a learnt edit of the text said in words."""
    return ", ".join(said_of(k) if is_learnt(k) else k for k in part)


def _names(part: tuple[str, ...]) -> str:
    return join([cause_of(key) for key in part])
