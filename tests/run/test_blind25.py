"""Engines helpers wrote blind from public bug reports, after round 24's causes
(tests/engines/blind/blind25_*.py; their authors read no diagnosis code and ran no tokparity). On
first sight the diagnosis named 5 of the 14 bugs and proved them (tests/engines/blind/README.md).
Each bug below is named by its cause on 95 % of its rows, its verdict proven, the twin agreeing:
all 14 now. blind25b_chat.py and blind25c_stream.py were written from descriptions to judge
``chat.content-rewritten`` and ``stream.lead-byte-only-held``, after those causes were written."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from blind_rounds import assert_named_beside_their_twin

from tokparity.run.driver import run_compare
from tokparity.run.known import load_known
from tokparity.run.options import CompareOptions, Services

BLIND = Path(__file__).parents[1] / "engines" / "blind"
ENCODE = f"cmd:{sys.executable} {BLIND / 'blind25_encode.py'} {{tokenizer_json}}"
DECODE = f"cmd:{sys.executable} {BLIND / 'blind25_decode.py'} {{tokenizer_json}}"
LEAD_BYTE = f"cmd:{sys.executable} {BLIND / 'blind25c_stream.py'} {{tokenizer_json}}"
CHAT = f"cmd:{sys.executable} {BLIND / 'blind25_chat.py'} {{tokenizer_json}} {{tokenizer_config}}"
REWRITES = f"cmd:{sys.executable} {BLIND / 'blind25b_chat.py'} {{tokenizer_json}} {{tokenizer_config}}"


# model, op, corpora, engine, {bug: (its cause, the fewest mismatches)}
@pytest.mark.parametrize("model,op,corpora,engine,bugs", [
    ("llama-bpe", "encode", ["edge", str(BLIND / "blind25_texts.jsonl")], ENCODE, {
        "escapes-processed": ("input.escapes-processed", 8),
        "trailing-newline-popped": ("input.strip", 20),  # (its form: one line feed taken off the end)
        "newlines-as-spaces": ("input.edit", 30)}),  # (a learnt edit: each "\n" read as " ")
    ("qwen3", "decode", ["edge", "ids"], DECODE, {
        "eos-chars-rstripped": ("decode.token-chars-stripped", 100),
        "last-id-dropped": ("decode.last-id-dropped", 800),
        "pad-ids-dropped": ("decode.pad-dropped", 1)}),
    ("qwen3", "stream", ["edge", "ids"], DECODE, {
        "first-delta-lost": ("stream.first-delta-dropped", 500),
        "cumulative-stripped": ("stream.stripped-each-step", 50),
        "delta-eos-chars-rstripped": ("stream.deltas-rstripped", 100)}),  # (its form: the EOS text's characters)
    # (Gemma 3's prompts end in its BOS: losing the first delta is not losing the one after a special token)
    ("gemma-3", "stream", ["edge", "ids"], DECODE, {"first-delta-lost": ("stream.first-delta-dropped", 500)}),
    ("gemma-3", "stream", ["edge", "ids"], LEAD_BYTE, {"lead-byte-only": ("stream.lead-byte-only-held", 20)}),
    ("gemma-3", "pieces", ["edge", "ids"], DECODE, {"spm-space-doubled": ("pieces.space-before-space", 400)}),
    ("qwen3", "pieces", ["edge", "ids"], DECODE, {"soft-hyphen-identity": ("pieces.glyph-not-mapped", 100)}),
    ("llama-bpe", "chat", ["chats", str(BLIND / "blind25_chats.jsonl")], CHAT, {
        "string-as-parts": ("chat.content-as-parts", 30),
        "trim-ascii-only": ("chat.trim-ascii", 3),
        # (str.format fails on a content with a field, such as {name}: 5 of its 6 rows are the engine's failures)
        "braces-formatted": ("chat.content-formatted", 6)}),
    ("qwen3", "chat", ["chats", str(BLIND / "blind25b_chats.jsonl")], REWRITES, {
        "json-twice": ("chat.content-rewritten", 10),
        "markdown-escaped": ("chat.content-rewritten", 20),  # (user messages only)
        "ascii-folded": ("chat.content-rewritten", 4)}),
], ids=["encode-llama3", "decode-qwen3", "stream-qwen3", "stream-gemma3", "lead-byte-gemma3", "pieces-gemma3",
        "pieces-qwen3", "chat-llama3", "rewrites-qwen3"])
def test_blind_engines_of_round_25_are_named_and_their_twin_agrees(zoo, model, op, corpora, engine, bugs):
    zoo(model)
    assert_named_beside_their_twin(model, op, corpora, engine, bugs, failures_apart=op == "chat")


def test_a_newcomers_streamer_that_holds_back_a_lead_byte_only_is_named(zoo):
    # (tests/engines/blind/newcomer7_stream.py: the cause was written from it; blind25c_stream.py judged it)
    zoo("llama-bpe")
    engine = BLIND / "newcomer7_stream.py"
    results = run_compare(["llama-bpe"], ["edge", "ids"], [f"mine=py:{engine}:Engine", f"twin=py:{engine}:FixedEngine"],
                          CompareOptions(ops=("stream",), services=Services(known=load_known([], builtin=True))))
    runs = {r.backend: r for r in results.runs}
    assert runs["twin"].unexplained == 0 and runs["mine"].mismatches >= 50
    verdict = runs["mine"].root_cause
    assert verdict is not None and verdict.cause == "stream.lead-byte-only-held" and verdict.proven, verdict
