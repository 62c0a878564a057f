"""run_cases: one plain record per case, whatever the backend does."""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path

from tokparity.backends.registry import make_backend
from tokparity.backends.runner import CaseResult, run_cases

FLAKY = f"cmd:{sys.executable} {Path(__file__).resolve().parents[1] / 'engines' / 'flaky_engine.py'}"


def test_records_are_plain_data(backend):
    results = run_cases(backend("llama.cpp", "llama-spm"), [("greeting", "Hello world"), ("bos", "<s>Hi")],
                        add_special=True, parse_special=True)
    assert [(r.id, r.status, r.ids) for r in results] == [("greeting", "ok", [1, 15043, 3186]),
                                                          ("bos", "ok", [1, 1, 6324])]
    assert results[0].notes == [] and "2 BOS tokens" in results[1].notes[0]
    assert set(asdict(results[0])) == {"id", "text", "ids", "status", "detail", "notes", "seconds"}
    assert isinstance(results[0], CaseResult) and results[0].seconds > 0


def test_plain_strings_get_their_index_as_id(backend):
    results = run_cases(backend("golden", "llama-spm"), ["Hello world", "not golden"])
    assert [(r.id, r.status) for r in results] == [("0", "ok"), ("1", "skipped")]


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
