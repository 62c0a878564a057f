"""Fixtures of the reference tests: loaded tokenizers and llama.cpp handles, once per session.

Not a conftest.py: other test folders import names from the top-level conftest by module name,
so a second module called conftest on sys.path would shadow it. Test modules import these.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

import pytest

from tokparity.reference import RefTokenizer
from tokparity.vocab import load_vocab
from tokparity.zoo import resolve_model


@pytest.fixture(scope="session")
def ref():
    """``ref("llama-spm") -> RefTokenizer`` on the model's primary file;
    ``ref("llama-bpe", "tokenizer_json")`` on another of its files."""
    cache: dict = {}

    def get(name: str, role: str | None = None) -> RefTokenizer:
        key = (name, role)
        if key not in cache:
            files = resolve_model(name)
            path = files.files[role] if role else files.primary[1]
            cache[key] = RefTokenizer(load_vocab(path))
        return cache[key]

    return get


class LlamaCpp:
    """llama.cpp through llama-cpp-python's low-level API (vocab only)."""

    def __init__(self, path: Path):
        import llama_cpp

        self.llama_cpp = llama_cpp
        saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)  # llama.cpp prints its load log to stderr even with verbose=False
        try:
            self.llm = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            os.close(devnull)
        self.vocab = llama_cpp.llama_model_get_vocab(self.llm.model)

    def encode(self, text: str, add_special: bool = False, parse_special: bool = False) -> list[int]:
        data = text.encode("utf-8")
        cap = len(data) + 8
        for _ in range(2):
            buf = (self.llama_cpp.llama_token * cap)()
            n = self.llama_cpp.llama_tokenize(self.vocab, data, len(data), buf, cap, add_special, parse_special)
            if n >= 0:
                return list(buf[:n])
            cap = -n
        raise RuntimeError("llama_tokenize kept asking for a larger buffer")

    def decode(self, ids: list[int]) -> bytes:
        arr = (self.llama_cpp.llama_token * max(1, len(ids)))(*ids)
        cap = 64 + 64 * len(ids)
        out = ctypes.create_string_buffer(cap)
        n = self.llama_cpp.llama_detokenize(self.vocab, arr, len(ids), out, cap, False, False)
        return out.raw[:n]


@pytest.fixture(scope="session")
def llama():
    pytest.importorskip("llama_cpp")
    cache: dict = {}

    def get(name: str) -> LlamaCpp:
        if name not in cache:
            cache[name] = LlamaCpp(resolve_model(name).files["gguf"])
        return cache[name]

    return get
