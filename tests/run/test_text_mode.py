"""decode.newlines-normalized on tests/engines/blind/text_mode_detok.py: an engine a helper wrote
blind, whose decoded text goes through a file Python writes and reads in text mode. Python's own
universal newlines turn each CR LF and each lone CR into LF."""

from __future__ import annotations

import sys
from pathlib import Path

from blind_rounds import assert_named_beside_their_twin

ENGINE = f"cmd:{sys.executable} {Path(__file__).parents[1] / 'engines' / 'blind' / 'text_mode_detok.py'} {{tokenizer_json}}"


def test_a_text_read_back_in_text_mode_is_named_and_its_twin_agrees(zoo):
    zoo("qwen3")
    assert_named_beside_their_twin("qwen3", "decode", ["edge"], ENGINE,
                                   {"text-mode-file": ("decode.newlines-normalized", 9)})
