"""A run's results are made once, when it ends, and nothing changes them after: every container in
them is a tuple or a FrozenDict, every record a frozen dataclass. Checked on real runs of each
caller: compare in this process and with worker processes, fuzz, and regress."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from tokparity.commands.arguments import WEEK
from tokparity.fuzz.findings import FINDINGS_FILE
from tokparity.fuzz.ids import run_id_fuzz
from tokparity.fuzz.loop import FuzzOptions, run_fuzz
from tokparity.records import FrozenDict
from tokparity.regress import RegressOptions, run_regress
from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions
from tokparity.run.results import Results

TESTS = Path(__file__).parents[1]
BUGGY = f"mine=cmd:{sys.executable} {TESTS / 'engines' / 'blind' / 'detok_blind.py'} {{tokenizer_json}} --bug decode-alone"
GREEDY = f"greedy=cmd:{{python}} {TESTS.parent / 'examples' / 'engines' / 'greedy_engine.py'} {{gguf}}"
GOLDENS = TESTS / "goldens"


def mutable_parts(value: object, where: str = "results") -> list[str]:
    """Where ``value`` holds something that could be changed in place."""
    if isinstance(value, dict):
        found = [] if type(value) is FrozenDict else [f"{where}: a {type(value).__name__}"]
        for key, item in value.items():
            found += mutable_parts(item, f"{where}[{key!r}]")
        return found
    if isinstance(value, (list, set, bytearray)):
        return [f"{where}: a {type(value).__name__}"]
    if isinstance(value, tuple):
        return [part for i, item in enumerate(value) for part in mutable_parts(item, f"{where}[{i}]")]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if not type(value).__dataclass_params__.frozen:  # type: ignore[attr-defined]
            return [f"{where}: a {type(value).__name__} (not frozen)"]
        return [part for f in dataclasses.fields(value)
                for part in mutable_parts(getattr(value, f.name), f"{where}.{f.name}")]
    return []


def assert_frozen(results: Results) -> None:
    assert results.runs and results.mismatches, "the run found nothing to check"
    assert mutable_parts(results) == []
    with pytest.raises(dataclasses.FrozenInstanceError):
        results.seconds = 0.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        results.options["notes"] = ()  # type: ignore[index]


def test_compare_results_are_frozen(zoo):
    zoo("llama-bpe")
    results = run_compare(["llama-bpe"], ["edge"], [BUGGY], CompareOptions(ops=("encode", "decode", "stream")))
    assert {m.op for m in results.mismatches} >= {"decode"}
    assert_frozen(results)


def test_results_of_worker_processes_are_frozen(zoo):
    zoo("llama-bpe")
    results = run_compare(["llama-bpe"], ["edge", "multilingual"], [BUGGY], CompareOptions(ops=("decode",), jobs=2))
    assert results.timing_jobs == 2
    assert_frozen(results)


def test_fuzz_results_are_frozen(zoo, tmp_path):
    zoo("llama-spm")
    options = FuzzOptions(seconds=WEEK, cases=300, seed=0, exitfirst=True, findings_path=tmp_path / FINDINGS_FILE)
    results, result = run_fuzz("llama-spm", [GREEDY], CompareOptions(), options)
    assert results.fuzz is not None and result.findings
    assert_frozen(results)


def test_id_fuzz_results_are_frozen(zoo):
    zoo("llama-bpe")
    results, findings, cases = run_id_fuzz("llama-bpe", [BUGGY], CompareOptions(ops=("decode",)), WEEK, 0, cases=300)
    assert findings and cases == 300
    assert_frozen(results)


def test_regress_results_are_frozen(zoo):
    zoo("llama-spm")
    results = run_regress(["llama-spm"], RegressOptions(GOLDENS, corpora=["edge"], backends=[GREEDY]))
    assert_frozen(results)
