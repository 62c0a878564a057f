"""Engines a helper wrote blind, after round 30's causes (tests/engines/blind/blind31_*.py; its
author read no diagnosis code and ran no tokparity).

``blind31_slices.py`` judges ``input.sliced``, which was learnt from round 29's text cut into 20
slices. Its author wrote three cuts from public code, from a description of the behaviour only. At
first sight the law of one was named and proven: windows of 256 characters. The two others were
named after they were seen: each line apart, a blank line left out; and a text cut in two by
bytes, the character at the cut lost. Each is named by its law now, the twin agreeing."""

from __future__ import annotations

import sys
from pathlib import Path

from blind_rounds import assert_named_beside_their_twin

BLIND = Path(__file__).parents[1] / "engines" / "blind"
SLICES = f"cmd:{sys.executable} {BLIND / 'blind31_slices.py'} {{tokenizer_json}}"


def test_texts_encoded_in_slices_are_named_by_the_law_of_their_cuts(zoo):
    zoo("gemma-3")
    assert_named_beside_their_twin("gemma-3", "encode", ["edge", str(BLIND / "blind31_slices_texts.jsonl")], SLICES, {
        "per-line": ("input.sliced", 60), "fixed-window": ("input.sliced", 15), "halves-by-bytes": ("input.sliced", 400)})
