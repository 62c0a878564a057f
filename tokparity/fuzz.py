"""``fuzz``: generated texts against every backend until the time is up, each distinct failure
shrunk to a minimal text.

For one model the run is:

    generators (seeded, interleaved) ──► cases ──► ModelRun.run_case ──► new (backend, class)?
    then Hypothesis (tokparity.strategies.any_text) ──┘                        │ yes
                                                                              ▼
                     shrink: the smallest text on which that backend still disagrees with the
                     oracle in the same class ──► a finding: fuzz-findings.jsonl + the reports

A failure is distinct by ``(backend, class)``: the first case that shows it is shrunk, later
cases of the same pair are only counted. Shrinking is delta debugging on the text (``shrink``):
remove chunks, halving their size down to single characters, then replace characters by simpler
ones (``é`` → ``e`` → ``a``), and again until nothing changes or its time is up. Every attempt is
an encode on the oracle and that backend, nothing else.

The time budget covers everything but loading the model and backends: half of it (all of it
without Hypothesis) goes to the generators, taking turns one case each, the rest (and whatever
finite generators leave over) to Hypothesis; shrinking happens as failures are found, each
bounded by ``shrink_seconds``. Progress goes to ``say`` every few seconds and at each finding.
A run with the same seed tries the same texts in the same order, so the same engine gives the
same findings (how far it gets depends on speed).

The findings are a corpus (``{"id", "text", "tags": {"kind": "fuzz", "class", "backend", "model",
…}}``) ready to commit as regression cases and to replay with ``tokparity compare -c FILE``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
import time
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tokparity import __version__
from tokparity.compare import CompareOptions, ModelRun, _Answer, _ask, oracle_chain
from tokparity.corpus import Case
from tokparity.errors import TokparityError
from tokparity.generators import char_rank, generate_all
from tokparity.journal import AGREE, SKIPPED, Damaged, DoneSet, Journal, check_mismatch
from tokparity.results import Mismatch, Results
from tokparity.zoo import resolve_model

FINDINGS_FILE = "fuzz-findings.jsonl"
PROGRESS_EVERY = 5.0  # seconds between progress lines
HYPOTHESIS_BATCH = 100  # examples per Hypothesis run (each batch has its own seed)
SEEN_LIMIT = 1_000_000  # texts remembered to skip repeats


@dataclass
class FuzzOptions:
    seconds: float = 60.0
    seed: int = 0
    generators: list[str] | None = None  # None: all of them
    hypothesis: bool = True
    exitfirst: bool = False  # stop at the first distinct failure (once shrunk)
    shrink_seconds: float | None = None  # per failure; default: a quarter of the budget, 2–20 s
    findings_path: Path | None = None  # written as failures are found
    journal: Journal | None = None  # every case and finding as it is done; a reopened one is resumed

    def shrink_budget(self) -> float:
        if self.shrink_seconds is not None:
            return self.shrink_seconds
        return max(2.0, min(20.0, self.seconds / 4))


@dataclass
class Finding:
    """One distinct failure: the minimal text and the case that first showed it."""

    id: str
    model: str
    backend: str
    oracle: str
    cls: str
    text: str
    original: Case
    mismatch: Mismatch  # on the minimal text
    found_after: float  # seconds from the start of the run to the failing case
    shrink_seconds: float
    probes: int

    def to_json(self) -> dict:
        d = {k: getattr(self, k) for k in ("id", "model", "backend", "oracle", "cls", "text", "found_after",
                                             "shrink_seconds", "probes")}
        o = self.original
        d["original"] = {"id": o.id, "text": o.text, "corpus": o.corpus, "tags": o.tags}
        d["mismatch"] = dataclasses.asdict(self.mismatch)
        return d

    @classmethod
    def from_json(cls, d: dict) -> Finding:
        o = d["original"]
        return cls(**{**d, "original": Case(o["id"], o["text"], o["corpus"], o["tags"]),
                      "mismatch": Mismatch(**d["mismatch"])})

    @classmethod
    def checked(cls, d: object) -> Finding:
        """``from_json`` of a journal's note, each field checked first (``Damaged`` if one is wrong)."""
        if not isinstance(d, dict) or set(d) != _FINDING_KEYS:
            raise Damaged("a finding that is not one tokparity wrote (not an object of its keys)")
        o = d["original"]
        if not (isinstance(o, dict) and all(isinstance(o.get(k), str) for k in ("id", "text", "corpus"))
                and isinstance(o.get("tags"), dict)):
            raise Damaged("a finding whose 'original' case is not {id, text, corpus, tags}")
        check_mismatch(d["mismatch"], "a finding's mismatch")
        texts = ("id", "model", "backend", "oracle", "cls", "text")
        if not all(isinstance(d[k], str) for k in texts) or not all(
                type(d[k]) in (int, float) and math.isfinite(d[k]) for k in ("found_after", "shrink_seconds")) \
                or type(d["probes"]) is not int:
            raise Damaged("a finding with a field of the wrong type")
        return cls.from_json(d)

    def record(self, seed: int) -> dict:
        """The corpus record of the finding, with its root cause (``""``: none reproduced)."""
        return {"id": self.id, "text": self.text, "cause": self.mismatch.cause,
                "tags": {"kind": "fuzz", "class": self.cls, "backend": self.backend, "model": self.model,
                         "oracle": self.oracle, "found_by": self.original.corpus, "seed": seed}}


_FINDING_KEYS = {"id", "model", "backend", "oracle", "cls", "text", "found_after", "shrink_seconds", "probes",
                 "original", "mismatch"}


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


@dataclass
class FuzzResult:
    results: Results
    findings: list[Finding] = field(default_factory=list)
    cases: int = 0
    by_source: dict[str, int] = field(default_factory=dict)  # cases per corpus (gen:NAME, hypothesis)
    raw: dict[str, int] = field(default_factory=dict)  # "backend / class" -> mismatching cases

    interrupted: bool = False  # stopped by Ctrl-C
    resumed: int = 0  # cases taken from the journal of an interrupted run

    @property
    def failed(self) -> bool:
        return any(not f.mismatch.known for f in self.findings)


# -- shrinking ----------------------------------------------------------------------------------


def _simpler(c: str) -> list[str]:
    """Replacements for ``c`` that read more simply, most desirable first (``É`` → ``é``, ``E``, ``a``)."""
    base = unicodedata.normalize("NFKD", c)[:1]
    candidates = [c.lower(), base.lower(), base, "a", "0", " ", "A", ".", "\n"]
    rank = (char_rank(c), c)
    return [r for r in dict.fromkeys(candidates) if len(r) == 1 and r != c and (char_rank(r), r) < rank]


def shrink(text: str, still_fails: Callable[[str], bool], deadline: float | None = None) -> tuple[str, int]:
    """The smallest text (and the number of attempts) on which ``still_fails`` holds, from ``text``.

    Delta debugging: remove chunks of len/2, len/4, … 1 characters wherever the failure survives,
    then replace each character by a simpler one, and repeat until a pass changes nothing or the
    deadline (``time.monotonic()``) passes. ``still_fails(text)`` is assumed true on ``text``.

        >>> shrink("hello world", lambda t: "o w" in t)
        ('o w', ...)
    """
    seen: dict[str, bool] = {text: True}

    def ok(candidate: str) -> bool:
        if candidate not in seen:
            seen[candidate] = bool(still_fails(candidate))
        return seen[candidate]

    def out_of_time() -> bool:
        return deadline is not None and time.monotonic() >= deadline

    best = text
    changed = True
    while changed and not out_of_time():
        changed = False
        n = max(1, len(best) // 2)
        while n >= 1 and not out_of_time():
            i = 0
            while i < len(best) and not out_of_time():
                candidate = best[:i] + best[i + n:]
                if ok(candidate):
                    best, changed = candidate, True
                else:
                    i += n
            n //= 2
        for i in range(len(best)):
            if out_of_time():
                break
            for r in _simpler(best[i]):
                candidate = best[:i] + r + best[i + 1:]
                if ok(candidate):
                    best, changed = candidate, True
                    break
    return best, len(seen) - 1


# -- the loop -----------------------------------------------------------------------------------


class Fuzzer:
    """One model, its backends and the bookkeeping of one fuzz run."""

    def __init__(self, run: ModelRun, options: FuzzOptions, say: Callable[[str], None] | None = None):
        self.run = run
        self.options = options
        self.say = say or (lambda message: None)
        self.oracle = run.chain[0]
        self.started = time.monotonic()
        self.deadline = self.started + options.seconds
        self.result = FuzzResult(run.results)
        self.keys: set[tuple[str, str]] = set()
        self.seen: set[str] = set()
        self.stop = False
        self._oracle_cache: dict[str, _Answer] = {}
        self._last_progress = self.started
        self.journal = options.journal
        self.n = 0  # position of the next distinct case (the journal's key)
        self.done = DoneSet()  # cases a resumed run takes from the journal
        self.replay_to = 0  # ... up to this position
        self.generators_end: int | None = None  # where the interrupted run went on to Hypothesis
        self._last_note = self.started
        if self.journal is not None:
            self._replay(self.journal)

    def _replay(self, journal: Journal) -> None:
        """Count the cases and take the findings of the interrupted run; its clock goes on."""
        used = 0.0
        for lineno, note in journal.notes():
            try:
                elapsed, generators_end, finding = _checked_note(note)
            except Damaged as e:
                raise journal.damaged(lineno, str(e)) from None
            used = max(used, elapsed)
            if generators_end is not None:
                self.generators_end = generators_end
            if finding is not None:
                self.keys.add((finding.backend, finding.cls))
                self.result.findings.append(finding)
                self.run.results.mismatches.append(finding.mismatch)
        for record in journal.records(self.run.model.name):
            self.run.apply(record)
            self.done.add(record.n)
            self.replay_to = max(self.replay_to, record.n + 1)
            self._count(record.corpus, record.verdicts)
        self.result.resumed = len(self.done)
        self.stop = self.options.exitfirst and bool(self.result.findings)
        self.started -= used
        self.deadline -= used
        if len(self.done):
            self.say(f"fuzz {self.run.model.name}: {len(self.done)} cases and {len(self.result.findings)} findings "
                     f"from {journal.path}; {used:.0f} of {self.options.seconds:.0f} s used, going on")

    def _count(self, corpus: str, verdicts: dict) -> None:
        self.result.cases += 1
        self.result.by_source[corpus] = self.result.by_source.get(corpus, 0) + 1
        for backend, verdict in verdicts.items():
            if verdict not in (AGREE, SKIPPED):
                label = f"{backend} / {verdict[0]}"
                self.result.raw[label] = self.result.raw.get(label, 0) + 1

    # the run ---------------------------------------------------------------------------------

    def fuzz(self) -> FuzzResult:
        use_hypothesis = self.options.hypothesis and _hypothesis_available()
        if self.options.hypothesis and not use_hypothesis:
            self.say("hypothesis is not installed (pip install hypothesis): generators only")
            self.run.results.options.setdefault("notes", []).append("hypothesis not installed: generators only")
        share = 0.5 if use_hypothesis else 1.0
        self._generator_phase(self.started + share * self.options.seconds)
        if use_hypothesis:
            if self.journal is not None and self.generators_end is None:
                self.journal.note({"generators_end": self.n, "elapsed": round(time.monotonic() - self.started, 3)})
            self._hypothesis_phase(self.deadline)
        return self.result

    def _replaying(self) -> bool:
        """A resumed run goes over the interrupted one's cases (skipped, not run) whatever the clock."""
        return self.n < self.replay_to

    def _generator_phase(self, until: float) -> None:
        cases = generate_all(self.run.vocab, self.options.seed, self.options.generators)
        for case in cases:
            if self.stop or (self.generators_end is not None and self.n >= self.generators_end):
                return  # a resumed run: the interrupted one had moved on to Hypothesis here
            if time.monotonic() >= until and not self._replaying() and self.generators_end is None:
                return
            self.handle(case)

    def _hypothesis_phase(self, until: float) -> None:
        from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings

        from tokparity.strategies import any_text

        strategy = any_text(self.run.vocab)
        counter = itertools.count()
        batch = 0
        while not self.stop and (time.monotonic() < until or self._replaying()):
            @settings(max_examples=HYPOTHESIS_BATCH, deadline=None, database=None, phases=[Phase.generate],
                      suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)
            @seed(self.options.seed * 1_000_003 + batch)
            @given(strategy)
            def body(text: str) -> None:
                if self.stop or (time.monotonic() >= until and not self._replaying()):
                    return
                self.handle(Case(f"hypothesis-{next(counter):06d}", text, "hypothesis", {"kind": "hypothesis"}))

            body()
            batch += 1

    def handle(self, case: Case) -> None:
        """Run one case on every backend; shrink a failure not seen before."""
        if case.text in self.seen:
            return
        if len(self.seen) >= SEEN_LIMIT:  # a long run forgets, rather than grow without bound
            self.seen.clear()
        self.seen.add(case.text)
        n, self.n = self.n, self.n + 1
        if n in self.done:  # judged before the interruption: counted from the journal
            return
        results = self.run.results
        before = len(results.mismatches)
        record = self.run.run_case(case, n)
        new = results.mismatches[before:]
        del results.mismatches[before:]  # the reports show the minimal findings, not every case
        self._count(case.corpus, record.verdicts)
        for m in new:
            self.run.diagnose_one(m)  # its cause sets its class: the same case, the same class when shrunk
            if (m.backend, m.cls) not in self.keys:
                self.keys.add((m.backend, m.cls))
                self._found(case, m)
                if self.options.exitfirst:
                    self.stop = True
                    break
        if self.journal is not None:  # after its findings: a case cut short by a kill is run again
            self.journal.write(record)
            if time.monotonic() - self._last_note >= 1.0:  # the clock, for a resume's time budget
                self._last_note = time.monotonic()
                self.journal.note({"elapsed": round(self._last_note - self.started, 3)})
        self._progress()

    # shrinking ----------------------------------------------------------------------------

    def probe(self, text: str, backend: str) -> Mismatch | None:
        """The mismatch of ``backend`` against the oracle on ``text``, or None when they agree."""
        run = self.run
        oracle = self._oracle_cache.get(text)
        if oracle is None:
            oracle = self._oracle_cache[text] = _ask(run.backends[self.oracle], text, run.options)
        answer = _ask(run.backends[backend], text, run.options)
        if "skipped" in (oracle.status, answer.status):
            return None
        if oracle.status == answer.status == "ok" and oracle.ids == answer.ids:
            return None
        mismatch = run._mismatch(Case("fuzz-probe", text, "fuzz"), self.oracle, oracle, backend, answer)
        run.diagnose_one(mismatch, counted=False)
        known = getattr(run.options, "known", None)  # the known-divergence list, where compare has one
        if known:
            mismatch.known = known.match(mismatch)
        return mismatch

    def _found(self, case: Case, first: Mismatch) -> None:
        found_after = time.monotonic() - self.started
        t0 = time.monotonic()
        budget = self.options.shrink_budget()
        deadline = t0 + max(min(budget, self.deadline - t0), min(budget, 2.0))

        def still_fails(text: str) -> bool:
            if first.cls in ("crash", "timeout"):
                # Let the engine answer something first: an engine that dies on a text before it has
                # answered anything since its start counts as one that cannot start, and is given up.
                _ask(self.run.backends[first.backend], "a", self.run.options)
            m = self.probe(text, first.backend)
            return m is not None and m.cls == first.cls

        text, probes = shrink(case.text, still_fails, deadline)
        minimal = self.probe(text, first.backend) if text != case.text else first
        if minimal is None or minimal.cls != first.cls:  # a flaky engine: keep the case as it came
            text, minimal = case.text, first
        model = self.run.model.name
        digest = hashlib.sha1(f"{first.backend}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()[:8]
        finding = Finding(
            id=f"fuzz-{model}-{first.cls}-{digest}", model=model, backend=first.backend, oracle=self.oracle,
            cls=first.cls, text=text, original=case, mismatch=minimal, found_after=found_after,
            shrink_seconds=time.monotonic() - t0, probes=probes)
        tags = finding.record(self.options.seed)["tags"]
        finding.mismatch = dataclasses.replace(
            minimal, corpus="fuzz", case_id=finding.id, tags=tags,
            evidence=f"{minimal.evidence} (shrunk from {_show(case.text, 80)} of {case.corpus}/{case.id})")
        self.result.findings.append(finding)
        self.run.results.mismatches.append(finding.mismatch)
        if self.options.findings_path is not None:
            with open(self.options.findings_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(finding.record(self.options.seed), ensure_ascii=False) + "\n")
        if self.journal is not None:
            self.journal.note({"finding": finding.to_json(), "elapsed": round(time.monotonic() - self.started, 3)})
        self.say(f"found {first.cls} on {first.backend} after {found_after:.1f} s ({case.corpus}): "
                 f"{_show(case.text, 60)} shrunk to {_show(text, 60)} in {finding.shrink_seconds:.1f} s "
                 f"({probes} tries)")

    def _progress(self) -> None:
        now = time.monotonic()
        if now - self._last_progress < PROGRESS_EVERY:
            return
        self._last_progress = now
        if self.journal is not None:
            self.journal.note({"elapsed": round(now - self.started, 3)})
        r = self.result
        self.say(f"fuzz {self.run.model.name}: {now - self.started:.0f}/{self.options.seconds:.0f} s, "
                 f"{r.cases} cases, {sum(r.raw.values())} mismatching, {len(r.findings)} distinct failures")


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
             fuzz_options: FuzzOptions) -> FuzzResult:
    """Fuzz one model: ``backend_names`` (default: every backend its files allow) against the oracle
    (default: the model's original library; for a GGUF llama.cpp, since golden ids cover only
    their own texts)."""
    if fuzz_options.seconds <= 0:
        raise TokparityError(f"--seconds must be positive, not {fuzz_options.seconds:g}")
    started = time.perf_counter()
    if not options.oracle:
        options = dataclasses.replace(options, oracle=oracle_chain(resolve_model(spec), options)[-1])
    results = Results(tokparity=__version__, options={"add_special": options.add_special,
                                                      "parse_special": options.parse_special})
    run = ModelRun(spec, backend_names, options, results)
    try:
        if not run.compared:
            raise TokparityError(f"nothing to fuzz on {run.model.name}: every backend named is the oracle "
                                 f"({run.chain[0]}); name another with -b")
        resuming = fuzz_options.journal is not None and fuzz_options.journal.resumed
        if fuzz_options.findings_path is not None:
            Path(fuzz_options.findings_path).parent.mkdir(parents=True, exist_ok=True)
            if not (resuming and Path(fuzz_options.findings_path).exists()):
                Path(fuzz_options.findings_path).write_text("", "utf-8")
        fuzzer = Fuzzer(run, fuzz_options, options.progress)
        try:
            result = fuzzer.fuzz()
        except KeyboardInterrupt:  # Ctrl-C: the findings so far are the result
            result = fuzzer.result
            result.interrupted = results.interrupted = True
        if fuzz_options.journal is not None:
            fuzz_options.journal.note({"elapsed": round(time.monotonic() - fuzzer.started, 3)})
    finally:
        run.close()
    finish = getattr(run, "finish", None)
    results.runs.extend(finish() if finish else run.summaries.values())
    results.seconds = time.perf_counter() - started
    results.options["fuzz"] = {
        "seed": fuzz_options.seed, "seconds": fuzz_options.seconds, "cases": result.cases,
        "by_source": result.by_source, "mismatching": result.raw,
        "findings": [{"id": f.id, "backend": f.backend, "class": f.cls, "cause": f.mismatch.cause, "text": f.text,
                      "found_after": round(f.found_after, 3), "shrink_seconds": round(f.shrink_seconds, 3),
                      "original": f.original.text} for f in result.findings],
    }
    return result


def read_findings(path: str | Path) -> Iterator[Case]:
    """The findings of an earlier run, as cases (the same reader as any JSONL corpus)."""
    from tokparity.corpus import read_jsonl

    return read_jsonl(path, "fuzz")
