"""``fuzz``: generated texts against every backend until the time is up; each distinct root cause
found is a finding, shrunk to a minimal text.

For one model the run is:

    unicode-seams (first, to its end)
    then the generators, steered ──► cases ──► judged, diagnosed ──► a (backend, cause) not seen?
    then Hypothesis ───────────────┘               │                          │ yes
                                                    ▼                          ▼
                                 ledger: counted, the first      shrink: the smallest text on which
                                 cases of each cause stored      that backend still shows that cause
                                                                 ──► a finding: fuzz-findings.jsonl

    findings.py   what a finding is: one (backend, cause); two bugs in one text are two findings
    steering.py   which generator gives the next case: those whose cases are not all explained
    ledger.py     the journal kept small: counts and outcomes, the first cases of each cause in full
    shrink.py     delta debugging of a failing text
    loop.py       the run: generators, Hypothesis, findings, the clock, resuming

The time budget covers everything but loading the model and backends: half of it (all of it
without Hypothesis) goes to the generators, the rest (and whatever finite generators leave over)
to Hypothesis; shrinking happens as causes are found, each bounded by ``shrink_seconds``. A run
with the same seed tries the same texts in the same order on the same engine (how far it gets
depends on speed), and a resumed run goes on exactly where the interrupted one stopped.

The findings are a corpus (``{"id", "text", "cause", "tags": {"kind": "fuzz", "class", "backend",
"model", …}}``) ready to commit as regression cases and to replay with ``tokparity compare -c FILE``.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tokparity import __version__
from tokparity.corpus import Case
from tokparity.errors import TokparityError
from tokparity.fuzz.findings import Finding
from tokparity.fuzz.loop import Fuzzer, FuzzResult
from tokparity.fuzz.shrink import shrink
from tokparity.run.journal import Journal
from tokparity.run.judge import ModelRun, oracle_chain
from tokparity.run.options import CompareOptions
from tokparity.run.results import Results
from tokparity.zoo import resolve_model

__all__ = ["FINDINGS_FILE", "Finding", "FuzzOptions", "FuzzResult", "Fuzzer", "read_findings", "run_fuzz", "shrink"]

FINDINGS_FILE = "fuzz-findings.jsonl"


@dataclass
class FuzzOptions:
    seconds: float = 60.0
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


def run_fuzz(spec: str, backend_names: list[str] | None, options: CompareOptions,
             fuzz_options: FuzzOptions) -> FuzzResult:
    """Fuzz one model: ``backend_names`` (default: every backend its files allow) against the oracle
    (default: the model's training library; for a GGUF alone llama.cpp, since golden ids cover only
    their own texts)."""
    if fuzz_options.seconds <= 0:
        raise TokparityError(f"--seconds must be positive, not {fuzz_options.seconds:g}")
    started = time.perf_counter()
    if not options.oracle:
        # golden ids judge only the texts they hold; a fuzzed text needs a library
        chain = oracle_chain(resolve_model(spec), options)
        options = dataclasses.replace(options, oracle=next(n for n in chain if n != "golden"))
    results = Results(tokparity=__version__, options={"add_special": options.add_special,
                                                      "parse_special": options.parse_special})
    run = ModelRun(spec, backend_names, options, results)
    try:
        if not run.tally.compared:
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
        fuzzer.close()
    finally:
        run.close()
    results.runs.extend(run.tally.finish(causes=fuzzer.causes))
    fuzzer.count_causes()
    results.seconds = time.perf_counter() - started
    results.options["fuzz"] = {
        "seed": fuzz_options.seed, "seconds": fuzz_options.seconds, "cases": result.cases,
        "by_source": result.by_source, "mismatching": result.raw,
        "findings": [f.summary() for f in result.findings],
        "seams": fuzzer.seams_covered(),
    }
    return result


def read_findings(path: str | Path) -> Iterator[Case]:
    """The findings of an earlier run, as cases (the same reader as any JSONL corpus)."""
    from tokparity.corpus import read_jsonl

    return read_jsonl(path, "fuzz")
