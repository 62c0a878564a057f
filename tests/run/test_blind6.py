"""Bugs from public reports, judged on engines a helper wrote blind from one paragraph per bug
after the causes of tests/run/test_blind5.py were written (tests/engines/blind/blind6_decode.py and
blind6_chat.py; their author read no diagnosis code). On first sight the diagnosis named one of
their twelve bugs by a reproduced cause; five causes, and a new form of one, were then written from
the reports (docs/findings.md, "Sixth survey, and blind engines from public reports"). Each run asks several bugs at once beside
the bug-free twin: each bug is named by its cause, its verdict proves it, and the twin agrees."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from blind_rounds import assert_named_beside_their_twin

BLIND = Path(__file__).parents[1] / "engines" / "blind"
DECODE = f"cmd:{sys.executable} {BLIND / 'blind6_decode.py'} {{tokenizer_json}}"

CHAT = f"cmd:{sys.executable} {BLIND / 'blind6_chat.py'} {{tokenizer_json}} {{tokenizer_config}}"


# model, op, corpora, engine, the stream step, {bug: (its cause, the fewest mismatches)}
@pytest.mark.parametrize("model,op,corpora,engine,step,bugs", [
    ("llama-bpe", "decode", ["ids", "edge"], DECODE, 1, {
        "ad-glyph-literal": ("decode.glyphs-not-mapped", 8)}),  # a byte table that lacks Ń (byte 0xAD)
    ("llama-bpe", "pieces", ["ids", "edge"], DECODE, 1, {
        "ad-glyph-literal": ("pieces.glyph-not-mapped", 8)}),
    ("llama-bpe", "stream", ["ids", "edge"], DECODE, 1, {
        "finish-batch-dropped": ("stream.last-step-dropped", 600),  # the last step's ids never decoded
        "tail-holdback": ("stream.characters-held-back", 600)}),  # 24 characters kept for stop strings, never sent
    ("llama-bpe", "stream", ["ids", "edge"], DECODE, 3, {
        "last-delta-per-step": ("stream.last-id-per-step", 450)}),  # of each step, the last id's text only
    ("qwen3", "chat", ["chats"], CHAT, 1, {
        "tojson-compact": ("chat.tojson-compact", 5)}),  # tojson without spaces after , and :
], ids=["decode", "pieces", "stream", "stream-step-3", "chat"])
def test_blind_engines_of_the_second_round_are_named_and_their_twin_agrees(zoo, model, op, corpora, engine, step, bugs):
    zoo(model)
    assert_named_beside_their_twin(model, op, corpora, engine, bugs, step)
