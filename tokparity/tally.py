"""What one model's judged cases add up to: the summaries (per compared backend: cases, skipped,
mismatches by class and by cause, unexplained), the tag rates, the notes on cases too long to run,
and the model's mismatches in case order.

    CaseRecord (judged here, in a worker, on a Ray actor, or replayed from the journal)
        ──► Tally.apply ──► summaries, tag rates, mismatches ──► finish ──► RunSummary per backend

Every way of running cases counts with this one type, in case order: compare in one process, the
``--jobs`` parent and the Ray driver (``parallel.ModelLedger``), fuzz, regress and the pytest
plugin. So a report does not depend on where its cases were judged, nor on whether the run was
resumed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tokparity.journal import AGREE, SKIPPED, BadJournal, CaseRecord, DoneSet, Journal, Verdict
from tokparity.options import CompareOptions
from tokparity.oracle import choose_oracle
from tokparity.results import TOO_LONG_LISTED, Mismatch, Results, RunSummary

if TYPE_CHECKING:
    from tokparity.corpus import Case
    from tokparity.zoo import ModelFiles


def tally_keys(case: Case) -> list[str]:
    """The keys a case counts under in the report's rate table: its tags and its corpus."""
    return [f"{k}={v}" for k, v in case.tags.items() if isinstance(v, (str, int))] + [f"corpus={case.corpus}"]


def compared_backends(chain: list[str], backend_names: list[str]) -> list[str]:
    """The backends judged against the oracle: all but the chain's, except that the last of a
    chain of several (llama.cpp after golden ids) is judged where an earlier one answered."""
    return [n for n in backend_names if n not in chain or (n == chain[-1] and len(chain) > 1)]


class Tally:
    """One model's counts, into ``results`` (its mismatches are ``results.mismatches`` from the
    moment the tally is made: models are counted one after another)."""

    def __init__(self, model: ModelFiles, chain: list[str], backend_names: list[str], options: CompareOptions,
                 results: Results):
        self.model, self.chain, self.options, self.results = model, chain, options, results
        self.compared = compared_backends(chain, backend_names)
        self.summaries = {n: RunSummary(model.name, "/".join(chain), n) for n in self.compared}
        self.not_agreeing: dict[str, set[int]] = {n: set() for n in self.compared}  # case positions, per backend
        self.oracles_used: set[str] = set()
        # By position, not by name: two models of a run may share a name (two tokenizer.json).
        self.first = len(results.mismatches)
        self._symptoms: dict[int, str] = {}  # id(mismatch) -> its class before a cause changed it
        # seconds: "load" (vocabulary and backends), each backend's own encode time, "diagnose", …
        self.timing: dict = results.timing.setdefault(model.name, {"load": 0.0, "backends": {}})
        if options.known:
            for n in self.compared:
                options.known.note_run(model.name, n, decoding=options.decode)

    def mismatches(self) -> list[Mismatch]:
        """This model's mismatches, in case order."""
        return self.results.mismatches[self.first:]

    def apply(self, record: CaseRecord) -> None:
        """Count one judged case into the summaries, the tag rates and the mismatches. The same
        code counts a case judged now and one replayed from the journal of an interrupted run."""
        if record.too_long:
            self._note_too_long(record)
            return
        self.oracles_used.add(record.oracle)
        spent = self.timing["backends"]
        for name, seconds in record.seconds.items():
            spent[name] = spent.get(name, 0.0) + seconds
        by_backend = {m.backend: m for m in record.mismatches}
        judged = mismatched = 0
        for name, verdict in record.verdicts.items():
            summary = self.summaries.get(name)
            if summary is None:
                raise BadJournal(f"{self.model.name}: the journal has verdicts of {name}, which this run does not "
                                 f"compare ({', '.join(self.summaries) or 'none'}); resume with the same backends "
                                 "installed, or start a new run")
            if verdict == SKIPPED:
                summary.skipped += 1
                self.not_agreeing[name].add(record.n)
                continue
            summary.cases += 1
            judged += 1
            if verdict == AGREE:
                continue
            self.not_agreeing[name].add(record.n)
            cls, known = verdict.cls, verdict.known
            mismatch = by_backend.get(name)
            if mismatch is not None:  # (fuzz journals keep the class, not the whole mismatch)
                if self.options.known:
                    mismatch.known = known = self.options.known.match(mismatch)
                record.verdicts[name] = Verdict.differs(cls, known)
                self.results.mismatches.append(mismatch)
            summary.mismatches += 1
            summary.unexplained += 0 if known else 1
            summary.classes[cls] = summary.classes.get(cls, 0) + 1
            mismatched += 1
        if judged:  # the tag rates count (case, backend) pairs
            for key in record.tally:
                rate = self.results.tag_rates.setdefault(key, {"cases": 0, "mismatches": 0})
                rate["cases"] += judged
                rate["mismatches"] += mismatched

    def replay(self, journal: Journal, slot: int) -> DoneSet:
        """Count the cases ``journal`` holds of this model (``slot``: its place on the command line)
        as they were counted when judged (``--resume``), and say how many; the positions counted."""
        done = DoneSet()
        for record in journal.records(self.model.name, slot):
            try:
                self.apply(record)
            except BadJournal as e:  # a verdict of a backend this run does not compare
                raise BadJournal(f"{journal.path}:{record.line}: {e}") from None
            done.add(record.n)
        if len(done):
            self.options.say(f"{self.model.name}: {len(done)} cases from {journal.path}, running the rest")
        return done

    def _note_too_long(self, record: CaseRecord) -> None:
        note = self.results.options.setdefault("too_long", {"max_chars": self.options.max_chars, "cases": 0,
                                                             "first": []})
        note["cases"] += 1
        if len(note["first"]) < TOO_LONG_LISTED:
            note["first"].append({"model": record.model, "corpus": record.corpus, "case_id": record.case_id,
                                  "line_bytes" if record.unread else "chars": record.too_long})

    # -- classes changed by a cause ---------------------------------------------------------------

    def symptom(self, m: Mismatch) -> str:
        """The class the rules gave ``m``, before its cause set it."""
        return self._symptoms.get(id(m), m.cls)

    def set_class(self, m: Mismatch, cls: str) -> None:
        """``m``'s class, changed (by its cause) in its backend's counts too."""
        if cls == m.cls:
            return
        self._symptoms.setdefault(id(m), m.cls)
        classes = self.summaries[m.backend].classes
        classes[m.cls] -= 1
        if not classes[m.cls]:
            del classes[m.cls]
        classes[cls] = classes.get(cls, 0) + 1
        m.cls = cls

    # -- the end ----------------------------------------------------------------------------------

    def finish(self, count_causes: bool = True) -> list[RunSummary]:
        """The summaries, each naming the oracles that really judged its cases (golden ids only
        where they had the text), with their causes counted (``count_causes``: from the mismatches
        listed; fuzz lists only its findings and counts causes over every case itself)."""
        if count_causes:
            self._count_causes()
        used = "/".join(n for n in self.chain if n in self.oracles_used) or "/".join(self.chain)
        why = choose_oracle(self.model, self.options.oracle, self.options.add_special).why
        for s in self.summaries.values():
            s.oracle, s.oracle_why = used, why
        return list(self.summaries.values())

    def _count_causes(self) -> None:
        """The summaries' causes, ties and known divergences once causes are named: a class that
        changed is matched against the known list again; a known case without a reproduced cause
        carries its entry's reviewed one; a tie is reported apart, not as a failure."""
        known = self.options.known
        for m in self.mismatches():
            summary = self.summaries.get(m.backend)
            if summary is None:
                continue
            before = bool(m.known)
            if known is not None:
                if m.known and (entry := known.entry(m.known)) is not None:
                    entry.hits -= 1
                m.known = known.match(m)
                if m.known and not m.cause:
                    self.reviewed_cause(m)
            tie = m.cause == "model.viterbi-tie" and not m.known
            summary.unexplained += (0 if before else -1) + (0 if m.known or tie else 1)
            summary.ties += 1 if tie else 0
            if m.cause:
                summary.causes[m.cause] = summary.causes.get(m.cause, 0) + 1
        for summary in self.summaries.values():
            summary.causes = dict(sorted(summary.causes.items(), key=lambda kv: -kv[1]))

    def reviewed_cause(self, mismatch: Mismatch) -> None:
        """A known divergence whose cause no variant reproduces (a crash, text dropped by a
        converter) carries the cause its entry was reviewed with."""
        assert self.options.known is not None
        entry = self.options.known.entry(mismatch.known)
        if entry is not None and entry.cause:
            mismatch.cause = entry.cause
            mismatch.cause_evidence = (f"reviewed, not reproduced: the known divergence {entry.id!r} says so "
                                       f"({entry.upstream})")
