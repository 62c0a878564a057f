"""What one model's judged cases add up to: the summaries (per compared backend: cases, skipped,
mismatches by class and by cause, unexplained), the tag rates, the notes on cases too long to run,
and the model's mismatches in case order.

    CaseRecord (judged here, in a worker, on a Ray actor, or replayed from the journal)
        ──► Tally.apply: cases, skips, tag rates; each Judgement kept, in case order
    Mismatch (each kept Judgement diagnosed and decided: tokparity.run.pipeline)
        ──► Tally.count: its class, cause, known divergence
        ──► Tally.run_summaries: a RunSummary per backend and op

The tally only counts: tokparity.run.pipeline calls the diagnosis and ``decide`` between
``apply`` and ``count``. Every way of running cases counts with this one type, in case order:
compare in one process, the ``--jobs`` parent and the Ray driver (``ledger.ModelLedger``), fuzz,
regress and the pytest plugin. So a report does not depend on where its cases were judged, nor on
whether the run was resumed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING

from tokparity.errors import BadJournal
from tokparity.records import CaseRecord, Decision, Diagnosed, Judgement, Mismatch
from tokparity.run.journal import Journal
from tokparity.run.journal.resume import DoneSet, whole_cases
from tokparity.run.ops import DECODER_WHY, compared_backends, judged_by_op
from tokparity.run.options import CompareOptions
from tokparity.run.oracle import choose_oracle
from tokparity.run.results import TOO_LONG_LISTED, ResultsSoFar, RunSummary

CHAT_WHY = ("the model's chat template rendered as transformers renders it (sandboxed jinja2), the prompt encoded by "
            "the oracle with no special tokens added and special-token text parsed, as apply_chat_template does")

if TYPE_CHECKING:
    from tokparity.zoo import ModelFiles

# What a runner states of one run's oracle, given its backend, op and mismatches: the oracle's
# name, why it judges, and how many more mismatches are unexplained (regress: a digest that changed).
Stated = Callable[[str, str, int], tuple[str, str, int]]


class Tally:
    """One model's counts, into ``results``: ``apply`` counts what a verdict says at once (cases,
    skips, mismatches, tag rates) and keeps each Judgement; ``count`` counts each mismatch once
    decided (classes, causes, known, unexplained, ties); ``run_summaries`` closes the counts."""

    def __init__(self, model: ModelFiles, chain: list[str], backend_names: list[str], decoder: str | None,
                 options: CompareOptions, results: ResultsSoFar):
        self.model, self.chain, self.options, self.results = model, chain, options, results
        self.compared = compared_backends(chain, backend_names)  # judged for encode
        # op -> the backends judged for it (tokparity.run.ops), and a summary per (backend, op)
        self.by_op = judged_by_op(options.ops, chain, decoder, backend_names)
        self.decoder = decoder or ""  # (tokparity.run.ops.decoder_of, chosen where the backends are)
        judges = {"encode": "/".join(chain), "chat": "template+" + next((c for c in chain if c != "golden"), "")}
        self.judges = {(n, op): judges.get(op, self.decoder) for op, names in self.by_op.items() for n in names}
        # (backend, op) -> what is counted so far: each number of RunSummary's ("cases", "ties", …), and its
        # classes, causes and first not-applicable cases; run_summaries makes the RunSummary of each
        self.counts: dict[tuple[str, str], Counter[str]] = {key: Counter() for key in self.judges}
        self.classes: dict[tuple[str, str], Counter[str]] = {key: Counter() for key in self.judges}
        self.causes: dict[tuple[str, str], Counter[str]] = {key: Counter() for key in self.judges}
        self.not_applicable_cases: dict[tuple[str, str], list[str]] = {key: [] for key in self.judges}
        # (backend, op) -> the positions of the cases it did not agree on: the verdicts are checked on the others
        self.not_agreeing: dict[tuple[str, str], set[int]] = {key: set() for key in self.judges}
        self.oracles_used: set[str] = set()
        self.judgements: list[Judgement] = []  # this model's mismatches, in case order, to be decided
        # seconds: "load" (vocabulary and backends), each backend's own encode time, "diagnose", …
        self.timing = results.model_timing(model.name)
        if options.services.known:
            for n, op in self.judges:
                options.services.known.note_run(model.name, n, op)

    def apply(self, record: CaseRecord) -> None:
        """Count one judged case. The same code counts a case judged now and one replayed from
        the journal of an interrupted run. A mismatch whose judgement the record holds is kept, to
        be decided once diagnosed; one without (fuzz keeps only the class of most cases) is counted as its
        verdict and the record's cause say."""
        if record.too_long:
            self._note_too_long(record)
            return
        self.oracles_used.add(record.oracle)
        spent = self.timing["backends"]
        for name, seconds in record.seconds.items():
            spent[name] = spent.get(name, 0.0) + seconds
        judged_by = {j.backend: j for j in record.judgements} if record.judgements else {}
        judged: dict[str, bool] = {}  # each backend judged on the case: whether it mismatched
        op = record.op
        encoding = op == "encode"
        for name, verdict in record.verdicts.items():
            counts = self.counts.get((name, op))
            if counts is None:
                raise BadJournal(f"{self.model.name}: the journal has {record.op} verdicts of {name}, which this run "
                                 f"does not compare ({', '.join(self.by_op.get(record.op, ())) or 'none'}); resume "
                                 "with the same backends installed and the same --ops, or start a new run")
            kind = verdict.kind
            if kind in ("skipped", "not-applicable"):
                if kind == "skipped":
                    counts["skipped"] += 1
                else:
                    counts["not_applicable"] += 1
                    listed = self.not_applicable_cases[(name, op)]
                    if len(listed) < TOO_LONG_LISTED:
                        listed.append(f"{record.corpus}/{record.case_id}")
                self.not_agreeing[(name, op)].add(record.n)
                continue
            counts["cases"] += 1
            judged[name] = kind != "agree"
            if kind == "agree":
                continue
            self.not_agreeing[(name, op)].add(record.n)
            counts["mismatches"] += 1
            judgement = judged_by.get(name)
            if judgement is not None:
                self.judgements.append(judgement)
            else:  # (its cause is the runner's to count: fuzz settles its findings' causes at the end)
                self._count(name, record.op, Decision(verdict.cls, "", verdict.known, record.causes.get(name, "")),
                            count_cause=False)
        # The tag rates count the cases of each model and backend apart: an agreeing backend, or a
        # model it gets right, would dilute a failing one's rate. A decoding op's tags are counted apart too ("stream:script=Latn").
        if not judged:
            return
        keys = record.tally if encoding else [f"{op}:{key}" for key in record.tally]
        by_backend = self.results.tag_rates.setdefault(self.model.name, {})
        for name, mismatched in judged.items():
            rates = by_backend.setdefault(name, {})
            for key in keys:
                rate = rates.get(key)
                if rate is None:
                    rate = rates[key] = {"cases": 0, "mismatches": 0}
                rate["cases"] += 1
                rate["mismatches"] += mismatched

    def replay(self, journal: Journal, slot: int) -> DoneSet:
        """Count the cases ``journal`` holds of this model (``slot``: its place on the command line)
        as they were counted when judged (``--resume``), and say how many; the positions counted."""
        done = DoneSet()
        for case in whole_cases(journal.records(self.model.name, slot), self.options.ops):
            for record in case:
                try:
                    self.apply(record)
                except BadJournal as e:  # a verdict of a backend this run does not compare
                    raise BadJournal(f"{journal.path}:{record.line}: {e}") from None
            done.add(case[0].n)
        if len(done):
            self.options.say(f"{self.model.name}: {len(done):,} cases from {journal.path}, running the rest")
        return done

    def _note_too_long(self, record: CaseRecord) -> None:
        note = self.results.options.setdefault("too_long", {"max_chars": self.options.max_chars, "cases": 0,
                                                             "first": []})
        note["cases"] += 1
        if len(note["first"]) < TOO_LONG_LISTED:
            note["first"].append({"model": record.model, "corpus": record.corpus, "case_id": record.case_id,
                                  "line_bytes" if record.unread else "chars": record.too_long})

    def _count(self, backend: str, op: str, decision: Decision, count_cause: bool = True) -> None:
        """One mismatch's decision, into its backend's summary of that op."""
        self.classes[(backend, op)][decision.cls] += 1
        if decision.tie:
            self.counts[(backend, op)]["ties"] += 1
        elif not decision.known:
            self.counts[(backend, op)]["unexplained"] += 1
        if decision.cause and count_cause:
            self.causes[(backend, op)][decision.cause] += 1

    # -- the end ----------------------------------------------------------------------------------

    def count(self, mismatch: Mismatch) -> None:
        """One kept judgement, decided: counted into its backend's summary of its op, and listed
        in the results' mismatches (called in case order)."""
        self._count(mismatch.backend, mismatch.op, mismatch.decision)
        self.results.mismatches.append(mismatch)

    def run_summaries(self, diagnosed: Diagnosed | None = None, causes: dict[str, dict[str, int]] | None = None,
                      stated: Stated | None = None) -> list[RunSummary]:
        """A RunSummary per backend and op, each naming its verdict (``diagnosed``: None when the
        run stopped before naming causes) and the oracles that really judged its cases (golden ids
        only where they had the text). ``causes``: per backend, the causes of the cases counted by
        their verdicts, as the runner counted them (fuzz: those of failures, as its findings
        settled them). ``stated``: what the runner says of each run's oracle, where it knows more
        than the tally (regress: the goldens file that stands for it)."""
        if diagnosed is not None:
            self.timing["diagnose"] = self.timing.get("diagnose", 0.0) + diagnosed.seconds
        used = "/".join(n for n in self.chain if n in self.oracles_used) or "/".join(self.chain)
        why = choose_oracle(self.model, self.options.oracle, self.options.add_special).why
        summaries = []
        for (name, op), counts in self.counts.items():
            found = Counter(self.causes[(name, op)])
            if op == "encode":
                found.update((causes or {}).get(name, {}))
                oracle, oracle_why = used, why
            else:  # judged against the decoder (chat: the template reference)
                oracle, oracle_why = self.judges[(name, op)], CHAT_WHY if op == "chat" else DECODER_WHY
            unexplained = counts["unexplained"]
            if stated is not None:
                oracle, oracle_why, more = stated(name, op, counts["mismatches"])
                unexplained += more
            root = diagnosed.root_causes.get((name, op)) if diagnosed is not None else None
            summaries.append(RunSummary(
                self.model.name, oracle, name, cases=counts["cases"], mismatches=counts["mismatches"],
                unexplained=unexplained, classes=dict(self.classes[(name, op)]), skipped=counts["skipped"],
                not_applicable=counts["not_applicable"], not_applicable_cases=tuple(self.not_applicable_cases[(name, op)]),
                ties=counts["ties"], causes=dict(sorted(found.items(), key=lambda kv: -kv[1])), root_cause=root,
                oracle_why=oracle_why, op=op))
        return summaries
