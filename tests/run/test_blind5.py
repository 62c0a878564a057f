"""Fifteen bugs from public reports, judged on engines a helper wrote blind from one paragraph per
bug (tests/engines/blind/blind5_decode.py and blind5_chat.py, on the real tokenizers library and
jinja2; their author read no diagnosis code). Eleven of them had no cause when the engines were
written (docs/findings.md, "Sixth survey, and blind engines from public reports"). Each run here asks several bugs at
once, beside the bug-free twin: each bug is named by its cause on its mismatches, its verdict proves
it, and the twin agrees on every case."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

from tokparity.run.driver import run_compare
from tokparity.run.known import load_known
from tokparity.run.options import CompareOptions, Services

BLIND = Path(__file__).parents[1] / "engines" / "blind"
DECODE = f"cmd:{sys.executable} {BLIND / 'blind5_decode.py'} {{tokenizer_json}}"

def SHIPPED() -> Services:  # noqa: N802 (tokparity's own known list, as the command line has it: Llama 3's 4 stream clean-ups)
    return Services(known=load_known([], builtin=True))


CHAT = f"cmd:{sys.executable} {BLIND / 'blind5_chat.py'} {{tokenizer_json}} {{tokenizer_config}}"
CHATS = str(BLIND / "blind5_chats.jsonl")  # the helper's conversations: compact tool arguments, reasoning last


# model, op, corpora, engine, {bug: (its cause, the fewest mismatches)}
@pytest.mark.parametrize("model,op,corpora,engine,bugs", [
    ("llama-bpe", "decode", ["ids", "edge"], DECODE, {
        "gpt2-offset": ("decode.glyphs-not-mapped", 200),  # GPT-2's byte table inverted as code - 0x100
        "glyph-fallback": ("decode.token-text-when-invalid", 100),  # a token's string where its bytes fail
        "strict-utf8": ("decode.fails-on-invalid-bytes", 5)}),  # a strict UTF-8 decode that answers an error
    ("gemma-3", "decode", ["ids", "edge"], DECODE, {
        "byte-fallback-verbatim": ("decode.byte-tokens-raw", 80)}),  # <0xHH> copied as written
    ("gemma-3", "pieces", ["ids", "edge"], DECODE, {
        "byte-tokens-literal": ("pieces.byte-tokens-raw", 80)}),  # <0xHH> typed as a normal token
    ("deepseek-v3", "pieces", ["ids"], DECODE, {
        "specials-byte-map": ("pieces.specials-through-byte-map", 20)}),  # the whole table fails
    ("qwen3", "chat", ["chats", CHATS], CHAT, {
        "args-parsed": ("chat.tool-arguments-parsed", 1), "reasoning-dropped": ("chat.reasoning-dropped", 2),
        "sorted-keys": ("chat.keys-sorted", 7), "autoescape": ("chat.autoescape", 30),
        "kwargs-dropped": ("chat.variables-dropped", 1)}),
], ids=["llama-bpe-decode", "gemma-3-decode", "gemma-3-pieces", "deepseek-v3-pieces", "qwen3-chat"])
def test_blind_engines_from_public_reports_are_named_and_their_twin_agrees(zoo, model, op, corpora, engine, bugs):
    zoo(model)
    results = run_compare([model], corpora, [f"{bug}={engine} --bug {bug}" for bug in bugs] + [f"twin={engine}"],
                          CompareOptions(ops=(op,), services=SHIPPED()))
    runs = {r.backend: r for r in results.runs}
    assert runs["twin"].unexplained == 0 and runs["twin"].cases > 0
    for bug, (cause, fewest) in bugs.items():
        mine = [m for m in results.mismatches if m.backend == bug and not m.known]
        causes = Counter(m.cause for m in mine)
        assert runs[bug].cases == runs["twin"].cases and runs[bug].mismatches >= fewest, (bug, runs[bug])
        verdict = runs[bug].root_cause
        assert verdict is not None and verdict.cause == cause, (bug, verdict)
        if runs[bug].mismatches == runs[bug].cases:  # a table that fails on every case: no agreement checks
            # the verdict, so it is not proven, and each row keeps the failure's shape, with no cause
            assert not verdict.proven and all(m.shape.startswith("the engine failed") and not m.cause for m in mine)
            continue
        assert causes[cause] >= 0.95 * sum(causes.values()) and verdict.proven, (bug, causes, verdict)


def test_a_stream_that_drops_bytes_that_are_not_utf8_is_named_so(zoo):
    """``errors="ignore"`` in a cumulative stream (llama-cpp-python before #118): a character the
    prompt began vanishes (its bytes alone are not UTF-8), and so do other bytes that are not."""
    zoo("llama-bpe")
    results = run_compare(["llama-bpe"], ["ids", "edge"], [f"bug={DECODE} --bug ignore-cumulative", f"twin={DECODE}"],
                          CompareOptions(ops=("stream",), services=SHIPPED()))
    runs = {r.backend: r for r in results.runs}
    causes = Counter(m.cause for m in results.mismatches if m.backend == "bug" and not m.known)
    assert runs["twin"].unexplained == 0
    assert set(causes) == {"stream.begun-character-dropped", "decode.invalid-bytes-dropped"}, causes
    assert runs["bug"].root_cause is not None and runs["bug"].root_cause.cause == "stream.begun-character-dropped"
