"""decode.cut-after-last on tests/engines/blind/trim_sentence_detok.py: an engine a helper wrote
blind, after the cause was written from round 34's SillyTavern trim. Its two trims are another
project's (KoboldAI's ``trimincompletesentence``) and a bot's regular expression with CJK marks.
Both were named at first sight, each with the characters its rule cuts after."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions

# each trim, and the characters it cuts after as the texts show them (no text of ``edge`` ends a sentence with ``！``)
BUGS = {"kobold-trim": "!.?", "regex-trim": "!.?。？"}
ENGINE = f"cmd:{sys.executable} {Path(__file__).parents[1] / 'engines' / 'blind' / 'trim_sentence_detok.py'} {{tokenizer_json}}"


def test_two_trims_to_the_last_sentence_are_named_and_their_twin_agrees(zoo):
    """Each trim's rows are named by the cut, its verdict proven, the twin agreeing. Three of
    KoboldAI's rows are its own quirk: a text that starts with ``"`` and holds no mark is cut to
    that ``"`` (``'"double"'`` comes back ``'"'``). They are named as a cut at one character."""
    zoo("qwen3")
    results = run_compare(["qwen3"], ["edge", "ids"], [f"{bug}={ENGINE} --bug {bug}" for bug in BUGS] + [f"twin={ENGINE}"],
                          CompareOptions(ops=("decode",)))
    runs = {r.backend: r for r in results.runs}
    assert runs["twin"].mismatches == 0 and runs["twin"].cases > 800
    for bug, marks in BUGS.items():
        causes = Counter(m.cause for m in results.mismatches if m.backend == bug)
        assert runs[bug].mismatches >= 40 and causes["decode.cut-after-last"] >= 0.9 * runs[bug].mismatches, causes
        verdict = runs[bug].root_cause
        assert verdict.variants == (f'decode.cut-after-last:"{marks}"',) and verdict.proven, verdict


