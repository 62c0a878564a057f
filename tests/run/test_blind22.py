"""Detokenizers, streamers, token tables and chat builders a helper wrote blind from descriptions of
behaviour (tests/engines/blind/blind22_decode.py and blind22_chat.py; their author read no
diagnosis code). On first sight, on Qwen 3, the diagnosis named 3 of their 11 bugs that show
(tests/engines/blind/README.md). The causes below were then written as general variants. Each run
asks its bugs beside the bug-free twin: each bug is named by its cause, its verdict proves it, and
the twin agrees. Llama 3 checks the strip is not Qwen 3's alone. Gemma 3 checks the flushed stream
on byte tokens, which tokenizers' decoder shows as one U+FFFD per token when their run is not UTF-8."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from blind_rounds import assert_named_beside_their_twin

BLIND = Path(__file__).parents[1] / "engines" / "blind"
DECODE = f"cmd:{sys.executable} {BLIND / 'blind22_decode.py'} {{tokenizer_json}}"
CHAT = f"cmd:{sys.executable} {BLIND / 'blind22_chat.py'} {{tokenizer_json}} {{tokenizer_config}}"


# model, op, corpora, engine, {bug: (its cause, the fewest mismatches)}
@pytest.mark.parametrize("model,op,corpora,engine,bugs", [
    ("qwen3", "decode", ["edge"], DECODE, {
        "strip-text": ("decode.text-stripped", 100),  # str.strip() of the reply
        "added-dropped": ("decode.added-dropped", 5)}),  # ids past the model's own vocab left out
    ("llama-bpe", "decode", ["edge"], DECODE, {
        "strip-text": ("decode.text-stripped", 100)}),  # (edge holds no id past Llama 3's own vocab)
    ("qwen3", "stream", ["edge"], DECODE, {
        "flush-every-n": ("stream.flushed-every-n", 30)}),  # an unfinished character flushed every 4 ids
    ("gemma-3", "stream", ["edge"], DECODE, {
        "flush-every-n": ("stream.flushed-every-n", 9)}),  # (byte-fallback tokens: 9 rows, each proven)
    ("qwen3", "pieces", ["ids"], DECODE, {
        "specials-null": ("pieces.specials-left-out", 3)}),  # the tokens tokenizer.json marks special
    ("qwen3", "chat", ["chats"], CHAT, {
        "gen-prompt-string": ("chat.generation-prompt-stringified", 2),
        "tools-in-system": ("chat.tools-in-system", 5),
        "final-assistant-stripped": ("chat.final-assistant-dropped", 3),
        "blank-lines-dropped": ("chat.blank-lines-collapsed", 2),
        "tool-result-quoted": ("chat.tool-results-quoted", 3)}),
], ids=["decode-qwen3", "decode-llama3", "stream-qwen3", "stream-gemma3", "pieces", "chat"])
def test_blind_engines_of_round_22_are_named_and_their_twin_agrees(zoo, model, op, corpora, engine, bugs):
    zoo(model)
    assert_named_beside_their_twin(model, op, corpora, engine, bugs)
