"""Every .inp/.out case of every zoo model: the reference gives the ids the original HF
tokenizers gave (llama.cpp's own test-tokenizer-0 cases)."""

from __future__ import annotations

import pytest
from reference_fixtures import ref  # noqa: F401  (pytest fixtures)

from tokparity.zoo import load_manifest, resolve_model
from tokparity.zoo.golden import read_golden

GOLDEN_MODELS = [name for name, m in load_manifest().models.items() if "golden_out" in m.files]


def _cases():
    for name in GOLDEN_MODELS:
        files = resolve_model(name).files
        for case in read_golden(files["golden_inp"], files["golden_out"]):
            yield pytest.param(name, case, id=f"{name}-{case.index:02d}")


@pytest.mark.parametrize("model,case", list(_cases()))
def test_golden(ref, model, case):
    assert ref(model).encode(case.text) == list(case.ids)
