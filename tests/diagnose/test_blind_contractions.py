"""A byte-level BPE in plain JavaScript written blind (tests/engines/blind/js_contractions.mjs: its
author had the bug class only, never the diagnosis code), with three ways a port for Node 20,
whose RegExp has no inline ``(?i:…)``, rewrites the split's ``(?i:'s|'t|'re|'ve|'m|'ll|'d)``; its
texts (contraction_texts.jsonl) are the author's too. tests/diagnose/mutation.py says how each
check reads.

* ``--drop-i``: the ``?i`` deleted, GPT-2's lower-case list left: ``'S``, ``'Re`` … no
  contractions (``"it'Self"`` on llama-bpe: ``it``, ``'Self``). Named ``:lower-case``.
* ``--ascii-case``: each letter as its two ASCII cases (transformers.js's rewrite): ``'ſ`` (long s,
  whose case fold is s) no contraction; on gpt-oss ``" I'ſ"`` is ``" I"``, ``'ſ``. Named ``:ascii-case``.
* ``--flag-i``: the ``i`` flag on the whole RegExp: ``\\p{L}`` takes U+0345 (its fold is ι), so
  ``"\\u0345.sn"`` splits ``ͅ``, ``.sn`` on llama-bpe. Named ``:flag-i``.

``--drop-i`` was named right before the engine was written (the catalogue had ``:lower-case``);
``:ascii-case`` and ``:flag-i`` were added after it showed them (before: ``pretokenizer.llama3``,
not proven; ``unicode.alphabetic`` and ``pretokenizer.qwen35``, coincidences on U+0345). The twin
(no flag) agrees with each oracle on these texts and the edge corpus.
"""

from __future__ import annotations

import shutil

import pytest
from mutation import ENGINES, Mutation, check_single, compare_runs

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node NOT FOUND: the blind JavaScript engine is NOT TESTED "
                                                      "(install Node.js 20+)")
TEXTS = (str(ENGINES / "blind" / "contraction_texts.jsonl"), "edge")


def js(*flags: str) -> str:
    return " ".join([f"cmd:{NODE}", str(ENGINES / "blind" / "js_contractions.mjs"), "{tokenizer_json}", *flags])


MUTATIONS = [
    (Mutation("pretokenizer.contractions", model, js(flag), js(), TEXTS, at_least=at_least), variant)
    for model, flag, variant, at_least in [
        ("llama-bpe", "--drop-i", "lower-case", 6), ("qwen3", "--drop-i", "lower-case", 6),
        ("gpt-oss", "--drop-i", "lower-case", 15), ("gpt-oss", "--ascii-case", "ascii-case", 5),
        ("llama-bpe", "--flag-i", "flag-i", 8), ("qwen3", "--flag-i", "flag-i", 5)]
]


@pytest.fixture(scope="module")
def runs(zoo, tmp_path_factory):
    return compare_runs([m for m, _ in MUTATIONS], tmp_path_factory.mktemp("corpora"), zoo)


@pytest.mark.parametrize("m,variant", MUTATIONS, ids=[f"{m.model}{m.bug.rsplit(' ', 1)[1]}" for m, _ in MUTATIONS])
def test_contraction_rewrite(runs, m, variant):
    run = runs[m.group]
    check_single(run, m)
    root = run.summary(m.bug).root_cause
    assert root.variants == (f"pretokenizer.contractions:{variant}",) and root.proven, root
    assert root.keeps == root.agreements, root
