"""One model's ledger in the driver: records applied to its tally and journaled in case order,
whichever way the cases were judged (this process, ``--jobs`` workers, Ray actors), and the
models merged into the run's results in command-line order."""

from __future__ import annotations

from tokparity.errors import TokparityError
from tokparity.records import CaseRecord, Diagnosed
from tokparity.run.journal import Journal
from tokparity.run.journal.interrupt import holding_ctrl_c
from tokparity.run.journal.resume import DoneSet, whole_cases
from tokparity.run.messages import Started
from tokparity.run.options import CompareOptions
from tokparity.run.pipeline import Tally, diagnosed, diagnosis_of, journaled, settle, tally_of, too_long_message
from tokparity.run.results import ResultsSoFar, join_backends
from tokparity.zoo import resolve_model


class ModelLedger:
    """The driver's side of one model: its tally, its results and the records not yet applied,
    whichever way its cases are judged. In this process (driver.py) the pipeline's tally counts
    and records arrive in order; from ``--jobs`` workers (parallel.py) and Ray actors (cluster.py)
    the first ``Started`` makes the tally and records arrive in any order (``take``). Either way
    each record is applied and journaled in case order, in one place (``advance``)."""

    def __init__(self, index: int, spec: str, shards: int, results: ResultsSoFar | None = None,
                 tally: Tally | None = None):
        self.index, self.spec, self.shards = index, spec, shards
        self.model = tally.model if tally is not None else resolve_model(spec)  # fetched once, before any worker
        self.results = results if results is not None else ResultsSoFar()
        self.tally: Tally | None = tally  # else made from the first worker's Started
        self.done = DoneSet()
        self.done_read = False  # read_done ran: the workers were told these positions
        # judged, not yet applied (an earlier case is missing): a case's records, one per op
        self.waiting: dict[int, list[CaseRecord]] = {}
        self.next_n = 0
        self.shards_done = 0
        self.total = 0
        self.causes: Diagnosed | None = None  # named by the worker that judged the whole model

    @property
    def ledger(self) -> Tally:
        assert self.tally is not None  # records come after the Started that makes it
        return self.tally

    @property
    def finished(self) -> bool:
        return self.shards_done == self.shards

    def read_done(self, options: CompareOptions) -> None:
        """The cases an interrupted run finished (--resume): the workers skip them, and the ledger
        counts them from the journal as soon as it exists."""
        journal = options.services.journal
        if journal is not None and journal.resumed:  # (a new journal holds none of them)
            for case in whole_cases(journal.records(self.model.name, self.index), options.ops):
                self.done.add(case[0].n)
        self.done_read = True

    def start(self, started: Started, options: CompareOptions) -> None:
        """A worker's or actor's first message (which backends started, their versions, seconds
        loading): the first makes the ledger and counts what the journal holds; every one adds its
        loading time."""
        if self.tally is None:
            join_backends(self.results.backends, started.versions)
            self.results.options.update(started.options)
            self.tally = tally_of(self.model, started, options, self.results)
            self.replay_journal(options)
            self.advance(options)
        self.ledger.timing["load"] += started.load_seconds

    def replay_journal(self, options: CompareOptions) -> None:
        """Count what the journal holds of this model (``--resume``), once the tally exists. Workers
        and actors had to know the positions done before (``read_done``); a model judged in this
        process learns them here, in the one read of the journal its replay makes."""
        journal = options.services.journal
        if journal is None or not journal.resumed or (self.done_read and not len(self.done)):
            return
        replayed = self.ledger.replay(journal, self.index)
        if not self.done_read:
            self.done = replayed
        if journal.duplicates:
            options.say(f"{journal.path}: {duplicates_note(journal)}")

    def take(self, records: list[CaseRecord], options: CompareOptions) -> None:
        """Judged records, from any worker in any order: applied as soon as they are next."""
        for record in records:
            self.waiting.setdefault(record.n, []).append(record)
        self.advance(options)

    def advance(self, options: CompareOptions) -> None:
        """Apply the waiting records that are next in case order (and journal them, in one write)."""
        applied: list[CaseRecord] = []
        with holding_ctrl_c():  # counted and journaled together, or not at all
            while True:
                while self.next_n in self.done:
                    self.next_n += 1
                records = self.waiting.pop(self.next_n, None)
                if records is None:
                    break
                for record in records:
                    if record.too_long:
                        options.say(too_long_message(record, options))
                applied += journaled(self.ledger, records)
                self.done.add(self.next_n)
                if (self.next_n + 1) % 500 == 0:
                    options.services.tick(f"{self.model.name}: {self.next_n + 1} cases")
            if options.services.journal is not None:
                options.services.journal.write_many(applied, self.index)  # keyed by position

    def end(self, options: CompareOptions, runner: str) -> None:
        """Every record is in (``runner``: the flag, for the message if one is not)."""
        self.advance(options)
        if self.waiting:  # every worker sent all its records before saying it was done
            raise TokparityError(f"compare {runner}: internal error: cases {sorted(self.waiting)[:5]} of "
                                 f"{self.model.name} could not be counted in order; rerun with --jobs 1")
        judges = ", ".join(dict.fromkeys(self.ledger.judges.values()))  # each op's, as the table names them
        mismatches = sum(counts["mismatches"] for counts in self.ledger.counts.values())
        if not any(counts["cases"] for counts in self.ledger.counts.values()):  # (every case skipped: say no count)
            options.say(f"{self.model.name}: {self.total:,} cases read, none judged")
            return
        options.say(f"{self.model.name}: {self.total:,} cases read, {mismatches:,} mismatch{'' if mismatches == 1 else 'es'}"
                    + (f" against {judges}" if judges else " (no backend judged beside the oracle)"))


def merge_models(state: list[ModelLedger], results: ResultsSoFar, corpora: list[str]) -> None:
    """Each model's results into the run's, in model order: what one process would have built."""
    for m in state:
        if m.tally is None:
            continue
        tally = m.tally
        diagnosis = diagnosis_of(tally)
        # (here, in case order: the workers' records are all in; an interrupted model is not diagnosed)
        named = diagnosed(tally, diagnosis, corpora, m.causes) if m.finished else diagnosis.named(tally.judgements)
        m.results.runs.extend(settle(tally, named))
        results.absorb(m.results)


def duplicates_note(journal: Journal) -> str:
    lines = sorted(journal.duplicates)
    shown = ", ".join(map(str, lines[:5])) + (", …" if len(lines) > 5 else "")
    return f"{len(lines)} line(s) repeat a case already read (line {shown}): each case is counted once"
