"""Backends made once per session (loading a 262k vocabulary is not free) and closed at the end."""

from __future__ import annotations

import pytest

from tokparity.backends.registry import make_backend
from tokparity.zoo.golden import read_golden


@pytest.fixture(scope="session")
def backend(zoo):
    """``backend("llama.cpp", "llama-spm") -> Backend``, cached for the session."""
    cache: dict = {}

    def get(name: str, model: str, **opts):
        key = (name, model, tuple(sorted(opts.items())))
        if key not in cache:
            cache[key] = make_backend(name, zoo(model), **opts)
        return cache[key]

    yield get
    for b in cache.values():
        b.close()


@pytest.fixture(scope="session")
def golden(zoo):
    """``golden("llama-spm") -> [GoldenCase]``: llama.cpp's .inp texts and the ids HF gave them."""
    def get(model: str):
        files = zoo(model).files
        return read_golden(files["golden_inp"], files["golden_out"])
    return get
