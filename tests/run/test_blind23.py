"""Detokenizers, streamers, token tables and chat builders a helper wrote blind from descriptions of
behaviour, after round 22's causes (tests/engines/blind/blind23_decode.py and blind23_chat.py;
their author read no diagnosis code and ran no tokparity). On first sight the diagnosis named 2 of
their 12 bugs and proved them (tests/engines/blind/README.md). Each bug below is named by its cause
on 95 % of its rows, its verdict proven, the twin agreeing: all 12 now."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from blind_rounds import assert_named_beside_their_twin

BLIND = Path(__file__).parents[1] / "engines" / "blind"
DECODE = f"cmd:{sys.executable} {BLIND / 'blind23_decode.py'} {{tokenizer_json}}"
CHAT = f"cmd:{sys.executable} {BLIND / 'blind23_chat.py'} {{tokenizer_json}} {{tokenizer_config}}"
CHATS = ["chats", str(BLIND / "blind23_chats.jsonl")]  # (its author's conversations: blank lines, tools, an empty last turn)


# model, op, corpora, engine, {bug: (its cause, the fewest mismatches)}
@pytest.mark.parametrize("model,op,corpora,engine,bugs", [
    # (the ids corpus holds special tokens: a form that drops them too would lose its agreements)
    ("qwen3", "decode", ["edge", "ids"], DECODE, {
        "rstrip-newlines": ("decode.text-stripped", 10),  # rstrip("\r\n") of the reply
        "unmarked-added-dropped": ("decode.added-dropped", 5)}),  # added tokens not marked special left out
    ("gemma-3", "decode", ["edge"], DECODE, {
        "rstrip-newlines": ("decode.text-stripped", 10),
        "unmarked-added-dropped": ("decode.added-dropped", 50),
        "nfc-output": ("decode.text-normalized", 10)}),  # the decoded text put through NFC
    ("qwen3", "stream", ["edge"], DECODE, {
        "last-delta-twice": ("stream.last-delta-resent", 500),  # (every stream that sends text)
        "flush-at-4-bytes": ("stream.flushed-at-n-bytes", 2)}),  # a buffer of 4 bytes flushed, a character cut
    ("qwen3", "pieces", ["edge"], DECODE, {
        "invalid-alone-null": ("pieces.invalid-alone-dropped", 50)}),  # no bytes for a part of a character
    ("gemma-3", "pieces", ["edge"], DECODE, {
        "invalid-alone-null": ("pieces.invalid-alone-dropped", 30)}),
    ("gemma-3", "stream", ["edge"], DECODE, {
        "last-delta-twice": ("stream.last-delta-resent", 500)}),
    ("qwen3", "chat", CHATS, CHAT, {
        "one-blank-line-max": ("chat.blank-lines-collapsed", 1),
        "tool-result-wrapped": ("chat.tool-results-quoted", 3),  # {"result": content} dumped
        "content-nfkc": ("chat.content-normalized", 2),
        "tools-in-first-user": ("chat.tools-in-user-turn", 5),  # the tools' JSON after the first user's text
        "empty-last-assistant-dropped": ("chat.final-assistant-dropped", 2),  # (an empty one only)
        "gen-prompt-when-tools": ("chat.generation-prompt-added-for-tools", 3)}),  # a refusal with a continuation too
], ids=["decode-qwen3", "decode-gemma3", "stream-qwen3", "pieces-qwen3", "pieces-gemma3", "stream-gemma3", "chat"])
def test_blind_engines_of_round_23_are_named_and_their_twin_agrees(zoo, model, op, corpora, engine, bugs):
    zoo(model)
    assert_named_beside_their_twin(model, op, corpora, engine, bugs)
