"""Bugs from public reports, on engines a helper wrote blind (tests/engines/blind/blind13_encode.py,
blind13_decode.py and blind13_chat.py; their author read no diagnosis code and ran tokparity with
--no-diagnose only). At first sight the diagnosis named seven of their fourteen bugs by a proven
cause of the right mechanism (docs/findings.md, "Blind engines, ninth round"). These are those
seven, and those named by causes or forms written after that round, each beside its bug-free twin."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tokparity.reference.decode import DecodeSettings
from tokparity.run.driver import run_compare
from tokparity.run.known import load_known
from tokparity.run.options import CompareOptions, Services

BLIND = Path(__file__).parents[1] / "engines" / "blind"
TEXTS = str(BLIND / "blind13_texts.jsonl")
ENGINE = {op: f"cmd:{sys.executable} {BLIND / f'blind13_{op}.py'} {{tokenizer_json}}"
          for op in ("encode", "decode", "chat")}
ENGINE["template"] = f"cmd:{sys.executable} {BLIND / 'blind13_chat.py'} {{tokenizer_json}} --template {{chat_template}}"


@pytest.mark.parametrize("model, op, engine, corpora, bug, cause", [
    ("llama-bpe", "encode", "encode", ["edge", TEXTS], "truncate-512", "ids.truncated"),
    ("lenml-llama2", "encode --add-special", "encode", ["edge", TEXTS], "eos-always", "eos"),
    ("qwen3", "decode", "decode", ["ids"], "decode-ignore", "decode.invalid-bytes-dropped"),
    ("qwen3", "decode", "decode", ["ids"], "added-spaced", "decode.specials-spaced"),
    ("qwen3", "stream --skip-special", "decode", ["ids"], "stream-specials-shown", "decode.specials-written"),
    ("lenml-llama2", "pieces", "decode", ["ids"], "piece-space-stripped", "pieces.decoded-alone"),
    ("qwen3", "pieces", "decode", ["ids"], "isolated-decode-pieces", "pieces.text-not-bytes"),
    # (named since, by causes or forms written after the round)
    ("llama-bpe", "encode", "encode", ["edge", TEXTS], "nfkc-input", "normalizer.nfkc"),
    ("lenml-llama2", "decode", "decode", ["ids"], "decode-ignore", "decode.invalid-bytes-dropped"),
    ("qwen3", "stream", "decode", ["ids"], "stream-strict-utf8", "decode.fails-on-invalid-bytes"),
    ("qwen3", "chat", "chat", ["chats"], "thinking-off-default", "chat.option-defaulted"),
    ("qwen3", "chat", "chat", ["chats"], "tool-as-user", "chat.role-renamed"),
    ("qwen3", "chat", "chat", ["chats"], "empty-dropped", "chat.empty-turns-dropped"),
    ("gpt-oss", "chat", "template", ["chats"], "no-strftime", "chat.global-missing"),
])
def test_named_beside_its_twin(zoo, model, op, engine, corpora, bug, cause):
    """``op`` with --add-special: the ids with the model's BOS first; with --skip-special: special
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


def test_a_prompt_cut_at_both_ends_ties_with_an_empty_bos_token(zoo):
    """llama.cpp's chat code before PR #15086 cut the BOS text off the prompt's start (and the EOS
    text off its end). On Llama 3 the template writes the BOS first and never the EOS: the prompt
    is the one an empty ``bos_token`` gives. The earlier cause names the run; each row lists the
    other as its alternative, so the engine's writer sees both."""
    zoo("llama-bpe")
    spec = ENGINE["chat"]
    results = run_compare(["llama-bpe"], ["chats"], [f"bug={spec} --bug bos-eos-stripped", f"twin={spec}"],
                          CompareOptions(ops=("chat",), services=Services(known=load_known([], builtin=True))))
    runs = {r.backend: r for r in results.runs}
    assert runs["twin"].unexplained == 0 and runs["twin"].cases > 0, runs["twin"]
    verdict = runs["bug"].root_cause
    assert verdict is not None and verdict.cause == "chat.bos-token-empty" and verdict.proven, verdict
    rows = [m for m in results.mismatches if m.backend == "bug"]
    assert rows and all(("chat.ends-stripped",) in m.alternatives for m in rows)
