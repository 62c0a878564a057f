"""A BPE seeded with a word's UTF-16 code units (JavaScript's ``word.split("")``), on an engine a
helper wrote blind from that description (tests/engines/blind/astral_blind.py, on the real
tokenizers library; its author read no diagnosis code): no piece is half a character, so a
character past U+FFFF that is a piece of Llama 2 (``🏻``, ``😂``) comes out as its bytes. It is
named ``unicode.astral-unmatched`` on every mismatch, the run's verdict proves it and keeps every
agreement, and the bug-free twin agrees."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions

ENGINE = f"cmd:{sys.executable} {Path(__file__).parents[1] / 'engines' / 'blind' / 'astral_blind.py'} {{tokenizer_json}}"


def test_a_bpe_seeded_with_code_units_is_named_and_its_twin_agrees(zoo):
    zoo("lenml-llama2")
    results = run_compare(["lenml-llama2"], ["edge", "emoji"], [f"bug={ENGINE} --bug utf16-index", f"twin={ENGINE}"],
                          CompareOptions(oracle="hf"))
    runs = {r.backend: r for r in results.runs}
    causes = Counter(m.cause for m in results.mismatches if m.backend == "bug")
    assert runs["twin"].cases == runs["bug"].cases and runs["twin"].mismatches == 0
    assert runs["bug"].mismatches >= 50 and causes["unicode.astral-unmatched"] == runs["bug"].mismatches, causes
    verdict = runs["bug"].root_cause
    assert verdict is not None and verdict.cause == "unicode.astral-unmatched" and verdict.proven, verdict
    assert verdict.keeps == verdict.agreements
