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


def test_a_long_trace_keeps_the_symbols_of_its_first_merges_only():
    """An eighth hostile campaign: ``encode --trace`` kept the symbols after every merge, memory
    quadratic in the text. A BPE word too long to trace is encoded, its merges not traced."""
    from tokparity.reference.bpe import TRACED_STEPS
    from tokparity.reference.spm import spm_merge

    text = "▁abc" * 2_000
    merged = spm_merge(list(text), {"▁a": -1.0, "bc": -2.0, "▁abc": -3.0, "ab": -4.0})
    steps = spm_merge(list(text), {"▁a": -1.0, "bc": -2.0, "▁abc": -3.0, "ab": -4.0}, trace=True).steps
    assert len(steps) > 4_000 and sum(len(step.symbols) for step in steps) <= TRACED_STEPS * len(text)
    assert steps[TRACED_STEPS - 1].symbols and merged.symbols == ["▁abc"] * 2_000
    lines = RefBackend(resolve_model("llama-bpe")).trace("a" * 5_000)
    assert any("merges not traced: a word of more than 1,000 characters" in line for line in lines)
    assert lines[-2].startswith("ids")


def test_lone_surrogate_is_a_clear_error():
    with pytest.raises(TokparityError, match="surrogate"):
        RefBackend(resolve_model("llama-spm")).encode("a\ud800b")


def test_strict_decode_reports_invalid_utf8():
    backend = RefBackend(resolve_model("llama-spm"))
    ids = backend.encode("🦙")  # byte pieces
    with pytest.raises(TokparityError, match="not valid UTF-8"):
        backend.tokenizer.decode(ids[:-1], errors="strict")
    assert backend.decode(ids[:-1]).endswith("\ufffd")
