"""What the tests of each blind round check (tests/run/test_blind6.py, test_blind7.py, test_blind8.py): engines
written blind from public reports, several bugs beside their bug-free twin in one run."""

from __future__ import annotations

from collections import Counter

from tokparity.run.driver import run_compare
from tokparity.run.known import load_known
from tokparity.run.options import CompareOptions, Services


def assert_named_beside_their_twin(model: str, op: str, corpora: list[str], engine: str,
                                   bugs: dict[str, tuple[str, int]], step: int = 1, failures_apart: bool = False) -> None:
    """Each bug (its name: its cause, the fewest mismatches) is named by its cause on 95 % of its
    rows, its verdict proves it, and the twin agrees. A cause of two at once ("a+b") names a row
    with either or both. tokparity's own known list is read, as the
    command line reads it (Llama 3's 4 stream clean-ups). ``failures_apart``: the rows where the
    engine failed are not counted (no reproduction names a crash), but each has its shape."""
    results = run_compare([model], corpora, [f"{bug}={engine} --bug {bug}" for bug in bugs] + [f"twin={engine}"],
                          CompareOptions(ops=(op,), stream_step=step,
                                         services=Services(known=load_known([], builtin=True))))
    runs = {r.backend: r for r in results.runs}
    assert runs["twin"].unexplained == 0 and runs["twin"].cases > 0
    for bug, (cause, fewest) in bugs.items():
        failed = [m for m in results.mismatches if m.backend == bug and m.cls in ("crash", "timeout")]
        assert not failures_apart or all(m.shape.startswith("the engine") for m in failed), failed[:1]
        causes = Counter(m.cause for m in results.mismatches if m.backend == bug and not m.known
                         and not (failures_apart and m in failed))
        assert runs[bug].mismatches >= fewest, (bug, runs[bug])
        # (a bug of two causes at once: a row names either, or both)
        named = sum(n for c, n in causes.items() if c and set(c.split("+")) <= set(cause.split("+")))
        assert named >= 0.95 * sum(causes.values()), (bug, causes)
        verdict = runs[bug].root_cause
        assert verdict is not None and verdict.cause == cause and verdict.proven, (bug, verdict)
