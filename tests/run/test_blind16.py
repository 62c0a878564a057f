"""A SentencePiece-style BPE in plain JavaScript, written blind by a helper from two bug descriptions
(tests/engines/blind/blind16_spm.mjs; its author read no diagnosis code and ran tokparity with
--no-diagnose only). Both bugs are @lenml/llama2-tokenizer's (docs/findings.md, "Eighth survey"):

* ``--decoded-vocab``: the pieces spelt with a space for ``▁`` and the text never escaped, so a ``▁``
  typed in the text falls back to its bytes (``space.typed-mark``);
* ``--code-unit-walk``: a longest match whose trie is built by code points and walked by UTF-16
  code units (``model.greedy-by-code-units``). Its twin ``--greedy`` walks by code points: it is
  named the plain greedy match, never the walk.

The engine without flags agrees everywhere."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tokparity.run.driver import run_compare
from tokparity.run.known import load_known
from tokparity.run.options import CompareOptions, Services

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node NOT FOUND: the blind JavaScript engine is NOT TESTED "
                                                      "(install Node.js 20+)")
BLIND = Path(__file__).parents[1] / "engines" / "blind"
ENGINE = f"cmd:{NODE} {BLIND / 'blind16_spm.mjs'} {{tokenizer_json}}"
CORPORA = ["edge", "emoji", str(BLIND / "blind16_texts.jsonl")]


@pytest.mark.parametrize("model", ["lenml-llama2", "gemma-3"])
def test_each_bug_named_beside_its_twin(zoo, model):
    zoo(model)
    flags = {"typed": "--decoded-vocab", "walk": "--code-unit-walk", "greedy": "--greedy",
             "both": "--decoded-vocab --code-unit-walk"}
    results = run_compare([model], CORPORA, [f"{name}={ENGINE} {f}" for name, f in flags.items()] + [f"twin={ENGINE}"],
                          CompareOptions(services=Services(known=load_known([], builtin=True))))
    runs = {r.backend: r for r in results.runs if r.cases > 100}
    assert runs["twin"].mismatches == 0, runs["twin"]
    for name, cause in (("typed", "space.typed-mark"), ("walk", "model.greedy-by-code-units"),
                        ("greedy", "model.greedy-longest-match"),
                        ("both", "space.typed-mark+model.greedy-by-code-units")):
        verdict = runs[name].root_cause
        assert runs[name].mismatches > 0 and verdict is not None, (name, runs[name])
        assert verdict.cause == cause and verdict.proven and verdict.keeps == verdict.agreements, (name, verdict)
        assert verdict.explains == verdict.mismatches, (name, verdict)
    # (the plain greedy match's rows never name the walk, nor does the walk's verdict need the greedy)
    assert not any("greedy-by-code-units" in cause for cause in runs["greedy"].causes), runs["greedy"].causes
    assert sum(runs["walk"].causes.values()) == runs["walk"].mismatches == runs["walk"].causes["model.greedy-by-code-units"]
