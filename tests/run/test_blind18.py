"""Two bugs the ninth survey met in real packages, judged on engines a helper wrote blind from one
paragraph each (tests/engines/blind/blind18_decode.py and blind18_chat.py; their author read no
diagnosis code). The decoder writes an unknown id as its text, as simple-sentencepiece does. The
chat format dumps each tool call whole, as chat-bricks does, but keeps non-ASCII text raw
(``ensure_ascii=False``), where chat-bricks escapes it. Each bug is named by its cause on every
mismatch, its verdict is proven, and the twin agrees on every case."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions

BLIND = Path(__file__).parents[1] / "engines" / "blind"
DECODE = f"cmd:{sys.executable} {BLIND / 'blind18_decode.py'} {{spm_model}}"
CHAT = f"cmd:{sys.executable} {BLIND / 'blind18_chat.py'} {{tokenizer_config}}"
CHATS = str(BLIND / "blind18_chats.jsonl")  # the helper's conversations: tool calls with string arguments


@pytest.mark.parametrize("model,op,corpora,engine,bug,cause", [
    ("spm-unigram-split-digits", "decode", ["multilingual"], DECODE, "unk-as-text", "decode.unknown-as-its-text"),
    ("kyoto-ja-unigram", "decode", ["multilingual"], DECODE, "unk-as-text", "decode.unknown-as-its-text"),
    ("qwen3", "chat", ["chats", CHATS], CHAT, "dump-call", "chat.tool-arguments-quoted"),
], ids=["split-digits-decode", "kyoto-decode", "qwen3-chat"])
def test_a_blind_engine_is_named_and_its_twin_agrees(zoo, model, op, corpora, engine, bug, cause):
    zoo(model)
    results = run_compare([model], corpora, [f"bug={engine} --bug {bug}", f"twin={engine}"], CompareOptions(ops=(op,)))
    runs = {r.backend: r for r in results.runs}
    assert runs["twin"].mismatches == 0 and runs["twin"].cases > 0, runs["twin"]
    causes = Counter(m.cause for m in results.mismatches if m.backend == "bug")
    assert runs["bug"].mismatches >= 5 and set(causes) == {cause}, causes
    verdict = runs["bug"].root_cause
    assert verdict is not None and verdict.cause == cause and verdict.proven, verdict
