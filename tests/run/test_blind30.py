"""Engines a helper wrote blind from public code, issues and pull requests, after round 29's causes
and the three written that day from round 26 (tests/engines/blind/blind30_*.py; its author read no
diagnosis code and ran no tokparity). On first sight the diagnosis named 2 of the 12 bugs and
proved them: a reply read as Latin-1 (``decode.bytes-as-latin1``) and system messages merged into
one, first (``chat.systems-hoisted``, written from round 26 the same day). Three more were named
right but not proven: a refusal of special-token text (``specials.refused``), whitespace deltas
dropped (``stream.blank-deltas-dropped``) and a system message folded into the next one
(``chat.system-joined-to-user``). Written after the round was seen: ``input.universal-newlines``,
``decode.html-unescaped``, ``stream.first-delta-stripped``, ``pieces.byte-tokens-empty``,
``chat.parts-as-messages``, and forms of ``specials.refused`` (any added token),
``stream.blank-deltas-dropped`` (JavaScript's ``trim``) and ``chat.system-joined-to-user`` (every
system message). Each bug below is named by its cause, its verdict proven, the twin agreeing.
Two stay apart: transformers 2.x's split on added tokens (named ``input.strip+specials.strip``, not
proven) and options sent as strings, which on Qwen 3 give the prompt of options dropped (named
``chat.variables-dropped``, the right cause its first alternative)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from blind_rounds import assert_named_beside_their_twin

BLIND = Path(__file__).parents[1] / "engines" / "blind"
TEXTS = str(BLIND / "blind30_texts.jsonl")
CHATS = ["chats", str(BLIND / "blind30_chats.jsonl")]
ENCODE = f"cmd:{sys.executable} {BLIND / 'blind30_encode.py'} {{tokenizer_json}}"
DECODE = f"cmd:{sys.executable} {BLIND / 'blind30_decode.py'} {{tokenizer_json}}"
CHAT = f"cmd:{sys.executable} {BLIND / 'blind30_chat.py'} {{tokenizer_json}} {{tokenizer_config}}"


# model, op, corpora, engine, {bug: (its cause, the fewest mismatches)}
@pytest.mark.parametrize("model,op,corpora,engine,bugs", [
    ("qwen3", "encode", ["edge", TEXTS], ENCODE, {
        "special-text-refused": ("specials.refused", 20),
        "universal-newlines": ("input.universal-newlines", 10)}),
    ("qwen3", "decode", ["edge", "ids", TEXTS], DECODE, {
        "latin1-response": ("decode.bytes-as-latin1", 200),
        "html-entities-unescaped": ("decode.html-unescaped", 4)}),
    ("qwen3", "stream", ["edge", "ids"], DECODE, {
        "first-delta-lstripped": ("stream.first-delta-stripped", 100),
        "whitespace-deltas-dropped": ("stream.blank-deltas-dropped", 100)}),
    ("gemma-3", "pieces", ["edge", "ids"], DECODE, {"byte-pieces-empty": ("pieces.byte-tokens-empty", 90)}),
    ("qwen3", "chat", CHATS, CHAT, {
        "systems-merged-newline": ("chat.systems-hoisted", 4),
        "system-into-next": ("chat.system-joined-to-user", 16),
        "parts-as-messages": ("chat.parts-as-messages", 7)}),
], ids=["encode-qwen3", "decode-qwen3", "stream-qwen3", "pieces-gemma3", "chat-qwen3"])
def test_blind_engines_of_round_30_are_named_and_their_twin_agrees(zoo, model, op, corpora, engine, bugs):
    zoo(model)
    assert_named_beside_their_twin(model, op, corpora, engine, bugs, failures_apart=op == "chat")
