"""run_cases: one Answer per text, in order, whatever the backend does."""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path

from tokparity.backends.base import Answer
from tokparity.backends.registry import make_backend
from tokparity.backends.runner import run_cases

FLAKY = f"cmd:{sys.executable} {Path(__file__).resolve().parents[1] / 'engines' / 'flaky_engine.py'}"


def test_answers_are_plain_data(backend):
    results = run_cases(backend("llama.cpp", "llama-spm"), ["Hello world", "<s>Hi"], add_special=True,
                        parse_special=True)
    assert [(r.status, r.ids) for r in results] == [("ok", [1, 15043, 3186]), ("ok", [1, 1, 6324])]
    assert results[0].notes == [] and "2 BOS tokens" in results[1].notes[0]
    assert set(asdict(results[0])) == {"status", "ids", "detail", "notes", "seconds", "by"}
    assert isinstance(results[0], Answer) and results[0].seconds > 0


def test_a_text_the_backend_has_no_answer_for_is_skipped(backend):
    results = run_cases(backend("golden", "llama-spm"), ["Hello world", "not golden"])
    assert [r.status for r in results] == ["ok", "skipped"]


def test_an_implementation_error_is_an_error_record(backend):
    results = run_cases(backend("ref", "llama-spm"), ["ok", "\ud800"])
    assert [r.status for r in results] == ["ok", "error"]
    assert "lone surrogate" in results[1].detail


def test_timeout_override_is_restored(zoo):
    engine = make_backend(FLAKY, zoo("llama-spm"), timeout=30.0)
    try:
        assert engine.encode("a") == [97]  # started: from here on no startup grace
        results = run_cases(engine, ["HANG", "a"], timeout=0.5)
        assert [r.status for r in results] == ["timeout", "ok"]
        assert results[0].seconds < 2.0
        assert engine.timeout == 30.0
    finally:
        engine.close()


def test_first_case_after_a_start_gets_the_startup_grace(zoo):
    """A program may still be loading its model when the first request arrives."""
    engine = make_backend(FLAKY, zoo("llama-spm"), timeout=0.5, startup_timeout=0.75)
    try:
        (result,) = run_cases(engine, ["HANG"])
        assert result.status == "timeout" and "no answer within 0.5 s (+0.75 s to start)" in result.detail
        assert 1.25 <= result.seconds < 2.5
    finally:
        engine.close()
