"""A merges.txt reader written blind from two bug descriptions (tests/engines/blind/merges_reader.py;
its author read no diagnosis code and ran no tokparity), after ``model.merge-missing`` was written
from blind round 27's first merge dropped. One reader drops the list's last line, as GPT-2's
``split("\\n")[1:-1]`` does on a file without a final newline; the other skips every line that
starts with ``#`` as a comment. Each is named, its verdict proven, the twin agreeing."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from blind_rounds import assert_named_beside_their_twin

BLIND = Path(__file__).parents[1] / "engines" / "blind"
READER = f"cmd:{sys.executable} {BLIND / 'merges_reader.py'} {{tokenizer_json}}"
TEXTS = str(BLIND / "merges_reader_texts.jsonl")


@pytest.mark.parametrize("model,bugs", [
    ("qwen3", {"last-line-lost": ("model.merge-missing", 5), "hash-comments": ("model.merge-missing", 12)}),
    ("llama-bpe", {"last-line-lost": ("model.merge-missing", 4)}),
    ("gemma-3", {"hash-comments": ("model.merge-missing", 8)}),
])
def test_a_reader_that_loses_merges_is_named_and_its_twin_agrees(zoo, model, bugs):
    zoo(model)
    assert_named_beside_their_twin(model, "encode", ["edge", TEXTS], READER, bugs)
