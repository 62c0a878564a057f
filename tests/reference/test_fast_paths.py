"""Every fast path against the readable path it stands in for."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_fixtures import ref  # noqa: F401  (pytest fixtures)
from reference_texts import NASTY, botchan_lines, pooled_texts

from tokparity.reference.bpe import merge_word, merge_word_heap
from tokparity.reference.llama import LlamaBpe
from tokparity.vocab import load_vocab
from tokparity.zoo import resolve_model


@pytest.mark.parametrize("model", ["llama-bpe", "gpt-2", "gemma-4"])
def test_word_cache_changes_nothing(ref, model):
    fast = ref(model).pipeline
    plain = LlamaBpe(fast.vocab, cache_words=False)
    for text in pooled_texts() + botchan_lines()[:200]:
        assert fast.encode(text) == plain.encode(text), text


def test_heap_merge_equals_readable_merge(ref):
    ranks = ref("gpt-2").pipeline.ranks
    for text in pooled_texts() + botchan_lines()[:100]:
        for word in ref("gpt-2").pipeline.pre_tokenize(text):
            assert merge_word_heap(list(word), ranks) == merge_word(list(word), ranks).symbols


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from("abcab"), max_size=30))
def test_heap_merge_equals_readable_merge_random(chars):
    ranks = {("a", "b"): 0, ("b", "c"): 1, ("ab", "c"): 2, ("c", "a"): 3, ("ab", "ab"): 4, ("a", "a"): 5}
    assert merge_word_heap(chars, ranks) == merge_word(chars, ranks).symbols


@pytest.mark.parametrize("model", ["nomic-bert-moe", "kyoto-ja-unigram", "botchan-unigram"])
def test_normalizer_char_cache_equals_plain_walk(ref, model):
    normalizer = ref(model).pipeline.normalizer
    for text in NASTY + pooled_texts():
        data = text.encode()
        pos, plain = 0, []
        while pos < len(data):
            chunk, n = normalizer.normalize_prefix(data, pos)
            plain.append((chunk, n))
            pos += n
        pos, fast = 0, []
        while pos < len(data):
            chunk, n = normalizer._prefix_fast(data, pos)
            fast.append((chunk, n))
            pos += n
        assert fast == plain, text


@pytest.mark.parametrize("model", ["llama-spm", "phi-3", "baichuan"])
def test_spm_chunk_cache_changes_nothing(ref, model):
    from tokparity.reference.llama import LlamaSpm
    fast = ref(model).pipeline
    assert fast.cache is not None  # these vocabularies allow the cut
    plain = LlamaSpm(fast.vocab, cache_chunks=False)
    for text in NASTY + pooled_texts() + botchan_lines()[:300]:
        for add, parse in ((False, False), (True, True)):
            assert fast.encode(text, add, parse) == plain.encode(text, add, parse), text


@settings(max_examples=150, deadline=None)
@given(st.text(st.sampled_from(list(" ▁\u2581ab\nxé🦙")), max_size=25))
def test_spm_chunk_cache_random(text):
    from tokparity.reference.llama import LlamaSpm
    fast = _spm()
    plain = LlamaSpm(fast.vocab, cache_chunks=False)
    assert fast.encode(text) == plain.encode(text)


_SPM = {}


def _spm():
    if not _SPM:
        from tokparity.reference.llama import LlamaSpm
        _SPM["x"] = LlamaSpm(load_vocab(resolve_model("llama-spm").files["gguf"]))
    return _SPM["x"]
