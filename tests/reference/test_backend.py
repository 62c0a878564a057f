"""The ``ref`` backend: files picked, the protocol's methods, traces, clear errors."""

from __future__ import annotations

import pytest

import tokparity
from tokparity.backends.ref import RefBackend
from tokparity.errors import TokparityError
from tokparity.zoo import resolve_model


@pytest.mark.parametrize("model,role", [("llama-spm", "gguf"), ("llama-bpe", "gguf"), ("botchan-unigram", "spm_model"),
                                        ("qwen3", "tokenizer_json")])
def test_primary_file_and_protocol(model, role):
    backend = RefBackend(resolve_model(model))
    assert backend.role == role and backend.name == "ref" and backend.version == tokparity.__version__
    ids = backend.encode("Hello world", add_special=False)
    assert ids and backend.decode(ids).strip() == "Hello world"
    assert backend.pieces(ids) == [backend.vocab.tokens[i] for i in ids]
    assert backend.supports("normalize") and backend.supports("pre_tokenize")


def test_llama_spm_example():
    backend = RefBackend(resolve_model("llama-spm"))
    assert backend.encode("Hello world", add_special=True) == [1, 15043, 3186]
    assert backend.normalize("Hello world") == "▁Hello▁world"


def test_role_option_and_unknown_option():
    backend = RefBackend(resolve_model("llama-bpe"), role="tokenizer_json")
    assert backend.encode("Hello world") == [9906, 1917]
    with pytest.raises(TokparityError, match="unknown option"):
        RefBackend(resolve_model("llama-bpe"), colour="red")


@pytest.mark.parametrize("model", ["llama-spm", "llama-bpe", "nomic-bert-moe", "bert-bge", "botchan-bpe",
                                   "botchan-unigram", "gemma-4"])
def test_trace_shows_the_steps(model):
    lines = RefBackend(resolve_model(model)).trace("Hello  world")
    assert lines[0].startswith("input") and lines[-1].startswith("pieces")
    assert any(line.startswith(("merge", "lattice", "match", "word")) for line in lines)


def test_lone_surrogate_is_a_clear_error():
    with pytest.raises(TokparityError, match="surrogate"):
        RefBackend(resolve_model("llama-spm")).encode("a\ud800b")


def test_strict_decode_reports_invalid_utf8():
    backend = RefBackend(resolve_model("llama-spm"))
    ids = backend.encode("🦙")  # byte pieces
    with pytest.raises(TokparityError, match="not valid UTF-8"):
        backend.tokenizer.decode(ids[:-1], errors="strict")
    assert backend.decode(ids[:-1]).endswith("\ufffd")
