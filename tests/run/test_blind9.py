"""Bugs from public reports, judged on engines a helper wrote blind after the causes of
tests/run/test_blind8.py were written (tests/engines/blind/blind9_encode.py, blind9_decode.py and
blind9_chat.py; their author read no diagnosis code). On first sight the diagnosis named four of
their sixteen bugs by a reproduced cause. The causes below were then written from the reports
(docs/findings.md, "Blind engines, fifth round"). Each run asks one or two bugs beside the bug-free
twin: each bug is named by its cause, its verdict proves it, and the twin agrees."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from blind_rounds import assert_named_beside_their_twin

BLIND = Path(__file__).parents[1] / "engines" / "blind"
DECODE = f"cmd:{sys.executable} {BLIND / 'blind9_decode.py'} {{tokenizer_json}}"
CHAT = f"cmd:{sys.executable} {BLIND / 'blind9_chat.py'} {{tokenizer_json}} {{tokenizer_config}}"
CHATS = str(BLIND / "blind9_chats.jsonl")  # lists of text parts, tools


# model, op, corpora, engine, {bug: (its cause, the fewest mismatches)}
@pytest.mark.parametrize("model,op,corpora,engine,bugs", [
    ("gemma-3", "decode", ["ids", "edge"], DECODE, {
        "bytelevel-on-spm": ("decode.byte-level-decoder", 300)}),  # decoders.ByteLevel() on Gemma 3
    ("lenml-llama2", "decode", ["ids", "edge"], DECODE, {
        "metaspace-first-all": ("decode.first-token-marks-dropped", 40)}),  # every ▁ of token 0 dropped
    ("qwen3", "decode", ["ids", "edge"], DECODE, {
        "lstrip-output": ("decode.text-lstripped", 150)}),  # the completion's trim_start()
    ("qwen3", "stream", ["ids", "edge"], DECODE, {
        "ws-delta-dropped": ("stream.blank-deltas-dropped", 100),  # if not content.strip(): continue
        "prefix-guard": ("stream.repeated-delta-dropped", 100)}),  # a delta the text starts with dropped
    ("lenml-llama2", "pieces", ["ids", "edge"], DECODE, {
        "first-meta-only": ("pieces.first-mark-only", 50),  # '▁▁' reads ' ▁'
        "unk-surface": ("pieces.unknown-as-decoded", 1)}),  # <unk> as ' ⁇ '
    ("qwen3", "chat", ["chats", CHATS], CHAT, {
        "tool-nulls": ("chat.tool-nulls-added", 5)}),  # pydantic's model_dump() of each tool
    ("gemma-3", "chat", ["chats", CHATS], CHAT, {
        "last-text-part": ("chat.one-part-kept", 4)}),  # a list of parts as its last text part
], ids=["decode-byte-level", "decode-first-token", "decode-lstripped", "stream", "pieces", "chat-tools",
        "chat-parts"])
def test_blind_engines_of_the_fifth_round_are_named_and_their_twin_agrees(zoo, model, op, corpora, engine, bugs):
    zoo(model)
    assert_named_beside_their_twin(model, op, corpora, engine, bugs)
