"""The one pipeline every case goes through, whoever runs it: compare in this process, its
``--jobs`` workers and Ray actors, regress, fuzz and the pytest plugin.

    judge     tokparity.run.judge       ModelRun.judge: each case on every backend, a CaseRecord
    count     tokparity.run.tally       Tally.apply: cases, skips, tag rates; each Judgement kept
                   … every case of the model judged …
    diagnose  tokparity.diagnose.model  ModelDiagnosis: a Diagnosis per Judgement, a verdict per backend
    decide    tokparity.run.decide      decide: a Decision per Judgement (its known divergence matched here)
    count     tokparity.run.tally       Tally.count, Tally.run_summaries: a RunSummary per backend and op

This module calls the steps in turn, and no step imports another. A caller judges through the
pipeline's judge (``ModelPipeline.run``) and leaves the rest to the pipeline: counting,
diagnosing, deciding. A transport (a ``--jobs`` worker, a Ray actor) moves records and decides
nothing. The callers import no step's module (tests/test_architecture.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from tokparity.corpus import Case
from tokparity.diagnose.model import ModelDiagnosis
from tokparity.records import CaseRecord, Diagnosed, Diagnosis, Judgement, Mismatch, RootCause
from tokparity.run.decide import as_judged, decide
from tokparity.run.judge import JudgedCases, ModelRun, too_long_message, too_long_record
from tokparity.run.messages import Started
from tokparity.run.ops import decoder_file
from tokparity.run.options import CompareOptions
from tokparity.run.results import ResultsSoFar, RunSummary
from tokparity.run.tally import Stated, Tally
from tokparity.zoo import ModelFiles

__all__ = ["JudgedCases", "ModelPipeline", "ModelRun", "Tally", "count", "diagnosed", "diagnosis_of", "journaled",
           "settle", "tally_of", "too_long_message", "too_long_record"]


def count(tally: Tally, records: Iterable[CaseRecord]) -> None:
    """The count step: records judged (here, elsewhere, or replayed), counted in case order."""
    for record in records:
        tally.apply(record)


def journaled(tally: Tally, records: list[CaseRecord]) -> list[CaseRecord]:
    """Records judged, counted in case order, as the journal writes them: each mismatch with the
    known divergence it matches as judged (``decide.as_judged``)."""
    known = tally.options.services.known
    judged = [as_judged(record, known) for record in records]
    count(tally, judged)
    return judged


def settle(tally: Tally, diagnosed: Diagnosed | None, causes: dict[str, dict[str, int]] | None = None,
           stated: Stated | None = None) -> list[RunSummary]:
    """The end of one model's pipeline. Each judgement the tally kept is decided and counted, in
    case order; then come the summaries. ``diagnosed`` is None, or holds fewer diagnoses than
    judgements, when the run stopped before naming causes. ``causes``, ``stated``: see
    ``Tally.run_summaries``."""
    diagnoses = diagnosed.diagnoses if diagnosed is not None else ()
    roots = diagnosed.root_causes if diagnosed is not None else {}
    known = tally.options.services.known
    for i, judgement in enumerate(tally.judgements):
        diagnosis = diagnoses[i] if i < len(diagnoses) else None
        root = roots.get((judgement.backend, judgement.op))
        tally.count(_mismatch(judgement, diagnosis, root, known))
    return tally.run_summaries(diagnosed, causes, stated)


def _mismatch(judgement: Judgement, diagnosis: Diagnosis | None, root: RootCause | None, known: Any) -> Mismatch:
    """The decide step on one judgement: its Mismatch, with ``diagnosis`` and the run's ``root``."""
    return Mismatch(judgement, decide(judgement, diagnosis, root, known), diagnosis)


def tally_of(model: ModelFiles, started: Started, options: CompareOptions, results: ResultsSoFar) -> Tally:
    """The count step of a model judged elsewhere (``--jobs`` workers, Ray actors), made from
    what the first of them said once loaded."""
    return Tally(model, started.chain, started.backends, started.decoder, options, results)


def diagnosis_of(tally: Tally, reference: Any = None, vocab: Any = None, chat_reference: Any = None
                 ) -> ModelDiagnosis:
    """The diagnose step of the model ``tally`` counts: ``reference``, ``vocab`` and
    ``chat_reference`` where the judge has them loaded already, else made on first use."""
    model = tally.model
    oracle = next((n for n in tally.chain if n != "golden"), None)
    diagnosis = ModelDiagnosis(model.name, str(model.primary[1]), tally.options, reference, vocab,
                               decoder_file(model, tally.decoder or None), model=model,
                               encoder_file=decoder_file(model, oracle))
    diagnosis.chat_reference = chat_reference
    return diagnosis


def diagnosed(tally: Tally, diagnosis: ModelDiagnosis, corpora: list[str] | None,
              named: Diagnosed | None = None) -> Diagnosed:
    """The diagnose step on every judgement ``tally`` kept: ``named`` where the process that
    judged the whole model named them already (a ``--jobs`` worker), else diagnosed here. The
    diagnosis is closed after (its reference and variants let go; what it named is kept)."""
    try:
        if named is None or not diagnosis.take(named, tally.judgements):
            diagnosis.diagnose_all(tally.judgements, tally.not_agreeing, corpora)
    finally:
        diagnosis.close()
    return diagnosis.named(tally.judgements)


class ModelPipeline:
    """One model's pipeline in one process: its judge (``run``: vocabulary and backends), its
    ``tally`` and its ``diagnosis``. ``results``: where the tally counts, the run's own unless
    given (the pytest plugin counts each call apart, its backends loaded once); ``reference``:
    the RefTokenizer the diagnosis varies, where one is made already."""

    def __init__(self, run: ModelRun, results: ResultsSoFar | None = None, reference: Any = None):
        self.run = run
        self.results = results if results is not None else run.results
        self.tally = Tally(run.model, run.chain, run.listed, run.decoder, run.options, self.results)
        if reference is None:
            reference = getattr(run.backends.get("ref"), "tokenizer", None)  # the ref backend's, if it runs
        self.diagnosis = diagnosis_of(self.tally, reference, run.vocab,
                                      run.chatting.reference if run.chatting is not None else None)

    @classmethod
    def open(cls, spec: str, backend_names: list[str] | None, options: CompareOptions,
             results: ResultsSoFar) -> ModelPipeline:
        """``spec``'s backends loaded, its tally and diagnosis made."""
        return cls(ModelRun(spec, backend_names, options, results))

    def count(self, records: Iterable[CaseRecord]) -> None:
        """Records judged (here, elsewhere, or replayed), counted in case order."""
        count(self.tally, records)

    def judged(self, cases: Iterable[tuple[int, Case]]) -> Iterator[CaseRecord]:
        """The records of ``cases`` ((position, case) pairs), judged and counted, in case order."""
        for record in self.run.judged(cases):
            count(self.tally, (record,))
            yield record

    def cases(self, corpora: list[str], skip: Callable[[int], bool]) -> JudgedCases:
        """The corpora's cases, to be judged a batch at a time (``skip``: positions done already)."""
        return JudgedCases(self.run, corpora, skip)

    def diagnose(self, corpora: list[str] | None, everything: bool = True) -> None:
        """The diagnose step on the judgements so far (``everything``: False for fuzz, which keeps
        no case that agreed and reads no corpus)."""
        self.diagnosis.diagnose_all(self.tally.judgements, self.tally.not_agreeing if everything else {}, corpora)

    def diagnose_new(self) -> list[Mismatch]:
        """The judgements kept since the last call, diagnosed and decided each on its own, without
        verdicts (fuzz decides as it goes; ``diagnose`` then only gives the verdicts)."""
        judgements = self.tally.judgements
        diagnoses = self.diagnosis.diagnose_new(judgements)
        known = self.run.options.services.known
        return [_mismatch(j, d, None, known)
                for j, d in zip(judgements[len(judgements) - len(diagnoses):], diagnoses)]

    def named(self) -> Diagnosed:
        """What the diagnosis named so far, in the order of the tally's judgements."""
        return self.diagnosis.named(self.tally.judgements)

    def decided(self, judgement: Judgement) -> Mismatch:
        """One judgement diagnosed and decided now, on its own (fuzz steers by causes case by
        case): its cause, the class that fits it, its known divergence."""
        diagnosis = self.diagnosis.diagnose_one(judgement)
        return _mismatch(judgement, diagnosis, None, self.run.options.services.known)

    def agreed(self, record: CaseRecord, text: str) -> None:
        """The backends of one encode case that agreed with the oracle (fuzz): the diagnosis of the
        later cases tries their variants on these texts, as a compare's verdict does on all."""
        if record.op == "encode":
            for backend, verdict in record.verdicts.items():
                if verdict.kind == "agree":
                    self.diagnosis.agreed(backend, text)

    def agreed_ids(self, record: CaseRecord, ids: Sequence[int], prompt: int) -> None:
        """The backends of one decoding case that agreed with the decoder (fuzz of ids): their
        verdict on the op is checked on these ids, as a compare's is on every agreement."""
        for backend, verdict in record.verdicts.items():
            if verdict.kind == "agree":
                self.diagnosis.agreed_ids(backend, record.op, ids, prompt if record.op == "stream" else 0,
                                          f"{record.corpus}/{record.case_id}")

    def verdict_on(self, backend: str, mismatches: Sequence[Mismatch], agreeing: Sequence[str]) -> RootCause | None:
        """fuzz of texts: ``backend``'s encode verdict, weighed on a sample of its mismatches (as
        fuzz decided them) and of the texts it agreed on."""
        return self.diagnosis.sampled_verdict(backend, [(m.judgement, m.diagnosis) for m in mismatches], agreeing)

    def decided_as_run(self, judgement: Judgement) -> Mismatch:
        """One judgement diagnosed alone and decided as the run's verdict reads its rows (fuzz names
        and shrinks a finding under the name the whole run gave it)."""
        diagnosis = self.diagnosis.diagnose_as_run(judgement)
        root = self.diagnosis.root_causes.get((judgement.backend, judgement.op))
        return _mismatch(judgement, diagnosis, root, self.run.options.services.known)

    def settle(self, causes: dict[str, dict[str, int]] | None = None, stated: Stated | None = None
               ) -> list[RunSummary]:
        """Decide and count what the diagnosis named; the summaries, with the verdicts. (A fuzz of
        texts keeps no judgement: it decided each case as it went, and its verdicts are its own.)"""
        return settle(self.tally, self.named(), causes, stated)

    def reask(self, options: CompareOptions) -> None:
        """The same backends asked something else from here on (regress: add_special off, then
        on): the judge, the tally and the diagnosis read the new options."""
        self.run.reask(options)
        self.tally.options = self.diagnosis.options = options

    def close(self) -> None:
        """The diagnosis's reference and variants let go (in its own time), then the backends."""
        try:
            self.diagnosis.close()
        finally:
            self.run.close()
