"""ref == Hugging Face tokenizers on the zoo's tokenizer.json files (byte-level BPE with a split
regex, and SentencePiece-style BPE with byte fallback). ``parse_special`` maps to tokenizers'
``encode_special_tokens = not parse_special``; ``add_special`` to ``add_special_tokens``."""

from __future__ import annotations

import pytest
from reference_fixtures import ref  # noqa: F401  (pytest fixtures)
from reference_texts import NASTY, botchan_lines, corpus_texts, pooled_texts

from tokparity.zoo import resolve_model

JSON_MODELS = ["llama-bpe", "qwen3", "gemma-3", "lenml-llama2"]
KNOWN: dict[tuple[str, str, bool, bool], str] = {}


@pytest.mark.parametrize("model", JSON_MODELS)
def test_ref_equals_tokenizers(ref, model):
    tokenizers = pytest.importorskip("tokenizers")
    hf = tokenizers.Tokenizer.from_file(str(resolve_model(model).files["tokenizer_json"]))
    tok = ref(model, "tokenizer_json")
    cases = [(t, False, False) for t in pooled_texts() + corpus_texts() + botchan_lines()[:300]]
    cases += [(t, True, True) for t in pooled_texts() + NASTY]
    mismatches = {}
    for text, add, parse in cases:
        hf.encode_special_tokens = not parse
        expected = hf.encode(text, add_special_tokens=add).ids
        got = tok.encode(text, add, parse)
        if got != expected:
            mismatches[(model, text, add, parse)] = (expected, got)
    unexplained = {k: v for k, v in mismatches.items() if k not in KNOWN}
    assert not unexplained, f"{len(unexplained)} of {len(cases)} differ; first: {next(iter(unexplained.items()))}"


@pytest.mark.parametrize("model", JSON_MODELS)
def test_decode_equals_tokenizers(ref, model):
    tokenizers = pytest.importorskip("tokenizers")
    hf = tokenizers.Tokenizer.from_file(str(resolve_model(model).files["tokenizer_json"]))
    tok = ref(model, "tokenizer_json")
    for text in NASTY + pooled_texts()[:100]:
        ids = hf.encode(text, add_special_tokens=True).ids
        assert tok.decode(ids) == hf.decode(ids), text
