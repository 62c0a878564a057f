"""Bugs from public reports, on engines a helper wrote blind after this session's causes
(tests/engines/blind/blind11_encode.py, blind11_decode.py and blind11_chat.py; their author read
no diagnosis code and ran tokparity with --no-diagnose only). At first sight the diagnosis named
four of their fourteen bugs by a proven cause (docs/findings.md, "Blind engines, seventh round").
These are those four, and the ten named by causes written after that round, each beside its
bug-free twin."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tokparity.reference.decode import DecodeSettings
from tokparity.run.driver import run_compare
from tokparity.run.known import load_known
from tokparity.run.options import CompareOptions, Services

BLIND = Path(__file__).parents[1] / "engines" / "blind"
TEXTS = str(BLIND / "blind11_texts.jsonl")
CHATS = str(BLIND / "blind11_chats.jsonl")
ENGINE = {op: f"cmd:{sys.executable} {BLIND / f'blind11_{op}.py'} {{tokenizer_json}}"
          for op in ("encode", "decode", "chat")}


@pytest.mark.parametrize("model, op, engine, corpora, bug, cause", [
    ("llama-bpe", "encode", "encode", ["edge", TEXTS], "nul-truncate", "input.cut"),  # a C string's length
    ("lenml-llama2", "stream", "decode", ["edge", "ids", TEXTS], "per-token-decode", "decode.ids-alone"),
    ("gemma-3", "pieces", "decode", ["edge", "ids", TEXTS], "raw-pieces-ff", "pieces.raw-tokens+pieces.added-raw"),
    ("llama-bpe", "chat", "chat", ["chats", CHATS], "string-parts-join", "chat.parts-joined"),
    # (named since, by causes written after the round)
    ("llama-bpe", "decode", "decode", ["edge", "ids", TEXTS], "strlen-trim", "decode.cut"),
    ("llama-bpe", "decode", "decode", ["edge", "ids", TEXTS], "zero-to-pad", "decode.id-as"),
    ("llama-bpe", "decode --add-special", "decode", ["edge", "ids", TEXTS], "bos-first-byte", "decode.first-byte-dropped"),
    ("qwen3", "stream --skip-special", "decode", ["edge", "ids", TEXTS], "first-special-offset",
     "stream.last-prompt-token-resent"),
    ("qwen3", "stream", "decode", ["edge", "ids", TEXTS], "prefix-or-full", "stream.text-resent"),
    ("qwen3", "encode", "encode", ["edge", TEXTS], "leftmost-merge", "model.merges-unranked"),
    ("gemma-3", "encode", "encode", ["edge", TEXTS], "grapheme-seed", "model.cluster-symbols"),
    ("qwen3", "chat", "chat", ["chats", CHATS], "html-safe-tojson", "chat.tojson-written-otherwise"),
    ("qwen3", "chat", "chat", ["chats", CHATS], "prefill-assistant", "chat.final-message-prefilled"),
    ("qwen3", "pieces", "decode", ["edge", "ids", TEXTS], "outlines-dict", "pieces.table-by-text"),
    ("lenml-llama2", "pieces", "decode", ["edge", "ids", TEXTS], "outlines-dict", "pieces.table-by-text"),
])
def test_named_beside_its_twin(zoo, model, op, engine, corpora, bug, cause):
    """``op`` with --add-special: the ids with the model's BOS and EOS; with --skip-special: special
    tokens left out of the text."""
    zoo(model)
    spec = ENGINE[engine]
    op, *flags = op.split()
    results = run_compare([model], corpora, [f"bug={spec} --bug {bug}", f"twin={spec}"],
                          CompareOptions(ops=(op,), add_special="--add-special" in flags,
                                         decoding=DecodeSettings(skip_special="--skip-special" in flags),
                                         services=Services(known=load_known([], builtin=True))))
    runs = {r.backend: r for r in results.runs}
    assert runs["twin"].unexplained == 0 and runs["twin"].cases > 0, runs["twin"]
    verdict = runs["bug"].root_cause
    assert runs["bug"].mismatches > 0
    assert verdict is not None and verdict.cause == cause and verdict.proven, verdict
