"""The fuzz run of one model: cases from the generators and Hypothesis, judged, diagnosed,
counted by cause, and each cause not seen before shrunk to a finding."""

from __future__ import annotations

import hashlib
import itertools
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from tokparity import __version__
from tokparity.backends.base import Answer
from tokparity.corpus import Case
from tokparity.errors import Damaged, TokparityError
from tokparity.fuzz.findings import KNOWN, TIE, UNEXPLAINED, Finding, attribute, finding_keys, key_label, keys_of, shows
from tokparity.fuzz.generators import EVERY, GENERATORS, generate
from tokparity.fuzz.ledger import FLUSH_SECONDS, Ledger, read_counted
from tokparity.fuzz.sample import VerdictCases
from tokparity.fuzz.shrink import shrink
from tokparity.fuzz.steering import AGREED, EXPLAINED, NEW, OUTCOMES, Steering, generator_of
from tokparity.records import CaseRecord, Judgement, Mismatch, Verdict
from tokparity.run.journal import Journal
from tokparity.run.journal.resume import DoneSet
from tokparity.run.options import CompareOptions
from tokparity.run.oracle import oracle_chain
from tokparity.run.pipeline import ModelPipeline
from tokparity.run.results import FuzzSummary, Results, ResultsSoFar, SeamCovered
from tokparity.vocab.token_bytes import token_bytes
from tokparity.whole_files import open_unfollowed, write_text_whole
from tokparity.zoo import resolve_model

PROGRESS_EVERY = 5.0  # seconds between progress lines
# The generators' share of a case budget when Hypothesis runs after them. A generated case costs
# about a fifth of a Hypothesis case, so this is about half the time, as the time budget is shared.
CASE_SHARE = 0.8
HYPOTHESIS_BATCH = 100  # examples per Hypothesis run (each batch has its own seed)
SEEN_LIMIT = 1_000_000  # texts remembered to skip repeats
# Tags that name one case (a vocabulary piece's id, a code point): not a group to rate, and in the
# journal each would make its case a shape of its own.
PER_CASE_TAGS = ("token_id=", "codepoint=")
VERDICT_SHARE = 0.1  # of --seconds, left after the cases for the verdicts and naming the findings again


@dataclass
class FuzzOptions:
    seconds: float = 60.0
    cases: int | None = None  # a budget in work as well: stop after this many cases (the same on any machine)
    seed: int = 0
    generators: list[str] | None = None  # None: all of them
    hypothesis: bool = True
    exitfirst: bool = False  # stop at the first failing finding (once shrunk)
    shrink_seconds: float | None = None  # per finding; default: a quarter of the budget, 2–20 s
    findings_path: Path | None = None  # written as findings are made
    journal: Journal | None = None  # the cases and findings as they are done; a reopened one is resumed

    def shrink_budget(self) -> float:
        if self.shrink_seconds is not None:
            return self.shrink_seconds
        return max(2.0, min(20.0, self.seconds / 4))


@dataclass
class FuzzResult:
    """What the fuzzer found as it went (``run_fuzz`` returns it beside the run's ``Results``)."""

    findings: list[Finding] = field(default_factory=list)
    cases: int = 0
    by_source: dict[str, int] = field(default_factory=dict)  # cases per corpus (gen:NAME, hypothesis)
    raw: dict[str, int] = field(default_factory=dict)  # "backend / class" -> mismatching cases
    interrupted: bool = False  # stopped by Ctrl-C
    resumed: int = 0  # cases taken from the journal of an interrupted run

    @property
    def failed(self) -> bool:
        return any(f.failing for f in self.findings)


def _checked_note(note: dict) -> tuple[float, int | None, Finding | None]:
    """A journal note's time used, where the generators ended, and its finding, each checked."""
    elapsed = note.get("elapsed", 0.0)
    if type(elapsed) not in (int, float) or not 0 <= elapsed < 1e9:  # (NaN fails both)
        raise Damaged(f"'elapsed' is {elapsed!r}, not a number of seconds")
    generators_end = note.get("generators_end")
    if generators_end is not None and not (type(generators_end) is int and 0 <= generators_end < 2**63):
        raise Damaged(f"'generators_end' is {generators_end!r}, not a case position")
    finding = Finding.checked(note["finding"]) if "finding" in note else None
    return float(elapsed), generators_end, finding


class Fuzzer:
    """One model, its backends and the bookkeeping of one fuzz run."""

    def __init__(self, pipeline: ModelPipeline, options: FuzzOptions, say: Callable[[str], None] | None = None):
        self.pipeline = pipeline
        self.run = run = pipeline.run
        self.options = options
        self.say = say or (lambda message: None)
        self.oracle = run.chain[0]
        self.started = time.monotonic()
        self.deadline = self.started + (1 - VERDICT_SHARE) * options.seconds  # (the cases'; then the verdicts)
        self.result = FuzzResult()
        self.found: dict[tuple[str, str], Finding | None] = {}  # (backend, key) -> its finding
        self.counts: dict[tuple[str, str], int] = {}  # (backend, key) -> cases
        self.causes: dict[str, dict[str, int]] = {}  # backend -> cause -> cases (the summaries' causes)
        self.seen: set[str] = set()
        self.stop = False
        self.steering: Steering | None = None
        self._oracle_cache: dict[str, Answer] = {}
        self._last_progress = self._last_note = self.started
        self.journal: Journal | None = options.journal
        self.ledger = Ledger(self.journal) if self.journal is not None else None
        self.n = 0  # position of the next distinct case (the journal's key)
        self.done = DoneSet()  # cases a resumed run takes from the journal
        self.outcomes = bytearray()  # ... and what each showed (steering replays them)
        self.replay_to = 0  # ... up to this position
        self.generators_end: int | None = None  # where the interrupted run went on to Hypothesis
        self.seam_cases: dict[str, int] = {}  # seam -> cases run (the unicode-seams generator's tags)
        self.kept = VerdictCases(options.seed)  # the cases each backend's verdict is weighed on
        if self.journal is not None:
            self._replay(self.journal)

    # resuming -------------------------------------------------------------------------------

    def _replay(self, journal: Journal) -> None:
        """Count the cases and take the findings of the interrupted run; its clock goes on."""
        used = 0.0
        found_at: set[int] = set()
        counted: set[tuple[object, object]] = set()  # the ranges of the counted notes read (a line twice: once)
        for lineno, note in journal.notes():
            try:
                elapsed, generators_end, finding = _checked_note(note)
                span = (note["counted"].get("from"), note["counted"].get("to")) if isinstance(
                    note.get("counted"), dict) else None
                if span is not None and span in counted:
                    continue
                if span is not None:
                    counted.add(span)
                if "counted" in note:
                    for n, outcome, record, causes, count in read_counted(note):
                        if record is None:
                            self._done(n, outcome)
                        else:
                            self._count_in(record, causes, count)
            except Damaged as e:
                raise journal.damaged(lineno, str(e)) from None
            used = max(used, elapsed)
            if generators_end is not None:
                self.generators_end = generators_end
            if finding is not None:
                finding.key = finding.key or finding_keys(finding.mismatch)[0]
                if (finding.backend, finding.key) in self.found:  # (a finding's line twice: listed once)
                    continue
                self.found[(finding.backend, finding.key)] = finding
                self.result.findings.append(finding)
                self.run.results.mismatches.append(finding.mismatch)
                found_at.add(finding.n)
        for record in journal.records(self.run.model.name):
            # (0.1: no causes; the reports list findings, not cases)
            record_causes = record.causes or {m.backend: m.cause for m in record.journaled() if m.cause}
            self._count_in(record, record_causes, 1)
            if self.ledger is not None:
                self.ledger.restored(record.verdicts, record_causes)
            if not self._outcome(record.n):
                self._done(record.n, NEW if record.n in found_at else EXPLAINED)
        self.result.resumed = len(self.done)
        self.stop = self.options.exitfirst and any(f.failing for f in self.result.findings)
        self.started -= used
        self.deadline -= used
        if len(self.done):
            self.say(f"fuzz {self.run.model.name}: {len(self.done)} cases and {len(self.result.findings)} findings "
                     f"from {journal.path}; {used:.0f} of {self.options.seconds:.0f} s used, going on")

    def _done(self, n: int, outcome: str) -> None:
        self.done.add(n)
        self.replay_to = max(self.replay_to, n + 1)
        if n >= len(self.outcomes):
            self.outcomes.extend(b"\0" * (n + 1 - len(self.outcomes)))
        self.outcomes[n] = ord(outcome)

    def _outcome(self, n: int) -> str:
        return chr(self.outcomes[n]) if n < len(self.outcomes) and self.outcomes[n] else ""

    def _replaying(self) -> bool:
        """A resumed run goes over the interrupted one's cases (skipped, not run) whatever the clock."""
        return self.n < self.replay_to

    # counting -------------------------------------------------------------------------------

    def _count_in(self, record: CaseRecord, causes: Mapping[str, str], count: int) -> None:
        """Count ``count`` cases of this record's verdicts (a case judged now, or replayed) into the
        summaries, the sources and each cause's cases. The tally counts them by their verdicts and
        ``causes``, as fuzz decided them: the reports list findings, not cases."""
        counted = replace(record, judgements=(), decisions=(), causes=causes)
        self.pipeline.count(counted for _ in range(count))
        self.result.cases += count
        self.result.by_source[record.corpus] = self.result.by_source.get(record.corpus, 0) + count
        seam = _seam_of(record)
        if seam:
            self.seam_cases[seam] = self.seam_cases.get(seam, 0) + count
        for backend, verdict in record.verdicts.items():
            if not verdict.mismatch:
                continue
            cls, known = verdict.cls, verdict.known
            label = f"{backend} / {cls}"
            self.result.raw[label] = self.result.raw.get(label, 0) + count
            cause = causes.get(backend, "")
            for key in keys_of(cls, known, cause):
                self.counts[(backend, key)] = self.counts.get((backend, key), 0) + count
            if cause:
                per = self.causes.setdefault(backend, {})
                per[cause] = per.get(cause, 0) + count

    def count_findings(self) -> None:
        """Each finding's count, from every case of the run."""
        for f in self.result.findings:
            f.count = self.counts.get((f.backend, f.key), f.count)

    def seams_covered(self) -> list[SeamCovered]:
        """The Unicode and regex-engine seams this run's cases probed, with their number of cases."""
        from tokparity.fuzz.seams import seams_covered

        return seams_covered(self.seam_cases)

    # the run ---------------------------------------------------------------------------------

    def fuzz(self) -> FuzzResult:
        use_hypothesis = self.options.hypothesis and _hypothesis_available()
        if self.options.hypothesis and not use_hypothesis:
            self.say("hypothesis is not installed (pip install hypothesis): generators only")
            self.run.results.options.setdefault("notes", []).append("hypothesis not installed: generators only")
        share = 0.5 if use_hypothesis else 1.0
        cases = self.options.cases
        self._generator_phase(self.started + share * (self.deadline - self.started),
                              None if cases is None else round((CASE_SHARE if use_hypothesis else 1.0) * cases))
        if use_hypothesis:
            if self.journal is not None and self.generators_end is None:
                self._note({"generators_end": self.n})
            self._hypothesis_phase(self.deadline, cases)
        try:
            self.settle()
        except KeyboardInterrupt:  # (the findings as they stand, written; the reports say the run stopped)
            self.result.interrupted = True
            self._rewrite_findings()
        return self.result

    def settle(self) -> None:
        """Findings named before the run knew better, named again.

        A case's diagnosis chooses among the variants that reproduce it by how many of the
        backend's cases each reproduced so far; the first cases are named with little to go on
        (a greedy engine's first text may be reproduced by merges taken by rank too; the seams,
        which run first, are diagnosed before anything else). At the end each backend gets its
        verdict, weighed on the cases kept for it (VerdictCases). Each finding's text is then
        diagnosed again and read as that verdict reads it: one engine, one cause. A finding that
        now reads as the cause of another finding of its backend is folded into it (its cases
        counted there); one that reads as a cause no finding has is renamed. A finding that
        still reads as its own cause stays."""
        judged = self._verdicts()
        for f in list(self.result.findings):
            as_run = f.backend in judged
            # A class or a tie holds cases of many causes. Its finding is read again only under a
            # verdict, and not where the engine failed: a timeout costs the case's whole time.
            loose = f.key.startswith(UNEXPLAINED) or f.key == TIE
            if f.key.startswith(KNOWN) or f.n < 0 or (loose and (not as_run or f.cls in ("crash", "timeout"))):
                continue
            m = self.probe(f.text, f.backend, as_run)
            if m is None or len(finding_keys(m)) != 1 or finding_keys(m)[0] in (f.key, UNEXPLAINED + m.cls):
                continue  # (the new reading also reproduces the finding's text exactly: it is that cause's case)
            target = finding_keys(m)[0]
            self.say(f"fuzz {self.run.model.name}: {key_label(f.key)} on {f.backend} is named {key_label(target)}, "
                     "as the whole run reads its text")
            self._move_count(f.backend, f.key, target, 1 if loose else None)
            other = self.found.get((f.backend, target))
            del self.found[(f.backend, f.key)]
            if other is not None:
                other.found_after = min(other.found_after, f.found_after)
                self.result.findings.remove(f)
                self.run.results.mismatches.remove(f.mismatch)
                continue
            f.key, f.cls = target, m.cls
            renamed = Mismatch(f.mismatch.judgement, replace(
                f.mismatch.decision, cls=m.cls, cause=m.cause, cause_evidence=m.cause_evidence, variants=m.variants,
                alternatives=m.alternatives), m.diagnosis)
            listed = self.run.results.mismatches
            listed[listed.index(f.mismatch)] = f.mismatch = renamed
            self.found[(f.backend, target)] = f
        self._fold_same_texts()
        self._rewrite_findings()

    def _verdicts(self) -> set[str]:
        """Each backend's verdict on the cases kept for it: the backends that have one."""
        judged = set()
        for backend, kept in self.kept.mismatches.items():
            agreed = self.kept.agreeing(backend)
            verdict = self.pipeline.verdict_on(backend, kept.items, agreed)
            if verdict is None:
                continue
            judged.add(backend)
            library = (f" {kept.skipped:,} more mismatches are left out: the library of its file gives them too."
                       if kept.skipped else "")
            said = (f"{self.run.model.name}: {backend}'s verdict is weighed on {verdict.mismatches:,} of its "
                    f"{kept.seen:,} mismatches and {verdict.agreements:,} of its agreements, kept at random.{library}")
            self.say(f"fuzz {said}")
            self.run.results.options.setdefault("notes", []).append(said)
        return judged

    def _fold_same_texts(self) -> None:
        """One bug, one finding: a finding no variant reproduced, shrunk to the very text of a
        finding of the same backend that has a cause, is that cause's case read with less to go
        on: it folds into it (its cases counted there). Two findings with causes stay apart even on
        one text (a text that shows two bugs is shrunk once for each)."""
        named = {(f.backend, f.text): f for f in reversed(self.result.findings)
                 if not f.key.startswith((KNOWN, UNEXPLAINED)) and f.key != TIE and f.n >= 0}
        for f in list(self.result.findings):
            kept = named.get((f.backend, f.text))
            if kept is None or not f.key.startswith(UNEXPLAINED) or f.n < 0:
                continue
            self._move_count(f.backend, f.key, kept.key)
            kept.found_after = min(kept.found_after, f.found_after)
            del self.found[(f.backend, f.key)]
            self.result.findings.remove(f)
            self.run.results.mismatches.remove(f.mismatch)

    def _move_count(self, backend: str, old: str, new: str, cases: int | None = None) -> None:
        """The cases counted under ``old`` counted under ``new``: all of them, or ``cases`` (a class
        holds cases of other causes too: only the finding's own moves)."""
        had = self.counts.pop((backend, old), 0)
        moved = had if cases is None else min(cases, had)
        if had > moved:
            self.counts[(backend, old)] = had - moved
        self.counts[(backend, new)] = self.counts.get((backend, new), 0) + moved
        causes = self.causes.get(backend, {})
        if old in causes:
            causes[new] = causes.get(new, 0) + causes.pop(old)

    def _rewrite_findings(self) -> None:
        """fuzz-findings.jsonl as the findings now stand (written whole, then renamed over the old one)."""
        path = self.options.findings_path
        if path is None:
            return
        write_text_whole(path, "".join(json.dumps(f.record(self.options.seed), ensure_ascii=False) + "\n"
                                       for f in self.result.findings))

    def close(self) -> None:
        """The last counts and the time used, to the journal."""
        if self.journal is not None:
            self._note({})

    def _spent(self, until: float, cases: int | None) -> bool:
        """The phase's time or cases are used up. A resumed run goes over its journal's cases first."""
        return not self._replaying() and (time.monotonic() >= until or (cases is not None and self.n >= cases))

    def _generator_phase(self, until: float, cases: int | None) -> None:
        names = self.options.generators or list(GENERATORS)
        self.steering = Steering({n: generate(n, self.run.vocab, self.options.seed) for n in names}, EVERY)
        for case in self.steering:
            if self.stop or (self.generators_end is not None and self.n >= self.generators_end):
                return  # a resumed run: the interrupted one had moved on to Hypothesis here
            if self.generators_end is None and self._spent(until, cases):
                return
            self.handle(case)

    def _hypothesis_phase(self, until: float, cases: int | None) -> None:
        from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings

        from tokparity.fuzz.strategies import any_text

        strategy = any_text(self.run.vocab)
        counter = itertools.count()
        batch = 0
        # (a case budget also ends the phase after ten draws per case: texts seen before are not cases)
        while not self.stop and not self._spent(until, cases) and (cases is None or batch < cases // 10 + 10):
            @settings(max_examples=HYPOTHESIS_BATCH, deadline=None, database=None, phases=[Phase.generate],
                      suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)
            @seed(self.options.seed * 1_000_003 + batch)
            @given(strategy)
            def body(text: str) -> None:
                if self.stop or self._spent(until, cases):
                    return
                self.handle(Case(f"hypothesis-{next(counter):06d}", text, "hypothesis", {"kind": "hypothesis"}))

            body()
            batch += 1

    def handle(self, case: Case) -> None:
        """Run one case on every backend, count it by cause, and shrink each cause not seen before."""
        if case.text in self.seen:
            return
        if len(self.seen) >= SEEN_LIMIT:  # a long run forgets, rather than grow without bound
            self.seen.clear()
        self.seen.add(case.text)
        n, self.n = self.n, self.n + 1
        if n in self.done:  # judged before the interruption: counted from the journal
            self._steer(case, self._outcome(n) or EXPLAINED)
            return
        judged = self.run.judge(case, n)
        self.pipeline.agreed(judged, case.text)
        mismatches = [self._decided(j) for j in judged.judgements]
        for backend, verdict in judged.verdicts.items():
            if verdict.kind == "agree":
                self.kept.agreed(backend, case.text)
        for m in mismatches:
            self.kept.differed(m)
        keys = {m.backend: attribute(m, self._found_keys(m.backend)) for m in mismatches}
        # A known divergence counts under its cause too, as in a compare run: its cause is reproduced.
        causes = {b: "+".join(ks) for b, ks in keys.items() if not ks[0].startswith((KNOWN, UNEXPLAINED))}
        causes.update({m.backend: m.cause for m in mismatches if m.known and m.cause})
        record = replace(judged, tally=tuple(key for key in judged.tally if not key.startswith(PER_CASE_TAGS)),
                         verdicts={**judged.verdicts, **{m.backend: Verdict.differs(m.cls, m.known) for m in mismatches}},
                         decisions=tuple(m.decision for m in mismatches), causes=causes)
        self._count_in(record, causes, 1)
        new = [(m, key) for m in mismatches for key in keys[m.backend] if (m.backend, key) not in self.found]
        for m, key in new:
            self.found[(m.backend, key)] = None  # (taken: a text showing two new causes is shrunk for each)
        for m, key in new:
            if self.stop:
                break
            finding = self._found(case, m, key, n)
            self.stop = self.options.exitfirst and finding.failing
        outcome = NEW if new else EXPLAINED if mismatches else AGREED
        if self.ledger is not None:  # after its findings: a case cut short by a kill is run again
            self.ledger.add(n, record, outcome, keys, causes)
            if time.monotonic() - self._last_note >= FLUSH_SECONDS:  # the counts, and the clock for a resume
                self._note({})
        self._steer(case, outcome)
        self._progress()

    def _found_keys(self, backend: str) -> set[str]:
        return {key for b, key in self.found if b == backend}

    def _steer(self, case: Case, outcome: str) -> None:
        if self.steering is not None and outcome in OUTCOMES:
            self.steering.update(generator_of(case), outcome)

    def _decided(self, judgement: Judgement) -> Mismatch:
        """``judgement`` diagnosed and decided now (fuzz steers by causes case by case): its cause
        (its class then fits it) and the known divergence it is, if any."""
        return self.pipeline.decided(judgement)

    def _note(self, entry: dict) -> None:
        assert self.journal is not None and self.ledger is not None
        self._last_note = time.monotonic()
        self.ledger.flush({**entry, "elapsed": round(self._last_note - self.started, 3)})

    # shrinking ----------------------------------------------------------------------------

    def probe(self, text: str, backend: str, as_run: bool = False) -> Mismatch | None:
        """The mismatch of ``backend`` against the oracle on ``text`` (diagnosed, and read as the
        backend's verdict reads it where ``as_run``), or None when they agree."""
        run = self.run
        oracle = self._oracle_cache.get(text)
        if oracle is None:
            oracle = self._oracle_cache[text] = run.ask_one(self.oracle, text)
        answer = run.ask_one(backend, text)
        if "skipped" in (oracle.status, answer.status):
            return None
        if oracle.status == answer.status == "ok" and oracle.ids == answer.ids:
            return None
        judgement = run.judged_alone(Case("fuzz-probe", text, "fuzz"), self.oracle, oracle, backend, answer)
        return self.pipeline.decided_as_run(judgement) if as_run else self._decided(judgement)

    def _found(self, case: Case, first: Mismatch, key: str, n: int) -> Finding:
        """Shrink ``case`` to the smallest text on which ``first.backend`` still shows ``key``."""
        found_after = time.monotonic() - self.started
        t0 = time.monotonic()
        budget = self.options.shrink_budget()
        deadline = t0 + max(min(budget, self.deadline - t0), min(budget, 2.0))

        def still_fails(text: str) -> bool:
            if first.cls in ("crash", "timeout"):
                # Let the engine answer something first: an engine that dies on a text before it has
                # answered anything since its start counts as one that cannot start, and is given up.
                self.run.ask_one(first.backend, "a")
            return shows(self.probe(text, first.backend), key)

        if key.startswith(KNOWN):  # intended behaviour, reviewed: not worth the search's time
            text, probes = case.text, 0
        else:
            text, probes = shrink(case.text, still_fails, deadline, focus=self._where_they_part(first))
        minimal = self.probe(text, first.backend) if text != case.text else first
        if minimal is None or not shows(minimal, key):  # a flaky engine: keep the case as it came
            text, minimal = case.text, first
        model = self.run.model.name
        digest = hashlib.sha1(f"{first.backend}\0{key}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()[:8]
        finding = Finding(
            id=f"fuzz-{model}-{minimal.cls}-{digest}", model=model, backend=first.backend, oracle=self.oracle,
            cls=minimal.cls, text=text, original=case, mismatch=minimal, found_after=found_after,
            shrink_seconds=time.monotonic() - t0, probes=probes, key=key, n=n,
            count=self.counts.get((first.backend, key), 1))
        tags = finding.record(self.options.seed)["tags"]
        finding.mismatch = Mismatch(replace(
            minimal.judgement, corpus="fuzz", case_id=finding.id, tags=tags,
            evidence=f"{minimal.evidence} (shrunk from {_show(case.text, 80)} of {case.corpus}/{case.id})"),
            minimal.decision, minimal.diagnosis)
        self.found[(first.backend, key)] = finding
        self.result.findings.append(finding)
        self.run.results.mismatches.append(finding.mismatch)
        if self.options.findings_path is not None:
            with open_unfollowed(self.options.findings_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(finding.record(self.options.seed), ensure_ascii=False) + "\n")
        if self.journal is not None:
            self.journal.note({"finding": finding.to_json(), "elapsed": round(time.monotonic() - self.started, 3)})
        self.say(f"found {key_label(key)} on {first.backend} after {found_after:.1f} s ({case.corpus}): "
                 f"{_show(case.text, 60)} shrunk to {_show(text, 60)} in {finding.shrink_seconds:.1f} s "
                 f"({probes} tries)")
        return finding

    def _where_they_part(self, m: Mismatch) -> int | None:
        """About where in its text ``m``'s two id lists part: the character the bytes of the
        oracle's tokens before the first differing one reach (a dummy prefix or a normalizer may
        shift it by a few)."""
        j = m.judgement
        if j.op != "encode" or not j.oracle_ids or j.cls in ("crash", "timeout"):
            return None
        spent = sum(len(token_bytes(self.run.vocab, i)) for i in j.oracle_ids[:j.first_diff])
        return len(j.text.encode("utf-8", "surrogatepass")[:spent].decode("utf-8", "ignore"))

    def _progress(self) -> None:
        now = time.monotonic()
        if now - self._last_progress < PROGRESS_EVERY:
            return
        self._last_progress = now
        r = self.result
        self.say(f"fuzz {self.run.model.name}: {now - self.started:.0f}/{self.options.seconds:.0f} s, "
                 f"{r.cases} cases, {sum(r.raw.values())} mismatching, {len(r.findings)} causes found")


def _seam_of(record: CaseRecord) -> str:
    return next((key[5:] for key in record.tally if key.startswith("seam=")), "")


def _show(text: str, limit: int) -> str:
    shown = repr(text)
    return shown if len(shown) <= limit else shown[:limit - 1] + "…"


def _hypothesis_available() -> bool:
    try:
        import hypothesis  # noqa: F401
    except ImportError:
        return False
    return True


def run_fuzz(spec: str, backend_names: list[str] | None, options: CompareOptions,
             fuzz_options: FuzzOptions) -> tuple[Results, FuzzResult]:
    """Fuzz one model: ``backend_names`` (default: every backend its files allow) against the oracle
    (default: the model's training library; for a GGUF alone llama.cpp, since golden ids cover only
    their own texts)."""
    if fuzz_options.seconds <= 0:
        raise TokparityError(f"--seconds must be positive, not {fuzz_options.seconds:g}")
    started = time.perf_counter()
    results = ResultsSoFar(options={"add_special": options.add_special, "parse_special": options.parse_special})
    try:
        if not options.oracle:
            # golden ids judge only the texts they hold; a fuzzed text needs a library
            chain = oracle_chain(resolve_model(spec), options)
            options = replace(options, oracle=next(n for n in chain if n != "golden"))
        pipeline = ModelPipeline.open(spec, backend_names, options, results)
    except KeyboardInterrupt:  # (stopped while the backends start: nothing judged, the reports say so)
        results.interrupted = True
        fuzz = FuzzSummary(fuzz_options.seed, fuzz_options.seconds, 0, {}, {}, [], [])
        return results.final(__version__, time.perf_counter() - started, fuzz=fuzz), FuzzResult(interrupted=True)
    run = pipeline.run
    try:
        if not run.compared:
            raise TokparityError(f"nothing to fuzz on {run.model.name}: every backend named is the oracle "
                                 f"({run.chain[0]}); name another with -b")
        resuming = fuzz_options.journal is not None and fuzz_options.journal.resumed
        if fuzz_options.findings_path is not None:
            Path(fuzz_options.findings_path).parent.mkdir(parents=True, exist_ok=True)
            if not (resuming and Path(fuzz_options.findings_path).exists()):
                Path(fuzz_options.findings_path).write_text("", "utf-8")
        fuzzer = Fuzzer(pipeline, fuzz_options, options.services.progress)
        try:
            result = fuzzer.fuzz()
        except KeyboardInterrupt:  # Ctrl-C: the findings so far are the result
            result = fuzzer.result
            result.interrupted = results.interrupted = True
        fuzzer.close()
    finally:
        pipeline.close()
    results.runs.extend(pipeline.settle(fuzzer.causes))  # (no judgement kept: the verdicts alone)
    fuzzer.count_findings()
    fuzz = FuzzSummary(fuzz_options.seed, fuzz_options.seconds, result.cases, result.by_source, result.raw,
                       [f.summary() for f in result.findings], fuzzer.seams_covered())
    return results.final(__version__, time.perf_counter() - started, fuzz=fuzz), result
