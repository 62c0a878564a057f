"""Shared fixtures: zoo models fetched once per machine into the tokparity cache."""

from __future__ import annotations

import pytest

from tokparity.zoo import ModelFiles, load_manifest, resolve_model

ZOO_MODELS = list(load_manifest().models)
GGUF_MODELS = [name for name, m in load_manifest().models.items() if "gguf" in m.files]
GOLDEN_MODELS = [name for name, m in load_manifest().models.items() if "golden_out" in m.files]


@pytest.fixture(scope="session")
def zoo():
    """``zoo("llama-spm") -> ModelFiles``, fetching on first use (cached across runs)."""
    cache: dict[str, ModelFiles] = {}

    def get(name: str) -> ModelFiles:
        if name not in cache:
            cache[name] = resolve_model(name)
        return cache[name]

    return get
