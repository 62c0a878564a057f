"""The causes of one model's mismatches, named by reproducing them (``Diagnoser``), over the
model's ``Tally``: each mismatch's cause, then each backend's run-level verdict.

Causes are named after the cases are judged, over the model's mismatches in case order: the
search remembers what explained a backend's earlier cases, so the order must be the run's own,
whoever judged the cases (worker processes with ``--jobs``, Ray actors, a run before a
``--resume``). A worker that judged a whole model in order names them itself and sends them
(``named``); the parent then ``take``-s them instead of loading the reference again.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from tokparity.corpus import is_too_long, numbered_cases
from tokparity.diagnose.info import consistent_class, stage_of_cause
from tokparity.diagnose.search import Cause, Diagnoser
from tokparity.diagnose.verdict import TIE, reclaim_ties, relabel, root_cause
from tokparity.errors import TokparityError
from tokparity.results import Mismatch
from tokparity.tally import Tally
from tokparity.vocab import Vocab, load_vocab


class ModelDiagnosis:
    """``reference``: the model's RefTokenizer if one is loaded already (the ``ref`` backend's),
    else one is made from ``vocab`` (or the model's file) on first use."""

    def __init__(self, tally: Tally, reference: Any = None, vocab: Vocab | None = None):
        self.tally, self.options = tally, tally.options
        self.reference, self._vocab = reference, vocab
        self._diagnosers: dict[tuple[bool, bool], Diagnoser | None] = {}
        self._diagnosed = tally.first  # results.mismatches before this index have been diagnosed

    def diagnoser(self) -> Diagnoser | None:
        """The model's reference and its variants for the current add_special / parse_special, made
        on first use (None: the model has no reference tokenizer, so no cause can be reproduced)."""
        key = (self.options.add_special, self.options.parse_special)
        if key not in self._diagnosers:
            self._diagnosers[key] = None
            try:
                if self.reference is None:
                    from tokparity.reference import RefTokenizer
                    vocab = self._vocab if self._vocab is not None else load_vocab(self.tally.model.primary[1])
                    self.reference = RefTokenizer(vocab)
                self._diagnosers[key] = Diagnoser(self.reference, *key)
            except TokparityError as e:
                self.options.say(f"{self.tally.model.name}: no root causes: {e}")
        return self._diagnosers[key]

    def _timed(self, seconds: float) -> None:
        timing = self.tally.timing
        timing["diagnose"] = timing.get("diagnose", 0.0) + seconds

    def diagnose_one(self, m: Mismatch, counted: bool = True) -> None:
        """Name ``m``'s root cause (and keep its class a symptom of it; ``counted``: ``m`` is one of
        the run's mismatches, counted in its summary's classes)."""
        if m.stage == "decode":  # decoding is not reproduced by variants: its class says it
            m.cause = m.cause or ("decode.cleanup" if m.cls == "decode-cleanup" else "")
            return
        if m.cls in ("crash", "timeout") or not self.options.diagnose:
            return
        if m.cls == "vocab-mismatch":
            cause = Cause("vocab.mismatch", m.evidence)
        else:
            diagnoser = self.diagnoser()
            if diagnoser is None:
                return
            started = time.perf_counter()
            try:
                cause = diagnoser.diagnose(m.text, m.oracle_ids, m.backend_ids, m.backend, symptom=m.cls)
            except Exception as e:  # a diagnosis never stops a run; the case keeps its class
                cause = Cause("", f"the diagnosis failed: {type(e).__name__}: {e}")
            finally:
                self._timed(time.perf_counter() - started)
        m.cause, m.cause_evidence, m.variants = cause.name, cause.detail, list(cause.keys)
        m.alternatives = [list(keys) for keys in cause.alternatives]
        if cause.reproduced or cause.name == TIE:  # a proof decides; a stage-level cause locates
            if counted:
                self.tally.set_class(m, consistent_class(m.cls, cause.name))
            else:
                m.cls = consistent_class(m.cls, cause.name)
        if m.stage == "unknown":  # a backend without stages: the cause says where it diverged
            m.stage = stage_of_cause(cause.name)

    def diagnose_all(self, corpora: list[str] | None) -> None:
        """The root cause of every mismatch of this model not diagnosed yet, in case order, then
        each backend's run-level verdict (tokparity.diagnose.verdict: the agreeing cases are read
        again from ``corpora``; None: no agreements to check)."""
        if not self.options.diagnose:
            return
        tally = self.tally
        todo = tally.results.mismatches[max(self._diagnosed, tally.first):]
        self._diagnosed = len(tally.results.mismatches)
        for m in todo:
            if m.backend in tally.summaries:
                self.diagnose_one(m)
        diagnoser = self.diagnoser()
        if diagnoser is None:
            return
        started = time.perf_counter()
        base_of: dict[str, list[int] | None] = {}
        for name, summary in tally.summaries.items():
            # (a tie is not the backend's deviation: two optima of the same model)
            mine = [m for m in tally.mismatches() if m.backend == name and m.stage != "decode"]
            mismatches = [m for m in mine if m.cause != TIE]
            if not any(m.variants for m in mismatches):
                continue
            texts = self._texts(corpora, tally.not_agreeing.get(name, set())) if corpora is not None else iter(())
            summary.root_cause = root_cause(diagnoser, mismatches, texts, base_of)
            if summary.root_cause is not None:
                changed = relabel(diagnoser, mismatches, summary.root_cause, tally.symptom)
                changed += reclaim_ties(diagnoser, [m for m in mine if m.cause == TIE], summary.root_cause)
                for m in changed:
                    tally.set_class(m, consistent_class(tally.symptom(m), m.cause))
        diagnoser.forget()
        self._timed(time.perf_counter() - started)

    def _texts(self, corpora: list[str], skip: set[int]) -> Iterator[str]:
        max_chars = self.options.max_chars
        for n, case in numbered_cases(corpora, max_chars):
            if n not in skip and not is_too_long(case, max_chars):
                yield case.text

    # -- named elsewhere --------------------------------------------------------------------------

    FIELDS = ("backend", "case_id", "cls", "stage", "cause", "cause_evidence", "variants", "alternatives")

    def named(self) -> dict:
        """What the diagnosis decided, for a parent's tally of the same cases: per mismatch (in
        case order) its class, stage and cause; per backend its verdict."""
        return {"mismatches": [tuple(getattr(m, f) for f in self.FIELDS) for m in self.tally.mismatches()],
                "root_causes": {name: s.root_cause for name, s in self.tally.summaries.items()},
                "seconds": self.tally.timing.get("diagnose", 0.0)}

    def take(self, causes: dict) -> bool:
        """The causes another process ``named`` for this model, when it judged every case in
        order; False (nothing taken) when its mismatches are not these."""
        tally = self.tally
        mine = tally.mismatches()
        named = causes["mismatches"]
        if len(mine) != len(named) or any((m.backend, m.case_id) != tuple(c[:2]) for m, c in zip(mine, named)):
            return False
        for m, (_, _, cls, stage, cause, evidence, variants, alternatives) in zip(mine, named):
            if m.backend in tally.summaries:
                tally.set_class(m, cls)
            m.stage, m.cause, m.cause_evidence = stage, cause, evidence
            m.variants, m.alternatives = list(variants), [list(keys) for keys in alternatives]
        for name, verdict in causes["root_causes"].items():
            if name in tally.summaries:
                tally.summaries[name].root_cause = verdict
        self._diagnosed = len(tally.results.mismatches)
        self._timed(causes["seconds"])
        return True
