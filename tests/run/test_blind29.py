"""Engines a helper wrote blind from public code, issues and pull requests, after round 28's causes
(tests/engines/blind/blind29_*.py; its author read no diagnosis code and ran no tokparity). On first
sight the diagnosis named 2 of the 12 bugs and proved them: SentencePiece's extra whitespace
removed (``whitespace.collapse``, on Qwen 3 only) and a streamer that drops the prompt
(``stream.prompt-dropped``). A third, the generation prompt written twice, was proven as "its own
generation prompt": true, but less precise. Seven causes or forms were written
after the round was seen: ``decode.leading-bom-dropped``, ``stream.partial-stop-dropped``, the
``ascii-only`` reading of ``model.byte-alphabet``, ``chat.last-user-repeated``,
``chat.tools-unwrapped``, ``chat.generation-prompt-twice`` and the form of
``chat.generation-prompt-missing`` that writes it only after a user message; ``whitespace.collapse``
now applies to llama.cpp's BPE too. Later, ``input.sliced`` learnt the law of a text cut into 20
slices, each encoded apart. Each bug below is named by its cause, its verdict proven, the twin
agreeing. Two stay unnamed: a markdown filter, and a history reducer that drops system messages."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
from blind_rounds import assert_named_beside_their_twin

from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions

BLIND = Path(__file__).parents[1] / "engines" / "blind"
ENCODE = f"cmd:{sys.executable} {BLIND / 'blind29_encode.py'} {{tokenizer_json}}"
DECODE = f"cmd:{sys.executable} {BLIND / 'blind29_decode.py'} {{tokenizer_json}}"
CHAT = f"cmd:{sys.executable} {BLIND / 'blind29_chat.py'} {{tokenizer_json}} {{tokenizer_config}}"
TEXTS = str(BLIND / "blind29_texts.jsonl")
CHATS = ["chats", str(BLIND / "blind29_chats.jsonl")]


# model, op, corpora, engine, {bug: (its cause, the fewest mismatches)}
@pytest.mark.parametrize("model,op,corpora,engine,bugs", [
    ("llama-bpe", "encode", ["edge", "multilingual", TEXTS], ENCODE, {
        "non-ascii-bytes-dropped": ("model.byte-alphabet", 500),
        "extra-spaces-removed": ("whitespace.collapse", 150)}),
    ("qwen3", "decode", ["edge", "ids", TEXTS], DECODE, {"leading-bom-dropped": ("decode.leading-bom-dropped", 5)}),
    ("qwen3", "stream", ["edge", "ids", TEXTS], DECODE, {
        "partial-stop-dropped": ("stream.partial-stop-dropped", 20),
        "textstreamer-holdback": ("stream.prompt-dropped", 40)}),
    ("qwen3", "chat", CHATS, CHAT, {
        "current-user-twice": ("chat.last-user-repeated", 30),
        "tools-unwrapped": ("chat.tools-unwrapped", 8),
        "gen-prompt-after-user-only": ("chat.generation-prompt-missing", 5),
        "gen-prompt-twice": ("chat.generation-prompt-twice", 35)}),
], ids=["encode-llama-bpe", "decode-qwen3", "stream-qwen3", "chat-qwen3"])
def test_blind_engines_of_round_29_are_named_and_their_twin_agrees(zoo, model, op, corpora, engine, bugs):
    zoo(model)
    assert_named_beside_their_twin(model, op, corpora, engine, bugs, failures_apart=op == "chat")


def test_a_text_cut_into_20_slices_is_named_by_the_law_of_its_cuts(zoo):
    # TransformerLens' tokenize_and_concatenate: 20 slices by characters, each encoded alone, and
    # no ids at all for a blank text. The law is learnt from the cuts; the blank texts are a strip.
    # A text of 20 characters or fewer is encoded character by character: slices of one character
    # are no law a case proposes (an engine that merges nothing gives them), so such a row keeps
    # its own answer unless its class fits.
    zoo("llama-bpe")
    results = run_compare(["llama-bpe"], ["edge", "multilingual", TEXTS],
                          [f"chunked={ENCODE} --bug chunked-20", f"twin={ENCODE}"], CompareOptions(ops=("encode",)))
    runs = {r.backend: r for r in results.runs}
    assert runs["twin"].mismatches == 0
    verdict = runs["chunked"].root_cause
    assert verdict is not None and verdict.proven and "input.sliced:parts/20" in verdict.variants, verdict
    rows = [m for m in results.mismatches if m.backend == "chunked"]
    causes = Counter(m.cause for m in rows)
    assert runs["chunked"].mismatches > 900 and causes["input.sliced"] >= 0.9 * len(rows), causes
    assert all(m.cause == "input.sliced" or m.cause == "input.strip" and not m.text.strip() or len(m.text) <= 20
               for m in rows), causes
