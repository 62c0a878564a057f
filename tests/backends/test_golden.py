"""The golden backend: llama.cpp's expected ids, only for its own texts."""

from __future__ import annotations

import pytest

from tokparity.backends.registry import make_backend
from tokparity.backends.runner import run_cases
from tokparity.errors import NotCovered, TokparityError
from tokparity.zoo import load_manifest

GOLDEN_MODELS = [name for name, m in load_manifest().models.items() if "golden_out" in m.files]


@pytest.mark.parametrize("model", [pytest.param(m, id=m) for m in GOLDEN_MODELS])
def test_answers_every_text_of_its_file(backend, golden, model):
    gold = backend("golden", model)
    cases = golden(model)
    assert gold.texts() == [c.text for c in cases]
    assert all(gold.encode(c.text) == list(c.ids) for c in cases)


def test_other_texts_are_not_covered(backend):
    gold = backend("golden", "llama-spm")
    with pytest.raises(NotCovered, match=r"no golden ids for this text \(ggml-vocab-llama-spm.gguf.out has 46 texts\)"):
        gold.encode("not one of llama.cpp's test texts")
    with pytest.raises(NotCovered, match=r"golden ids were made with add_special off"):
        gold.encode("Hello world", add_special=True)
    results = run_cases(gold, ["Hello world", "something else"])
    assert [(r.status, r.ids) for r in results] == [("ok", [15043, 3186]), ("skipped", [])]


def test_pieces_and_decode_come_from_the_vocabulary(backend):
    gold = backend("golden", "llama-bpe")
    ids = gold.encode("Hello world")
    assert ids == [9906, 1917]
    assert gold.pieces(ids) == ["Hello", "Ġworld"]
    assert gold.decode(ids) == "Hello world"
    assert gold.version == "ggml-vocab-llama-bpe.gguf.out"


def test_model_without_golden_files(zoo):
    with pytest.raises(TokparityError, match=r"model baichuan: the golden backend needs llama.cpp's .gguf.inp"):
        make_backend("golden", zoo("baichuan"))
