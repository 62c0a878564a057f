"""Engines a helper wrote blind from public code, issues and pull requests, after round 34
(tests/engines/blind/blind35_*.py; its author read no diagnosis code and ran no tokparity).
Twelve bugs: six chat, three decode, two stream, one pieces.

On first sight the diagnosis named two of the twelve as their engine does them: invisible
characters taken out of the contents (llm-guard's scanner, ``chat.content-rewritten``, proven) and
characters dropped from the decoded text (KoboldAI's ``removespecialchars``, ``decode.edit`` with 9
of its 13 characters, not proven).

Written after the round was seen, and general:

- ``decode.cut-before-first`` (learnt): the text cut before the first of some characters, a stop
  sequence matched otherwise. Each row gives the character after its cut; the verdict takes them
  one at a time while one gains. It reads LangChain's ``enforce_stop_tokens``, which splits on
  ``<|im_end|>`` as a regular expression: at the first ``<`` or ``>``.
- A learnt edit grows at the verdict with the characters of rows other ways give: a row that held
  only ``~`` reads as cut until ``~`` dropped is weighed beside the edit.

Each bug below is named by its cause, its verdict proven, the twin agreeing."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from blind_rounds import assert_named_beside_their_twin

BLIND = Path(__file__).parents[1] / "engines" / "blind"
TEXTS = str(BLIND / "blind35_texts.jsonl")
DECODE = f"cmd:{sys.executable} {BLIND / 'blind35_decode.py'} {{tokenizer_json}}"


# model, op, corpora, engine, {bug: (its cause, the fewest mismatches)}
@pytest.mark.parametrize("model,op,corpora,engine,bugs", [
    ("qwen3", "decode", ["edge", "ids", TEXTS], DECODE, {
        "stop-regex-split": ("decode.cut-before-first", 100),
        "special-chars-removed": ("decode.edit", 190)}),
    ("gemma-3", "decode", ["edge", "ids", TEXTS], DECODE, {"special-chars-removed": ("decode.edit", 190)}),
], ids=["decode-qwen3", "decode-gemma3"])
def test_blind_engines_of_round_35_are_named_and_their_twin_agrees(zoo, model, op, corpora, engine, bugs):
    zoo(model)
    assert_named_beside_their_twin(model, op, corpora, engine, bugs)
