"""Engines a helper wrote blind from public bug reports and code, after round 26's causes
(tests/engines/blind/blind27_*.py; its author read no diagnosis code and ran no tokparity). On first
sight the diagnosis named 2 of the 12 bugs and proved them: an input lower-cased and string tool
arguments dumped as JSON again. Seven causes were written after the round was seen:
``chat.role-renamed`` in LangChain's form (``user`` as ``human``, ``assistant`` as ``ai``),
``chat.first-tool-call-only``, ``input.latin1``, ``decode.tag-blocks-removed``,
``decode.control-characters-removed``, ``stream.unicode-line-break-deltas-lost`` and
``stream.previous-delta-removed``; later ``model.merge-missing``, which tells the lost merge's rank
on Llama 3 too. Two bugs are not named yet (tests/engines/blind/README.md).
Each bug below is named by its cause, its verdict proven, the twin agreeing."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from blind_rounds import assert_named_beside_their_twin

BLIND = Path(__file__).parents[1] / "engines" / "blind"
TEXTS = str(BLIND / "blind27_texts.jsonl")
ENCODE = f"cmd:{sys.executable} {BLIND / 'blind27_encode.py'} {{tokenizer_json}}"
DECODE = f"cmd:{sys.executable} {BLIND / 'blind27_decode.py'} {{tokenizer_json}}"
CHAT = f"cmd:{sys.executable} {BLIND / 'blind27_chat.py'} {{tokenizer_json}} {{tokenizer_config}}"


# model, op, corpora, engine, {bug: (its cause, the fewest mismatches)}
@pytest.mark.parametrize("model,op,corpora,engine,bugs", [
    ("qwen3", "encode", ["edge", TEXTS], ENCODE, {
        "lowercased": ("normalizer.lowercase", 200),
        "latin1-request-body": ("input.latin1", 220),
        "first-merge-dropped": ("model.merge-missing", 40)}),
    ("llama-bpe", "encode", ["edge", TEXTS], ENCODE, {"first-merge-dropped": ("model.merge-missing", 6)}),
    ("qwen3", "decode", ["edge", "ids", TEXTS], DECODE, {
        "think-block-removed": ("decode.tag-blocks-removed", 5),
        "control-chars-removed": ("decode.control-characters-removed", 35)}),
    ("qwen3", "stream", ["edge", "ids", TEXTS], DECODE, {
        "sse-unicode-line-split": ("stream.unicode-line-break-deltas-lost", 10),
        "previous-delta-removed": ("stream.previous-delta-removed", 60)}),
    ("qwen3", "chat", ["chats", str(BLIND / "blind27_chats.jsonl")], CHAT, {
        "string-args-reencoded": ("chat.tool-arguments-quoted", 4),
        "first-tool-call-only": ("chat.first-tool-call-only", 4),
        "langchain-roles": ("chat.role-renamed", 40)}),
], ids=["encode-qwen3", "encode-llama-bpe", "decode-qwen3", "stream-qwen3", "chat-qwen3"])
def test_blind_engines_of_round_27_are_named_and_their_twin_agrees(zoo, model, op, corpora, engine, bugs):
    zoo(model)
    assert_named_beside_their_twin(model, op, corpora, engine, bugs, failures_apart=op == "chat")
