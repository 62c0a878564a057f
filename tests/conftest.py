"""Shared fixtures: zoo models fetched once per machine into the tokparity cache."""

from __future__ import annotations

import pytest

from tokparity.zoo import ModelFiles, resolve_model


@pytest.fixture(scope="session")
def zoo():
    """``zoo("llama-spm") -> ModelFiles``, fetching on first use (cached across runs)."""
    cache: dict[str, ModelFiles] = {}

    def get(name: str) -> ModelFiles:
        if name not in cache:
            cache[name] = resolve_model(name)
        return cache[name]

    return get
