"""Bugs from public reports, on engines a helper wrote blind (tests/engines/blind/blind15_encode.py,
blind15_decode.py and blind15_chat.py; their author read no diagnosis code and ran tokparity with
--no-diagnose only). At first sight the diagnosis named seven of their fourteen bugs by a proven
cause of the right mechanism (docs/findings.md, "Blind engines, tenth round"). These are the bugs
named since by causes or forms written after that round, and two of the first seven, each beside
its bug-free twin."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tokparity.reference.decode import DecodeSettings
from tokparity.run.driver import run_compare
from tokparity.run.known import load_known
from tokparity.run.options import CompareOptions, Services

BLIND = Path(__file__).parents[1] / "engines" / "blind"
ENGINE = {op: f"cmd:{sys.executable} {BLIND / f'blind15_{op}.py'} {{tokenizer_json}}"
          for op in ("encode", "decode", "chat")}
ENGINE["template"] = f"cmd:{sys.executable} {BLIND / 'blind15_chat.py'} {{tokenizer_json}} --template {{chat_template}}"


@pytest.mark.parametrize("model, op, engine, corpora, bug, cause", [
    ("llama-bpe", "encode", "encode", ["multilingual"], "no-ignore-merges", "model.ignore-merges"),
    ("qwen3", "stream", "decode", ["ids", "edge"], "naive-suffix", "stream.offset-into-lossy-text"),
    # (named since, by causes or forms written after the round)
    ("qwen3", "decode", "decode", ["ids"], "cut-at-eos", "decode.cut-at-eos"),
    ("lenml-llama2", "decode", "decode", ["ids"], "cut-at-eos", "decode.cut-at-eos"),
    ("qwen3", "decode --parse-special", "decode", ["edge"], "trailing-eos-hidden", "decode.cut-at-eos"),
    ("qwen3", "pieces", "decode", ["ids"], "g-only", "pieces.raw-tokens"),
    ("qwen3", "chat", "chat", ["chats"], "tool-fields-dropped", "chat.message-fields-dropped"),
    ("qwen3", "chat", "chat", ["chats"], "gen-prompt-tools-only", "chat.generation-prompt-follows-tools"),
    ("gpt-oss", "chat", "template", ["chats"], "empty-tool-calls", "chat.empty-tool-calls-added"),
])
def test_named_beside_its_twin(zoo, model, op, engine, corpora, bug, cause):
    """``op`` with --parse-special: the corpus's special-token texts read as their ids, so that the
    ids decoded hold the EOS."""
    zoo(model)
    spec = ENGINE[engine]
    op, *flags = op.split()
    results = run_compare([model], corpora, [f"bug={spec} --bug {bug}", f"twin={spec}"],
                          CompareOptions(ops=(op,), parse_special="--parse-special" in flags,
                                         decoding=DecodeSettings(),
                                         services=Services(known=load_known([], builtin=True))))
    runs = {r.backend: r for r in results.runs}
    assert runs["twin"].unexplained == 0 and runs["twin"].cases > 0, runs["twin"]
    verdict = runs["bug"].root_cause
    assert runs["bug"].mismatches > 0
    assert verdict is not None and verdict.cause == cause and verdict.proven, verdict
