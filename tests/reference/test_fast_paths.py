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


# -- UGM: the translated normalizer and the per-word lattice ------------------------------------

UGM_FILES = [("botchan-unigram", "spm_model"), ("botchan-unigram", "gguf"), ("kyoto-ja-unigram", "spm_model"),
             ("kyoto-ja-unigram", "gguf"), ("nomic-bert-moe", "spm_model"), ("nomic-bert-moe", "gguf")]


def _ugm_texts() -> list[str]:
    from tokparity.corpus import load_corpus
    return NASTY + pooled_texts() + botchan_lines()[:1500] + [c.text for c in load_corpus("multilingual")]


@pytest.mark.parametrize("model,role", UGM_FILES)
def test_translated_normalizer_equals_plain_walk(ref, model, role):
    normalizer = ref(model, role).pipeline.normalizer
    texts = _ugm_texts()
    fast = 0
    for text in texts:
        translated = normalizer._normalize_translated(text)
        if translated is not None:
            fast += 1
            assert translated == normalizer.normalize_plain(text), text
    assert fast >= 0.95 * len(texts)  # the fast path is the one that runs


@pytest.mark.parametrize("model,role", UGM_FILES)
def test_ugm_word_cache_equals_whole_lattice(ref, model, role):
    pipeline = ref(model, role).pipeline
    model_ = pipeline.model
    assert model_.word_cache is not None  # split_by_whitespace vocabularies: no "▁" inside a piece
    texts = _ugm_texts()
    fast = 0
    for text in texts:
        normalized = pipeline.normalize(text)
        by_words = model_.encode_by_words(normalized)
        if by_words is not None:
            fast += 1
            assert by_words == model_.encode_plain(normalized), text
    assert fast >= 0.95 * len(texts)


# Characters that make prefix reading differ from one character at a time: combining marks
# (nmt_nfkc composes "e" + U+0301), kana + dakuten, Hangul jamo, ligatures and full-width forms,
# Tamil/Bengali vowel signs, spaces and tabs, a literal "▁", NUL.
_NORMALIZER_ALPHABET = list("ae \t\u3000\u0301\u0308\u0327か\u3099\u309aﾊﾞᄀ\u1161\u11a8ﬁ½ＡｱகாকাＫ▁\x00\u200b\u00a0x")


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from(_NORMALIZER_ALPHABET), max_size=20),
       st.sampled_from(["nomic-bert-moe", "kyoto-ja-unigram"]), st.sampled_from(["spm_model", "gguf"]))
def test_translated_normalizer_random(text, model, role):
    pipeline = _ugm(model, role)
    normalizer = pipeline.normalizer
    assert normalizer.normalize(text) == normalizer.normalize_plain(text)
    normalized = pipeline.normalize(text)
    assert pipeline.model.encode(normalized) == pipeline.model.encode_plain(normalized)


_UGM: dict = {}


def _ugm(model: str, role: str):
    if (model, role) not in _UGM:
        from tokparity.reference import RefTokenizer
        _UGM[model, role] = RefTokenizer(load_vocab(resolve_model(model).files[role])).pipeline
    return _UGM[model, role]


def test_continuation_chars_of_nmt_nfkc(ref):
    """The characters a charsmap key can hold after its first: combining marks, dakuten, jamo."""
    found = ref("nomic-bert-moe").pipeline.normalizer.charsmap.continuation_chars()
    assert {"\u0301", "\u0308", "\u3099", "\u1161", "\u0bbe"} <= found
    assert not {"a", "e", " ", "か", "\u3000"} & found


def test_ugm_word_cache_leaves_near_ties_to_the_lattice():
    """"▁a" and "▁"+"a" score the same: which one wins depends on rounding and order, so the
    per-word path declines and the whole lattice decides: the first candidate found, "▁a" from
    position 0, stays."""
    from tokparity.reference.ugm import LLAMA_CPP, SENTENCEPIECE, UgmModel
    from tokparity.vocab.model import TokenType

    tokens = ["<unk>", "▁a", "▁", "a", "▁b", "b"]
    scores = [0.0, -2.0, -1.0, -1.0, -1.5, -3.0]
    types = [TokenType.UNKNOWN] + [TokenType.NORMAL] * 5
    for options in (SENTENCEPIECE, LLAMA_CPP):
        model = UgmModel.build(tokens, types, scores, 0, options)
        assert model.word_cache is not None
        assert model.encode_by_words("▁a▁b") is None  # the tie in "▁a"
        assert model.encode("▁a▁b") == model.encode_plain("▁a▁b") == [(1, "▁a"), (4, "▁b")]
        assert model.encode_by_words("▁b▁b") == [(4, "▁b"), (4, "▁b")]  # clear margins: by words


def test_ugm_word_cache_off_when_a_piece_spans_a_space():
    from tokparity.reference.ugm import SENTENCEPIECE, UgmModel
    from tokparity.vocab.model import TokenType

    tokens = ["<unk>", "a▁b", "a", "b", "▁"]
    model = UgmModel.build(tokens, [TokenType.UNKNOWN] + [TokenType.NORMAL] * 4, [0.0, -1.0, -2.0, -2.0, -1.0], 0,
                           SENTENCEPIECE)
    assert model.word_cache is None
    assert model.encode("a▁b") == [(1, "a▁b")]


_FLAG_SETS = [dict(add_space_prefix=a, remove_extra_whitespaces=r, escape_whitespaces=e, treat_whitespace_as_suffix=t)
              for a in (True, False) for r in (True, False) for e in (True, False) for t in (True, False)]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_NORMALIZER_ALPHABET + ["  ", "\u2581\u2581", "[toxicity=0]"]), max_size=12).map("".join),
       st.sampled_from(_FLAG_SETS), st.sampled_from(["sentencepiece", "llama.cpp"]), st.booleans())
def test_translated_normalizer_every_flag_combination(text, flags, flavour, with_charsmap):
    """Every combination of the whitespace flags, in both flavours, with and without the
    nmt_nfkc charsmap (the zoo's unigram models all use the defaults, so this is where the
    other branches of the fast path are checked)."""
    from tokparity.reference.normalize import SpNormalizer

    charsmap = _ugm("nomic-bert-moe", "spm_model").normalizer.charsmap if with_charsmap else None
    key = (tuple(flags.items()), flavour, with_charsmap)
    if key not in _NORMALIZERS:
        _NORMALIZERS[key] = SpNormalizer(charsmap, ["[toxicity=0]"], flavour=flavour, **flags)
    normalizer = _NORMALIZERS[key]
    assert normalizer.normalize(text) == normalizer.normalize_plain(text)


_NORMALIZERS: dict = {}
