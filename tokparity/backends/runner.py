"""Run many cases on one backend, one record per case, whatever happens to any of them.

    results = run_cases(backend, ["Hello", "world"])
    [r.status for r in results]          # ["ok", "ok"]

A case is ``ok`` with its ids; ``crash`` / ``timeout`` when the engine died or hung on it (it is
restarted for the next case); ``skipped`` when the backend has no answer for that text (golden
ids for another text); ``error`` when the implementation raised. The records are plain data
for the comparison and the reports to read.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, cast

from tokparity.backends.base import Backend, CaseFailure, EncodeResult

STATUSES = ("ok", "crash", "timeout", "error", "skipped")


@dataclass
class CaseResult:
    id: str
    text: str
    ids: list[int] = field(default_factory=list)
    status: str = "ok"  # one of STATUSES
    detail: str = ""
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0


def _record(case_id: str, text: str, result: EncodeResult | CaseFailure, seconds: float) -> CaseResult:
    if isinstance(result, CaseFailure):
        return CaseResult(case_id, text, status=result.status, detail=result.detail, seconds=seconds)
    return CaseResult(case_id, text, list(result.ids), "ok", notes=list(result.notes), seconds=seconds)


def run_case(backend: Backend, case_id: str, text: str, add_special: bool = False,
             parse_special: bool = False) -> CaseResult:
    """One case, one record (``encode_with_notes``, failures caught)."""
    ((result, seconds),) = Backend.encode_many(backend, [text], add_special, parse_special)
    return _record(case_id, text, result, seconds)


def run_cases(backend: Backend, texts: Iterable[str | tuple[str, str]], add_special: bool = False,
              parse_special: bool = False, timeout: float | None = None) -> list[CaseResult]:
    """Every text on ``backend`` (through ``encode_many``, pipelined for engines in another
    process). ``texts`` are strings (ids become ``"0"``, ``"1"``, …) or ``(id, text)`` pairs.
    ``timeout`` overrides the per-case timeout of an out-of-process backend (an in-process call
    cannot be interrupted, so there it has no effect)."""
    cases = [(str(n), item) if isinstance(item, str) else item for n, item in enumerate(texts)]
    saved = getattr(backend, "timeout", None)
    timed = cast(Any, backend)  # out-of-process backends only: they have the attribute
    if timeout is not None and saved is not None:
        timed.timeout = timeout
    try:
        answers = backend.encode_many([text for _, text in cases], add_special, parse_special)
    finally:
        if timeout is not None and saved is not None:
            timed.timeout = saved
    return [_record(case_id, text, result, seconds) for (case_id, text), (result, seconds) in zip(cases, answers)]
