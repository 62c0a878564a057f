"""Bugs from public reports, on engines a helper wrote blind (tests/engines/blind/blind12_encode.py,
blind12_decode.py and blind12_chat.py; their author read no diagnosis code and ran tokparity with
--no-diagnose only). At first sight the diagnosis named three of their fourteen bugs by a proven
cause of the right mechanism (docs/findings.md, "Blind engines, eighth round"). These are those
three, and those named by causes or forms written after that round, each beside its bug-free twin."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tokparity.run.driver import run_compare
from tokparity.run.known import load_known
from tokparity.run.options import CompareOptions, Services

BLIND = Path(__file__).parents[1] / "engines" / "blind"
TEXTS = str(BLIND / "blind12_texts.jsonl")
CHATS = str(BLIND / "blind12_chats.jsonl")
ENGINE = {op: f"cmd:{sys.executable} {BLIND / f'blind12_{op}.py'} {{tokenizer_json}}"
          for op in ("encode", "decode", "chat")}
ENGINE["tekken"] = f"cmd:{sys.executable} {BLIND / 'blind12_chat.py'} --template {{chat_template}} --tiktoken {{tiktoken}}"


@pytest.mark.parametrize("model, op, engine, corpora, bug, cause", [
    ("qwen3", "encode", "encode", ["edge", TEXTS], "java-ascii-space", "pretokenizer.regex-engine"),  # \s ASCII only
    ("qwen3", "encode", "encode", ["edge", TEXTS], "whitespace-run-whole", "pretokenizer.regex-engine"),
    ("qwen3", "decode", "decode", ["edge", "ids"], "gpt2-linear-offset", "decode.glyphs-not-mapped"),
    # (named since, by causes or forms written after the round)
    ("qwen3", "encode", "encode", ["edge", TEXTS], "php-range-bytemap", "model.byte-alphabet"),
    ("llama-bpe", "encode", "encode", ["edge", TEXTS], "php-range-bytemap", "model.byte-alphabet"),
    ("qwen3", "encode", "encode", ["edge", TEXTS], "utf16-code-units", "model.byte-alphabet"),
    ("llama-bpe", "encode", "encode", ["edge", TEXTS], "utf16-code-units", "model.byte-alphabet"),
    ("lenml-llama2", "decode", "decode", ["edge", "ids"], "bos-only-strip", "decode.space-dropped-after-bos"),
    ("lenml-llama2", "decode", "decode", ["edge", "ids"], "legacy-sp-chunks", "decode.runs-decoded-alone"),
    ("lenml-llama2", "decode --add-special", "decode", ["edge", "ids"], "legacy-sp-chunks", "decode.runs-decoded-alone"),
    ("qwen3", "stream", "decode", ["edge", "ids"], "first-space-trim", "stream.first-space-trimmed"),
    ("lenml-llama2", "stream", "decode", ["edge", "ids"], "first-space-trim", "stream.first-space-trimmed"),
    ("gemma-3", "pieces", "decode", ["edge"], "user-defined-empty", "pieces.specials-left-out"),
    ("lenml-llama2", "pieces", "decode", ["edge"], "latin1-byte-pieces", "pieces.byte-tokens-as-characters"),
    ("gemma-3", "pieces", "decode", ["edge"], "latin1-byte-pieces", "pieces.byte-tokens-as-characters"),
    ("qwen3", "chat", "chat", ["chats", CHATS], "developer-as-system", "chat.role-renamed"),
    ("gemma-3", "chat", "chat", ["chats", CHATS], "developer-as-system", "chat.role-renamed"),
    ("tekken", "chat", "tekken", ["chats", CHATS], "tools-empty-list", "chat.no-tools-as-empty-list"),
])
def test_named_beside_its_twin(zoo, model, op, engine, corpora, bug, cause):
    """``op`` with --add-special: the ids with the model's BOS first."""
    zoo(model)
    spec = ENGINE[engine]
    op, *flags = op.split()
    results = run_compare([model], corpora, [f"bug={spec} --bug {bug}", f"twin={spec}"],
                          CompareOptions(ops=(op,), add_special="--add-special" in flags,
                                         services=Services(known=load_known([], builtin=True))))
    runs = {r.backend: r for r in results.runs}
    assert runs["twin"].unexplained == 0 and runs["twin"].cases > 0, runs["twin"]
    verdict = runs["bug"].root_cause
    assert runs["bug"].mismatches > 0
    assert verdict is not None and verdict.cause == cause and verdict.proven, verdict
