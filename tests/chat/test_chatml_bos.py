"""A ChatML fallback that also puts the BOS first, in its ids and in its text (guidance 0.3.1 on
Gemma 3 and Llama 3: its ChatML fallback, then ``ensure_bos_token``). The diagnosis tries the
tokenizer's BOS on top of every way of writing the text; a backend's text may show that BOS or
not. The engine (tests/engines/blind/chatml_bos.py) was written by a helper, blind to the
diagnosis; before the fix its 26 rows on Gemma 3 had no cause."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions

ENGINE = Path(__file__).parents[1] / "engines" / "blind" / "chatml_bos.py"

@pytest.fixture(scope="module")
def runs(zoo):
    zoo("gemma-3")
    results = run_compare(["gemma-3"], ["chats"], [f"bos=cmd:{sys.executable} {ENGINE} {{tokenizer_json}} bos",
                                              f"plain=cmd:{sys.executable} {ENGINE} {{tokenizer_json}} no"],
                          CompareOptions(ops=("chat",)))
    return {r.backend: r for r in results.runs}, results


@pytest.mark.parametrize(("backend", "cause"), [("bos", "chat.bos-added+chat.chatml-fallback"),
                                                ("plain", "chat.chatml-fallback")])
def test_the_chatml_fallback_is_named_with_its_bos(runs, backend, cause):
    by_backend, results = runs
    run = by_backend[backend]
    assert run.mismatches >= 20 and run.causes == {cause: run.mismatches}, run.causes
    assert run.root_cause is not None and run.root_cause.cause == cause and run.root_cause.proven
    assert all(m.cause == cause for m in results.mismatches if m.backend == backend)
