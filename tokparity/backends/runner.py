"""Ask backends for their answers: one ``Answer`` per text, whatever happens to any of them.

    answers = run_cases(backend, ["Hello", "world"])
    [a.status for a in answers]          # ["ok", "ok"]

A case is ``ok`` with its ids; ``crash`` / ``timeout`` when the engine died or hung on it (it is
restarted for the next case); ``skipped`` when the backend has no answer for that text (golden
ids for another text); ``error`` when the implementation raised. ``ask`` and ``ask_many`` are
what every run uses (compare, fuzz, regress, the pytest plugin); ``run_cases`` is for a script.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any, cast

from tokparity.backends.base import Answer, Backend, EncodeResult
from tokparity.errors import CaseFailure, EngineGone
from tokparity.textview import message_of

STATUSES = ("ok", "crash", "timeout", "error", "skipped")


def ask(backend: Backend, text: str, add_special: bool = False, parse_special: bool = False) -> Answer:
    """``backend``'s answer on one text (``encode_with_notes``, any failure caught and recorded)."""
    started = time.perf_counter()
    result: EncodeResult | CaseFailure
    try:
        result = backend.encode_with_notes(text, add_special, parse_special)
    except CaseFailure as e:
        result = e
    except EngineGone:
        raise
    except Exception as e:  # an implementation's own error on this input: recorded, the run goes on
        result = CaseFailure(f"{type(e).__name__}: {message_of(e)}")
    return Answer.of(result, time.perf_counter() - started, text)


def ask_many(backend: Backend, texts: list[str], add_special: bool = False,
             parse_special: bool = False) -> list[Answer]:
    """``backend``'s answer on each text, through ``encode_many`` (pipelined for engines in
    another process)."""
    if not texts:
        return []
    try:
        return backend.encode_many(texts, add_special, parse_special)
    except EngineGone:
        raise
    except Exception:  # a backend whose encode_many itself broke: one case at a time, each judged
        return [ask(backend, text, add_special, parse_special) for text in texts]


def run_cases(backend: Backend, texts: Iterable[str], add_special: bool = False,
              parse_special: bool = False, timeout: float | None = None) -> list[Answer]:
    """Every text's answer on ``backend``. ``timeout`` overrides the per-case timeout of an
    out-of-process backend (an in-process call cannot be interrupted, so there it has no effect)."""
    saved = getattr(backend, "timeout", None)
    timed = cast(Any, backend)  # out-of-process backends only: they have the attribute
    if timeout is not None and saved is not None:
        timed.timeout = timeout
    try:
        return ask_many(backend, list(texts), add_special, parse_special)
    finally:
        if timeout is not None and saved is not None:
            timed.timeout = saved
